// Governance through executed blocks (docs/tokenomics.md): the > 2/3 threshold, application at the
// passing vote, the validator set of record, parameters, rejection and failure.

#include <gtest/gtest.h>

#include "chain_harness.h"

namespace gridledger::contracts::governance_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::eventsOf;
using testing::kGenesisMs;
using testing::shortEpochGenesis;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;

codec::ProposalVote yes(std::uint64_t id) {
    return codec::ProposalVote{id, true};
}

TEST(GovernanceThreshold, MoreThanTwoThirdsMeansThreeTimesYesAboveTwiceTheValidators) {
    // n = 1: 1 vote. n = 3: 2 is exactly 2/3 and not enough; 3 is. n = 4: 3 (9 > 8).
    // n = 6: 4 is exactly 2/3 (12 = 12), 5 passes. n = 7: 5 (15 > 14), 4 does not (12 < 14).
    EXPECT_TRUE(passes(1, 1));
    EXPECT_FALSE(passes(2, 3));
    EXPECT_TRUE(passes(3, 3));
    EXPECT_FALSE(passes(2, 4));
    EXPECT_TRUE(passes(3, 4));
    EXPECT_FALSE(passes(4, 6));
    EXPECT_TRUE(passes(5, 6));
    EXPECT_FALSE(passes(4, 7));
    EXPECT_TRUE(passes(5, 7));
    // Rejected once the remaining voters cannot exceed 2/3: n = 3, one no leaves 2 of 3.
    EXPECT_TRUE(cannotPass(1, 3));
    EXPECT_FALSE(cannotPass(1, 4));  // 3 of 4 can still pass
    EXPECT_TRUE(cannotPass(2, 6));   // 4 of 6 cannot
    EXPECT_FALSE(cannotPass(1, 6));
}

TEST(Governance, SixValidatorsNeedFiveVotesAndTheFifthAppliesTheAction) {
    Chain chain(shortEpochGenesis(6, 0));
    const Address verifier = addressOf(testKey(60));
    auto created = chain.run(kT0 + 100, testKey(1), codec::Propose{codec::GrantVerifier{verifier}});
    ASSERT_TRUE(created.success()) << reasonOf(created.code);
    EXPECT_EQ(attr(created.events.at(0), "id"), "0");
    EXPECT_EQ(attr(created.events.at(0), "action"), "grant_verifier");
    EXPECT_EQ(attr(created.events.at(0), "expires_ms"), std::to_string(kT0 + 100 + 7 * kDayMs));

    for (std::uint8_t v = 1; v <= 4; ++v) {
        const auto r = chain.run(kT0 + 100 + v, testKey(v), yes(0));
        ASSERT_TRUE(r.success());
        EXPECT_EQ(attr(r.events.at(0), "yes"), std::to_string(v));
        EXPECT_TRUE(eventsOf(r.events, "proposal_passed").empty()) << "after " << int{v};
    }
    EXPECT_EQ(chain.proposal(0)->status, ProposalStatus::kOpen);
    EXPECT_TRUE(chain.readVerifiers().empty());

    const auto fifth = chain.run(kT0 + 200, testKey(5), yes(0));
    ASSERT_TRUE(fifth.success());
    EXPECT_EQ(eventsOf(fifth.events, "proposal_passed").size(), 1U);
    ASSERT_EQ(eventsOf(fifth.events, "verifier_granted").size(), 1U);
    EXPECT_EQ(attr(eventsOf(fifth.events, "verifier_granted")[0], "account"), verifier.hex());
    const auto p = chain.proposal(0);
    EXPECT_EQ(p->status, ProposalStatus::kPassed);
    EXPECT_EQ(p->closedHeight, chain.height());
    EXPECT_EQ(chain.readVerifiers(), std::vector<Address>{verifier});

    // Closed: the sixth validator's vote is refused and changes nothing.
    EXPECT_EQ(chain.run(kT0 + 300, testKey(6), yes(0)).code, ErrorCode::kProposalClosed);
}

