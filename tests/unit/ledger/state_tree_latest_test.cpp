// The state tree's latest values: a get at the committed tip is answered from memory, and no get
// ever answers other than the store would.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "state_tree_support.h"

namespace gridledger::ledger::state_tree_latest_test {
namespace {

using tree_testing::kNodes;
using tree_testing::kValues;
using tree_testing::TestDb;

Hash256 keyOf(std::uint8_t tag) {
    Hash256 key;
    key[0] = tag;
    key[31] = tag;
    return key;
}

/** The value `key` gets at `version` in these tests: both in its bytes. */
Bytes valueAt(std::uint64_t version, std::uint8_t tag) {
    Bytes out{tag};
    appendU64(out, version);
    return out;
}

/** The value a successful get returned; a failed get is a test failure, read as no value. */
std::optional<Bytes> valueOf(const Result<std::optional<Bytes>>& read) {
    if (!read) {
        ADD_FAILURE() << "get failed: " << read.error().message;
        return std::nullopt;
    }
    return *read;
}

std::optional<Bytes> holds(Bytes value) {
    return value;
}

std::optional<Bytes> holdsNone() {
    return std::nullopt;
}

/** The value column's key of `key` at `version`, as docs/state_tree.md lays it out. */
Bytes valueRecordKey(const Hash256& key, std::uint64_t version) {
    Bytes out(key.view().begin(), key.view().end());
    appendU64(out, ~version);  // newest first
    return out;
}

/** Overwrites `key`'s record at `version` with bytes that decode as no value record. */
void damageValueRecord(storage::KvStore& store, const Hash256& key, std::uint64_t version) {
    auto batch = store.batch();
    batch.put(kValues, valueRecordKey(key, version), Bytes{0xee, 0xee});
    ASSERT_TRUE(store.write(batch, false));
}

TEST(StateTreeLatest, AGetAtTheCommittedTipIsAnsweredFromMemoryAndOthersFromTheStore) {
    TestDb db;
    const Hash256 k = keyOf(1);
    db.commit(1, {TreeUpdate{k, valueAt(1, 1)}});
    db.commit(2, {TreeUpdate{k, valueAt(2, 1)}});
    damageValueRecord(db.store(), k, 2);
    damageValueRecord(db.store(), k, 1);

    // The committed version's write is in memory: its damaged record is never read.
    EXPECT_EQ(valueOf(db.tree().get(k, 2)), holds(valueAt(2, 1)));
    // A version before the key's last write is read from the store, and finds the damage.
    const auto older = db.tree().get(k, 1);
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error().code, ErrorCode::kCorrupt);
}

TEST(StateTreeLatest, AStoreReadAtTheTipKeepsTheRecordItFoundButNotAKeyNeverWritten) {
    TestDb db;
    const Hash256 k = keyOf(1);
    const Hash256 untouched = keyOf(2);
    db.commit(1, {TreeUpdate{untouched, valueAt(1, 2)}, TreeUpdate{k, valueAt(1, 1)}});
    // A new tree over the store knows no tip: it learns nothing until it is told of a commit.
    StateTree fresh(db.store(), kNodes, kValues);
    EXPECT_EQ(valueOf(fresh.get(untouched, 1)), holds(valueAt(1, 2)));
    db.commitTo(fresh, 2, {TreeUpdate{k, valueAt(2, 1)}});
    // `untouched` read at the tip (2) from the store, kept, then its record damaged.
    EXPECT_EQ(valueOf(fresh.get(untouched, 2)), holds(valueAt(1, 2)));
    const Hash256 absent = keyOf(3);
    EXPECT_EQ(valueOf(fresh.get(absent, 2)), holdsNone());
    damageValueRecord(db.store(), untouched, 1);
    EXPECT_EQ(valueOf(fresh.get(untouched, 2)), holds(valueAt(1, 2)));
    EXPECT_EQ(valueOf(fresh.get(untouched, 1)), holds(valueAt(1, 2)));
    // A key never written is not kept: a record that appears for it is read.
    auto batch = db.store().batch();
    batch.put(kValues, valueRecordKey(absent, 2), Bytes{0x01, 0x0a});
    ASSERT_TRUE(db.store().write(batch, false));
    EXPECT_EQ(valueOf(fresh.get(absent, 2)), holds(Bytes{0x0a}));
    db.commitTo(fresh, 3, {TreeUpdate{absent, valueAt(3, 3)}});
    EXPECT_EQ(valueOf(fresh.get(absent, 3)), holds(valueAt(3, 3)));
    EXPECT_EQ(valueOf(fresh.get(absent, 1)), holdsNone());
}

/** Writes a record for `key` at `version` that no apply made, as if the store held it. */
void plantValueRecord(storage::KvStore& store, const Hash256& key, std::uint64_t version) {
    auto batch = store.batch();
    batch.put(kValues, valueRecordKey(key, version), Bytes{0x01, 0x0a});
    ASSERT_TRUE(store.write(batch, false));
}

TEST(StateTreeLatest,
     ATreeThatAppliedEveryVersionSinceTheStoreWasEmptyAnswersAbsentKeysFromMemory) {
    TestDb db;
    db.commit(1, {TreeUpdate{keyOf(1), valueAt(1, 1)}});
    db.commit(2, {TreeUpdate{keyOf(2), valueAt(2, 2)}, TreeUpdate{keyOf(1), std::nullopt}});
    const Hash256 absent = keyOf(3);
    plantValueRecord(db.store(), absent, 1);
    // Every key written up to the tip has an entry: one without is absent, and the planted
    // record is never read.
    EXPECT_EQ(valueOf(db.tree().get(absent, 2)), holdsNone());
    EXPECT_EQ(valueOf(db.tree().get(absent, 1)), holdsNone());
    EXPECT_EQ(valueOf(db.tree().get(keyOf(1), 2)), holdsNone());
    EXPECT_EQ(valueOf(db.tree().get(keyOf(2), 2)), holds(valueAt(2, 2)));
    // Below an entry's version the store answers, as before.
    EXPECT_EQ(valueOf(db.tree().get(keyOf(1), 1)), holds(valueAt(1, 1)));
    // A tree opened over a store that already held versions cannot know every key: it reads.
    StateTree reopened(db.store(), kNodes, kValues);
    db.commitTo(reopened, 3, {TreeUpdate{keyOf(4), valueAt(3, 4)}});
    EXPECT_EQ(valueOf(reopened.get(absent, 3)), holds(Bytes{0x0a}));
}

TEST(StateTreeLatest, ASkippedVersionOrAKeyWithoutRoomMakesAbsentKeysReadFromTheStore) {
    const Hash256 absent = keyOf(9);
    {
        TestDb db;
        StateTree other(db.store(), kNodes, kValues);
        db.commit(1, {TreeUpdate{keyOf(1), valueAt(1, 1)}});
        db.commitTo(other, 2, {TreeUpdate{keyOf(2), valueAt(2, 2)}});
        // Beyond this tree's tip: the store, which has the other tree's write.
        EXPECT_EQ(valueOf(db.tree().get(keyOf(2), 2)), holds(valueAt(2, 2)));
        db.commit(3, {TreeUpdate{keyOf(3), valueAt(3, 3)}});
        EXPECT_EQ(valueOf(db.tree().get(keyOf(2), 3)), holds(valueAt(2, 2)));
        plantValueRecord(db.store(), absent, 3);
        EXPECT_EQ(valueOf(db.tree().get(absent, 3)), holds(Bytes{0x0a}));
    }
    {
        TestDb db;
        // Room for one account-sized entry, not two.
        StateTree small(db.store(), kNodes, kValues, StateTree::kApplyCacheBytes, 150);
        db.commitTo(small, 1, {TreeUpdate{keyOf(1), valueAt(1, 1)}});
        plantValueRecord(db.store(), absent, 1);
        EXPECT_EQ(valueOf(small.get(absent, 1)), holdsNone());
        db.commitTo(small, 2, {TreeUpdate{keyOf(2), valueAt(2, 2)}});
        EXPECT_EQ(valueOf(small.get(keyOf(2), 2)), holds(valueAt(2, 2)));
        EXPECT_EQ(valueOf(small.get(absent, 2)), holds(Bytes{0x0a}));
    }
}

TEST(StateTreeLatest, AStoreReadBelowTheTipIsNotKept) {
    TestDb db;
    StateTree other(db.store(), kNodes, kValues);
    const Hash256 k = keyOf(1);
    db.commit(1, {TreeUpdate{k, valueAt(1, 1)}});
    db.commitTo(other, 2, {TreeUpdate{k, valueAt(2, 1)}});
    // Version 2 was written by the other tree: the next committed version drops what this tree
    // knew, so `k` is no longer known here.
    db.commit(3, {TreeUpdate{keyOf(2), valueAt(3, 2)}});
    // Read below the tip, `k` has its version-1 value, which is not its value at the tip.
    EXPECT_EQ(valueOf(db.tree().get(k, 1)), holds(valueAt(1, 1)));
    EXPECT_EQ(valueOf(db.tree().get(k, 3)), holds(valueAt(2, 1)));
}

TEST(StateTreeLatest, AVersionWrittenByAnotherTreeIsNeverAnsweredFromMemory) {
    TestDb db;
    StateTree other(db.store(), kNodes, kValues);
    const Hash256 k = keyOf(1);
    db.commit(1, {TreeUpdate{k, valueAt(1, 1)}});
    db.commitTo(other, 2, {TreeUpdate{k, std::nullopt}});
    // Beyond this tree's tip: from the store.
    EXPECT_EQ(valueOf(db.tree().get(k, 2)), holdsNone());
    EXPECT_EQ(valueOf(db.tree().get(k, 1)), holds(valueAt(1, 1)));
    db.commit(3, {TreeUpdate{keyOf(2), valueAt(3, 2)}});
    EXPECT_EQ(valueOf(db.tree().get(k, 3)), holdsNone());
    EXPECT_EQ(valueOf(db.tree().get(k, 2)), holdsNone());
    EXPECT_EQ(valueOf(db.tree().get(k, 1)), holds(valueAt(1, 1)));
}

TEST(StateTreeLatest, ADroppedApplyNeverReachesMemory) {
    TestDb db;
    const Hash256 k = keyOf(1);
    db.commit(1, {TreeUpdate{k, valueAt(1, 1)}});
    {
        auto dropped = db.store().batch();
        const std::vector<TreeUpdate> updates{TreeUpdate{k, Bytes{0x0d}}};
        ASSERT_TRUE(db.tree().apply(2, updates, dropped));
    }
    db.tree().committed(1);  // not the pending version: changes nothing
    EXPECT_EQ(valueOf(db.tree().get(k, 1)), holds(valueAt(1, 1)));
    EXPECT_EQ(valueOf(db.tree().get(k, 2)), holds(valueAt(1, 1)));
    db.commit(2, {TreeUpdate{keyOf(2), valueAt(2, 2)}});
    EXPECT_EQ(valueOf(db.tree().get(k, 2)), holds(valueAt(1, 1)));
    // Told twice: the second call has no apply behind it.
    db.tree().committed(2);
    EXPECT_EQ(valueOf(db.tree().get(keyOf(2), 2)), holds(valueAt(2, 2)));
}

TEST(StateTreeLatest, WithoutMemoryEveryGetReadsTheStore) {
    TestDb db;
    StateTree uncached(db.store(), kNodes, kValues, StateTree::kApplyCacheBytes, 0);
    const Hash256 k = keyOf(1);
    db.commitTo(uncached, 1, {TreeUpdate{k, valueAt(1, 1)}});
    damageValueRecord(db.store(), k, 1);
    const auto read = uncached.get(k, 1);
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().code, ErrorCode::kCorrupt);
}

