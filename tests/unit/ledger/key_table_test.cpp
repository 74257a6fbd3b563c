// The latest values' table: every key set is found with exactly its last version and value,
// through the index's growth, whatever the value's length, and nothing else is found.
#include <cstdint>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "../../../ledger/state_tree_latest.h"

namespace gridledger::ledger::key_table_test {
namespace {

using tree::KeyTable;

constexpr std::size_t kNoBudget = std::size_t{1} << 40U;

/** Distinct keys that differ in their last bytes only, as the hash must spread them too. */
Hash256 keyOf(std::uint32_t i) {
    Hash256 key;
    key[0] = 0x5a;
    key[28] = static_cast<std::uint8_t>(i >> 24U);
    key[29] = static_cast<std::uint8_t>(i >> 16U);
    key[30] = static_cast<std::uint8_t>(i >> 8U);
    key[31] = static_cast<std::uint8_t>(i);
    return key;
}

/** Key i's value: none for every seventh key, else 0 to 60 bytes, in place or on the heap. */
std::optional<Bytes> valueOf(std::uint32_t i) {
    if (i % 7 == 3) {
        return std::nullopt;
    }
    Bytes out(i % 61);
    for (std::size_t b = 0; b < out.size(); ++b) {
        out[b] = static_cast<std::uint8_t>(i + b);
    }
    return out;
}

TEST(LatestKeyTable, EveryKeySetIsFoundWithItsVersionAndValueAndNoOtherKeyIs) {
    KeyTable table;
    constexpr std::uint32_t kKeys = 20'000;  // several index growths and entry chunks
    for (std::uint32_t i = 0; i < kKeys; ++i) {
        ASSERT_TRUE(table.set(keyOf(i), i + 1, valueOf(i), kNoBudget));
    }
    EXPECT_EQ(table.size(), kKeys);
    for (std::uint32_t i = 0; i < kKeys; ++i) {
        const KeyTable::Entry* entry = table.find(keyOf(i));
        ASSERT_NE(entry, nullptr) << i;
        EXPECT_EQ(entry->key, keyOf(i));
        EXPECT_EQ(entry->writtenAt, i + 1);
        EXPECT_EQ(entry->value(), valueOf(i)) << i;
    }
    for (std::uint32_t i = kKeys; i < 2 * kKeys; ++i) {
        EXPECT_EQ(table.find(keyOf(i)), nullptr) << i;
    }
    // An empty value is a value, not a deletion.
    const KeyTable::Entry* empty = table.find(keyOf(61));
    ASSERT_NE(empty, nullptr);
    EXPECT_EQ(empty->value(), std::optional<Bytes>(Bytes{}));
}

TEST(LatestKeyTable, ASetOverwritesTheEntryAndItsMemoryInPlace) {
    KeyTable table;
    const Bytes longValue(100, 0x11);
    const Bytes account(KeyTable::kInlineBytes, 0x22);
    ASSERT_TRUE(table.set(keyOf(1), 1, account, kNoBudget));
    const std::size_t withAccount = table.bytes();
    ASSERT_TRUE(table.set(keyOf(1), 2, longValue, kNoBudget));
    EXPECT_EQ(table.find(keyOf(1))->value(), std::optional<Bytes>(longValue));
    EXPECT_EQ(table.bytes(), withAccount + longValue.size());
    ASSERT_TRUE(table.set(keyOf(1), 3, std::nullopt, kNoBudget));
    EXPECT_EQ(table.find(keyOf(1))->value(), std::nullopt);
    EXPECT_EQ(table.find(keyOf(1))->writtenAt, 3U);
    ASSERT_TRUE(table.set(keyOf(1), 4, account, kNoBudget));
    EXPECT_EQ(table.find(keyOf(1))->value(), std::optional<Bytes>(account));
    EXPECT_EQ(table.bytes(), withAccount);
    EXPECT_EQ(table.size(), 1U);
}

TEST(LatestKeyTable, PastTheBudgetNewKeysAreRefusedAndKnownOnesStillChange) {
    KeyTable table;
    ASSERT_TRUE(table.set(keyOf(0), 1, Bytes(8, 1), kNoBudget));
    const std::size_t perKey = table.bytes();
    const std::size_t budget = 10 * perKey;
    std::uint32_t added = 1;
    while (table.set(keyOf(added), 1, Bytes(8, 1), budget)) {
        ++added;
    }
    EXPECT_EQ(added, 10U);
    EXPECT_LE(table.bytes(), budget);
    EXPECT_EQ(table.find(keyOf(added)), nullptr);
    EXPECT_TRUE(table.set(keyOf(3), 2, Bytes(8, 2), budget));
    EXPECT_EQ(table.find(keyOf(3))->value(), std::optional<Bytes>(Bytes(8, 2)));
}

TEST(LatestKeyTable, ClearForgetsEveryKeyAndTheTableFillsAgain) {
    KeyTable table;
    for (std::uint32_t i = 0; i < 3'000; ++i) {
        ASSERT_TRUE(table.set(keyOf(i), 1, valueOf(i), kNoBudget));
    }
    table.clear();
    EXPECT_EQ(table.size(), 0U);
    EXPECT_EQ(table.bytes(), 0U);
    for (std::uint32_t i = 0; i < 3'000; ++i) {
        EXPECT_EQ(table.find(keyOf(i)), nullptr);
    }
    ASSERT_TRUE(table.set(keyOf(5), 9, valueOf(5), kNoBudget));
    EXPECT_EQ(table.find(keyOf(5))->writtenAt, 9U);
    EXPECT_EQ(table.find(keyOf(5))->value(), valueOf(5));
}

}  // namespace
}  // namespace gridledger::ledger::key_table_test
