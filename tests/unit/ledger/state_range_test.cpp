// Range proofs of the state tree: chunks of every size cover a version exactly and verify against
// the documented root, computed here independently; any change to a chunk's content is refused.

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/state_tree.h>

#include "state_tree_support.h"

namespace gridledger::ledger::state_range_test {
namespace {

using namespace tree_testing;

Hash256 highestKey() {
    Hash256 key;
    std::fill_n(key.data(), Hash256::size(), std::uint8_t{0xff});
    return key;
}

/** Every range of `version` from the lowest key on, `limit` keys each. */
std::vector<StateRange> allRanges(const StateTree& tree, std::uint64_t version, std::size_t limit) {
    std::vector<StateRange> ranges;
    std::optional<Hash256> start = Hash256{};
    while (start) {
        auto range = tree.proveRange(*start, version, limit);
        EXPECT_TRUE(range) << range.error().message;
        if (!range) {
            return ranges;
        }
        start = keyAfter(range->end);
        ranges.push_back(std::move(*range));
    }
    return ranges;
}

/** The ranges verify against `root`, cover the key space end to end and hold exactly `model`. */
void expectRangesCover(const std::vector<StateRange>& ranges, const Hash256& root,
                       const std::map<Hash256, Bytes>& model, std::size_t limit) {
    std::map<Hash256, Bytes> seen;
    std::optional<Hash256> expectedStart = Hash256{};
    for (const StateRange& range : ranges) {
        ASSERT_TRUE(expectedStart);
        EXPECT_EQ(range.start, *expectedStart);
        EXPECT_LE(range.entries.size(), limit);
        const auto verified = verifyRange(root, range);
        EXPECT_TRUE(verified) << verified.error().message;
        auto decoded = decodeRange(encodeRange(range));
        ASSERT_TRUE(decoded) << decoded.error().message;
        EXPECT_EQ(*decoded, range);
        for (const StateEntry& entry : range.entries) {
            EXPECT_TRUE(seen.emplace(entry.key, entry.value).second);
        }
        expectedStart = keyAfter(range.end);
    }
    EXPECT_FALSE(expectedStart) << "the last range ends below 0xff…ff";
    EXPECT_EQ(seen, model);
}

TEST(StateRange, EveryChunkingOfRandomTreesCoversThemExactly) {
    std::mt19937_64 rng(20261127);
    for (const std::size_t size : {0U, 1U, 2U, 3U, 17U, 300U}) {
        TestDb db;
        const auto model = randomContents(rng, size);
        const Hash256 root = db.commit(1, asUpdates(model));
        ASSERT_EQ(root, referenceRoot(model));
        for (const std::size_t limit : {1U, 2U, 7U, 1000U}) {
            SCOPED_TRACE(::testing::Message() << size << " keys, " << limit << " per range");
            const auto ranges = allRanges(db.tree(), 1, limit);
            expectRangesCover(ranges, root, model, limit);
            if (size > limit) {
                EXPECT_EQ(ranges.size(), (size + limit - 1) / limit);
            }
        }
    }
}

TEST(StateRange, EachVersionKeepsItsOwnRanges) {
    std::mt19937_64 rng(7);
    TestDb db;
    auto first = randomContents(rng, 200);
    const Hash256 firstRoot = db.commit(1, asUpdates(first));
    std::map<Hash256, Bytes> second = first;
    std::vector<TreeUpdate> changes;
    std::size_t i = 0;
    for (const auto& [key, value] : first) {
        if (i++ % 3 == 0) {
            second.erase(key);
            changes.push_back(TreeUpdate{key, std::nullopt});
        }
    }
    for (const auto& [key, value] : randomContents(rng, 50)) {
        second[key] = value;
        changes.push_back(TreeUpdate{key, value});
    }
    const Hash256 secondRoot = db.commit(2, changes);
    ASSERT_EQ(secondRoot, referenceRoot(second));
    expectRangesCover(allRanges(db.tree(), 1, 16), firstRoot, first, 16);
    expectRangesCover(allRanges(db.tree(), 2, 16), secondRoot, second, 16);
    // A range of version 1 does not prove version 2, even where its own keys did not change.
    for (const StateRange& range : allRanges(db.tree(), 1, 16)) {
        EXPECT_FALSE(verifyRange(secondRoot, range));
    }
}

/** A tree of 100 random keys and one of its middle ranges. */
class StateRangeTampering : public ::testing::Test {
  protected:
    void SetUp() override {
        std::mt19937_64 rng(42);
        model_ = randomContents(rng, 100);
        root_ = db_.commit(1, asUpdates(model_));
        const auto ranges = allRanges(db_.tree(), 1, 10);
        ASSERT_GE(ranges.size(), 5U);
        range_ = ranges[3];
        ASSERT_TRUE(verifyRange(root_, range_));
    }

