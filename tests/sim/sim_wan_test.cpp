// Wide-area runs (the WAN benchmark's scenarios, docs/benchmarks.md), short: the committee is
// the 31 the committee rule picks among 100 validators, the others follow the chain without
// signing, and a committee with f members down still commits.
#include <memory>

#include <gtest/gtest.h>

#include <gridledger/consensus/committee.h>

#include "sim/simulator.h"
#include "sim/wan.h"

namespace gridledger::sim::sim_wan_test {
namespace {

constexpr std::uint64_t kWarmupMs = 5'000;

/** A 20 s wide-area simulator with `crashed` members down, counting traffic. */
std::unique_ptr<Simulator> shortRun(std::size_t crashed, bool certifiedBatches = false) {
    WanOptions options;
    options.crashedMembers = crashed;
    options.certifiedBatches = certifiedBatches;
    options.seed = 7;
    options.endMs = 20'000;
    RunOptions run;
    run.countTraffic = true;
    return std::make_unique<Simulator>(makeWanScenario(options), run);
}

TEST(Wan, AHundredValidatorsRunACommitteeOfThirtyOneAndAllCommitTheSameChain) {
    const auto run = shortRun(0);
    Simulator& sim = *run;
    const RunResult r = sim.run();
    ASSERT_FALSE(r.violation.has_value()) << r.report;
    ASSERT_EQ(sim.committee().size(), 31U);
    const WanFigures figures = measureWan(sim, kWarmupMs);
    EXPECT_EQ(figures.liveValidators, 100U);
    // The 69 others hold every block the members hold (the checker compares every ledger).
    EXPECT_GE(r.minHeight, 20U);
    EXPECT_GE(figures.blocks, 10U);
    // A block commits two round trips after its proposal at best: four one-way delays of at
    // least 50 ms.
    EXPECT_GE(figures.p50Ms, 4 * 50U);
    // A member's vote on a block goes to the 99 other validators, and at least 21 of the 31
    // members vote on each block; the others only ask for blocks they miss.
    EXPECT_GE(figures.memberMessages, 99.0 * 21 / 31);
    EXPECT_LT(figures.followerMessages, figures.memberMessages / 10);
}

TEST(Wan, TenOfThirtyOneMembersDownTheOthersStillCommit) {
    const auto run = shortRun(10);
    Simulator& sim = *run;
    const RunResult r = sim.run();
    ASSERT_FALSE(r.violation.has_value()) << r.report;
    const WanFigures figures = measureWan(sim, kWarmupMs);
    EXPECT_EQ(figures.liveValidators, 90U);
    std::size_t downMembers = 0;
    for (std::size_t i = 0; i < sim.scenario().instances(); ++i) {
        if (!sim.instance(i).up) {
            ASSERT_TRUE(sim.committee().contains(sim.keys().publicKey(i)));
            ++downMembers;
        } else {
            EXPECT_GE(sim.height(i), 10U) << "validator " << i;
        }
    }
    EXPECT_EQ(downMembers, consensus::maxFaultyOf(31));
    EXPECT_GE(figures.blocks, 5U);
}

/**
 * A short run with certified batches and `crashed` members down. Checks that no invariant broke,
 * that batches executed, and that a transaction's signature was checked by at least the f + 1 = 11
 * members that certify its batch and fewer than 1.5 times that (without batches, each of the 100
 * validators checks every transaction it executes).
 */
WanFigures batchRun(std::size_t crashed) {
    const auto run = shortRun(crashed, true);
    const RunResult r = run->run();
    EXPECT_FALSE(r.violation.has_value()) << r.report;
    const WanFigures figures = measureWan(*run, kWarmupMs);
    EXPECT_EQ(figures.liveValidators, 100U - crashed);
    EXPECT_GT(figures.batchTxsExecuted, 0U);
    const auto fPlusOne = static_cast<double>(consensus::maxFaultyOf(31) + 1);
    EXPECT_GE(figures.checksPerExecutedTx, fPlusOne);
    EXPECT_LT(figures.checksPerExecutedTx, 1.5 * fPlusOne);
    return figures;
}

TEST(Wan, WithCertifiedBatchesEachSignatureIsCheckedByFPlusOneMembersNotByEveryValidator) {
    // A batch is checked by its author and the 10 it asks. An author asks the others only when
    // an acknowledgement is late by more than 2.5 of the longest round trips, and the batches
    // certified but not yet executed when the run ends add a little.
    const WanFigures figures = batchRun(0);
    EXPECT_GE(figures.blocks, 10U);
    // A batch is certified (a round trip to the members asked), its certificate reaches a leader,
    // a proposal carries it, and the block commits: more than one block's commit, a few seconds
    // at most.
    EXPECT_GT(figures.batchP50Ms, figures.p50Ms);
    EXPECT_LT(figures.batchP99Ms, 5'000U);
}

TEST(Wan, WithTenMembersDownAnAuthorAsksTheMembersThatAnswerAndOnlyThem) {
    // With 10 of the 30 others down, nearly every batch's f = 10 picked members include a dead
    // one: asking them alone, its author would wait for the retry and then ask every member,
    // and all 21 live members would check it. Passing over the members that did not answer,
    // an author's batches go to live members from its first stalled batch on: about f + 1
    // checks, and no wait for the retry.
    const WanFigures figures = batchRun(10);
    EXPECT_LT(figures.batchP50Ms, 2'000U);
}

}  // namespace
}  // namespace gridledger::sim::sim_wan_test
