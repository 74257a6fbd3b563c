// A batch cleared after a write holds and writes exactly what a new batch holds: nothing of what
// it held before is written again.
// A column with hashed memtables answers the reads it is made for the way an ordered column
// does: get, a prefix cursor moved forward, and a whole-column cursor in key order, whether a
// bucket's list holds one prefix or several, or has turned into a skip list; walked both ways and
// flushed into a table, its memtable gives every key once, in order, with its newest write, even
// where keys agree in their first eight bytes or differ only in length. A database
// written with a column the list given to open lacks is refused. The memtables a hashed column
// makes after the one made at open, with buckets of their own, read as that one does. A disposable
// store writes no log, syncs nothing, and leaves behind nothing that no flush put in a table. A
// kept store closed cleanly leaves its writes in tables and an empty log, so that the next open
// replays nothing. An in-memory store creates no file and keeps nothing once closed.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/storage/kv_store.h>

#include "support/temp_dir.h"

namespace gridledger::storage::kv_store_test {
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

TEST(KvStoreBatchTest, AClearedBatchWritesWhatANewOneWrites) {
    gridledger::testing::TempDir dir;
    auto store = KvStore::open(dir.path(), kColumns, KvOptions{});
    ASSERT_TRUE(store) << store.error().message;

    WriteBatch reused = (*store)->batch();
    reused.put(0, bytesOf("key7"), bytesOf("before"));
    reused.put(0, bytesOf("gone"), bytesOf("never written"));
    reused.put(1, bytesOf("other"), bytesOf("before"));
    reused.clear();
    const WriteBatch empty = (*store)->batch();
    EXPECT_EQ(reused.count(), 0U);
    EXPECT_EQ(reused.byteSize(), empty.byteSize());

    WriteBatch fresh = (*store)->batch();
    fill(reused);
    fill(fresh);
    EXPECT_EQ(reused.count(), fresh.count());
    EXPECT_EQ(reused.byteSize(), fresh.byteSize());

    ASSERT_TRUE((*store)->write(reused, true));
    for (int i = 0; i < 100; ++i) {
        const auto value = (*store)->get(0, bytesOf("key" + std::to_string(i)));
        ASSERT_TRUE(value) << value.error().message;
        if (i == 7) {
            EXPECT_EQ(*value, std::nullopt);
        } else {
            EXPECT_EQ(*value, Bytes(300, static_cast<std::uint8_t>(i))) << "key" << i;
        }
    }
    const auto gone = (*store)->get(0, bytesOf("gone"));
    ASSERT_TRUE(gone) << gone.error().message;
    EXPECT_EQ(*gone, std::nullopt);
    const auto other = (*store)->get(1, bytesOf("other"));
    ASSERT_TRUE(other) << other.error().message;
    EXPECT_EQ(*other, bytesOf("value"));

    // Cleared after its write, it writes the next batch's writes alone.
    reused.clear();
    reused.put(0, bytesOf("next"), bytesOf("value"));
    ASSERT_TRUE((*store)->write(reused, true));
    const auto next = (*store)->get(0, bytesOf("next"));
    ASSERT_TRUE(next) << next.error().message;
    EXPECT_EQ(*next, bytesOf("value"));
    const auto first = (*store)->get(0, bytesOf("key1"));
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, Bytes(300, std::uint8_t{1}));
}

/** A 4-byte prefix ‖ a big-endian version, the shape of a state value key. */
Bytes versionedKey(std::uint32_t prefix, std::uint64_t version) {
    Bytes key;
    appendU32(key, prefix);
    appendU64(key, version);
    return key;
}

KvOptions hashedOptions() {
    KvOptions options;
    options.prefixColumns.emplace("first", 4);
    options.hashedColumns.emplace("first", 4);
    return options;
}

Bytes keyAt(const Cursor& cursor) {
    return {cursor.key().begin(), cursor.key().end()};
}

