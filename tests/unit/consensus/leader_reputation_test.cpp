// Leader reputation: the rule over a chain's recent blocks (Committee::reputationLeaderIndex),
// and whole committees of cores (harness.h) in which a crashed member stops being scheduled.
#include <array>
#include <iostream>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace gridledger::consensus::leader_reputation_test {
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

    /**
     * The leader of `round` in `committee` on the chain `recent` (newest first) whose newest
     * block, the parent, is of round − 1: the round right after the parent's.
     */
    static std::size_t lead(const Committee& committee, std::uint64_t round,
                            std::vector<codec::BlockHeader> recent, std::size_t window = 10,
                            const Committee* previous = nullptr) {
        if (!recent.empty() && recent.front().round != 0) {
            recent.front().round = round - 1;
        }
        return committee.reputationLeaderIndex(round, pointers(recent), window, previous);
    }
    std::size_t lead(std::uint64_t round, const std::vector<codec::BlockHeader>& recent,
                     std::size_t window = 10) const {
        return lead(committee_, round, recent, window);
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
        const std::size_t leader = lead(round, recent, 10);
        EXPECT_NE(leader, 3U) << round;
        // The replacement is the active member at round mod 3, in member order.
        EXPECT_EQ(leader, round % 3) << round;
    }
    // Rounds whose base leader is active keep it.
    for (std::uint64_t r = 101; r < 200; ++r) {
        if (committee_.leaderIndex(r) != 3) {
            EXPECT_EQ(lead(r, recent, 10), committee_.leaderIndex(r));
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
        EXPECT_EQ(lead(round, recent, 10), 3U) << round;
    }
    // The newest block follows a TC of members 0, 1 and 2: member 3 let round 99 pass and did
    // not time it out. It leads no round, though it signed every QC of the window.
    codec::TimeoutCert tc;
    tc.epoch = committee_.epoch();
    tc.round = 99;
    tc.signers.assign(1, 0b0111);
    recent.front().tc = tc;
    for (const auto round : roundsLedBy3()) {
        const std::size_t leader = lead(round, recent, 10);
        EXPECT_EQ(leader, round % 3) << round;
    }
    // Had member 3 authored that block, on the TC, it would be live: it keeps its rounds.
    auto authored = recent;
    authored.front().author = committee_.member(3);
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(lead(round, authored, 10), 3U) << round;
    }
    // A newer block whose QC member 3 signed: seen again, it leads again.
    recent.insert(recent.begin(), header(101, 0, {0, 1, 3}));
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(lead(round, recent, 10), 3U) << round;
    }
}

TEST_F(ReputationRuleTest, AnOpenRoundKeepsItsBaseLeaderSoThatAnAbsentMemberCanReturn) {
    const auto recent = withoutMember3(10);
    std::size_t open = 0;
    for (std::uint64_t r = 120; open < 5; r += 40) {
        if (committee_.leaderIndex(r) == 3) {
            EXPECT_EQ(lead(r, recent, 10), 3U) << r;
            ++open;
        }
    }
}

TEST_F(ReputationRuleTest, TheBaseLeaderLeadsWhenTheRuleIsOffOrFewerThanAQuorumWereSeen) {
    const auto recent = withoutMember3(10);
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(lead(round, recent, 0), 3U);
    }
    // The first blocks of an epoch: authored by members 0 and 1 on QCs without signers (the
    // epoch's genesis QC). Two members seen are fewer than q = 3: no evidence against member 3.
    std::vector<codec::BlockHeader> first{header(2, 1, {}), header(1, 0, {})};
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(lead(round, first, 10), 3U) << round;
    }
    // One QC of members 0, 1 and 2 makes a quorum seen: a window need not be full.
    first.insert(first.begin(), header(3, 2, {0, 1, 2}));
    for (const auto round : roundsLedBy3()) {
        EXPECT_EQ(lead(round, first, 10), round % 3) << round;
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
            EXPECT_EQ(lead(round, recent, 10), 3U) << round;
        }
        // One block further back it falls outside the window.
        recent.insert(recent.begin(), header(101, 1, {0, 1, 2}));
        for (const auto round : roundsLedBy3()) {
            EXPECT_NE(lead(round, recent, 10), 3U) << round;
        }
    }
}

