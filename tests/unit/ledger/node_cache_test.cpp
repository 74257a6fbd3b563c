// The state tree's cache of internal nodes for apply: every path put is found at its version only,
// with exactly the children, known leaves and inner hashes it was given, through the index's
// growth; a put replaces the path's entry and its memory, and so does a rewrite where a find
// pointed, in place, keeping the leaves it is told to keep; a dropped entry is found at no version;
// past the budget new paths are dropped.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "../../../ledger/state_tree_cache.h"

namespace gridledger::ledger::node_cache_test {
namespace {

using tree::ChildRef;
using tree::InnerHashes;
using tree::InternalNode;
using tree::kRadix;
using tree::LeafNode;
using tree::NibblePath;
using tree::NodeCache;
using tree::StoredForm;

constexpr std::size_t kNoBudget = std::size_t{1} << 40U;

/** Path i: up to 12 nibbles of i, after a run of fixed ones, so that paths differ deep down. */
NibblePath pathOf(std::uint32_t i) {
    NibblePath path;
    for (std::size_t depth = 0; depth < 6; ++depth) {
        path = path.child(0xa);
    }
    for (std::uint32_t rest = i; rest != 0; rest >>= 4U) {
        path = path.child(static_cast<std::uint8_t>(rest & 0xfU));
    }
    return path.child(static_cast<std::uint8_t>(i % kRadix));
}

Hash256 hashOf(std::uint32_t i, std::uint8_t tag) {
    Hash256 out;
    out[0] = tag;
    out[28] = static_cast<std::uint8_t>(i >> 24U);
    out[29] = static_cast<std::uint8_t>(i >> 16U);
    out[30] = static_cast<std::uint8_t>(i >> 8U);
    out[31] = static_cast<std::uint8_t>(i);
    return out;
}

/** Node i: 2 to 16 children, every third a leaf, of versions below i + 1. */
InternalNode nodeOf(std::uint32_t i) {
    InternalNode node;
    const std::size_t count = 2 + i % 15;
    for (std::size_t slot = 0; slot < count; ++slot) {
        const auto s = static_cast<std::uint32_t>(slot);
        node.children[(slot * 7 + i) % kRadix] =
            ChildRef{hashOf(i * 16 + s, 0xc1), i - i % 3, slot % 3 == 0};
    }
    return node;
}

LeafNode leafOf(std::uint32_t i, std::size_t slot) {
    const auto s = static_cast<std::uint32_t>(slot);
    return LeafNode{hashOf(i * 16 + s, 0x1e), hashOf(i * 16 + s, 0x7a)};
}

/** Node i's leaves as its apply would know them: every other leaf child. */
std::array<std::optional<LeafNode>, kRadix> knownLeaves(std::uint32_t i) {
    std::array<std::optional<LeafNode>, kRadix> out;
    const InternalNode node = nodeOf(i);
    bool known = true;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (node.children[slot] && node.children[slot]->isLeaf) {
            if (known) {
                out[slot] = leafOf(i, slot);
            }
            known = !known;
        }
    }
    return out;
}

/** A marker that no hash of a node gives: what the entry returns proves where it came from. */
InnerHashes markedInner(std::uint32_t i) {
    InnerHashes out;
    for (std::size_t index = 1; index < kRadix; ++index) {
        out[index] = hashOf(i * 16 + static_cast<std::uint32_t>(index), 0x99);
    }
    return out;
}

/** A stored form particular to path i at `version`: a delta on version / 2 in i's low 16 bits. */
StoredForm formOf(std::uint32_t i, std::uint64_t version) {
    return StoredForm{version / 2, static_cast<std::uint16_t>(i & 0xffffU)};
}

std::array<const LeafNode*, kRadix> pointersTo(
    const std::array<std::optional<LeafNode>, kRadix>& leaves) {
    std::array<const LeafNode*, kRadix> out{};
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        out[slot] = leaves[slot] ? &*leaves[slot] : nullptr;
    }
    return out;
}

NodeCache::Entry entryOf(std::uint32_t i, std::uint64_t version) {
    const auto leaves = knownLeaves(i);
    return NodeCache::Entry(version, formOf(i, version), nodeOf(i), markedInner(i),
                            pointersTo(leaves));
}

std::size_t childCount(const InternalNode& node) {
    std::size_t count = 0;
    for (const auto& child : node.children) {
        count += child ? 1U : 0U;
    }
    return count;
}

void expectEntryOf(const NodeCache::Entry& entry, std::uint32_t i) {
    const InternalNode node = nodeOf(i);
    const auto leaves = knownLeaves(i);
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        EXPECT_EQ(entry.child(slot), node.children[slot]) << i << " slot " << slot;
        EXPECT_EQ(entry.leaf(slot), leaves[slot]) << i << " slot " << slot;
    }
    // A dense node keeps the inner hashes it was given; a sparse one recomputes them.
    InnerHashes computed;
    tree::rehashInner(node, 0xffff, computed);
    const InnerHashes expected =
        childCount(node) > NodeCache::kDenseChildren ? markedInner(i) : computed;
    const InnerHashes inner = entry.inner();
    for (std::size_t index = 1; index < kRadix; ++index) {
        EXPECT_EQ(inner[index], expected[index]) << i << " inner " << index;
    }
}