/** Every read a hashed column serves, checked against the keys written (`written`). */
void expectReads(const KvStore& store, const std::set<Bytes>& written) {
    for (const Bytes& key : written) {
        const auto value = store.get(0, key);
        ASSERT_TRUE(value) << value.error().message;
        ASSERT_TRUE(value->has_value());
        EXPECT_EQ(**value, Bytes(8, key.back()));
    }
    const auto absent = store.get(0, versionedKey(5, 3));
    ASSERT_TRUE(absent) << absent.error().message;
    EXPECT_EQ(*absent, std::nullopt);

    // A prefix cursor moved forward sees the prefix's keys from the one sought, and no other.
    auto prefixed = store.prefixCursor(0);
    std::vector<Bytes> versions;
    for (prefixed.seek(versionedKey(9, 13)); prefixed.valid(); prefixed.next()) {
        versions.push_back(keyAt(prefixed));
    }
    ASSERT_TRUE(prefixed.status());
    EXPECT_EQ(versions, (std::vector<Bytes>{versionedKey(9, 14), versionedKey(9, 16),
                                            versionedKey(9, 18), versionedKey(9, 20)}));
    prefixed.seek(versionedKey(9, 21));  // past the prefix's last key
    EXPECT_FALSE(prefixed.valid());

    // The whole column, in key order.
    std::vector<Bytes> walked;
    auto cursor = store.cursor(0);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        walked.push_back(keyAt(cursor));
    }
    ASSERT_TRUE(cursor.status());
    EXPECT_EQ(walked, std::vector<Bytes>(written.begin(), written.end()));
}

TEST(KvStoreHashedTest, ReadsAsAnOrderedColumnDoes) {
    gridledger::testing::TempDir dir;
    std::set<Bytes> written;  // std::set orders bytes as RocksDB's bytewise comparator does
    {
        auto store = KvStore::open(dir.path(), kColumns, hashedOptions());
        ASSERT_TRUE(store) << store.error().message;
        // 64 prefixes, each with the even versions 2..20, written in three batches and an order
        // that is neither the prefixes' nor the versions'. Each value is 8 bytes of the key's last.
        for (int round = 0; round < 3; ++round) {
            WriteBatch batch = (*store)->batch();
            for (int next = 20 - (2 * round); next >= 2; next -= 6) {
                const auto version = static_cast<std::uint64_t>(next);
                for (std::uint32_t i = 0; i < 64; ++i) {
                    const Bytes key = versionedKey((i * 37U) % 64U, version);
                    batch.put(0, key, Bytes(8, key.back()));
                    written.insert(key);
                }
            }
            ASSERT_TRUE((*store)->write(batch, true));
        }
        ASSERT_EQ(written.size(), 64U * 10U);
        SCOPED_TRACE("from the memtable");
        expectReads(**store, written);
    }
    // Reopened, the writes are recovered from the write-ahead log into a table.
    auto store = KvStore::open(dir.path(), kColumns, hashedOptions());
    ASSERT_TRUE(store) << store.error().message;
    SCOPED_TRACE("after reopening");
    expectReads(**store, written);
}

TEST(KvStoreHashedTest, AnyNumberOfBucketsReadsTheSameAndReopensWithAnother) {
    // 16 buckets: the 64 prefixes share lists, at least four in one. One bucket: all 640 keys in
    // one list.
    for (const std::size_t buckets : {std::size_t{16}, std::size_t{1}}) {
        SCOPED_TRACE(std::to_string(buckets) + " buckets");
        gridledger::testing::TempDir dir;
        std::set<Bytes> written;
        {
            KvOptions few = hashedOptions();
            few.hashedBuckets = buckets;
            auto store = KvStore::open(dir.path(), kColumns, few);
            ASSERT_TRUE(store) << store.error().message;
            WriteBatch batch = (*store)->batch();
            for (std::uint64_t version = 2; version <= 20; version += 2) {
                for (std::uint32_t i = 0; i < 64; ++i) {
                    const Bytes key = versionedKey((i * 37U) % 64U, version);
                    batch.put(0, key, Bytes(8, key.back()));
                    written.insert(key);
                }
            }
            ASSERT_TRUE((*store)->write(batch, true));
            SCOPED_TRACE("in the memtable");
            expectReads(**store, written);
        }
        // The buckets are the memtable's alone: the store reopens with the default numbers.
        auto store = KvStore::open(dir.path(), kColumns, hashedOptions());
        ASSERT_TRUE(store) << store.error().message;
        SCOPED_TRACE("reopened with the default buckets");
        expectReads(**store, written);
    }

    KvOptions none = hashedOptions();
    none.hashedBuckets = 0;
    gridledger::testing::TempDir other;
    const auto refused = KvStore::open(other.path(), kColumns, none);
    ASSERT_FALSE(refused) << "no bucket";
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
}