    /** The last key of the tree before the range. */
    [[nodiscard]] Hash256 keyBefore() const {
        return std::prev(model_.lower_bound(range_.start))->first;
    }

    TestDb db_;
    std::map<Hash256, Bytes> model_;
    Hash256 root_;
    StateRange range_;
};

TEST_F(StateRangeTampering, AChangedValueIsRefused) {
    StateRange changed = range_;
    changed.entries[4].value.push_back(0);
    EXPECT_FALSE(verifyRange(root_, changed));
}

TEST_F(StateRangeTampering, AWithheldEntryIsRefused) {
    for (std::size_t i = 0; i < range_.entries.size(); ++i) {
        StateRange changed = range_;
        changed.entries.erase(changed.entries.begin() + static_cast<long>(i));
        EXPECT_FALSE(verifyRange(root_, changed)) << "entry " << i;
    }
}

TEST_F(StateRangeTampering, AnInventedEntryIsRefused) {
    StateRange changed = range_;
    Hash256 invented = changed.entries[2].key;
    invented = *keyAfter(invented);
    ASSERT_FALSE(model_.contains(invented));
    changed.entries.insert(changed.entries.begin() + 3, StateEntry{invented, Bytes{1, 2, 3}});
    EXPECT_FALSE(verifyRange(root_, changed));
}

TEST_F(StateRangeTampering, ARangeClaimingMoreKeySpaceThanItProvesIsRefused) {
    // The same entries and items, claimed to start at a key of the tree they leave out.
    StateRange earlier = range_;
    earlier.start = keyBefore();
    EXPECT_FALSE(verifyRange(root_, earlier));
    // ...or to end beyond the next key of the tree.
    StateRange later = range_;
    later.end = *keyAfter(model_.upper_bound(range_.end)->first);
    EXPECT_FALSE(verifyRange(root_, later));
}

TEST_F(StateRangeTampering, AHiddenKeyPassedOffAsASubtreeBesideTheRangeIsRefused) {
    // The first entry withheld and its leaf offered in place of each item in turn.
    StateRange changed = range_;
    const StateEntry first = changed.entries.front();
    changed.entries.erase(changed.entries.begin());
    ASSERT_FALSE(changed.items.empty());
    for (std::size_t i = 0; i < changed.items.size(); ++i) {
        RangeProofItem leaf{RangeProofItem::Kind::kLeaf, first.key, crypto::sha256(first.value)};
        std::swap(changed.items[i], leaf);
        EXPECT_FALSE(verifyRange(root_, changed)) << "item " << i;
        std::swap(changed.items[i], leaf);
    }
}

TEST_F(StateRangeTampering, EveryBitOfTheEntriesAndItemsMatters) {
    const Bytes encoded = encodeRange(range_);
    // After the format byte and the two bounds: a changed bound may still describe the same
    // keys truly (a bound moved inside a gap), which is no lie.
    for (std::size_t i = 1 + 64; i < encoded.size(); ++i) {
        for (std::size_t bit = 0; bit < 8; ++bit) {
            Bytes changed = encoded;
            changed[i] = static_cast<std::uint8_t>(changed[i] ^ (1U << bit));
            const auto decoded = decodeRange(changed);
            EXPECT_TRUE(!decoded || !verifyRange(root_, *decoded))
                << "byte " << i << " bit " << bit;
        }
    }
}

TEST_F(StateRangeTampering, EveryTruncationAndTrailingByteIsMalformed) {
    const Bytes encoded = encodeRange(range_);
    for (std::size_t size = 0; size < encoded.size(); ++size) {
        const auto decoded = decodeRange(ByteView(encoded).first(size));
        ASSERT_FALSE(decoded) << "size " << size;
        EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
    }
    Bytes longer = encoded;
    longer.push_back(0);
    EXPECT_FALSE(decodeRange(longer));
    Bytes huge = encoded;
    huge[1 + 64] = 0xff;  // an entry count of about 4 billion
    EXPECT_FALSE(decodeRange(huge));
}

TEST(StateRange, ALimitOfZeroAndAMissingVersionAreRefused) {
    TestDb db;
    std::mt19937_64 rng(3);
    db.commit(1, asUpdates(randomContents(rng, 5)));
    EXPECT_EQ(db.tree().proveRange(Hash256{}, 1, 0).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(db.tree().proveRange(Hash256{}, 2, 10).error().code, ErrorCode::kNotFound);
}

TEST(StateRange, KeyAfterCarriesAcrossBytes) {
    Hash256 key;
    key[31] = 0xff;
    key[30] = 0xff;
    const auto next = keyAfter(key);
    ASSERT_TRUE(next);
    Hash256 expected;
    expected[29] = 0x01;
    EXPECT_EQ(*next, expected);
    EXPECT_FALSE(keyAfter(highestKey()));
}

}  // namespace
}  // namespace gridledger::ledger::state_range_test
