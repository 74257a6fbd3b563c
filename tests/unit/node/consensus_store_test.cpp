// The consensus store's pruning: blocks at or below the committed height and QCs below the
// committed round go, the rest stays, call after call and after a reopen (which scans again
// from the start of each prefix).

#include "consensus_store.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/ledger/columns.h>

#include "support/temp_dir.h"

namespace gridledger::node::consensus_store_test {
namespace {

codec::Block blockAt(std::uint64_t height) {
    codec::BlockHeader header;
    header.height = height;
    header.round = height;
    header.timestampMs = 1'000 + height;
    return codec::makeBlock(header, {});
}

/** The heights of the stored blocks and the rounds of the stored QCs, ascending. */
std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>> held(const ConsensusStore& s) {
    auto stored = s.load();
    EXPECT_TRUE(stored);
    std::vector<std::uint64_t> heights;
    std::vector<std::uint64_t> rounds;
    for (const auto& b : stored->blocks) {
        heights.push_back(b.header.height);
    }
    for (const auto& qc : stored->qcs) {
        rounds.push_back(qc.round);
    }
    std::sort(heights.begin(), heights.end());
    std::sort(rounds.begin(), rounds.end());
    return {heights, rounds};
}

TEST(ConsensusStore, PruneDropsWhatIsCommittedCallAfterCallAndAfterAReopen) {
    gridledger::testing::TempDir dir;
    auto kv = storage::KvStore::open(dir.path() / "db", ledger::columnNames());
    ASSERT_TRUE(kv);
    {
        ConsensusStore store(**kv);
        for (std::uint64_t h = 1; h <= 8; ++h) {
            const codec::Block block = blockAt(h);
            ASSERT_TRUE(store.saveBlock(block));
            ASSERT_TRUE(store.saveQc(codec::QuorumCert{0, h, block.id, {}, {}}));
        }
        ASSERT_TRUE(store.prune(3, 3));
        EXPECT_EQ(held(store).first, (std::vector<std::uint64_t>{4, 5, 6, 7, 8}));
        EXPECT_EQ(held(store).second, (std::vector<std::uint64_t>{3, 4, 5, 6, 7, 8}));
        ASSERT_TRUE(store.prune(5, 6));
        EXPECT_EQ(held(store).first, (std::vector<std::uint64_t>{6, 7, 8}));
        EXPECT_EQ(held(store).second, (std::vector<std::uint64_t>{6, 7, 8}));
        // A lower commit than before prunes nothing more; a block saved again above stays.
        ASSERT_TRUE(store.prune(4, 4));
        EXPECT_EQ(held(store).first, (std::vector<std::uint64_t>{6, 7, 8}));
        auto found = store.blockById(blockAt(7).id);
        ASSERT_TRUE(found);
        EXPECT_TRUE(found->has_value());
        EXPECT_FALSE(store.blockById(blockAt(5).id).value().has_value());
    }
    // Reopened (as after a restart), the store prunes from the start of each prefix again.
    ConsensusStore reopened(**kv);
    EXPECT_EQ(held(reopened).first, (std::vector<std::uint64_t>{6, 7, 8}));
    ASSERT_TRUE(reopened.prune(7, 8));
    EXPECT_EQ(held(reopened).first, (std::vector<std::uint64_t>{8}));
    EXPECT_EQ(held(reopened).second, (std::vector<std::uint64_t>{8}));
}

}  // namespace
}  // namespace gridledger::node::consensus_store_test