TEST(KvStoreHashedTest, ReadersWhileOneWritesSeeEachKeyWholeOrNotYet) {
    gridledger::testing::TempDir dir;
    KvOptions options = hashedOptions();
    options.hashedBuckets = 4;  // lists of about 100 keys each by the end
    auto store = KvStore::open(dir.path(), kColumns, options);
    ASSERT_TRUE(store) << store.error().message;
    constexpr std::uint64_t kVersions = 6;
    constexpr std::uint32_t kPrefixes = 64;
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> wrong{0};
    std::atomic<std::uint64_t> seen{0};
    std::atomic<std::uint64_t> passes{0};
    const auto read = [&](std::uint32_t salt) {
        std::uint32_t turn = salt;
        while (!done.load()) {
            turn = (turn * 1103515245U) + 12345U;
            const std::uint32_t prefix = (turn >> 8U) % kPrefixes;
            const std::uint64_t version = 1 + ((turn >> 20U) % kVersions);
            const Bytes key = versionedKey(prefix, version);
            const auto value = (*store)->get(0, key);
            if (!value || (value->has_value() && **value != Bytes(8, key.back()))) {
                ++wrong;
            }
            // The prefix's keys written so far, from its first, in order, each with its value.
            auto cursor = (*store)->prefixCursor(0);
            std::uint64_t last = 0;
            for (cursor.seek(versionedKey(prefix, 0)); cursor.valid(); cursor.next()) {
                const Bytes at = keyAt(cursor);
                const std::uint64_t atVersion = readU64(ByteView(at).subspan(4));
                const ByteView valueAt = cursor.value();
                if (atVersion <= last ||
                    Bytes(valueAt.begin(), valueAt.end()) != Bytes(8, at.back())) {
                    ++wrong;
                }
                last = atVersion;
                ++seen;
            }
            ++passes;
        }
    };
    std::thread first(read, 1U);
    std::thread second(read, 2U);
    // Every eight writes the writer waits for two more passes of the readers, so that they read
    // while the lists grow however the threads are scheduled.
    const auto awaitPasses = [&passes] {
        const std::uint64_t from = passes.load();
        while (passes.load() < from + 2) {
            std::this_thread::yield();
        }
    };
    for (std::uint64_t version = 1; version <= kVersions; ++version) {
        for (std::uint32_t i = 0; i < kPrefixes; ++i) {
            if (i % 8 == 0) {
                awaitPasses();
            }
            WriteBatch batch = (*store)->batch();
            const Bytes key = versionedKey((i * 37U) % kPrefixes, version);
            batch.put(0, key, Bytes(8, key.back()));
            EXPECT_TRUE((*store)->write(batch, false));
        }
    }
    awaitPasses();
    done = true;
    first.join();
    second.join();
    EXPECT_EQ(wrong.load(), 0U);
    EXPECT_GT(seen.load(), 0U);
    // Afterwards every key reads back, and the column walks them all in order.
    std::vector<Bytes> written;
    for (std::uint32_t prefix = 0; prefix < kPrefixes; ++prefix) {
        for (std::uint64_t version = 1; version <= kVersions; ++version) {
            written.push_back(versionedKey(prefix, version));
            const auto value = (*store)->get(0, written.back());
            ASSERT_TRUE(value && value->has_value());
            EXPECT_EQ(**value, Bytes(8, written.back().back()));
        }
    }
    std::vector<Bytes> walked;
    auto cursor = (*store)->cursor(0);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        walked.push_back(keyAt(cursor));
    }
    EXPECT_EQ(walked, written);
}

