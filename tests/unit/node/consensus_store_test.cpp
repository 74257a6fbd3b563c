// The consensus store's pruning: blocks at or below the committed height and QCs below the
// committed round go, the rest stays, call after call and after a reopen (which scans again
// from the start of each prefix). A block's bytes are written once, into the ledger's blocks
// column, where its commit finds them and pruning keeps them; a block that was not committed
// leaves nothing behind.

#include "consensus_store.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>

#include "support/temp_dir.h"

namespace gridledger::node::consensus_store_test {
namespace {

codec::Block blockAt(std::uint64_t height, std::uint64_t round) {
    codec::BlockHeader header;
    header.height = height;
    header.round = round;
    header.timestampMs = 1'000 + height;
    return codec::makeBlock(header, {});
}

codec::Block blockAt(std::uint64_t height) {
    return blockAt(height, height);
}

/** Stages `block` as committed and executed (it holds no transactions); the batch's count. */
std::size_t commit(storage::KvStore& kv, const ledger::BlockStore& blocks,
                   const codec::Block& block) {
    auto batch = kv.batch();
    const codec::QuorumCert qc{0, block.header.round, block.id, {}, {}};
    EXPECT_TRUE(blocks.stageExecuted(batch, block, qc, {}, {}, ledger::ExecRoots{}));
    const std::size_t count = batch.count();
    EXPECT_TRUE(kv.write(batch, false));
    return count;
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
    const ledger::BlockStore blocks(**kv);
    {
        ConsensusStore store(**kv, blocks);
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
        // None of them was committed: the pruned ones left no bytes behind.
        EXPECT_FALSE(blocks.storedBlock(blockAt(5).id).value().has_value());
        EXPECT_TRUE(blocks.storedBlock(blockAt(6).id).value().has_value());
    }
    // Reopened (as after a restart), the store prunes from the start of each prefix again.
    ConsensusStore reopened(**kv, blocks);
    EXPECT_EQ(held(reopened).first, (std::vector<std::uint64_t>{6, 7, 8}));
    ASSERT_TRUE(reopened.prune(7, 8));
    EXPECT_EQ(held(reopened).first, (std::vector<std::uint64_t>{8}));
    EXPECT_EQ(held(reopened).second, (std::vector<std::uint64_t>{8}));
}

TEST(ConsensusStore, ABlockIsWrittenOnceAndItsCommitKeepsItWhereAForkGoes) {
    gridledger::testing::TempDir dir;
    auto kv = storage::KvStore::open(dir.path() / "db", ledger::columnNames());
    ASSERT_TRUE(kv);
    const ledger::BlockStore blocks(**kv);
    ConsensusStore store(**kv, blocks);
    const codec::Block chosen = blockAt(1, 1);
    const codec::Block fork = blockAt(1, 2);  // same height, another round: another id
    ASSERT_NE(chosen.id, fork.id);
    ASSERT_TRUE(store.saveBlock(chosen));
    ASSERT_TRUE(store.saveBlock(fork));

    // Proposed, not committed: the consensus store gives both, the ledger neither.
    EXPECT_TRUE(store.blockById(chosen.id).value().has_value());
    EXPECT_TRUE(store.blockById(fork.id).value().has_value());
    EXPECT_FALSE(blocks.blockById(chosen.id).value().has_value());
    EXPECT_FALSE(blocks.blockAt(1).value().has_value());

    // The commit of a block the store holds writes one record fewer than that of one it lacks.
    const std::size_t saved = commit(**kv, blocks, chosen);
    const std::size_t unsaved = commit(**kv, blocks, blockAt(2));
    EXPECT_EQ(saved + 1, unsaved);
    auto committed = blocks.blockAt(1);
    ASSERT_TRUE(committed && committed->has_value());
    EXPECT_EQ((*committed)->id, chosen.id);
    EXPECT_TRUE(blocks.blockById(chosen.id).value().has_value());
    EXPECT_FALSE(blocks.blockById(fork.id).value().has_value());

    // Pruned: the committed block stays in the ledger, the fork's bytes go.
    ASSERT_TRUE(store.prune(1, 2));
    EXPECT_TRUE(held(store).first.empty());
    committed = blocks.blockAt(1);
    ASSERT_TRUE(committed && committed->has_value());
    EXPECT_EQ(codec::encodeBlock(**committed), codec::encodeBlock(chosen));
    EXPECT_FALSE(blocks.storedBlock(fork.id).value().has_value());
}

TEST(ConsensusStore, ABlockStoredInItsOwnRecordByAnEarlierVersionStillReadsAndPrunes) {
    gridledger::testing::TempDir dir;
    auto kv = storage::KvStore::open(dir.path() / "db", ledger::columnNames());
    ASSERT_TRUE(kv);
    const ledger::BlockStore blocks(**kv);
    const codec::Block old = blockAt(3);
    // "block/" ‖ u64 height ‖ id → the encoded block, as the consensus column held it before.
    Bytes key{'b', 'l', 'o', 'c', 'k', '/'};
    appendU64(key, old.header.height);
    append(key, old.id.view());
    ASSERT_TRUE((*kv)->put(ledger::kConsensusColumn, key, codec::encodeBlock(old), false));

    ConsensusStore store(**kv, blocks);
    EXPECT_EQ(held(store).first, (std::vector<std::uint64_t>{3}));
    auto found = store.blockById(old.id);
    ASSERT_TRUE(found && found->has_value());
    EXPECT_EQ(codec::encodeBlock(**found), codec::encodeBlock(old));
    ASSERT_TRUE(store.prune(3, 0));
    EXPECT_TRUE(held(store).first.empty());
}

}  // namespace
}  // namespace gridledger::node::consensus_store_test
