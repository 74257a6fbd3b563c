// A batch written behind (KvStore::writeBehind) is seen by every later call on the store as if its
// write had returned: a get of a key it writes or erases, of a key it leaves alone, of a key in a
// range it erases, a cursor, a write after it (which lands after it), a close and reopen. Readers
// on other threads never see a key older than the round whose marker they read before it. The
// caller gets an empty batch back each time.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/storage/kv_store.h>

#include "support/temp_dir.h"

namespace gridledger::storage::kv_store_behind_test {
namespace {

const std::vector<std::string> kColumns{"first", "second"};

Bytes bytesOf(std::string_view text) {
    return {text.begin(), text.end()};
}

Bytes keyOf(std::size_t i) {
    return bytesOf("key" + std::to_string(i));
}

/** The value of key i in round r: large enough that a round's batch takes a while to land. */
Bytes valueOf(std::size_t i, std::uint32_t round) {
    Bytes value;
    appendU32(value, round);
    value.resize(512, static_cast<std::uint8_t>(i));
    return value;
}

std::uint32_t roundOf(const Bytes& value) {
    return readU32(value);
}

/** The value under `key`, failing the test on a storage error. */
std::optional<Bytes> getOrFail(const KvStore& store, Column column, const Bytes& key) {
    auto value = store.get(column, key);
    EXPECT_TRUE(value) << value.error().message;
    return value ? *value : std::nullopt;
}

constexpr std::size_t kKeys = 20'000;

TEST(KvStoreBehindTest, EveryLaterReadSeesTheBatchAsWritten) {
    gridledger::testing::TempDir dir;
    auto store = KvStore::open(dir.path(), kColumns);
    ASSERT_TRUE(store) << store.error().message;
    KvStore& kv = **store;
    WriteBatch first = kv.batch();
    for (std::size_t i = 0; i < kKeys; ++i) {
        first.put(0, keyOf(i), valueOf(i, 1));
    }
    ASSERT_TRUE(kv.write(first, false));

    // Round 2 rewrites the even keys, erases every third, writes a key of its own in the other
    // column, and leaves the rest alone: about 5 MB, read back before it can have landed.
    WriteBatch batch = kv.batch();
    for (std::size_t i = 0; i < kKeys; ++i) {
        if (i % 3 == 0) {
            batch.erase(0, keyOf(i));
        } else if (i % 2 == 0) {
            batch.put(0, keyOf(i), valueOf(i, 2));
        }
    }
    batch.put(1, bytesOf("only"), bytesOf("here"));
    ASSERT_TRUE(kv.writeBehind(batch));
    EXPECT_EQ(batch.count(), 0U);
    for (std::size_t i = kKeys; i-- > 0;) {
        const auto value = getOrFail(kv, 0, keyOf(i));
        if (i % 3 == 0) {
            EXPECT_EQ(value, std::nullopt) << i;
        } else {
            EXPECT_EQ(value, valueOf(i, i % 2 == 0 ? 2 : 1)) << i;
        }
    }
    EXPECT_EQ(getOrFail(kv, 1, bytesOf("only")), bytesOf("here"));
    EXPECT_EQ(getOrFail(kv, 1, bytesOf("never")), std::nullopt);

    // A range erased behind: the keys in it read as gone, those beside it as they were.
    WriteBatch ranges = kv.batch();
    ranges.eraseRange(0, keyOf(1), keyOf(2));  // "key1" up to "key2": key1, key10..., key19999
    ASSERT_TRUE(kv.writeBehind(ranges));
    EXPECT_EQ(getOrFail(kv, 0, keyOf(1)), std::nullopt);
    EXPECT_EQ(getOrFail(kv, 0, keyOf(1999)), std::nullopt);
    EXPECT_EQ(getOrFail(kv, 0, keyOf(2)), valueOf(2, 2));

    // A cursor walks what landed; settle reports nothing wrong.
    std::size_t walked = 0;
    auto cursor = kv.cursor(1);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        ++walked;
    }
    EXPECT_EQ(walked, 1U);
    EXPECT_TRUE(kv.settle());
}

TEST(KvStoreBehindTest, AWriteAfterItLandsAfterItAndACloseKeepsBoth) {
    gridledger::testing::TempDir dir;
    {
        auto store = KvStore::open(dir.path(), kColumns);
        ASSERT_TRUE(store) << store.error().message;
        WriteBatch batch = (*store)->batch();
        for (std::size_t i = 0; i < kKeys; ++i) {
            batch.put(0, keyOf(i), valueOf(i, 1));
        }
        ASSERT_TRUE((*store)->writeBehind(batch));
        batch.put(0, keyOf(7), valueOf(7, 2));
        ASSERT_TRUE((*store)->write(batch, false));
        for (std::size_t i = 0; i < kKeys; ++i) {
            batch.put(1, keyOf(i), valueOf(i, 3));
        }
        ASSERT_TRUE((*store)->writeBehind(batch));  // still in flight as the store closes
    }
    auto reopened = KvStore::open(dir.path(), kColumns);
    ASSERT_TRUE(reopened) << reopened.error().message;
    EXPECT_EQ(getOrFail(**reopened, 0, keyOf(7)), valueOf(7, 2));
    EXPECT_EQ(getOrFail(**reopened, 0, keyOf(8)), valueOf(8, 1));
    EXPECT_EQ(getOrFail(**reopened, 1, keyOf(kKeys - 1)), valueOf(kKeys - 1, 3));
}

TEST(KvStoreBehindTest, ReadersNeverSeeAKeyOlderThanTheRoundTheyKnow) {
    gridledger::testing::TempDir dir;
    auto store = KvStore::open(dir.path(), kColumns);
    ASSERT_TRUE(store) << store.error().message;
    KvStore& kv = **store;
    constexpr std::size_t kRoundKeys = 2'000;
    constexpr std::uint32_t kRounds = 60;
    const Bytes marker = bytesOf("round");
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> wrong{0};
    std::atomic<std::uint64_t> checked{0};
    // Each round writes every key with the round's number, then the marker, in one batch: a
    // reader that read round r from the marker must read every key at round r or later.
    const auto read = [&](std::size_t salt) {
        std::size_t i = salt;
        while (!done.load()) {
            const auto known = kv.get(1, marker);
            if (!known || !known->has_value()) {
                continue;
            }
            const std::uint32_t round = roundOf(**known);
            i = (i * 7919 + 1) % kRoundKeys;
            const auto value = kv.get(0, keyOf(i));
            if (!value || !value->has_value() || roundOf(**value) < round) {
                ++wrong;
            }
            ++checked;
        }
    };
    std::thread first(read, 1);
    std::thread second(read, 2);
    WriteBatch batch = kv.batch();
    for (std::uint32_t round = 1; round <= kRounds; ++round) {
        for (std::size_t i = 0; i < kRoundKeys; ++i) {
            batch.put(0, keyOf(i), valueOf(i, round));
        }
        batch.put(1, marker, valueOf(0, round));
        EXPECT_TRUE(kv.writeBehind(batch));
    }
    EXPECT_TRUE(kv.settle());
    while (checked.load() < 1'000) {
        std::this_thread::yield();
    }
    done = true;
    first.join();
    second.join();
    EXPECT_EQ(wrong.load(), 0U);
}

}  // namespace
}  // namespace gridledger::storage::kv_store_behind_test