TEST(KvStoreHashedTest, AFullMemtableReadsTheSameFromItsTableBesideTheNextMemtable) {
    gridledger::testing::TempDir dir;
    KvOptions options = hashedOptions();
    options.hashedBuckets = 1024;
    auto store = KvStore::open(dir.path(), kColumns, options);
    ASSERT_TRUE(store) << store.error().message;
    // 1,300 values of 64 KiB, 81 MiB, fill the 64 MiB memtable made at open: RocksDB flushes it
    // to a table and goes on in a new memtable.
    constexpr std::uint32_t kWrites = 1300;
    constexpr std::size_t kValueBytes = std::size_t{64} << 10U;
    const auto valueOf = [](std::uint32_t i) {
        return Bytes(kValueBytes, static_cast<std::uint8_t>(i));
    };
    std::set<Bytes> written;
    for (std::uint32_t i = 0; i < kWrites; ++i) {
        const Bytes key = versionedKey(i % 64, i);
        ASSERT_TRUE((*store)->put(0, key, valueOf(i), false));
        written.insert(key);
    }
    // The flush of the first memtable, in the background, ends in a table file.
    const auto hasTable = [&dir] {
        for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
            if (entry.path().extension() == ".sst") {
                return true;
            }
        }
        return false;
    };
    for (int wait = 0; wait < 3000 && !hasTable(); ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(hasTable()) << "the memtable made at open was never flushed";
    for (std::uint32_t i = 0; i < kWrites; ++i) {
        const auto value = (*store)->get(0, versionedKey(i % 64, i));
        ASSERT_TRUE(value) << value.error().message;
        ASSERT_EQ(*value, std::optional<Bytes>(valueOf(i))) << "write " << i;
    }
    // A prefix's keys, from the table and from the later memtable, in version order.
    auto prefixed = (*store)->prefixCursor(0);
    std::vector<Bytes> versions;
    for (prefixed.seek(versionedKey(9, 0)); prefixed.valid(); prefixed.next()) {
        versions.push_back(keyAt(prefixed));
    }
    ASSERT_TRUE(prefixed.status());
    std::vector<Bytes> expected;
    for (std::uint32_t i = 9; i < kWrites; i += 64) {
        expected.push_back(versionedKey(9, i));
    }
    EXPECT_EQ(versions, expected);
    std::vector<Bytes> walked;
    auto cursor = (*store)->cursor(0);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        walked.push_back(keyAt(cursor));
    }
    ASSERT_TRUE(cursor.status());
    EXPECT_EQ(walked, std::vector<Bytes>(written.begin(), written.end()));
}

TEST(KvStoreHashedTest, PrefixLengthsMustAgree) {
    gridledger::testing::TempDir dir;
    KvOptions options = hashedOptions();
    options.hashedColumns["first"] = 8;
    const auto store = KvStore::open(dir.path(), kColumns, options);
    ASSERT_FALSE(store);
    EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
}

TEST(KvStoreLayoutTest, ADatabaseWithAColumnTheListLacksIsRefused) {
    gridledger::testing::TempDir dir;
    {
        auto store = KvStore::open(dir.path(), {"first", "old"}, KvOptions{});
        ASSERT_TRUE(store) << store.error().message;
        ASSERT_TRUE((*store)->put(1, bytesOf("key"), bytesOf("value"), true));
    }
    const auto renamed = KvStore::open(dir.path(), {"first", "new"}, KvOptions{});
    ASSERT_FALSE(renamed);
    EXPECT_EQ(renamed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(renamed.error().message.find("holds column old"), std::string::npos)
        << renamed.error().message;

    // A list with a column more than the database holds adds it.
    auto grown = KvStore::open(dir.path(), {"first", "old", "new"}, KvOptions{});
    ASSERT_TRUE(grown) << grown.error().message;
    const auto kept = (*grown)->get(1, bytesOf("key"));
    ASSERT_TRUE(kept) << kept.error().message;
    EXPECT_EQ(*kept, bytesOf("value"));
}

/** The bytes of the files in `dir` whose name ends in `extension`. */
std::uintmax_t filesBytes(const std::filesystem::path& dir, std::string_view extension) {
    std::uintmax_t total = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() == extension) {
            total += entry.file_size();
        }
    }
    return total;
}

/** The bytes of the write-ahead log files in `dir`. */
std::uintmax_t logBytes(const std::filesystem::path& dir) {
    return filesBytes(dir, ".log");
}