TEST(StateTreeNodeCache, EveryPathPutIsFoundAtItsVersionWithItsNodeAndNoOtherIs) {
    NodeCache cache(kNoBudget);
    constexpr std::uint32_t kPaths = 20'000;  // several index growths and item chunks
    for (std::uint32_t i = 0; i < kPaths; ++i) {
        cache.put(pathOf(i), entryOf(i, i + 1));
    }
    for (std::uint32_t i = 0; i < kPaths; ++i) {
        const NodeCache::Entry* entry = cache.find(i + 1, pathOf(i));
        ASSERT_NE(entry, nullptr) << i;
        EXPECT_EQ(entry->version(), i + 1);
        EXPECT_EQ(entry->form().fullVersion, formOf(i, i + 1).fullVersion) << i;
        EXPECT_EQ(entry->form().sinceFull, formOf(i, i + 1).sinceFull) << i;
        expectEntryOf(*entry, i);
        // Another version of the same path is a miss, never a wrong node.
        EXPECT_EQ(cache.find(i, pathOf(i)), nullptr) << i;
        EXPECT_EQ(cache.find(i + 2, pathOf(i)), nullptr) << i;
    }
    for (std::uint32_t i = kPaths; i < 2 * kPaths; ++i) {
        EXPECT_EQ(cache.find(i + 1, pathOf(i)), nullptr) << i;
    }
    EXPECT_EQ(cache.find(1, NibblePath{}), nullptr);
}

TEST(StateTreeNodeCache, APutReplacesThePathsEntryAndItsMemory) {
    NodeCache alone(kNoBudget);
    alone.put(pathOf(7), entryOf(2, 9));
    NodeCache cache(kNoBudget);
    cache.put(pathOf(7), entryOf(13, 4));  // 15 children: dense, with its inner hashes
    EXPECT_GT(cache.bytes(), alone.bytes());
    cache.put(pathOf(7), entryOf(2, 9));  // 4 children: sparse
    EXPECT_EQ(cache.find(4, pathOf(7)), nullptr);
    const NodeCache::Entry* entry = cache.find(9, pathOf(7));
    ASSERT_NE(entry, nullptr);
    expectEntryOf(*entry, 2);
    EXPECT_EQ(cache.bytes(), alone.bytes());
}

TEST(StateTreeNodeCache, ARewriteWhereFindPointedIsAPutOfThatPath) {
    constexpr std::uint32_t kOthers = 5'000;  // index growths and new chunks between
    NodeCache put(kNoBudget);
    NodeCache cache(kNoBudget);
    put.put(pathOf(7), entryOf(2, 9));
    cache.put(pathOf(7), entryOf(13, 4));
    NodeCache::Entry* found = cache.find(4, pathOf(7));
    ASSERT_NE(found, nullptr);
    for (std::uint32_t i = 100; i < 100 + kOthers; ++i) {
        put.put(pathOf(i), entryOf(i, 1));
        cache.put(pathOf(i), entryOf(i, 1));
    }
    const std::size_t unsettled = cache.bytes();
    ASSERT_NE(unsettled, put.bytes());  // node 2's entry is not node 13's size
    NodeCache::Rewrites rewrites;
    NodeCache::rewrite(*found, rewrites, 9, formOf(2, 9), nodeOf(2), markedInner(2),
                       pointersTo(knownLeaves(2)), 0);
    // The cache counts the rewrite's bytes once settled: two threads may rewrite at once.
    EXPECT_EQ(cache.bytes(), unsettled);
    cache.settle(rewrites);
    EXPECT_EQ(cache.find(4, pathOf(7)), nullptr);
    EXPECT_EQ(cache.find(9, pathOf(7)), found);  // in place: entries never move
    expectEntryOf(*found, 2);
    for (std::uint32_t i = 100; i < 100 + kOthers; ++i) {
        const NodeCache::Entry* other = cache.find(1, pathOf(i));
        ASSERT_NE(other, nullptr) << i;
        expectEntryOf(*other, i);
    }
    EXPECT_EQ(cache.bytes(), put.bytes());
}