TEST(Governance, AddingAValidatorRecordsTheSetForTheNextConsensusEpochAndLetsItVote) {
    const auto newcomer = testKey(9);
    const auto newcomerAccount = testKey(10);  // its governance key, apart from its consensus key
    auto genesis = shortEpochGenesis(1, 0);
    genesis.accounts.push_back(GenesisAccount{addressOf(newcomerAccount), testing::kFeeFloat});
    genesis.accounts.push_back(GenesisAccount{addressOf(newcomer), testing::kFeeFloat});
    Chain chain(genesis);
    NodeId node;
    node[0] = 9;
    auto done = chain.pass(kT0 + 100, codec::AddValidator{"v-new", newcomer.publicKey(), node,
                                                          addressOf(newcomerAccount)});
    const auto added = eventsOf(done.receipts.back().events, "validator_added");
    ASSERT_EQ(added.size(), 1U);
    EXPECT_EQ(attr(added[0], "set_version"), "1");
    EXPECT_EQ(attr(added[0], "validators"), "2");
    EXPECT_EQ(attr(added[0], "effective"), "next consensus epoch");

    const auto set = chain.validators();
    EXPECT_EQ(set.version, 1U);
    EXPECT_EQ(set.changedAtHeight, chain.height());
    ASSERT_EQ(set.validators.size(), 2U);
    EXPECT_TRUE(set.contains(addressOf(newcomerAccount)));
    EXPECT_FALSE(set.contains(addressOf(newcomer)));
    EXPECT_EQ(attr(added[0], "address"), addressOf(newcomerAccount).hex());
    EXPECT_TRUE(std::is_sorted(
        set.validators.begin(), set.validators.end(),
        [](const auto& a, const auto& b) { return a.consensusKey < b.consensusKey; }));

    // With 2 validators one yes is not enough (3 ≤ 4); the newcomer's vote passes it.
    const Address verifier = addressOf(testKey(60));
    ASSERT_TRUE(
        chain.run(kT0 + 200, testKey(1), codec::Propose{codec::GrantVerifier{verifier}}).success());
    EXPECT_TRUE(
        eventsOf(chain.run(kT0 + 201, testKey(1), yes(1)).events, "proposal_passed").empty());
    // The consensus key is no voter; the account is.
    EXPECT_EQ(chain.run(kT0 + 202, newcomer, yes(1)).code, ErrorCode::kNotValidator);
    EXPECT_EQ(
        eventsOf(chain.run(kT0 + 203, newcomerAccount, yes(1)).events, "proposal_passed").size(),
        1U);
}

TEST(Governance, RemovingAValidatorDropsItsVotesFromTheCount) {
    Chain chain(shortEpochGenesis(4, 0));
    // Proposal 0: grant a verifier; validator 4 votes yes (1 of 4).
    const Address verifier = addressOf(testKey(60));
    ASSERT_TRUE(
        chain.run(kT0 + 100, testKey(1), codec::Propose{codec::GrantVerifier{verifier}}).success());
    ASSERT_TRUE(chain.run(kT0 + 101, testKey(4), yes(0)).success());
    // Validator 4 is removed (proposal 1 passes with 3 of 4).
    std::vector<Bytes> txs{
        chain.tx(testKey(1), codec::Propose{codec::RemoveValidator{testKey(4).publicKey()}})};
    for (std::uint8_t v = 1; v <= 3; ++v) {
        txs.push_back(chain.tx(testKey(v), yes(1)));
    }
    chain.block(kT0 + 200, std::move(txs));
    EXPECT_EQ(chain.validators().validators.size(), 3U);
    // Proposal 0 now counts 0 of 3: validators 1 and 2 make 2 of 3 (not enough), 3 passes it.
    auto r1 = chain.run(kT0 + 300, testKey(1), yes(0));
    EXPECT_EQ(attr(r1.events.at(0), "yes"), "1");
    EXPECT_EQ(attr(r1.events.at(0), "validators"), "3");
    auto r2 = chain.run(kT0 + 301, testKey(2), yes(0));
    EXPECT_TRUE(eventsOf(r2.events, "proposal_passed").empty());
    auto r3 = chain.run(kT0 + 302, testKey(3), yes(0));
    EXPECT_EQ(eventsOf(r3.events, "proposal_passed").size(), 1U);
    // The removed validator can no longer vote.
    EXPECT_EQ(chain.run(kT0 + 303, testKey(4), yes(0)).code, ErrorCode::kNotValidator);
}

