// Leader reputation: the rule over a chain's recent blocks (Committee::reputationLeaderIndex),
// and whole committees of cores (harness.h) in which a crashed member stops being scheduled.
#include <iostream>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace gridledger::consensus {
namespace {

using namespace testing;

class ReputationRuleTest : public ::testing::Test {
  protected:
    /** A header of this epoch in `round`, authored by member `author`, its QC signed by `signers`.
     */
    codec::BlockHeader header(std::uint64_t round, std::size_t author,
                              const std::vector<std::size_t>& signers) const {
        codec::BlockHeader h;
        h.epoch = committee_.epoch();
        h.round = round;
        h.author = committee_.member(author);
        h.qc.epoch = committee_.epoch();
        h.qc.signers.assign(1, 0);
        for (const auto i : signers) {
            h.qc.signers[0] = static_cast<std::uint8_t>(h.qc.signers[0] | (1U << i));
        }
        return h;
    }

    /** `count` headers, newest first, authored and signed only by members 0, 1 and 2. */
    std::vector<codec::BlockHeader> withoutMember3(std::size_t count) const {
        std::vector<codec::BlockHeader> out;
        out.reserve(count);
        for (std::size_t k = 0; k < count; ++k) {
            out.push_back(header(100 - k, k % 3, {0, 1, 2}));
        }
        return out;
    }

    static std::vector<const codec::BlockHeader*> pointers(
        const std::vector<codec::BlockHeader>& headers) {
        std::vector<const codec::BlockHeader*> out;
        out.reserve(headers.size());
        for (const auto& h : headers) {
            out.push_back(&h);
        }
        return out;
    }

    /** Rounds above 100 whose base leader is member 3, open rounds (multiples of 10 · 4) left out.
     */
    std::vector<std::uint64_t> roundsLedBy3() const {
        std::vector<std::uint64_t> rounds;
        for (std::uint64_t r = 101; rounds.size() < 20; ++r) {
            if (committee_.leaderIndex(r) == 3 && r % 40 != 0) {
                rounds.push_back(r);
            }
        }
        return rounds;
    }

    std::vector<crypto::SecretKey> keys_ = testKeys(4);
    Committee committee_ =
        Committee::create(kChainId, 0, genesisBlock().id, publicKeys(keys_)).value();
};

TEST_F(ReputationRuleTest, AMemberAbsentFromAFullWindowLeadsNoRound) {
    const auto recent = withoutMember3(10);
    for (const auto round : roundsLedBy3()) {
        const std::size_t leader = committee_.reputationLeaderIndex(round, pointers(recent), 10);
        EXPECT_NE(leader, 3U) << round;
        // The replacement is the active member at round mod 3, in member order.
        EXPECT_EQ(leader, round % 3) << round;
    }
    // Rounds whose base leader is active keep it.
    for (std::uint64_t r = 101; r < 200; ++r) {
        if (committee_.leaderIndex(r) != 3) {
            EXPECT_EQ(committee_.reputationLeaderIndex(r, pointers(recent), 10),
                      committee_.leaderIndex(r));
        }
    }
}

TEST_F(ReputationRuleTest, AMemberMissingFromATcLeadsNoRoundUntilItIsSeenAgain) {
    // A full window in which member 3 signed every QC: it leads its rounds.
    std::vector<codec::BlockHeader> recent;
    for (std::size_t k = 0; k < 10; ++k) {
        recent.push_back(header(100 - k, k % 3, {0, 1, 2, 3}));
    }
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U) << round;
    }
    // The newest block follows a TC of members 0, 1 and 2: member 3 let round 99 pass and did
    // not time it out. It leads no round, though it signed every QC of the window.
    codec::TimeoutCert tc;
    tc.epoch = committee_.epoch();
    tc.round = 99;
    tc.signers.assign(1, 0b0111);
    recent.front().tc = tc;
    for (const auto round : roundsLedBy3()) {
        const std::size_t leader = committee_.reputationLeaderIndex(round, pointers(recent), 10);
        EXPECT_EQ(leader, round % 3) << round;
    }
    // Had member 3 authored that block, on the TC, it would be live: it keeps its rounds.
    auto authored = recent;
    authored.front().author = committee_.member(3);
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(authored), 10), 3U) << round;
    }
    // A newer block whose QC member 3 signed: seen again, it leads again.
    recent.insert(recent.begin(), header(101, 0, {0, 1, 3}));
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U) << round;
    }
}

