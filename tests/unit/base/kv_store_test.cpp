// A batch made with room reserved for its writes holds and writes exactly what a batch made
// without holds: the reservation changes where the bytes live, never which bytes are written.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/storage/kv_store.h>

#include "support/temp_dir.h"

namespace gridledger::storage {
namespace {

const std::vector<std::string> kColumns{"first", "second"};

Bytes bytesOf(std::string_view text) {
    return {text.begin(), text.end()};
}

/** Puts 100 keys in column 0 and one in column 1, and erases one of the 100. */
void fill(WriteBatch& batch) {
    for (int i = 0; i < 100; ++i) {
        batch.put(0, bytesOf("key" + std::to_string(i)), Bytes(300, static_cast<std::uint8_t>(i)));
    }
    batch.put(1, bytesOf("other"), bytesOf("value"));
    batch.erase(0, bytesOf("key7"));
}

TEST(KvStoreBatchTest, ReservedRoomChangesNothingWritten) {
    gridledger::testing::TempDir dir;
    auto store = KvStore::open(dir.path(), kColumns, KvOptions{});
    ASSERT_TRUE(store) << store.error().message;

    WriteBatch plain = (*store)->batch();
    WriteBatch small = (*store)->batch(64);         // less than the writes: it grows as needed
    WriteBatch large = (*store)->batch(1U << 20U);  // more than the writes
    EXPECT_EQ(large.count(), 0U);
    EXPECT_EQ(large.byteSize(), plain.byteSize());
    fill(plain);
    fill(small);
    fill(large);
    EXPECT_EQ(small.count(), plain.count());
    EXPECT_EQ(large.count(), plain.count());
    EXPECT_EQ(small.byteSize(), plain.byteSize());
    EXPECT_EQ(large.byteSize(), plain.byteSize());

    ASSERT_TRUE((*store)->write(large, true));
    for (int i = 0; i < 100; ++i) {
        const auto value = (*store)->get(0, bytesOf("key" + std::to_string(i)));
        ASSERT_TRUE(value) << value.error().message;
        if (i == 7) {
            EXPECT_EQ(*value, std::nullopt);
        } else {
            EXPECT_EQ(*value, Bytes(300, static_cast<std::uint8_t>(i))) << "key" << i;
        }
    }
    const auto other = (*store)->get(1, bytesOf("other"));
    ASSERT_TRUE(other) << other.error().message;
    EXPECT_EQ(*other, bytesOf("value"));
}

}  // namespace
}  // namespace gridledger::storage
