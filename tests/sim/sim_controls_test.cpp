// Negative controls: the invariant checker must fail when the protocol's assumptions or rules are
// broken on purpose. Each test asserts the detection.
#include <iostream>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "sim/runner.h"
#include "sim/simulator.h"

namespace gridledger::sim::sim_controls_test {
namespace {

BatchSummary runControl(std::size_t n, FaultClass faults, RulesVariant rules, std::size_t seeds) {
    BatchOptions options;
    options.n = n;
    options.faults = faults;
    options.rules = rules;
    options.seeds = seeds;
    options.keepGoing = true;  // count every invariant each run breaks
    options.maxReports = 1;
    BatchSummary summary = runBatch(options);
    std::cout << "[sim control] " << summary.text() << "\n";
    if (!summary.reports.empty()) {
        const std::string& report = summary.reports.front();
        std::cout << "[sim control] first report:\n"
                  << report.substr(0, report.find("last events")) << "\n";
    }
    return summary;
}

/**
 * A weakened (n, faults, rules) over seeds 1..seeds with the invariant `only` checked alone, and
 * the same seeds with the real rules and every invariant: the weak summary first.
 */
std::pair<BatchSummary, BatchSummary> runAloneAndReal(std::size_t n, FaultClass faults,
                                                      RulesVariant rules, std::size_t seeds,
                                                      const std::string& only) {
    BatchOptions options;
    options.n = n;
    options.faults = faults;
    options.rules = rules;
    options.seeds = seeds;
    options.only = only;
    options.maxReports = 1;
    BatchSummary weak = runBatch(options);
    std::cout << "[sim control] " << weak.text() << "\n";
    if (!weak.reports.empty()) {
        const std::string& report = weak.reports.front();
        std::cout << "[sim control] first report:\n"
                  << report.substr(0, report.find("last events")) << "\n";
    }
    options.rules = RulesVariant::kTwoChain;
    options.only.clear();
    return {std::move(weak), runBatch(options)};
}

std::size_t count(const BatchSummary& summary, const std::string& invariant) {
    const auto it = summary.byInvariant.find(invariant);
    return it == summary.byInvariant.end() ? 0 : it->second;
}

TEST(NegativeControl, FPlusOneTwinsForkTheChain) {
    // f + 1 keys run twice, and a partition that never heals splits the twins and the honest
    // members: each side holds a quorum of keys, so honest members commit different blocks.
    for (const std::size_t n : {4U, 7U, 10U}) {
        const BatchSummary summary =
            runControl(n, FaultClass::kExcessTwins, RulesVariant::kTwoChain, 10);
        EXPECT_GE(count(summary, "agreement"), 1U) << "n=" << n << ": no fork found";
    }
}

TEST(NegativeControl, FTwinsWithTheSameSplitDoNotFork) {
    // The positive twin of the control above: with f twins, the sweeps (sim_test) see no fork.
    const BatchSummary summary = runControl(4, FaultClass::kTwins, RulesVariant::kTwoChain, 40);
    EXPECT_EQ(summary.failures, 0U) << summary.text();
}

TEST(NegativeControl, VotingWithoutTheRoundCheckIsCaught) {
    // Rules without `round > last_voted_round`: members vote in rounds they already timed out
    // (or voted) in. The same seeds with the real rules pass.
    const BatchSummary weak = runControl(4, FaultClass::kCrash, RulesVariant::kSkipRoundCheck, 40);
    EXPECT_GE(weak.failures, 1U);
    const std::set<std::string> expected{"vote-after-timeout", "double-vote", "vote-rule"};
    for (const auto& [invariant, runs] : weak.byInvariant) {
        EXPECT_TRUE(expected.contains(invariant)) << invariant << " in " << runs << " runs";
    }
    const BatchSummary real = runControl(4, FaultClass::kCrash, RulesVariant::kTwoChain, 40);
    EXPECT_EQ(real.failures, 0U) << real.text();
}

TEST(NegativeControl, VotingWithoutTheLockIsCaught) {
    // Rules without V2 (`qc_round >= tc.highest_hqc_round` after a TC), against forking leaders
    // that, after a TC, propose two blocks below their highest QC. The real rules refuse those
    // blocks; the weakened ones vote for them, and the checker flags the vote.
    const BatchSummary weak = runControl(4, FaultClass::kForking, RulesVariant::kSkipLock, 20);
    EXPECT_GE(count(weak, "vote-rule"), 1U);
    const BatchSummary real = runControl(4, FaultClass::kForking, RulesVariant::kTwoChain, 20);
    EXPECT_EQ(real.failures, 0U) << real.text();
}

TEST(NegativeControl, TwinsScheduledPerRoundForkVotingWithoutTheLock) {
    // Twins schedules chosen per round, against the vote rule without V2. A twin whose copy
    // missed a block that an honest member committed leads a round after a TC and proposes on
    // its stale highest QC; the weakened voters certify that block and the ones above it, and
    // another honest member commits it at the same height. The agreement check alone runs: it
    // finds the fork itself, not a vote that restates the rule.
    const auto [weak, real] =
        runAloneAndReal(4, FaultClass::kTwinsRounds, RulesVariant::kSkipLock, 400, "agreement");
    EXPECT_GE(count(weak, "agreement"), 1U) << "no fork found";
    EXPECT_EQ(weak.byInvariant.size(), weak.failures == 0 ? 0U : 1U);
    // The same schedules with the real rules: every invariant holds.
    EXPECT_EQ(real.failures, 0U) << real.text();
}

TEST(NegativeControl, ATcThatNeedNotProveItsHighestQcLetsOneForgerStallTheChain) {
    // One member of four forges TCs from three honest timeouts of a round and its own, which
    // claims a QC of the round below that nobody holds. With the TC's high-QC check dropped, the
    // honest members take the forged TC, and then refuse every proposal on an older QC (V2): the
    // liveness check catches the stall. The real check refuses every forged TC.
    const BatchSummary weak =
        runControl(4, FaultClass::kTcForgery, RulesVariant::kSkipTcHighQc, 20);
    EXPECT_GE(count(weak, "liveness"), 1U) << "no stall found";
    EXPECT_GT(weak.forgedTcs, 0U);
    const BatchSummary real = runControl(4, FaultClass::kTcForgery, RulesVariant::kTwoChain, 20);
    EXPECT_EQ(real.failures, 0U) << real.text();
    EXPECT_GT(real.refusedForgeries, 0U);
}

TEST(NegativeControl, FAcknowledgementsLetTheFaultyMembersCertifyABatchWithABadSignature) {
    // Batch forgers put a transaction with a bad signature in every batch they pack and sign
    // each other's without checking. With f + 1 acknowledgements, at least one honest member
    // must have verified a batch, and every forged certificate is refused. With f, the forgers
    // certify their own batches (at n = 4, f = 1: the forger alone), honest leaders propose them,
    // and every validator executes a transaction whose signature nobody checked.
    const BatchSummary weak =
        runControl(4, FaultClass::kBatchForgery, RulesVariant::kBatchQuorumF, 20);
    EXPECT_GE(count(weak, "batch-validity"), 1U) << "no bad batch certified";
    const BatchSummary real = runControl(4, FaultClass::kBatchForgery, RulesVariant::kTwoChain, 20);
    EXPECT_EQ(real.failures, 0U) << real.text();
    EXPECT_GT(real.refusedBatches, 0U);
    EXPECT_GT(real.refusedForgeries, 0U);
}

TEST(NegativeControl, ASendBarrierThatDoesNotSyncLetsARestartedLeaderProposeTwice) {
    // A crash loses a random suffix of the writes not yet synced. Without the sync before a
    // message leaves, a leader's proposal can go out and then vanish from its store in a crash;
    // restarted in the same round, it proposes a second block. The double-proposal check alone
    // finds it. With the barrier the same seeds pass every invariant.
    const auto [weak, real] = runAloneAndReal(4, FaultClass::kCrash, RulesVariant::kSkipSendBarrier,
                                              400, "double-proposal");
    EXPECT_GE(count(weak, "double-proposal"), 1U) << "no second proposal found";
    EXPECT_EQ(real.failures, 0U) << real.text();
    EXPECT_GT(real.restarts, 0U);
}

/** Reconfiguration runs 4 -> 5 -> 4 with a sync liar under `rules`, checking `only` alone (empty:
 * every invariant): the runs that broke it, and the liar's answers across an epoch end. */
struct LiarRuns {
    std::size_t broken = 0;
    std::size_t runs = 0;
    std::uint64_t crossingAnswers = 0;
    std::uint64_t syncs = 0;
    std::string firstReport;
};

LiarRuns runLiarReconfig(RulesVariant rules, std::uint64_t seeds, const std::string& only) {
    LiarRuns out;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
        const Scenario scenario = makeReconfigScenario(
            {{0, 1, 2, 3}, {0, 1, 2, 3, 4}, {0, 1, 2, 3}}, FaultClass::kSyncLiar, seed, rules);
        Simulator sim(scenario, RunOptions{64, false, false, only});
        const RunResult r = sim.run();
        ++out.runs;
        out.crossingAnswers += r.crossingAnswers;
        out.syncs += r.syncs;
        if (r.violation) {
            if (++out.broken == 1) {
                out.firstReport = r.report.substr(0, r.report.find("last events"));
            }
        }
    }
    std::cout << "[sim control] sync-liar reconfig rules=" << rulesName(rules)
              << " runs=" << out.runs << " broken=" << out.broken
              << " crossing_answers=" << out.crossingAnswers << " syncs=" << out.syncs << "\n"
              << out.firstReport;
    return out;
}

TEST(NegativeControl, ASyncBatchThatRunsPastTheEpochEndForksALedger) {
    // A sync liar answers a lagging member's sync across the block R that ended an epoch: R's
    // child C, which no ledger holds, with a valid commit proof of C built from the votes for
    // C's successor. Told that no block ended its epoch, block sync executes C, and the
    // agreement check alone finds a ledger that differs from the others at R's height + 1. The
    // real client stops every batch at R: the same runs pass every invariant.
    const LiarRuns weak = runLiarReconfig(RulesVariant::kSyncPastEpochEnd, 200, "agreement");
    EXPECT_GE(weak.broken, 1U) << "no fork found";
    EXPECT_GT(weak.crossingAnswers, 0U);
    const LiarRuns real = runLiarReconfig(RulesVariant::kTwoChain, 200, "");
    EXPECT_EQ(real.broken, 0U) << real.firstReport;
    EXPECT_GT(real.crossingAnswers, 0U);
    EXPECT_GT(real.syncs, 0U);
}

TEST(NegativeControl, ASyncThatAClaimStartsLetsOneLiarStallTheChain) {
    // As block sync was before it had to be shown evidence: a message that merely claims a later
    // epoch starts a sync with its sender, and the core gets nothing while the sync runs. One
    // liar of four claims a later epoch to every member every 100 ms: they spend their time in
    // syncs with it, and the liveness check catches the stall (41 of 60 runs). With the real
    // client a claim only makes a member ask that peer for an epoch proof, of which these
    // one-epoch runs have none, and the same runs pass.
    const BatchSummary weak =
        runControl(4, FaultClass::kSyncLiar, RulesVariant::kClaimStartsSync, 60);
    EXPECT_GE(count(weak, "liveness"), 1U) << "no stall found";
    const BatchSummary real = runControl(4, FaultClass::kSyncLiar, RulesVariant::kTwoChain, 60);
    EXPECT_EQ(real.failures, 0U) << real.text();
}

TEST(NegativeControl, MoreThanFCrashedMembersStallTheChainAndLivenessSaysSo) {
    // f + 1 of 4 members crash for good before GST, yet the scenario claims liveness.
    Scenario scenario = makeScenario(4, FaultClass::kNone, 5);
    scenario.crashes.push_back(CrashPlan{1, 200, std::nullopt, false});
    scenario.crashes.push_back(CrashPlan{2, 300, std::nullopt, true});
    scenario.gstMs = 1000;
    scenario.endMs = scenario.gstMs + 600'000;
    Simulator sim(std::move(scenario));
    const RunResult r = sim.run();
    ASSERT_TRUE(r.violation.has_value());
    EXPECT_EQ(r.violation.value_or(Violation{}).invariant, "liveness") << r.report;
    EXPECT_GT(r.livenessBoundMs, 0U);
}

}  // namespace
}  // namespace gridledger::sim::sim_controls_test