TEST(StateTreeLatest, ReadersSeeEachVersionBeforeAndAfterTheTreeIsToldOfIt) {
    // Key 1 is written at every version, key 2 at every even one, key 3 never. Readers read the
    // latest version in the store and its values; the writer lets them read each version once
    // its batch is written but before the tree is told (the store answers), and again after
    // (memory answers). Every answer must be that version's values.
    constexpr std::uint64_t kVersions = 200;
    TestDb db;
    db.commit(1, {TreeUpdate{keyOf(1), valueAt(1, 1)}, TreeUpdate{keyOf(2), valueAt(0, 2)}});
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> reads{0};
    std::atomic<std::uint64_t> seen{0};  // the highest version a finished read was at
    std::atomic<std::uint64_t> wrong{0};
    auto reader = [&] {
        while (!done.load()) {
            const auto latest = db.tree().latestVersion();
            if (!latest || !*latest) {
                ++wrong;
                return;
            }
            const std::uint64_t v = **latest;
            const auto every = db.tree().get(keyOf(1), v);
            const auto even = db.tree().get(keyOf(2), v);
            const auto never = db.tree().get(keyOf(3), v);
            const std::uint64_t lastEven = v - v % 2;
            if (!every || !even || !never || *every != holds(valueAt(v, 1)) ||
                *even != holds(valueAt(lastEven, 2)) || *never != holdsNone()) {
                ++wrong;
            }
            std::uint64_t before = seen.load();
            while (before < v && !seen.compare_exchange_weak(before, v)) {
            }
            ++reads;
        }
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto waitFor = [&](auto&& condition) {
        while (!condition() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
        }
        return condition();
    };
    std::thread first(reader);
    std::thread second(reader);
    // The readers run until joined: a failure stops the versions, never the test, first.
    for (std::uint64_t v = 2; v <= kVersions; ++v) {
        std::vector<TreeUpdate> updates{TreeUpdate{keyOf(1), valueAt(v, 1)}};
        if (v % 2 == 0) {
            updates.push_back(TreeUpdate{keyOf(2), valueAt(v, 2)});
        }
        auto batch = db.store().batch();
        if (!db.tree().apply(v, updates, batch) || !db.store().write(batch, false)) {
            ADD_FAILURE() << "cannot commit version " << v;
            break;
        }
        if (!waitFor([&] { return seen.load() >= v; })) {
            ADD_FAILURE() << "no read at version " << v;
            break;
        }
        db.tree().committed(v);
        // Each reader has at most one read in flight: the third to finish began after this.
        const std::uint64_t target = reads.load() + 3;
        if (!waitFor([&] { return reads.load() >= target; })) {
            ADD_FAILURE() << "no read after version " << v << " was committed";
            break;
        }
    }
    done = true;
    first.join();
    second.join();
    EXPECT_EQ(wrong.load(), 0U);
}

}  // namespace
}  // namespace gridledger::ledger::state_tree_latest_test