TEST_F(ReputationRuleTest, AnOpenRoundKeepsItsBaseLeaderSoThatAnAbsentMemberCanReturn) {
    const auto recent = withoutMember3(10);
    std::size_t open = 0;
    for (std::uint64_t r = 120; open < 5; r += 40) {
        if (committee_.leaderIndex(r) == 3) {
            EXPECT_EQ(committee_.reputationLeaderIndex(r, pointers(recent), 10), 3U) << r;
            ++open;
        }
    }
}

TEST_F(ReputationRuleTest, TheBaseLeaderLeadsWhenTheRuleIsOffOrTheWindowIsNotFull) {
    const auto recent = withoutMember3(9);
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 0), 3U);
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U);
    }
}

TEST_F(ReputationRuleTest, AVoteATimeoutOrABlockInTheWindowMakesAMemberActive) {
    for (const int sign : {0, 1, 2}) {
        auto recent = withoutMember3(10);
        // The oldest block of the window: member 3 signed its QC, its TC, or authored it.
        recent.back() =
            sign == 0 ? header(91, 0, {0, 1, 3}) : header(91, sign == 1 ? 0 : 3, {0, 1, 2});
        if (sign == 1) {
            codec::TimeoutCert tc;
            tc.epoch = committee_.epoch();
            tc.round = 90;
            tc.signers.assign(1, 0b1011);  // members 0, 1 and 3
            recent.back().tc = tc;
        }
        for (const auto round : roundsLedBy3()) {
            EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U) << round;
        }
        // One block further back it falls outside the window.
        recent.insert(recent.begin(), header(101, 1, {0, 1, 2}));
        for (const auto round : roundsLedBy3()) {
            EXPECT_NE(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U) << round;
        }
    }
}

TEST_F(ReputationRuleTest, BlocksOfAnotherEpochOrRoundZeroDoNotCount) {
    auto recent = withoutMember3(10);
    recent[4].epoch = committee_.epoch() + 1;
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U);
    }
    recent = withoutMember3(10);
    recent[4].round = 0;
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10), 3U);
    }
}

/** TCs node 0 took while the others committed 40 blocks with member 3 crashed. */
std::size_t timeoutsWithACrashedMember(std::size_t window) {
    Options options = testOptions();
    options.leaderReputationWindow = window;
    Cluster cluster(4, options);
    cluster.startAll();
    EXPECT_TRUE(cluster.runToHeight(3));
    cluster.crash(3);
    // Enough blocks for the window to hold none of member 3's work, then the measured stretch.
    EXPECT_TRUE(cluster.runToHeight(cluster.height(0) + 20));
    const std::size_t before = countTcs(cluster.node(0));
    EXPECT_TRUE(cluster.runToHeight(cluster.height(0) + 40));
    expectSameLedgers(cluster);
    for (std::size_t i = 0; i < 3; ++i) {
        expectAtMostOneVotePerRound(cluster.node(i));
        expectTwoChainCommits(cluster.node(i), cluster.allBlocks());
    }
    return countTcs(cluster.node(0)) - before;
}

TEST(LeaderReputationCluster, ACrashedMemberStopsCostingTimeouts) {
    const std::size_t without = timeoutsWithACrashedMember(0);
    const std::size_t with = timeoutsWithACrashedMember(10);
    // Without the rule the crashed member leads about a quarter of the rounds, each a timeout;
    // with it, only the open rounds (one in forty) it would lead time out.
    EXPECT_GE(without, 5U);
    EXPECT_LE(with * 4, without);
    std::cout << "[reputation] timeouts over 40 blocks with one of four crashed: without the rule "
              << without << ", with it " << with << "\n";
}

TEST(LeaderReputationCluster, AMemberBackFromACrashLeadsAgain) {
    Options options = testOptions();
    options.leaderReputationWindow = 10;
    Cluster cluster(4, options);
    cluster.startAll();
    ASSERT_TRUE(cluster.runToHeight(3));
    cluster.crash(3);
    ASSERT_TRUE(cluster.runToHeight(cluster.height(0) + 20));
    cluster.restart(3);
    const std::uint64_t back = cluster.height(0);
    const PubKey returned = cluster.committee().member(3);
    ASSERT_TRUE(cluster.runUntil(
        [&] {
            const auto& ledger = cluster.ledger(0);
            for (std::size_t h = back + 1; h < ledger.size(); ++h) {
                if (ledger[h].header.author == returned) {
                    return true;
                }
            }
            return false;
        },
        600'000));
    expectSameLedgers(cluster);
}

}  // namespace
}  // namespace gridledger::consensus