TEST(Governance, NoVotesRejectAProposalOnceItCanNoLongerPass) {
    Chain chain(shortEpochGenesis(3, 0));
    ASSERT_TRUE(chain
                    .run(kT0 + 100, testKey(1),
                         codec::Propose{codec::GrantVerifier{addressOf(testKey(60))}})
                    .success());
    // With 3 validators a single no leaves at most 2 yes: 6 > 6 is false, so it is rejected.
    auto r = chain.run(kT0 + 101, testKey(2), codec::ProposalVote{0, false});
    ASSERT_TRUE(r.success());
    EXPECT_EQ(eventsOf(r.events, "proposal_rejected").size(), 1U);
    EXPECT_EQ(chain.proposal(0)->status, ProposalStatus::kRejected);
    EXPECT_EQ(chain.run(kT0 + 102, testKey(1), yes(0)).code, ErrorCode::kProposalClosed);
}

TEST(Governance, APassedProposalWhoseActionNoLongerAppliesFailsAndTheVoteStands) {
    Chain chain(shortEpochGenesis(1, 0));
    const Address verifier = addressOf(testKey(60));
    // Two proposals grant the same verifier; the first passes, the second then cannot apply.
    ASSERT_TRUE(
        chain.run(kT0 + 100, testKey(1), codec::Propose{codec::GrantVerifier{verifier}}).success());
    ASSERT_TRUE(
        chain.run(kT0 + 101, testKey(1), codec::Propose{codec::GrantVerifier{verifier}}).success());
    ASSERT_TRUE(chain.run(kT0 + 102, testKey(1), yes(0)).success());
    auto r = chain.run(kT0 + 103, testKey(1), yes(1));
    ASSERT_TRUE(r.success());
    const auto failed = eventsOf(r.events, "proposal_failed");
    ASSERT_EQ(failed.size(), 1U);
    EXPECT_EQ(attr(failed[0], "reason"), "invalid_proposal");
    EXPECT_EQ(chain.proposal(1)->status, ProposalStatus::kFailed);
    EXPECT_FALSE(chain.proposal(1)->outcome.empty());
    EXPECT_EQ(chain.readVerifiers(), std::vector<Address>{verifier});
}

TEST(Governance, SetParameterChangesTheStoredParametersAndRecordsOldAndNew) {
    Chain chain(shortEpochGenesis(1, 0));
    auto done = chain.pass(kT0 + 100, codec::SetParameter{"tokenomics.reward_share_bps", "5000"});
    const auto set = eventsOf(done.receipts.back().events, "parameter_set");
    ASSERT_EQ(set.size(), 1U);
    EXPECT_EQ(attr(set[0], "old"), "2000");
    EXPECT_EQ(attr(set[0], "new"), "5000");
    EXPECT_EQ(chain.params().tokenomics.rewardShareBps, 5000U);

    chain.pass(kT0 + 200, codec::SetParameter{"index.category.flat.weights",
                                              "memory_bandwidth=4000,memory_capacity=6000"});
    const auto weights = chain.params().index.categories.at(0).weights;  // params() is a copy
    ASSERT_EQ(weights.size(), 2U);
    EXPECT_EQ(weights[1].factor, "memory_capacity");
    EXPECT_EQ(weights[1].weightBps, 6000U);

    chain.pass(kT0 + 300,
               codec::SetParameter{"index.factor.memory_bandwidth.reference_max", "2000"});
    EXPECT_EQ(chain.params().index.factors.at(0).referenceMax, 2000U);
    chain.pass(kT0 + 400, codec::SetParameter{"governance.proposal_ttl_ms", "5000"});
    EXPECT_EQ(chain.params().governance.proposalTtlMs, 5000U);
}

}  // namespace
}  // namespace gridledger::contracts::governance_test