/** Walks the whole column both ways and seeks each key of `model`, the column's expected keys. */
void expectWalks(const KvStore& store, const std::map<Bytes, Bytes>& model) {
    std::vector<std::pair<Bytes, Bytes>> forward;
    auto cursor = store.cursor(0);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        forward.emplace_back(keyAt(cursor), Bytes(cursor.value().begin(), cursor.value().end()));
    }
    ASSERT_TRUE(cursor.status());
    const std::vector<std::pair<Bytes, Bytes>> expected(model.begin(), model.end());
    EXPECT_EQ(forward, expected);
    std::vector<Bytes> backward;
    for (cursor.seekToLast(); cursor.valid(); cursor.prev()) {
        backward.push_back(keyAt(cursor));
    }
    ASSERT_TRUE(cursor.status());
    std::vector<Bytes> reversed;
    for (auto it = model.rbegin(); it != model.rend(); ++it) {
        reversed.push_back(it->first);
    }
    EXPECT_EQ(backward, reversed);
    for (const auto& [key, value] : model) {
        cursor.seek(key);
        ASSERT_TRUE(cursor.valid());
        EXPECT_EQ(keyAt(cursor), key);
        cursor.seekForPrev(key);
        ASSERT_TRUE(cursor.valid());
        EXPECT_EQ(keyAt(cursor), key);
        const auto read = store.get(0, key);
        ASSERT_TRUE(read) << read.error().message;
        EXPECT_EQ(*read, std::optional<Bytes>(value));
    }
}