TEST(StateTreeNodeCache, ARewriteKeepsTheEntrysOwnLeavesInTheSlotsItIsToldToKeep) {
    // Node 13: 15 children (slot 6 empty), leaves in slots 13, 2, 7, 12 and 1, of which the entry
    // knows those of slots 1, 7 and 13 (every other one in slot order). The rewrite changes slot 4
    // into a leaf it knows, ahead of the kept slot 7, so that slot 7's leaf moves within the
    // entry; slot 13's leaf is not kept (its slot changed, unknown now), and slot 2 changes into
    // an internal child.
    const std::uint32_t i = 13;
    NodeCache cache(kNoBudget);
    cache.put(pathOf(i), entryOf(i, 4));
    NodeCache::Entry* found = cache.find(4, pathOf(i));
    ASSERT_NE(found, nullptr);
    const auto before = knownLeaves(i);
    ASSERT_TRUE(before[1] && before[7] && before[13] && !before[2] && !before[4]);

    InternalNode node = nodeOf(i);
    const LeafNode newLeaf{hashOf(500, 0x1e), hashOf(500, 0x7a)};
    node.children[4] = ChildRef{tree::hashLeaf(newLeaf), 4, true};
    node.children[13] = ChildRef{hashOf(501, 0xc1), 3, true};
    node.children[2] = ChildRef{hashOf(502, 0xc1), 3, false};
    std::array<const LeafNode*, kRadix> given{};
    given[4] = &newLeaf;
    const auto keep =
        static_cast<std::uint16_t>(0xffffU & ~((1U << 4U) | (1U << 13U) | (1U << 2U)));
    InnerHashes inner;
    tree::rehashInner(node, 0xffff, inner);
    NodeCache::Rewrites rewrites;
    NodeCache::rewrite(*found, rewrites, 4 + 1, StoredForm{4, 0x2014}, node, inner, given, keep);
    cache.settle(rewrites);

    EXPECT_EQ(cache.find(5, pathOf(i)), found);  // in place
    EXPECT_EQ(cache.find(4, pathOf(i)), nullptr);
    EXPECT_EQ(found->form().fullVersion, 4U);
    EXPECT_EQ(found->form().sinceFull, 0x2014);
    std::array<std::optional<LeafNode>, kRadix> expected;
    expected[4] = newLeaf;
    expected[1] = before[1];
    expected[7] = before[7];
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        EXPECT_EQ(found->child(slot), node.children[slot]) << "slot " << slot;
        EXPECT_EQ(found->leaf(slot), expected[slot]) << "slot " << slot;
    }
    for (std::size_t index = 1; index < kRadix; ++index) {
        EXPECT_EQ(found->inner()[index], inner[index]) << "inner " << index;
    }
    // The cache counts the entry's memory as a put of the same node would.
    NodeCache put(kNoBudget);
    put.put(pathOf(i),
            NodeCache::Entry(5, StoredForm{4, 0x2014}, node, inner, pointersTo(expected)));
    EXPECT_EQ(cache.bytes(), put.bytes());
}

TEST(StateTreeNodeCache, ADroppedEntryIsFoundAtNoVersionUntilItsPathIsPutAgain) {
    NodeCache cache(kNoBudget);
    cache.put(pathOf(3), entryOf(3, 0));
    cache.put(pathOf(4), entryOf(4, 0));
    NodeCache::Entry* found = cache.find(0, pathOf(3));
    ASSERT_NE(found, nullptr);
    cache.drop(*found);
    EXPECT_EQ(cache.find(0, pathOf(3)), nullptr);  // version 0 too: the empty entry's own
    EXPECT_EQ(cache.find(1, pathOf(3)), nullptr);
    ASSERT_NE(cache.find(0, pathOf(4)), nullptr);
    expectEntryOf(*cache.find(0, pathOf(4)), 4);
    // The dropped entry's memory is no longer counted: only its item is.
    NodeCache alone(kNoBudget);
    alone.put(pathOf(4), entryOf(4, 0));
    NodeCache dropped(kNoBudget);
    dropped.put(pathOf(3), entryOf(3, 0));
    const std::size_t whole = dropped.bytes();
    dropped.drop(*dropped.find(0, pathOf(3)));
    EXPECT_LT(dropped.bytes(), whole);
    EXPECT_EQ(cache.bytes(), alone.bytes() + dropped.bytes());
    cache.put(pathOf(3), entryOf(3, 2));
    ASSERT_EQ(cache.find(2, pathOf(3)), found);
    expectEntryOf(*found, 3);
}

TEST(StateTreeNodeCache, PastTheBudgetNewPathsAreDroppedAndKnownOnesStillChange) {
    NodeCache sizing(kNoBudget);
    sizing.put(pathOf(0), entryOf(2, 1));
    const std::size_t perPath = sizing.bytes();
    NodeCache cache(10 * perPath);
    for (std::uint32_t i = 0; i < 20; ++i) {
        cache.put(pathOf(i), entryOf(2, 1));
    }
    EXPECT_LE(cache.bytes(), 10 * perPath);
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < 20; ++i) {
        kept += cache.find(1, pathOf(i)) != nullptr ? 1U : 0U;
    }
    EXPECT_EQ(kept, 10U);
    EXPECT_EQ(cache.find(1, pathOf(10)), nullptr);
    cache.put(pathOf(3), entryOf(2, 5));
    ASSERT_NE(cache.find(5, pathOf(3)), nullptr);
    expectEntryOf(*cache.find(5, pathOf(3)), 2);
}

}  // namespace
}  // namespace gridledger::ledger::node_cache_test
