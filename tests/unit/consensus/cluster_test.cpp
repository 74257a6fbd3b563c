// Whole committees of cores run by the in-test driver (harness.h), in virtual time.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "harness.h"

namespace gridledger::consensus::cluster_test {
namespace {

using namespace testing;

std::size_t committedTxs(const std::vector<codec::Block>& ledger) {
    std::size_t n = 0;
    for (const auto& block : ledger) {
        n += block.txs.size();
    }
    return n;
}

void expectSoundNode(const Cluster& cluster, const Node& node) {
    expectSafetyPersistedBeforeEveryVote(node);
    expectAtMostOneVotePerRound(node);
    expectTwoChainCommits(node, cluster.allBlocks());
}

TEST(SingleValidator, CommitsALongChainOfItsOwnBlocks) {
    Cluster cluster(1);
    cluster.startAll();
    std::size_t added = 0;
    for (int burst = 0; burst < 30; ++burst) {
        cluster.addTxs(0, 7);
        added += 7;
        ASSERT_TRUE(cluster.runToHeight(cluster.height(0) + 2));
    }
    ASSERT_TRUE(cluster.runToHeight(60));
    // Pending transactions never wait for the idle interval: all of them end up committed.
    ASSERT_TRUE(cluster.runUntil([&] { return committedTxs(cluster.ledger(0)) == added; }, 5000));
    const Node& node = cluster.node(0);
    expectSoundNode(cluster, node);
    EXPECT_EQ(countTcs(node), 0U);
    EXPECT_TRUE(node.rejections.empty()) << node.rejections.front().message;
    ASSERT_TRUE(
        cluster.runUntil([&] { return node.core().executedHeight() == cluster.height(0); }, 1000));
}

TEST(SingleValidator, IdlesAtTheEmptyBlockIntervalWithAnEmptyMempool) {
    Cluster cluster(1);
    cluster.startAll();
    const std::uint64_t start = cluster.now();
    ASSERT_FALSE(cluster.runUntil([] { return false; }, 10'000));
    const auto& ledger = cluster.ledger(0);
    // 10 s at one block per 200 ms, each committed two blocks later.
    EXPECT_GE(ledger.size(), 45U);
    EXPECT_LE(ledger.size(), 52U);
    for (std::size_t h = 2; h < ledger.size(); ++h) {
        EXPECT_GE(ledger[h].header.timestampMs - ledger[h - 1].header.timestampMs, 200U);
        EXPECT_EQ(ledger[h].txs.size(), 0U);
    }
    EXPECT_GE(ledger[1].header.timestampMs, start + 200);
    EXPECT_EQ(countTcs(cluster.node(0)), 0U);
}

TEST(FourValidators, CommitIdenticalSequencesOnTheHappyPath) {
    Cluster cluster(4);
    cluster.startAll();
    for (int burst = 0; burst < 10; ++burst) {
        for (std::size_t i = 0; i < 4; ++i) {
            cluster.addTxs(i, 3);
        }
        ASSERT_TRUE(cluster.runToHeight(cluster.height(0) + 2));
    }
    ASSERT_TRUE(cluster.runToHeight(30));
    expectSameLedgers(cluster);
    for (const auto& node : cluster.nodes()) {
        expectSoundNode(cluster, node);
        EXPECT_EQ(countTcs(node), 0U);
    }
    // Leaders rotate: more than one member authored committed blocks.
    std::set<PubKey> authors;
    for (const auto& block : cluster.ledger(0)) {
        authors.insert(block.header.author);
    }
    EXPECT_GE(authors.size(), 3U);
}

TEST(FourValidators, ASilentLeaderCostsATimeoutThenProgressResumes) {
    Cluster cluster(4);
    cluster.startAll();
    ASSERT_TRUE(cluster.runToHeight(3));
    // Silence the leader of the next round the others will enter.
    const std::uint64_t round = cluster.node(0).core().currentRound() + 1;
    const std::size_t silent = cluster.committee().leaderIndex(round);
    cluster.crash(silent);
    const std::uint64_t before = cluster.height((silent + 1) % 4);
    ASSERT_TRUE(cluster.runToHeight(before + 15));
    std::size_t tcs = 0;
    bool tcInLedger = false;
    for (std::size_t i = 0; i < 4; ++i) {
        if (i == silent) {
            continue;
        }
        tcs += countTcs(cluster.node(i));
        expectSoundNode(cluster, cluster.node(i));
        for (const auto& block : cluster.ledger(i)) {
            tcInLedger = tcInLedger || block.header.tc.has_value();
        }
    }
    EXPECT_GT(tcs, 0U);
    EXPECT_TRUE(tcInLedger);  // a block proposed after a TC carries it and got committed
    expectSameLedgers(cluster);
}

TEST(FourValidators, APartitionedValidatorCatchesUpByFetchingAfterTheHeal) {
    Cluster cluster(4);
    cluster.startAll();
    ASSERT_TRUE(cluster.runToHeight(2));
    bool partitioned = true;
    cluster.linkUp = [&](std::size_t from, std::size_t to) {
        return !partitioned || (from != 3 && to != 3);
    };
    const std::uint64_t isolatedAt = cluster.height(3);
    ASSERT_TRUE(cluster.runUntil([&] { return cluster.height(0) >= isolatedAt + 12; }, 600'000));
    EXPECT_EQ(cluster.height(3), isolatedAt);
    partitioned = false;
    const std::uint64_t target = cluster.height(0) + 3;
    ASSERT_TRUE(cluster.runToHeight(target));
    expectSameLedgers(cluster);
    bool fetched = false;
    for (const auto& effects : cluster.node(3).steps) {
        fetched = fetched || !effectsOf<Fetch>(effects).empty();
    }
    EXPECT_TRUE(fetched);
    for (const auto& node : cluster.nodes()) {
        expectSoundNode(cluster, node);
    }
}

TEST(Restart, ASingleValidatorKilledAtRandomEffectsKeepsGoingAndNeverDoubleVotes) {
    for (const std::uint64_t seed : {1U, 2U, 3U, 4U, 5U}) {
        SCOPED_TRACE("seed=" + std::to_string(seed));
        Cluster cluster(1);
        std::mt19937_64 rng(seed);
        // Kill the process after a random prefix of the effects of one step in four.
        cluster.crashPoint = [&](std::size_t,
                                 const Effects& effects) -> std::optional<std::size_t> {
            if (effects.empty() || rng() % 4 != 0) {
                return std::nullopt;
            }
            return static_cast<std::size_t>(rng() % (effects.size() + 1));
        };
        cluster.startAll();
        for (int burst = 0; burst < 60 && cluster.height(0) < 40; ++burst) {
            cluster.addTxs(0, 2);
            ASSERT_TRUE(cluster.runToHeight(cluster.height(0) + 1, 120'000))
                << "stuck at height " << cluster.height(0) << " after " << cluster.node(0).restarts
                << " restarts";
        }
        cluster.crashPoint = nullptr;
        ASSERT_TRUE(cluster.runToHeight(40, 120'000));
        const Node& node = cluster.node(0);
        EXPECT_GT(node.restarts, 10U);
        expectSoundNode(cluster, node);
    }
}

TEST(Restart, OneOfFourValidatorsRestartingRepeatedlyStaysSafeAndInStep) {
    Cluster cluster(4);
    std::mt19937_64 rng(77);
    cluster.crashPoint = [&](std::size_t i, const Effects& effects) -> std::optional<std::size_t> {
        if (i != 1 || effects.empty() || rng() % 8 != 0) {
            return std::nullopt;
        }
        return static_cast<std::size_t>(rng() % (effects.size() + 1));
    };
    cluster.startAll();
    for (int burst = 0; burst < 25; ++burst) {
        cluster.addTxs(static_cast<std::size_t>(burst) % 4, 2);
        ASSERT_TRUE(cluster.runToHeight(cluster.height(0) + 1, 120'000));
    }
    cluster.crashPoint = nullptr;
    ASSERT_TRUE(cluster.runToHeight(cluster.height(0) + 3, 120'000));
    EXPECT_GT(cluster.node(1).restarts, 3U);
    expectSameLedgers(cluster);
    for (const auto& node : cluster.nodes()) {
        expectSoundNode(cluster, node);
    }
}

TEST(Chaos, CommitteesUnderMessageLossAndReorderingStaySafeAndKeepCommitting) {
    for (const std::size_t n : {3U, 4U, 7U}) {
        for (const std::uint64_t seed : {11U, 12U, 13U}) {
            SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
            Cluster cluster(n);
            cluster.setChaos(seed, 20, 16);
            cluster.startAll();
            for (std::size_t burst = 0; burst < 8; ++burst) {
                cluster.addTxs(burst % n, 3);
                ASSERT_TRUE(
                    cluster.runUntil([&] { return cluster.height(0) >= 2 * (burst + 1); }, 300'000))
                    << "stuck at height " << cluster.height(0);
            }
            expectSameLedgers(cluster);
            for (const auto& node : cluster.nodes()) {
                expectSoundNode(cluster, node);
            }
        }
    }
}

}  // namespace
}  // namespace gridledger::consensus::cluster_test
