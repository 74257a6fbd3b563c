#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/storage/kv_store.h>

#include "state_tree_support.h"

namespace gridledger::ledger::state_tree_test {
namespace {

using namespace tree_testing;

/** True when `proof` (as bytes) no longer proves the claim: undecodable or not verifying. */
bool rejected(const Bytes& encoded, const Hash256& root, const Hash256& key,
              const std::optional<Bytes>& value) {
    auto proof = decodeProof(encoded);
    return !proof || !verifyProof(root, key, value, *proof);
}

/** Every single-byte change of the encoded proof and of the root breaks the proof. */
void expectEveryByteMatters(const StateProof& proof, const Hash256& root, const Hash256& key,
                            const std::optional<Bytes>& value) {
    const Bytes encoded = encodeProof(proof);
    ASSERT_FALSE(rejected(encoded, root, key, value));
    for (std::size_t i = 0; i < encoded.size(); ++i) {
        // Three changes for each byte of the header and leaf, one for each sibling byte.
        const std::vector<unsigned> masks = i < 68 ? std::vector<unsigned>{0x01, 0x80, 0xff}
                                                   : std::vector<unsigned>{0x01U << (i % 8)};
        for (const unsigned mask : masks) {
            Bytes changed = encoded;
            changed[i] = static_cast<std::uint8_t>(changed[i] ^ mask);
            EXPECT_TRUE(rejected(changed, root, key, value)) << "proof byte " << i;
        }
    }
    for (std::size_t i = 0; i < Hash256::size(); ++i) {
        Hash256 otherRoot = root;
        otherRoot[i] = static_cast<std::uint8_t>(otherRoot[i] ^ 0x01);
        EXPECT_FALSE(verifyProof(otherRoot, key, value, proof)) << "root byte " << i;
    }
}

/** Changing the value (or claiming absence) and changing any key byte break an inclusion proof. */
void expectInclusionIsTight(const StateProof& proof, const Hash256& root, const Hash256& key,
                            const Bytes& value) {
    expectEveryByteMatters(proof, root, key, value);
    EXPECT_FALSE(verifyProof(root, key, std::nullopt, proof));
    Bytes longer = value;
    longer.push_back(0);
    EXPECT_FALSE(verifyProof(root, key, longer, proof));
    for (std::size_t i = 0; i < value.size(); ++i) {
        Bytes changed = value;
        changed[i] = static_cast<std::uint8_t>(changed[i] ^ 0x01);
        EXPECT_FALSE(verifyProof(root, key, changed, proof)) << "value byte " << i;
    }
    for (std::size_t i = 0; i < Hash256::size(); ++i) {
        Hash256 otherKey = key;
        otherKey[i] = static_cast<std::uint8_t>(otherKey[i] ^ 0x01);
        EXPECT_FALSE(verifyProof(root, otherKey, value, proof)) << "key byte " << i;
    }
}

/**
 * A non-inclusion proof breaks when a value is claimed, and when a key bit on the proven path
 * changes. (Bits below the end of the path are free: every key under that subtree is absent.)
 */
void expectNonInclusionIsTight(const StateProof& proof, const Hash256& root, const Hash256& key) {
    expectEveryByteMatters(proof, root, key, std::nullopt);
    EXPECT_FALSE(verifyProof(root, key, Bytes{}, proof));
    EXPECT_FALSE(verifyProof(root, key, Bytes{0x01}, proof));
    for (std::size_t bit = 0; bit < proof.siblings.size(); ++bit) {
        EXPECT_FALSE(verifyProof(root, flipBit(key, bit), std::nullopt, proof))
            << "key bit " << bit;
    }
}

std::uint64_t testSeed() {
    if (const char* text = std::getenv("GRIDLEDGER_TEST_SEED")) {
        return std::strtoull(text, nullptr, 10);
    }
    return 0x5eed'2024'0611ULL;
}

TEST(StateTree, RootDoesNotDependOnInsertionOrderOrBatchSplit) {
    std::mt19937_64 rng(7);
    const auto model = randomContents(rng, 400);
    auto updates = asUpdates(model);

    TestDb oneVersion;
    const Hash256 expected = oneVersion.commit(1, updates);
    EXPECT_EQ(expected, referenceRoot(model));

    for (int round = 0; round < 3; ++round) {
        std::shuffle(updates.begin(), updates.end(), rng);
        TestDb split;
        std::uint64_t version = 10;
        Hash256 root;
        for (std::size_t begin = 0; begin < updates.size();) {
            const std::size_t size = std::min<std::size_t>(1 + rng() % 37, updates.size() - begin);
            root = split.commit(version++, {updates.begin() + static_cast<long>(begin),
                                            updates.begin() + static_cast<long>(begin + size)});
            begin += size;
        }
        EXPECT_EQ(root, expected) << "round " << round;
    }

    TestDb oneByOne;
    std::uint64_t version = 1;
    Hash256 root;
    for (auto it = updates.rbegin(); it != updates.rend(); ++it) {
        root = oneByOne.commit(version++, {*it});
    }
    EXPECT_EQ(root, expected);
}

TEST(StateTree, RootDoesNotDependOnHistory) {
    std::mt19937_64 rng(11);
    const auto model = randomContents(rng, 300);
    const auto extra = randomContents(rng, 150);
    TestDb direct;
    const Hash256 expected = direct.commit(1, asUpdates(model));

    // Insert extra keys and change values, then undo it all: the root comes back.
    TestDb detour;
    detour.commit(1, asUpdates(extra));
    detour.commit(2, asUpdates(model));
    std::vector<TreeUpdate> undo;
    for (const auto& [key, value] : extra) {
        if (!model.contains(key)) {
            undo.push_back(TreeUpdate{key, std::nullopt});
        }
    }
    std::vector<TreeUpdate> scramble;
    scramble.reserve(model.size());
    for (const auto& [key, value] : model) {
        scramble.push_back(TreeUpdate{key, Bytes{0xde, 0xad}});
    }
    detour.commit(3, scramble);
    detour.commit(4, undo);
    EXPECT_EQ(detour.commit(5, asUpdates(model)), expected);
}

TEST(StateTree, LastUpdateOfADuplicateKeyWins) {
    std::mt19937_64 rng(3);
    const Hash256 a = randomKey(rng);
    const Hash256 b = randomKey(rng);
    TestDb db;
    const Hash256 root =
        db.commit(1, {{a, Bytes{1}}, {b, Bytes{2}}, {a, Bytes{3}}, {b, std::nullopt}});
    EXPECT_EQ(*db.tree().get(a, 1), Bytes{3});
    EXPECT_EQ(*db.tree().get(b, 1), std::nullopt);
    TestDb plain;
    EXPECT_EQ(root, plain.commit(1, {{a, Bytes{3}}}));
}

TEST(StateTree, InclusionProofsVerifyAndBreakOnAnyChange) {
    std::mt19937_64 rng(5);
    const auto model = randomContents(rng, 200);
    TestDb db;
    const Hash256 root = db.commit(1, asUpdates(model));
    std::size_t checked = 0;
    for (auto it = model.begin(); it != model.end(); std::advance(it, 9), ++checked) {
        auto proof = db.tree().prove(it->first, 1);
        ASSERT_TRUE(proof) << proof.error().message;
        ASSERT_TRUE(proof->leaf);
        EXPECT_EQ(decodeProof(encodeProof(*proof)), *proof);
        expectInclusionIsTight(*proof, root, it->first, it->second);
        if (std::distance(it, model.end()) <= 9) {
            break;
        }
    }
    EXPECT_GE(checked, 20U);
}

TEST(StateTree, DeepProofsWhereKeysShareAllButTheLastBits) {
    std::mt19937_64 rng(13);
    const Hash256 a = randomKey(rng);
    const Hash256 b = flipBit(a, 200);
    const Hash256 c = flipBit(a, 255);
    TestDb db;
    const Hash256 root = db.commit(1, {{a, Bytes{1}}, {b, Bytes{2}}, {c, Bytes{3}}});

    auto inclusion = db.tree().prove(c, 1);
    ASSERT_TRUE(inclusion);
    EXPECT_EQ(inclusion->siblings.size(), 256U);
    expectInclusionIsTight(*inclusion, root, c, Bytes{3});

    const Hash256 absent = flipBit(b, 230);  // ends at leaf b, 201 bits down
    auto exclusion = db.tree().prove(absent, 1);
    ASSERT_TRUE(exclusion);
    EXPECT_EQ(exclusion->siblings.size(), 201U);
    EXPECT_EQ(exclusion->leaf->key, b);
    expectNonInclusionIsTight(*exclusion, root, absent);
}

TEST(StateTree, NonInclusionInTheEmptyTree) {
    std::mt19937_64 rng(17);
    TestDb db;
    const Hash256 root = db.commit(1, {});
    EXPECT_EQ(root, emptyTreeRoot());
    const Hash256 key = randomKey(rng);
    auto proof = db.tree().prove(key, 1);
    ASSERT_TRUE(proof);
    EXPECT_TRUE(proof->siblings.empty());
    EXPECT_FALSE(proof->leaf);
    expectNonInclusionIsTight(*proof, root, key);
}

TEST(StateTree, NonInclusionInATreeWithOneLeaf) {
    std::mt19937_64 rng(19);
    const Hash256 only = randomKey(rng);
    const Hash256 absent = randomKey(rng);
    TestDb db;
    const Hash256 root = db.commit(1, {{only, Bytes{9, 9}}});
    auto proof = db.tree().prove(absent, 1);
    ASSERT_TRUE(proof);
    EXPECT_TRUE(proof->siblings.empty());
    ASSERT_TRUE(proof->leaf);
    EXPECT_EQ(proof->leaf->key, only);
    expectNonInclusionIsTight(*proof, root, absent);

    auto inclusion = db.tree().prove(only, 1);
    ASSERT_TRUE(inclusion);
    EXPECT_EQ(*inclusion, *proof);  // the same leaf is met on every path
    expectInclusionIsTight(*inclusion, root, only, Bytes{9, 9});
}

TEST(StateTree, NonInclusionEndingAtAnEmptyChildOrAtAnotherLeaf) {
    std::mt19937_64 rng(23);
    const auto model = randomContents(rng, 100);
    TestDb db;
    const Hash256 root = db.commit(1, asUpdates(model));
    bool sawEmpty = false;
    bool sawLeaf = false;
    for (int i = 0; i < 200 && !(sawEmpty && sawLeaf); ++i) {
        const Hash256 key = randomKey(rng);
        auto proof = db.tree().prove(key, 1);
        ASSERT_TRUE(proof);
        ASSERT_FALSE(proof->siblings.empty());
        const bool atLeaf = proof->leaf.has_value();
        if ((atLeaf && sawLeaf) || (!atLeaf && sawEmpty)) {
            EXPECT_TRUE(verifyProof(root, key, std::nullopt, *proof));
            continue;
        }
        (atLeaf ? sawLeaf : sawEmpty) = true;
        if (atLeaf) {
            EXPECT_NE(proof->leaf->key, key);
            // The leaf met does not prove the other key holds another value.
            EXPECT_FALSE(verifyProof(root, key, model.at(proof->leaf->key), *proof));
        }
        expectNonInclusionIsTight(*proof, root, key);
    }
    EXPECT_TRUE(sawEmpty);
    EXPECT_TRUE(sawLeaf);
}

TEST(StateTree, RandomOperationsAgreeWithAReferenceMap) {
    const std::uint64_t seed = testSeed();
    SCOPED_TRACE("seed=" + std::to_string(seed) + " (rerun with GRIDLEDGER_TEST_SEED)");
    std::mt19937_64 rng(seed);
    std::map<Hash256, Bytes> model;
    std::vector<Hash256> live;
    struct Snapshot {
        std::uint64_t version;
        Hash256 root;
        std::vector<std::pair<Hash256, std::optional<Bytes>>> samples;
    };
    std::vector<Snapshot> snapshots;
    TestDb db;
    constexpr std::size_t kOperations = 100'000;
    constexpr std::uint64_t kCheckEvery = 500;
    std::size_t done = 0;
    for (std::uint64_t version = 1; done < kOperations; ++version) {
        const std::size_t count = std::min<std::size_t>(1 + rng() % 50, kOperations - done);
        std::vector<TreeUpdate> updates;
        for (std::size_t i = 0; i < count; ++i) {
            const auto choice = rng() % 100;
            Hash256 key = randomKey(rng);
            std::optional<Bytes> value = randomValue(rng);
            std::optional<std::size_t> liveIndex;
            if (!live.empty() && choice >= 45) {
                liveIndex = rng() % live.size();
                key = live[*liveIndex];
                if (choice >= 75) {  // delete a live key, or an absent one next to it
                    value.reset();
                    key = choice < 92 ? key : flipBit(key, rng() % 256);
                }
            } else if (!live.empty() && choice < 9) {  // insert next to a live key
                key = flipBit(live[rng() % live.size()], rng() % 256);
            }
            if (value) {
                if (model.insert_or_assign(key, *value).second) {
                    live.push_back(key);
                }
            } else if (model.erase(key) == 1) {
                const auto at = live[*liveIndex] == key
                                    ? *liveIndex
                                    : static_cast<std::size_t>(
                                          std::find(live.begin(), live.end(), key) - live.begin());
                live[at] = live.back();
                live.pop_back();
            }
            updates.push_back(TreeUpdate{key, value});
        }
        done += count;
        const Hash256 root = db.commit(version, updates);
        for (const auto& update : updates) {
            auto got = db.tree().get(update.key, version);
            ASSERT_TRUE(got);
            const auto it = model.find(update.key);
            ASSERT_EQ(*got, it == model.end() ? std::nullopt : std::optional(it->second))
                << "version " << version;
        }
        if (version % kCheckEvery != 0 && done < kOperations) {
            continue;
        }
        SCOPED_TRACE("version " + std::to_string(version));
        ASSERT_EQ(model.size(), live.size());
        TestDb fresh;
        ASSERT_EQ(root, fresh.commit(1, asUpdates(model)));
        ASSERT_EQ(root, referenceRoot(model));
        for (const auto& snapshot : snapshots) {
            ASSERT_EQ(*db.tree().rootAt(snapshot.version), snapshot.root);
            for (const auto& [key, value] : snapshot.samples) {
                ASSERT_EQ(*db.tree().get(key, snapshot.version), value);
            }
        }
        Snapshot snapshot{version, root, {}};
        for (int i = 0; i < 40 && !live.empty(); ++i) {
            const Hash256 key = i % 4 == 0 ? randomKey(rng) : live[rng() % live.size()];
            const auto it = model.find(key);
            const auto value = it == model.end() ? std::nullopt : std::optional(it->second);
            snapshot.samples.emplace_back(key, value);
            auto proof = db.tree().prove(key, version);
            ASSERT_TRUE(proof);
            ASSERT_TRUE(verifyProof(root, key, value, *proof));
        }
        snapshots.push_back(std::move(snapshot));
    }
    EXPECT_GE(snapshots.size(), 5U);
}

TEST(StateTree, RootsDoNotDependOnApplysNodeCache) {
    // The same versions on a tree with the whole cache, one with none (every node read from the
    // store), one whose cache fills after a few hundred nodes, and one restarted every 7 versions
    // (a cold cache over nodes written by an earlier process).
    std::mt19937_64 rng(41);
    TestDb whole;
    TestDb none(true, 0);
    TestDb small(true, 64U << 10U);
    TestDb restarted;
    std::map<Hash256, Bytes> model;
    std::vector<Hash256> live;
    for (std::uint64_t version = 1; version <= 60; ++version) {
        std::vector<TreeUpdate> updates;
        const std::size_t count = 1 + rng() % 200;
        for (std::size_t i = 0; i < count; ++i) {
            if (!live.empty() && rng() % 3 == 0) {
                const Hash256 key = live[rng() % live.size()];
                const bool erase = rng() % 2 == 0;
                updates.push_back(
                    TreeUpdate{key, erase ? std::nullopt : std::optional<Bytes>(randomValue(rng))});
                continue;
            }
            live.push_back(randomKey(rng));
            updates.push_back(TreeUpdate{live.back(), randomValue(rng)});
        }
        for (const auto& update : updates) {
            if (update.value) {
                model.insert_or_assign(update.key, *update.value);
            } else {
                model.erase(update.key);
            }
        }
        if (version % 7 == 0) {
            restarted.reopen();
        }
        const Hash256 expected = referenceRoot(model);
        ASSERT_EQ(whole.commit(version, updates), expected) << "version " << version;
        ASSERT_EQ(none.commit(version, updates), expected) << "version " << version;
        ASSERT_EQ(small.commit(version, updates), expected) << "version " << version;
        ASSERT_EQ(restarted.commit(version, updates), expected) << "version " << version;
    }
}

TEST(StateTree, ASplitBesideALeafTheTreeWroteTakesTheLeafFromMemory) {
    // Keys with nibbles 0,2 and 1,0: a root with two leaves. A third key with nibbles 0,1 lands
    // beside the first leaf, whose content the new internal node at path [0] needs.
    Hash256 first;
    first[0] = 0x02;
    Hash256 second;
    second[0] = 0x10;
    Hash256 beside;
    beside[0] = 0x01;
    const std::map<Hash256, Bytes> base{{first, Bytes{1}}, {second, Bytes{2}}};
    std::map<Hash256, Bytes> merged = base;
    merged[beside] = Bytes{3};
    const std::vector<TreeUpdate> insert{{beside, Bytes{3}}};

    TestDb db;
    db.commit(1, asUpdates(base));
    Bytes firstLeafKey;  // version 1, nibble path [0] (docs/state_tree.md)
    appendU64(firstLeafKey, 1);
    firstLeafKey.push_back(1);
    firstLeafKey.push_back(0x00);
    ASSERT_TRUE(db.store().put(kNodes, firstLeafKey, Bytes{0x07}, false));
    // The tree that wrote the leaf knows its key and value hash, so the damaged record is unread.
    EXPECT_EQ(db.commit(2, insert), referenceRoot(merged));

    TestDb cold;
    cold.commit(1, asUpdates(base));
    ASSERT_TRUE(cold.store().put(kNodes, firstLeafKey, Bytes{0x07}, false));
    cold.reopen();
    auto batch = cold.store().batch();
    EXPECT_EQ(cold.tree().apply(2, insert, batch).error().code, ErrorCode::kCorrupt);
}

TEST(StateTree, DeletingEveryKeyReturnsTheEmptyRoot) {
    std::mt19937_64 rng(29);
    const auto model = randomContents(rng, 500);
    auto updates = asUpdates(model);
    TestDb db;
    const Hash256 full = db.commit(1, updates);
    std::shuffle(updates.begin(), updates.end(), rng);
    std::uint64_t version = 2;
    Hash256 root = full;
    for (std::size_t begin = 0; begin < updates.size();) {
        const std::size_t size = std::min<std::size_t>(1 + rng() % 60, updates.size() - begin);
        std::vector<TreeUpdate> deletes;
        for (std::size_t i = begin; i < begin + size; ++i) {
            deletes.push_back(TreeUpdate{updates[i].key, std::nullopt});
        }
        root = db.commit(version++, deletes);
        begin += size;
    }
    EXPECT_EQ(root, emptyTreeRoot());
    EXPECT_EQ(*db.tree().rootAt(version - 1), emptyTreeRoot());
    EXPECT_EQ(*db.tree().rootAt(1), full);
    EXPECT_EQ(*db.tree().get(updates.front().key, 1), model.at(updates.front().key));
    EXPECT_EQ(*db.tree().get(updates.front().key, version - 1), std::nullopt);
    // The tree keeps working after it was emptied.
    EXPECT_EQ(db.commit(version, asUpdates(model)), full);
}

TEST(StateTree, EmptyVersionKeepsTheRootAndVersionsMustIncrease) {
    std::mt19937_64 rng(31);
    TestDb db;
    EXPECT_EQ(*db.tree().latestVersion(), std::nullopt);
    const Hash256 root = db.commit(5, asUpdates(randomContents(rng, 20)));
    EXPECT_EQ(db.commit(6, {}), root);
    EXPECT_EQ(db.commit(7, {{randomKey(rng), std::nullopt}}), root);
    EXPECT_EQ(*db.tree().rootAt(6), root);
    EXPECT_EQ(*db.tree().latestVersion(), std::optional<std::uint64_t>(7));
    EXPECT_EQ(db.tree().rootAt(4).error().code, ErrorCode::kNotFound);
    EXPECT_EQ(db.tree().rootAt(8).error().code, ErrorCode::kNotFound);
    EXPECT_EQ(db.tree().prove(Hash256{}, 8).error().code, ErrorCode::kNotFound);
    auto batch = db.store().batch();
    EXPECT_EQ(db.tree().apply(7, {}, batch).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(db.tree().apply(3, {}, batch).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(batch.count(), 0U);
}

TEST(StateTree, AVersionAnotherTreeWroteIsRefusedAfterThisTreesOwnCommit) {
    std::mt19937_64 rng(33);
    TestDb db;
    db.commit(1, asUpdates(randomContents(rng, 20)));
    StateTree other(db.store(), kNodes, kValues);
    db.commitTo(other, 2, asUpdates(randomContents(rng, 20)));
    auto batch = db.store().batch();
    EXPECT_EQ(db.tree().apply(2, {}, batch).error().code, ErrorCode::kInvalidArgument);
    // A version written and never reported is refused as well.
    ASSERT_TRUE(db.tree().apply(3, asUpdates(randomContents(rng, 5)), batch));
    ASSERT_TRUE(db.store().write(batch, false));
    batch.clear();
    EXPECT_EQ(db.tree().apply(3, {}, batch).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(batch.count(), 0U);
}

TEST(StateTree, AnUncommittedBatchCanBeDroppedAndTheVersionRedone) {
    std::mt19937_64 rng(37);
    const auto first = randomContents(rng, 50);
    const auto second = randomContents(rng, 50);
    const auto third = randomContents(rng, 50);
    TestDb db;
    db.commit(1, asUpdates(first));
    {
        auto dropped = db.store().batch();
        ASSERT_TRUE(db.tree().apply(2, asUpdates(second), dropped));
    }
    auto merged = first;
    merged.insert(second.begin(), second.end());
    EXPECT_EQ(db.commit(2, asUpdates(second)), referenceRoot(merged));

    // A dropped version that wrote other nodes at the paths of the redone one: the
    // nodes kept in memory for the dropped one must not leak into later versions.
    {
        auto dropped = db.store().batch();
        ASSERT_TRUE(db.tree().apply(3, asUpdates(third), dropped));
    }
    std::map<Hash256, Bytes> changed;
    for (const auto& [key, value] : first) {
        changed.emplace(key, Bytes{0x5a});
    }
    for (const auto& [key, value] : changed) {
        merged.insert_or_assign(key, value);
    }
    EXPECT_EQ(db.commit(3, asUpdates(changed)), referenceRoot(merged));
    std::vector<TreeUpdate> removeSecond;
    for (const auto& [key, value] : second) {
        removeSecond.push_back(TreeUpdate{key, std::nullopt});
        merged.erase(key);
    }
    EXPECT_EQ(db.commit(4, removeSecond), referenceRoot(merged));
}

TEST(StateTree, StateSurvivesReopeningTheStore) {
    std::mt19937_64 rng(41);
    const auto first = randomContents(rng, 80);
    const auto second = randomContents(rng, 80);
    TestDb db;
    const Hash256 root1 = db.commit(1, asUpdates(first));
    db.reopen();
    EXPECT_EQ(*db.tree().latestVersion(), std::optional<std::uint64_t>(1));
    EXPECT_EQ(*db.tree().rootAt(1), root1);
    EXPECT_EQ(*db.tree().get(first.begin()->first, 1), first.begin()->second);
    auto merged = first;
    merged.insert(second.begin(), second.end());
    EXPECT_EQ(db.commit(2, asUpdates(second)), referenceRoot(merged));
}

TEST(StateTree, ReadsFindEachVersionAcrossTableFilesMemtablesAndAChangeOfOptions) {
    // Keys that differ in their last byte only, so that the value keys of neighbours sort next to
    // each other: a read must never take a neighbour's value for an absent key's.
    const auto key = [](unsigned last) {
        Hash256 k;
        k[0] = 0x5a;
        k[31] = static_cast<std::uint8_t>(last);
        return k;
    };
    std::map<std::pair<unsigned, std::uint64_t>, std::optional<Bytes>> written;
    const auto commitVersion = [&](TestDb& db, std::uint64_t version) {
        std::vector<TreeUpdate> updates;
        for (unsigned k = 0; k < 12; ++k) {
            if ((k + version) % 3 == 0) {
                continue;  // key k keeps its older value at this version
            }
            const bool erase = (k * version) % 5 == 4;
            const std::optional<Bytes> value =
                erase ? std::nullopt
                      : std::optional(Bytes{static_cast<std::uint8_t>(k),
                                            static_cast<std::uint8_t>(version)});
            updates.push_back(TreeUpdate{key(2 * k), value});
            written[{k, version}] = value;
        }
        db.commit(version, updates);
    };
    const auto expected = [&](unsigned k, std::uint64_t version) {
        for (std::uint64_t v = version; v > 0; --v) {
            if (const auto it = written.find({k, v}); it != written.end()) {
                return it->second;
            }
        }
        return std::optional<Bytes>();
    };
    const auto checkAll = [&](TestDb& db, std::uint64_t upTo, const char* where) {
        for (std::uint64_t version = 1; version <= upTo; ++version) {
            for (unsigned k = 0; k < 12; ++k) {
                EXPECT_EQ(*db.tree().get(key(2 * k), version), expected(k, version))
                    << where << ": key " << k << " at version " << version;
                EXPECT_EQ(*db.tree().get(key(2 * k + 1), version), std::nullopt)
                    << where << ": never written key " << 2 * k + 1;
            }
        }
    };
    TestDb db(false);  // a database written before the values column had its prefix filter
    for (std::uint64_t version = 1; version <= 10; ++version) {
        commitVersion(db, version);
    }
    checkAll(db, 10, "memtable, no prefix filter");
    db.reopen();
    checkAll(db, 10, "table files written without the filter, read with it");
    for (std::uint64_t version = 11; version <= 20; ++version) {
        commitVersion(db, version);
    }
    checkAll(db, 20, "table files and memtable");
    db.reopen();
    checkAll(db, 20, "table files only");
}

TEST(StateTree, DamagedStoredDataIsReportedAsCorrupt) {
    std::mt19937_64 rng(43);
    const auto model = randomContents(rng, 40);
    TestDb db;
    db.commit(1, asUpdates(model));
    const Hash256 key = model.begin()->first;

    Bytes rootNodeKey;  // version 1, empty nibble path (docs/state_tree.md)
    appendU64(rootNodeKey, 1);
    rootNodeKey.push_back(0);
    for (const Bytes& garbage : {Bytes{}, Bytes{0x02, 0xff}, Bytes{0x07}, Bytes(65, 0x01)}) {
        ASSERT_TRUE(db.store().put(kNodes, rootNodeKey, garbage, false));
        // A reopened tree: apply trusts the nodes it wrote itself, kept in memory.
        db.reopen();
        EXPECT_EQ(db.tree().prove(key, 1).error().code, ErrorCode::kCorrupt);
        auto batch = db.store().batch();
        const std::vector<TreeUpdate> update{{key, Bytes{1}}};
        EXPECT_EQ(db.tree().apply(2, update, batch).error().code, ErrorCode::kCorrupt);
        EXPECT_EQ(batch.count(), 0U);
    }

    Bytes rootRecordKey;
    appendU64(rootRecordKey, 1);
    ASSERT_TRUE(db.store().put(kNodes, rootRecordKey, Bytes{0x09}, false));
    EXPECT_EQ(db.tree().rootAt(1).error().code, ErrorCode::kCorrupt);

    Bytes valueKey(key.view().begin(), key.view().end());
    appendU64(valueKey, ~std::uint64_t{1});  // version 1, stored inverted
    ASSERT_TRUE(db.store().put(kValues, valueKey, Bytes{0x05, 0x01}, false));
    EXPECT_EQ(db.tree().get(key, 1).error().code, ErrorCode::kCorrupt);
}

/** The node column key of the root path at `version`: version (8 bytes BE) ‖ path length 0. */
Bytes rootPathKey(std::uint64_t version) {
    Bytes key;
    appendU64(key, version);
    key.push_back(0);
    return key;
}

/** A key whose first nibble is `slot`: one leaf per slot of the root. */
Hash256 slotKey(std::size_t slot) {
    Hash256 key;
    key[0] = static_cast<std::uint8_t>(slot << 4U);
    key[1] = 0x5a;
    return key;
}

/** Every key of `model` proves its value, and every slot key absent from it its absence. */
void expectProvesModel(StateTree& tree, std::uint64_t version,
                       const std::map<Hash256, Bytes>& model) {
    const auto root = tree.rootAt(version);
    ASSERT_TRUE(root);
    ASSERT_EQ(*root, referenceRoot(model));
    for (std::size_t slot = 0; slot < 16; ++slot) {
        const Hash256 key = slotKey(slot);
        const auto it = model.find(key);
        const auto value = it == model.end() ? std::nullopt : std::optional(it->second);
        const auto proof = tree.prove(key, version);
        ASSERT_TRUE(proof) << proof.error().message;
        EXPECT_TRUE(verifyProof(*root, key, value, *proof)) << "slot " << slot;
    }
    Hash256 last;
    for (std::size_t i = 0; i < Hash256::size(); ++i) {
        last[i] = 0xff;
    }
    const auto keys = tree.keysBetween(Hash256{}, last, version);
    ASSERT_TRUE(keys);
    std::vector<Hash256> expected;
    expected.reserve(model.size());
    for (const auto& entry : model) {
        expected.push_back(entry.first);
    }
    EXPECT_EQ(*keys, expected);
}

/** Every record of `column`, in key order. */
std::vector<std::pair<Bytes, Bytes>> recordsOf(storage::KvStore& store, storage::Column column) {
    std::vector<std::pair<Bytes, Bytes>> out;
    auto cursor = store.cursor(column);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        out.emplace_back(Bytes(cursor.key().begin(), cursor.key().end()),
                         Bytes(cursor.value().begin(), cursor.value().end()));
    }
    return out;
}

/** `count` new keys whose first nibble is `slot`. */
std::vector<Hash256> keysInSlot(std::mt19937_64& rng, std::size_t slot, std::size_t count) {
    std::vector<Hash256> out;
    for (std::size_t i = 0; i < count; ++i) {
        Hash256 key = randomKey(rng);
        key[0] = static_cast<std::uint8_t>((slot << 4U) | (key[0] & 0x0fU));
        out.push_back(key);
    }
    return out;
}

TEST(StateTree, AnApplySharedBetweenTwoThreadsStoresWhatOneThreadStores) {
    // The same versions on a tree that shares every apply over an internal root between two
    // threads and on one that shares none: versions spread over the root's slots, one within a
    // single slot (nothing to share), one that empties half of the slots, one that leaves a
    // single key (the root collapses to a leaf), and the tree grown again.
    std::mt19937_64 rng(47);
    TestDb shared;
    TestDb alone;
    shared.shareAppliesFrom(1);
    alone.shareAppliesFrom(std::numeric_limits<std::size_t>::max());
    std::map<Hash256, Bytes> model;
    std::uint64_t version = 0;
    const auto commitBoth = [&](const std::vector<TreeUpdate>& updates) {
        ++version;
        for (const auto& update : updates) {
            if (update.value) {
                model.insert_or_assign(update.key, *update.value);
            } else {
                model.erase(update.key);
            }
        }
        const Hash256 expected = referenceRoot(model);
        ASSERT_EQ(shared.commit(version, updates), expected) << "version " << version;
        ASSERT_EQ(alone.commit(version, updates), expected) << "version " << version;
        ASSERT_EQ(recordsOf(shared.store(), kNodes), recordsOf(alone.store(), kNodes))
            << "version " << version;
    };
    const auto mixed = [&](std::size_t count) {
        std::vector<TreeUpdate> updates;
        for (std::size_t i = 0; i < count; ++i) {
            const auto choice = rng() % 100;
            if (model.empty() || choice < 60) {
                updates.push_back(TreeUpdate{randomKey(rng), randomValue(rng)});
                continue;
            }
            auto it = model.lower_bound(randomKey(rng));
            const Hash256 key = it == model.end() ? model.begin()->first : it->first;
            updates.push_back(TreeUpdate{
                key, choice < 85 ? std::optional<Bytes>(randomValue(rng)) : std::nullopt});
        }
        return updates;
    };

    commitBoth(mixed(2'000));
    for (int i = 0; i < 8; ++i) {
        commitBoth(mixed(1 + rng() % 1'500));
    }
    std::vector<TreeUpdate> oneSlot;
    for (const Hash256& key : keysInSlot(rng, 3, 300)) {
        oneSlot.push_back(TreeUpdate{key, randomValue(rng)});
    }
    commitBoth(oneSlot);
    std::vector<TreeUpdate> emptyUpperHalf = mixed(400);
    for (const auto& [key, value] : model) {
        if (key[0] >= 0x80) {
            emptyUpperHalf.push_back(TreeUpdate{key, std::nullopt});
        }
    }
    commitBoth(emptyUpperHalf);
    std::vector<TreeUpdate> allButOne;
    for (auto it = std::next(model.begin()); it != model.end(); ++it) {
        allButOne.push_back(TreeUpdate{it->first, std::nullopt});
    }
    commitBoth(allButOne);
    ASSERT_EQ(model.size(), 1U);
    commitBoth(mixed(1'000));
    commitBoth(mixed(800));
    expectProvesModel(shared.tree(), version, model);
}

TEST(StateTree, DamageFoundByTheSecondThreadOfASharedApplyFailsItAndTheVersionIsRedone) {
    std::mt19937_64 rng(53);
    auto model = randomContents(rng, 3'000);
    TestDb db;
    db.shareAppliesFrom(1);
    db.commit(1, asUpdates(model));
    // After a restart, version 2 changes keys of the root's slots 0-7 only: their nodes are then
    // in memory, and apply rewrites them in place; slot 12's node of version 1 is read from the
    // store, by the thread that takes the upper slots.
    db.reopen();
    std::vector<TreeUpdate> lower;
    for (auto& [key, value] : model) {
        if (key[0] < 0x80 && rng() % 4 == 0) {
            value = randomValue(rng);
            lower.push_back(TreeUpdate{key, value});
        }
    }
    ASSERT_EQ(db.commit(2, lower), referenceRoot(model));

    Bytes slot12;  // version 1, path (c): length 1, the nibble high first (docs/state_tree.md)
    appendU64(slot12, 1);
    slot12.push_back(1);
    slot12.push_back(0xc0);
    const auto stored = db.store().get(kNodes, slot12);
    ASSERT_TRUE(stored && *stored);
    ASSERT_TRUE(db.store().put(kNodes, slot12, Bytes{0x02, 0xff}, false));

    std::vector<TreeUpdate> everywhere;
    auto changed = model;
    for (auto& [key, value] : changed) {
        if (rng() % 3 == 0) {
            value = randomValue(rng);
            everywhere.push_back(TreeUpdate{key, value});
        }
    }
    {
        auto batch = db.store().batch();
        EXPECT_EQ(db.tree().apply(3, everywhere, batch).error().code, ErrorCode::kCorrupt);
        EXPECT_EQ(batch.count(), 0U);
    }
    ASSERT_TRUE(db.store().put(kNodes, slot12, **stored, false));
    EXPECT_EQ(db.commit(3, everywhere), referenceRoot(changed));
    expectProvesModel(db.tree(), 3, changed);
}

TEST(StateTree, ANodeChangedInAFewSlotsIsStoredAsThoseSlotsOnItsLastFullNode) {
    // The root holds one leaf per slot. Each version changes one or two of them; the sizes are
    // those of docs/state_tree.md: whole, 5 + 40 per child; a delta, 15 + 40 per present slot.
    struct Step {
        std::uint64_t version;
        std::vector<std::pair<std::size_t, bool>> changes;  // (slot, set: true / delete: false)
        std::uint8_t tag;
        std::size_t size;
        std::uint64_t fullVersion;  // a delta's
    };
    const std::vector<Step> steps = {
        {2, {{3, true}}, 0x03, 15 + 40, 1},       // one slot
        {3, {{5, true}}, 0x03, 15 + 2 * 40, 1},   // two
        {4, {{3, true}}, 0x03, 15 + 2 * 40, 1},   // slot 3 again: still two slots
        {5, {{7, false}}, 0x03, 15 + 2 * 40, 1},  // slot 7 deleted: in the slots, not present
        {6, {{9, true}}, 0x03, 15 + 3 * 40, 1},   // four slots: the most a delta holds
        {7, {{11, true}}, 0x02, 5 + 15 * 40, 0},  // a fifth: stored whole
        {8, {{0, true}}, 0x03, 15 + 40, 7},
    };
    TestDb cached;
    TestDb uncached(true, 0);  // every node read back from the store, deltas included
    std::map<Hash256, Bytes> model;
    for (std::size_t slot = 0; slot < 16; ++slot) {
        model[slotKey(slot)] = Bytes{static_cast<std::uint8_t>(slot)};
    }
    std::vector<std::map<Hash256, Bytes>> models{{}, model};
    cached.commit(1, asUpdates(model));
    uncached.commit(1, asUpdates(model));
    const auto whole = cached.store().get(kNodes, rootPathKey(1));
    ASSERT_TRUE(whole && *whole);
    EXPECT_EQ((**whole)[0], 0x02);
    EXPECT_EQ((**whole).size(), 5U + 16 * 40);
    for (const auto& step : steps) {
        SCOPED_TRACE("version " + std::to_string(step.version));
        std::vector<TreeUpdate> updates;
        for (const auto& [slot, set] : step.changes) {
            const Bytes value{static_cast<std::uint8_t>(step.version)};
            updates.push_back({slotKey(slot), set ? std::optional(value) : std::nullopt});
            if (set) {
                model[slotKey(slot)] = value;
            } else {
                model.erase(slotKey(slot));
            }
        }
        models.push_back(model);
        ASSERT_EQ(cached.commit(step.version, updates), referenceRoot(model));
        ASSERT_EQ(uncached.commit(step.version, updates), referenceRoot(model));
        const auto stored = cached.store().get(kNodes, rootPathKey(step.version));
        ASSERT_TRUE(stored && *stored);
        const Bytes& bytes = **stored;
        EXPECT_EQ(bytes[0], step.tag);
        EXPECT_EQ(bytes.size(), step.size);
        if (step.tag == 0x03) {
            std::uint64_t fullVersion = 0;
            for (std::size_t i = 1; i <= 8; ++i) {
                fullVersion = (fullVersion << 8U) | bytes[i];
            }
            EXPECT_EQ(fullVersion, step.fullVersion);
        }
        EXPECT_EQ(uncached.store().get(kNodes, rootPathKey(step.version)).value(), *stored);
        for (std::uint64_t version = 1; version <= step.version; ++version) {
            expectProvesModel(cached.tree(), version, models[version]);
        }
    }
    // A restarted tree reads every version, and reads the root's form back from the store: its
    // next delta still builds on version 7.
    cached.reopen();
    for (std::uint64_t version = 1; version < models.size(); ++version) {
        expectProvesModel(cached.tree(), version, models[version]);
    }
    model[slotKey(1)] = Bytes{9};
    ASSERT_EQ(cached.commit(9, {{slotKey(1), Bytes{9}}}), referenceRoot(model));
    const auto next = cached.store().get(kNodes, rootPathKey(9));
    ASSERT_TRUE(next && *next);
    // 0x03 ‖ full version 7 ‖ slots {0, 1} ‖ both present ‖ both leaves ‖ per slot: the
    // version it was written at ‖ its leaf hash.
    Bytes expected{0x03};
    appendU64(expected, 7);
    expected.insert(expected.end(), {0x00, 0x03, 0x00, 0x03, 0x00, 0x03});
    for (const auto& [slot, version] : {std::pair<std::size_t, std::uint64_t>{0, 8}, {1, 9}}) {
        appendU64(expected, version);
        const Hash256 leaf =
            docHash("gridledger/state/leaf", slotKey(slot), crypto::sha256(model[slotKey(slot)]));
        expected.insert(expected.end(), leaf.view().begin(), leaf.view().end());
    }
    EXPECT_EQ(**next, expected);
}

TEST(StateTree, DamagedDeltasAreReportedAsCorrupt) {
    // Versions 2 and 3 store the root as deltas on version 1 (slots {3} and {3, 5}).
    std::map<Hash256, Bytes> model;
    for (std::size_t slot = 0; slot < 16; ++slot) {
        model[slotKey(slot)] = Bytes{1};
    }
    TestDb db;
    db.commit(1, asUpdates(model));
    db.commit(2, {{slotKey(3), Bytes{2}}});
    db.commit(3, {{slotKey(5), Bytes{3}}});
    const Bytes good = db.store().get(kNodes, rootPathKey(3)).value().value();
    ASSERT_EQ(good.size(), 15U + 2 * 40);
    ASSERT_EQ(good[0], 0x03);

    /** 0x03 ‖ full version ‖ slot, child and leaf maps ‖ `children` zeroed child records. */
    auto delta = [](std::uint64_t fullVersion, std::uint16_t slots, std::uint16_t present,
                    std::uint16_t leaves, std::size_t children) {
        Bytes out{0x03};
        appendU64(out, fullVersion);
        for (const std::uint16_t map : {slots, present, leaves}) {
            out.push_back(static_cast<std::uint8_t>(map >> 8U));
            out.push_back(static_cast<std::uint8_t>(map & 0xffU));
        }
        out.resize(out.size() + children * 40);
        return out;
    };
    Bytes onADelta = good;  // the same slots on version 2, itself a delta
    onADelta[8] = 2;
    Bytes trailing = good;
    trailing.push_back(0);
    const std::vector<std::pair<std::string, Bytes>> damaged = {
        {"too short", Bytes{0x03, 0, 0}},
        {"a trailing byte", trailing},
        {"full version not older", delta(3, 0x0008, 0x0008, 0x0008, 1)},
        {"no full node there", delta(0, 0x0008, 0x0008, 0x0008, 1)},
        {"full node a delta", onADelta},
        {"no slot", delta(1, 0, 0, 0, 0)},
        {"child outside the slots", delta(1, 0x0008, 0x0018, 0x0018, 2)},
        {"leaf not a child", delta(1, 0x0018, 0x0008, 0x0018, 1)},
        {"child newer than its parent",
         [&] {
             Bytes out = delta(1, 0x0008, 0x0008, 0x0008, 1);
             out[15 + 7] = 4;  // the child's version: 4, past version 3
             return out;
         }()},
        {"every child removed", delta(1, 0xffff, 0, 0, 0)},
        {"a single leaf left", delta(1, 0xfffe, 0, 0, 0)},
    };
    for (const auto& [what, bytes] : damaged) {
        SCOPED_TRACE(what);
        ASSERT_TRUE(db.store().put(kNodes, rootPathKey(3), bytes, false));
        db.reopen();  // a cold tree: apply reads the root from the store
        const auto proof = db.tree().prove(slotKey(3), 3);
        ASSERT_FALSE(proof);
        EXPECT_EQ(proof.error().code, ErrorCode::kCorrupt);
        EXPECT_EQ(db.tree().keysBetween(Hash256{}, slotKey(15), 3).error().code,
                  ErrorCode::kCorrupt);
        auto batch = db.store().batch();
        const std::vector<TreeUpdate> update{{slotKey(4), Bytes{4}}};
        EXPECT_EQ(db.tree().apply(4, update, batch).error().code, ErrorCode::kCorrupt);
        EXPECT_EQ(batch.count(), 0U);
    }
    ASSERT_TRUE(db.store().put(kNodes, rootPathKey(3), good, false));
    db.reopen();
    model[slotKey(3)] = Bytes{2};
    model[slotKey(5)] = Bytes{3};
    expectProvesModel(db.tree(), 3, model);
}

TEST(StateTree, RootMatchesThePublishedTestVector) {
    // The vector of docs/state_tree.md: keys 0x00…00, 0x80…00 and 0x40…00 with values
    // "a", "b" and "c".
    Hash256 k0;
    Hash256 k1;
    k1[0] = 0x80;
    Hash256 k2;
    k2[0] = 0x40;
    const std::map<Hash256, Bytes> model{{k0, Bytes{'a'}}, {k1, Bytes{'b'}}, {k2, Bytes{'c'}}};
    TestDb db;
    const Hash256 root = db.commit(1, asUpdates(model));
    EXPECT_EQ(root, referenceRoot(model));
    EXPECT_EQ(root.hex(), "0xc1872558cbc19b16f86c4a3cd2385b9a685cd368ac425d8a69735ad91aa11859");

    // The proof of 0x40…00: its leaf, then the siblings from the root down.
    auto proof = db.tree().prove(k2, 1);
    ASSERT_TRUE(proof);
    ASSERT_EQ(proof->siblings.size(), 2U);
    EXPECT_EQ(proof->siblings[0].hex(),  // leaf 0x80…00 = "b"
              "0x03fabc024a81d734e3051c87abce84216d73bc7f7bbd7c40c9de317f9807c0aa");
    EXPECT_EQ(proof->siblings[1].hex(),  // leaf 0x00…00 = "a"
              "0xe80f2ab994726e9b8d790b606466bcfb21fb2e1f47f864b9e9f31172edcd1fed");
    EXPECT_EQ(proof->leaf, (ProofLeaf{k2, crypto::sha256(Bytes{'c'})}));
    EXPECT_TRUE(verifyProof(root, k2, Bytes{'c'}, *proof));
}

/** A key of one of four 8-byte prefixes, so that ranges cut through deep shared paths. */
Hash256 prefixedKey(std::mt19937_64& rng) {
    Hash256 key = randomKey(rng);
    const auto family = static_cast<std::uint8_t>(rng() % 4);
    for (std::size_t i = 0; i < 8; ++i) {
        key[i] = static_cast<std::uint8_t>(0x40 + family);
    }
    // Members that share more than the prefix: a run of equal bytes after it, sometimes.
    if (rng() % 2 == 0) {
        key[8] = 0;
        key[9] = static_cast<std::uint8_t>(rng() % 3);
    }
    return key;
}

TEST(StateTree, KeysBetweenListsTheLiveKeysOfAVersionInOrder) {
    TestDb db;
    std::mt19937_64 rng(13013);
    // The model: the key set of every committed version.
    std::vector<std::map<Hash256, Bytes>> versions;
    std::map<Hash256, Bytes> live;
    for (std::uint64_t version = 1; version <= 12; ++version) {
        std::vector<TreeUpdate> updates;
        for (int i = 0; i < 120; ++i) {
            if (!live.empty() && rng() % 3 == 0) {
                auto victim = live.begin();
                std::advance(victim, static_cast<long>(rng() % live.size()));
                updates.push_back(TreeUpdate{victim->first, std::nullopt});
                live.erase(victim);
            } else {
                const Hash256 key = prefixedKey(rng);
                const Bytes value = randomValue(rng);
                updates.push_back(TreeUpdate{key, value});
                live[key] = value;
            }
        }
        db.commit(version, updates);
        versions.push_back(live);
    }
    for (std::uint64_t version = 1; version <= versions.size(); ++version) {
        const auto& model = versions[version - 1];
        for (int probe = 0; probe < 40; ++probe) {
            Hash256 first = prefixedKey(rng);
            Hash256 last = probe % 4 == 0 ? first : prefixedKey(rng);
            if (last < first) {
                std::swap(first, last);
            }
            if (probe % 5 == 0 && !model.empty()) {  // bounds that are keys: both included
                auto at = model.begin();
                std::advance(at, static_cast<long>(rng() % model.size()));
                first = at->first;
                last = std::max(last, first);
            }
            std::vector<Hash256> expected;
            for (auto it = model.lower_bound(first); it != model.end() && !(last < it->first);
                 ++it) {
                expected.push_back(it->first);
            }
            const auto found = db.tree().keysBetween(first, last, version);
            ASSERT_TRUE(found) << found.error().message;
            EXPECT_EQ(*found, expected) << "version " << version << " probe " << probe;
        }
    }
    // Never applied: nothing.
    EXPECT_TRUE(db.tree().keysBetween(Hash256{}, prefixedKey(rng), 99)->empty());
}

TEST(StateProofCodec, DecodeRejectsGarbageWithoutCrashing) {
    std::mt19937_64 rng(47);
    for (int i = 0; i < 20'000; ++i) {
        Bytes garbage(rng() % 700);
        for (auto& b : garbage) {
            b = static_cast<std::uint8_t>(rng());
        }
        if (i % 2 == 0 && garbage.size() >= 2) {  // often a plausible header
            garbage[0] = 0x01;
            garbage[1] = static_cast<std::uint8_t>(rng() % 2);
        }
        auto proof = decodeProof(garbage);
        if (proof) {  // only canonical encodings decode
            EXPECT_EQ(encodeProof(*proof), garbage);
        }
    }

    StateProof proof;
    proof.leaf = ProofLeaf{Hash256{}, Hash256{}};
    proof.siblings.resize(3);
    const Bytes valid = encodeProof(proof);
    ASSERT_EQ(decodeProof(valid), proof);
    for (std::size_t size = 0; size < valid.size(); ++size) {
        EXPECT_FALSE(decodeProof(ByteView(valid).first(size))) << "prefix " << size;
    }
    Bytes trailing = valid;
    trailing.push_back(0);
    EXPECT_FALSE(decodeProof(trailing));

    Bytes tooMany{0x01, 0x00, 0x01, 0x01};  // 257 siblings
    tooMany.resize(tooMany.size() + std::size_t{257} * 32);
    EXPECT_EQ(decodeProof(tooMany).error().code, ErrorCode::kMalformed);
    StateProof maxDepth;
    maxDepth.siblings.resize(256);
    EXPECT_EQ(decodeProof(encodeProof(maxDepth)), maxDepth);
}

}  // namespace
}  // namespace gridledger::ledger::state_tree_test
