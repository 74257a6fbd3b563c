#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/consensus/safety_rules.h>

namespace gridledger::consensus::safety_rules_test {
namespace {

using VoteClause = NotSafeToVote::Clause;
using TimeoutClause = NotSafeToTimeout::Clause;

struct VoteRow {
    std::string name;
    SafetyData data;
    VoteRequest request;
    std::optional<SafetyData> accepted;  // the new data, or nullopt when refused
    VoteClause clause = VoteClause::kWrongEpoch;
};

VoteRequest voteReq(std::uint64_t epoch, std::uint64_t round, std::uint64_t qcRound,
                    std::optional<std::uint64_t> tcRound = std::nullopt,
                    std::uint64_t tcHighestHqc = 0) {
    return VoteRequest{epoch, round, qcRound, tcRound, tcHighestHqc};
}

TEST(SafetyRulesVote, EachClauseAcceptsAndRefusesWithTheRoundsThatDecided) {
    const std::vector<VoteRow> rows = {
        // Clause: the epoch must be the safety data's.
        {"same epoch", {3, 4, 2}, voteReq(3, 5, 4), SafetyData{3, 5, 4}},
        {"other epoch", {3, 4, 2}, voteReq(4, 5, 4), std::nullopt, VoteClause::kWrongEpoch},
        // Clause: round > last_voted_round.
        {"round after last vote", {0, 9, 0}, voteReq(0, 10, 9), SafetyData{0, 10, 9}},
        {"round equal to last vote",
         {0, 10, 0},
         voteReq(0, 10, 9),
         std::nullopt,
         VoteClause::kRoundNotAfterLastVote},
        {"round below last vote",
         {0, 11, 0},
         voteReq(0, 10, 9),
         std::nullopt,
         VoteClause::kRoundNotAfterLastVote},
        // Clause: round == qc.round + 1 ...
        {"direct extension of the qc", {0, 0, 0}, voteReq(0, 7, 6), SafetyData{0, 7, 6}},
        {"skips a round without tc",
         {0, 0, 0},
         voteReq(0, 7, 5),
         std::nullopt,
         VoteClause::kNotExtendingCertificate},
        // ... or (round == tc.round + 1 and qc.round >= tc.highest_hqc_round).
        {"justified by tc, qc at tc hqc", {0, 0, 0}, voteReq(0, 7, 5, 6, 5), SafetyData{0, 7, 5}},
        {"justified by tc, qc above tc hqc",
         {0, 0, 0},
         voteReq(0, 7, 5, 6, 4),
         SafetyData{0, 7, 5}},
        {"tc not for the previous round",
         {0, 0, 0},
         voteReq(0, 7, 4, 5, 4),
         std::nullopt,
         VoteClause::kNotExtendingCertificate},
        {"qc below the tc's highest hqc",
         {0, 0, 0},
         voteReq(0, 7, 4, 6, 5),
         std::nullopt,
         VoteClause::kQcBelowTcHighestHqc},
        // Update: one_chain_round = max(one_chain_round, qc.round).
        {"one chain round never decreases", {0, 6, 6}, voteReq(0, 8, 5, 7, 5), SafetyData{0, 8, 6}},
    };
    const TwoChainSafetyRules rules;
    for (const auto& row : rows) {
        SCOPED_TRACE(row.name);
        const auto decision = rules.decideVote(row.data, row.request);
        if (row.accepted) {
            ASSERT_TRUE(decision.has_value());
            EXPECT_EQ(*decision, *row.accepted);
            continue;
        }
        ASSERT_FALSE(decision.has_value());
        const auto* error = std::get_if<NotSafeToVote>(&decision.error());
        ASSERT_NE(error, nullptr);
        const NotSafeToVote expected{row.clause,
                                     row.request.epoch,
                                     row.request.round,
                                     row.request.qcRound,
                                     row.request.tcRound,
                                     row.request.tcHighestHqcRound,
                                     row.data.lastVotedRound};
        EXPECT_EQ(*error, expected);
    }
}

struct TimeoutRow {
    std::string name;
    SafetyData data;
    TimeoutRequest request;
    std::optional<SafetyData> accepted;
    TimeoutClause clause = TimeoutClause::kWrongEpoch;
};

TEST(SafetyRulesTimeout, EachClauseAcceptsAndRefusesWithTheRoundsThatDecided) {
    const std::vector<TimeoutRow> rows = {
        // Clause: the epoch must be the safety data's.
        {"same epoch", {2, 4, 3}, {2, 5, 4, std::nullopt}, SafetyData{2, 5, 3}},
        {"other epoch",
         {2, 4, 3},
         {1, 5, 4, std::nullopt},
         std::nullopt,
         TimeoutClause::kWrongEpoch},
        // Clause: round == hqc.round + 1 or round == last_tc.round + 1.
        {"round after the hqc", {0, 0, 0}, {0, 5, 4, std::nullopt}, SafetyData{0, 5, 0}},
        {"round after the tc", {0, 0, 0}, {0, 5, 2, 4}, SafetyData{0, 5, 0}},
        {"round after neither",
         {0, 0, 0},
         {0, 6, 4, 4},
         std::nullopt,
         TimeoutClause::kRoundNotJustified},
        {"round after neither, no tc",
         {0, 0, 0},
         {0, 6, 3, std::nullopt},
         std::nullopt,
         TimeoutClause::kRoundNotJustified},
        // Clause: hqc.round >= one_chain_round.
        {"hqc at one chain round", {0, 0, 4}, {0, 5, 4, std::nullopt}, SafetyData{0, 5, 4}},
        {"hqc below one chain round",
         {0, 0, 4},
         {0, 5, 3, 4},
         std::nullopt,
         TimeoutClause::kQcBelowOneChain},
        // Clause: round >= last_voted_round (a validator may time out the round it voted in).
        {"round equal to last vote", {0, 5, 4}, {0, 5, 4, std::nullopt}, SafetyData{0, 5, 4}},
        {"round below last vote",
         {0, 6, 4},
         {0, 5, 4, std::nullopt},
         std::nullopt,
         TimeoutClause::kRoundBeforeLastVote},
    };
    const TwoChainSafetyRules rules;
    for (const auto& row : rows) {
        SCOPED_TRACE(row.name);
        const auto decision = rules.decideTimeout(row.data, row.request);
        if (row.accepted) {
            ASSERT_TRUE(decision.has_value());
            EXPECT_EQ(*decision, *row.accepted);
            continue;
        }
        ASSERT_FALSE(decision.has_value());
        const auto* error = std::get_if<NotSafeToTimeout>(&decision.error());
        ASSERT_NE(error, nullptr);
        const NotSafeToTimeout expected{row.clause,
                                        row.request.epoch,
                                        row.request.round,
                                        row.request.hqcRound,
                                        row.request.tcRound,
                                        row.data.oneChainRound,
                                        row.data.lastVotedRound};
        EXPECT_EQ(*error, expected);
    }
}

TEST(SafetyRulesVote, AfterVotingARoundTheSameRoundCanNeitherBeVotedAgainNorSkippedBack) {
    const TwoChainSafetyRules rules;
    const auto voted = rules.decideVote({0, 0, 0}, voteReq(0, 1, 0));
    ASSERT_TRUE(voted.has_value());
    EXPECT_FALSE(rules.decideVote(*voted, voteReq(0, 1, 0)).has_value());
    // Timing out the round voted in is allowed, and then no vote in it is.
    const auto timedOut = rules.decideTimeout(*voted, {0, 1, 0, std::nullopt});
    ASSERT_TRUE(timedOut.has_value());
    EXPECT_EQ(timedOut->lastVotedRound, 1U);
    EXPECT_FALSE(rules.decideVote(*timedOut, voteReq(0, 1, 0)).has_value());
}

TEST(SafetyRulesVote, RoundsAtTheTopOfTheRangeDoNotWrapAround) {
    const TwoChainSafetyRules rules;
    const std::uint64_t max = UINT64_MAX;
    // qc.round + 1 would wrap to 0: a round-0 block must not count as its extension.
    EXPECT_FALSE(rules.decideVote({0, 0, 0}, voteReq(0, 0, max)).has_value());
    EXPECT_FALSE(rules.decideTimeout({0, 0, 0}, {0, 0, max, max}).has_value());
}

TEST(SafetyErrors, ConvertToStableCodesAndNameEveryRound) {
    const Error vote =
        toError(NotSafeToVote{VoteClause::kRoundNotAfterLastVote, 1, 7, 6, std::nullopt, 0, 9});
    EXPECT_EQ(vote.code, ErrorCode::kNotSafeToVote);
    EXPECT_EQ(vote.reason(), "not_safe_to_vote");
    EXPECT_NE(vote.message.find("clause=round_not_after_last_vote"), std::string::npos);
    EXPECT_NE(vote.message.find("round=7"), std::string::npos);
    EXPECT_NE(vote.message.find("qc_round=6"), std::string::npos);
    EXPECT_NE(vote.message.find("tc_round=none"), std::string::npos);
    EXPECT_NE(vote.message.find("last_voted_round=9"), std::string::npos);

    const Error timeout =
        toError(NotSafeToTimeout{TimeoutClause::kQcBelowOneChain, 1, 8, 3, 7, 5, 6});
    EXPECT_EQ(timeout.code, ErrorCode::kNotSafeToTimeout);
    EXPECT_NE(timeout.message.find("clause=qc_below_one_chain"), std::string::npos);
    EXPECT_NE(timeout.message.find("hqc_round=3"), std::string::npos);
    EXPECT_NE(timeout.message.find("tc_round=7"), std::string::npos);
    EXPECT_NE(timeout.message.find("one_chain_round=5"), std::string::npos);
}

}  // namespace
}  // namespace gridledger::consensus::safety_rules_test