TEST(KvStoreHashedTest, AFlushWritesTheMemtableInKeyOrderWithTheNewestOfEachKey) {
    gridledger::testing::TempDir dir;
    std::map<Bytes, Bytes> model;  // ordered as RocksDB's bytewise comparator orders keys
    std::set<Bytes> erased;
    // Keys whose first eight bytes are equal (the versions of one prefix, and keys that differ
    // only past their eighth byte or in length), in three batches that write some keys again and
    // erase others.
    std::vector<Bytes> keys;
    for (std::uint32_t i = 0; i < 64; ++i) {
        for (std::uint64_t version = 1; version <= 5; ++version) {
            keys.push_back(versionedKey((i * 37U) % 64U, version));
        }
    }
    for (const std::string_view text :
         {"ABCD", "ABCDE", "ABCDEFGH", "ABCDEFGHI", "ABCDEFGG", "ABCDEFGHA", "ABCDEFGH0"}) {
        keys.push_back(bytesOf(text));
    }
    keys.push_back(Bytes{'A', 'B', 'C', 'D', 0});
    keys.push_back(Bytes{'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 0});
    {
        auto store = KvStore::open(dir.path(), kColumns, hashedOptions());
        ASSERT_TRUE(store) << store.error().message;
        for (std::uint8_t round = 0; round < 3; ++round) {
            WriteBatch batch = (*store)->batch();
            for (std::size_t i = round; i < keys.size(); i += round + 1U) {
                if (round == 2 && i % 5 == 0) {
                    batch.erase(0, keys[i]);
                    model.erase(keys[i]);
                    erased.insert(keys[i]);
                    continue;
                }
                const Bytes value{round, static_cast<std::uint8_t>(i)};
                batch.put(0, keys[i], value);
                model[keys[i]] = value;
                erased.erase(keys[i]);
            }
            ASSERT_TRUE((*store)->write(batch, false));
        }
        ASSERT_FALSE(erased.empty());
        SCOPED_TRACE("from the memtable");
        expectWalks(**store, model);
    }
    // Closing flushed the memtable into a table and left nothing in the log to read it from.
    EXPECT_EQ(logBytes(dir.path()), 0U);
    EXPECT_GT(filesBytes(dir.path(), ".sst"), 0U);
    auto store = KvStore::open(dir.path(), kColumns, hashedOptions());
    ASSERT_TRUE(store) << store.error().message;
    SCOPED_TRACE("from the table");
    expectWalks(**store, model);
    for (const Bytes& key : erased) {
        const auto read = (*store)->get(0, key);
        ASSERT_TRUE(read) << read.error().message;
        EXPECT_EQ(*read, std::nullopt);
    }
}

TEST(KvStoreDisposableTest, WritesReadBackWithoutALogAndAreGoneAfterAClose) {
    for (const bool disposable : {false, true}) {
        SCOPED_TRACE(disposable ? "disposable" : "kept");
        gridledger::testing::TempDir dir;
        KvOptions options;
        options.disposable = disposable;
        {
            auto store = KvStore::open(dir.path(), kColumns, options);
            ASSERT_TRUE(store) << store.error().message;
            WriteBatch batch = (*store)->batch();
            fill(batch);
            ASSERT_TRUE((*store)->write(batch, true));
            ASSERT_TRUE((*store)->syncWal());
            const auto read = (*store)->get(1, bytesOf("other"));
            ASSERT_TRUE(read) << read.error().message;
            EXPECT_EQ(*read, bytesOf("value"));
            EXPECT_EQ((*store)->walSyncs(), disposable ? 0U : 2U);
            EXPECT_EQ(logBytes(dir.path()) == 0, disposable);
        }
        auto reopened = KvStore::open(dir.path(), kColumns, KvOptions{});
        ASSERT_TRUE(reopened) << reopened.error().message;
        const auto after = (*reopened)->get(1, bytesOf("other"));
        ASSERT_TRUE(after) << after.error().message;
        EXPECT_EQ(after->has_value(), !disposable);
    }
}

TEST(KvStoreInMemoryTest, WritesReadBackWithoutAFileAndAreGoneAfterAClose) {
    gridledger::testing::TempDir dir;
    const std::filesystem::path path = dir.path() / "store";
    KvOptions options;
    options.inMemory = true;
    options.hashedColumns.emplace("second", 4);  // a hashed memtable works in memory too
    {
        auto store = KvStore::open(path, kColumns, options);
        ASSERT_TRUE(store) << store.error().message;
        WriteBatch batch = (*store)->batch();
        fill(batch);
        ASSERT_TRUE((*store)->write(batch, true));
        EXPECT_EQ((*store)->walSyncs(), 0U);
        const auto read = (*store)->get(1, bytesOf("other"));
        ASSERT_TRUE(read) << read.error().message;
        EXPECT_EQ(*read, bytesOf("value"));
        const auto erased = (*store)->get(0, bytesOf("key7"));
        ASSERT_TRUE(erased) << erased.error().message;
        EXPECT_EQ(*erased, std::nullopt);
        EXPECT_FALSE(std::filesystem::exists(path));
    }
    EXPECT_FALSE(std::filesystem::exists(path));
    auto again = KvStore::open(path, kColumns, options);
    ASSERT_TRUE(again) << again.error().message;
    const auto after = (*again)->get(1, bytesOf("other"));
    ASSERT_TRUE(after) << after.error().message;
    EXPECT_EQ(*after, std::nullopt);
}

TEST(KvStoreCloseTest, AClosedStoreLeavesItsWritesInTablesAndNothingInItsLogToReplay) {
    gridledger::testing::TempDir dir;
    {
        auto store = KvStore::open(dir.path(), kColumns);
        ASSERT_TRUE(store) << store.error().message;
        WriteBatch batch = (*store)->batch();
        fill(batch);
        ASSERT_TRUE((*store)->write(batch, true));
        EXPECT_GT(logBytes(dir.path()), 0U);
        EXPECT_EQ(filesBytes(dir.path(), ".sst"), 0U);
    }
    EXPECT_EQ(logBytes(dir.path()), 0U);
    EXPECT_GT(filesBytes(dir.path(), ".sst"), 0U);
    auto reopened = KvStore::open(dir.path(), kColumns);
    ASSERT_TRUE(reopened) << reopened.error().message;
    const auto kept = (*reopened)->get(0, bytesOf("key8"));
    ASSERT_TRUE(kept) << kept.error().message;
    EXPECT_EQ(*kept, Bytes(300, 8));
    const auto erased = (*reopened)->get(0, bytesOf("key7"));
    ASSERT_TRUE(erased) << erased.error().message;
    EXPECT_FALSE(erased->has_value());
}

}  // namespace
}  // namespace gridledger::storage::kv_store_test