TEST_F(ReputationRuleTest, BlocksOfAnotherEpochOrRoundZeroDoNotCount) {
    for (const int uncounted : {0, 1}) {
        // Member 3 authored and signed block 4 of the window, which does not count: of a later
        // epoch, or of round 0.
        auto recent = withoutMember3(10);
        recent[4] = header(96, 3, {0, 1, 2, 3});
        if (uncounted == 0) {
            recent[4].epoch = committee_.epoch() + 1;
        } else {
            recent[4].round = 0;
        }
        for (const auto round : roundsLedBy3()) {
            EXPECT_NE(lead(round, recent, 10), 3U) << uncounted << " " << round;
        }
    }
}

TEST_F(ReputationRuleTest, TheWindowGoesOnIntoThePreviousEpochReadByItsCommittee) {
    // Epoch 1's committee lists epoch 0's members in another order and adds a new key: members
    // 3, 2, 1, 0 of epoch 0, then the new one (n = 5, q = 4).
    const PubKey newKey = testKeys(5).back().publicKey();
    const Committee next = Committee::create(kChainId, 1, genesisBlock().id,
                                             {committee_.member(3), committee_.member(2),
                                              committee_.member(1), committee_.member(0), newKey})
                               .value();
    // Epoch 1's first two blocks, on its genesis QC (no signers), authored by the new key and
    // by epoch 0's member 3; then epoch 0's last ten blocks, from which its member 2 is absent.
    std::vector<codec::BlockHeader> recent{header(2, 0, {}), header(1, 3, {})};
    recent[0].author = newKey;
    for (auto& h : recent) {
        h.epoch = h.qc.epoch = 1;
    }
    for (std::size_t k = 0; k < 10; ++k) {
        recent.push_back(header(100 - k, std::array<std::size_t, 3>{0, 1, 3}[k % 3], {0, 1, 3}));
    }
    // Epoch 0's member 2 is epoch 1's member 1.
    std::vector<std::uint64_t> ledBy1;
    for (std::uint64_t r = 3; ledBy1.size() < 20; ++r) {
        if (next.leaderIndex(r) == 1 && r % 50 != 0) {
            ledBy1.push_back(r);
        }
    }
    for (const auto round : ledBy1) {
        // Without epoch 0's committee its blocks do not count: two members seen, fewer than q.
        EXPECT_EQ(lead(next, round, recent), 1U) << round;
        // With it, epoch 0's signers count under their own order: epoch 1's members 0, 2 and 3
        // were seen there and the new key in epoch 1; member 1 was not, and leads no round.
        const std::size_t leader = lead(next, round, recent, 10, &committee_);
        EXPECT_EQ(leader, (std::array<std::size_t, 4>{0, 2, 3, 4}[round % 4])) << round;
    }
}

TEST_F(ReputationRuleTest, RoundsThatPassWithoutABlockOnOneParentGoToTheNextInLine) {
    // Member 3 absent: the rounds after the parent's round 100 go to members 0, 1 and 2 in
    // turn, from the one that leads round 101, so a timeout is never followed by a round of
    // the same leader.
    const auto recent = withoutMember3(10);
    const std::size_t at101 = committee_.reputationLeaderIndex(101, pointers(recent), 10);
    EXPECT_NE(at101, 3U);
    for (std::uint64_t round = 102; round < 112; ++round) {
        EXPECT_EQ(committee_.reputationLeaderIndex(round, pointers(recent), 10),
                  (at101 + round - 101) % 3)
            << round;
    }
    // Every member active: each of four rounds in a row on one parent has another leader.
    std::vector<codec::BlockHeader> all;
    for (std::size_t k = 0; k < 10; ++k) {
        all.push_back(header(100 - k, k % 4, {0, 1, 2, 3}));
    }
    // Too little seen (two members): the line is every member, from round 101's base leader.
    const std::vector<codec::BlockHeader> thin{header(100, 1, {}), header(99, 0, {})};
    for (const std::vector<codec::BlockHeader>* chain : {&std::as_const(all), &thin}) {
        std::set<std::size_t> leaders;
        for (std::uint64_t round = 101; round < 105; ++round) {
            leaders.insert(committee_.reputationLeaderIndex(round, pointers(*chain), 10));
        }
        EXPECT_EQ(leaders.size(), 4U);
        EXPECT_EQ(committee_.reputationLeaderIndex(101, pointers(*chain), 10),
                  committee_.leaderIndex(101));
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
}  // namespace gridledger::consensus::leader_reputation_test
