// The seeded sweeps: committees of 1, 4, 7 and 10 under every fault class within f, every
// invariant checked on every step (docs/protocol.md §11), and exact replay of a seed.
#include <algorithm>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "sim/runner.h"
#include "sim/simulator.h"

namespace gridledger::sim::sim_test {
namespace {

/** One sweep: `seeds` scenarios of one committee size and fault class. */
struct Sweep {
    std::size_t n = 4;
    FaultClass faults = FaultClass::kNone;
    std::size_t seeds = 1;
    /** Leader reputation window of the cores (0: off). */
    std::size_t reputation = 0;
};

std::string sweepName(const ::testing::TestParamInfo<Sweep>& info) {
    std::string name = std::string(faultName(info.param.faults));
    std::replace(name.begin(), name.end(), '-', '_');
    return "n" + std::to_string(info.param.n) + "_" + name;
}

/**
 * Sweeps with leader reputation on, over the classes whose faulty members never sign (crashes,
 * losses, partitions): there every active member is honest, which the liveness bound assumes.
 */
std::vector<Sweep> reputationSweepsFor(std::size_t n, std::size_t seeds) {
    std::vector<Sweep> out;
    for (const FaultClass faults : faultClassesFor(n)) {
        out.push_back(Sweep{n, faults, sweepSeeds(seeds), 10});
    }
    return out;
}

std::vector<Sweep> sweepsFor(std::size_t n, std::size_t seeds) {
    std::vector<Sweep> out;
    for (const FaultClass faults : faultClassesFor(n)) {
        out.push_back(Sweep{n, faults, sweepSeeds(seeds)});
    }
    return out;
}

/** The class's faults really happened across the sweep: a sweep that injects nothing proves
 * nothing. */
void expectFaultsHappened(FaultClass faults, const BatchSummary& s) {
    switch (faults) {
        case FaultClass::kLossy:
            EXPECT_GT(s.duplicated, 0U);
            EXPECT_GT(s.replayed, 0U);
            EXPECT_GT(s.dropped, 0U);
            break;
        case FaultClass::kCrash:
            EXPECT_GT(s.restarts, 0U);
            break;
        case FaultClass::kPartition:
        case FaultClass::kTwins:
        case FaultClass::kTwinsRounds:
            EXPECT_GT(s.dropped, 0U);
            EXPECT_GT(s.timeoutCerts, 0U);
            break;
        case FaultClass::kEquivocation:
        case FaultClass::kForking:
            EXPECT_GT(s.forgedBlocks, 0U);
            break;
        case FaultClass::kWithhold:
            EXPECT_GT(s.withheldVotes, 0U);
            break;
        case FaultClass::kTcForgery:
            EXPECT_GT(s.forgedTcs, 0U);
            EXPECT_GT(s.refusedForgeries, 0U);  // every forged TC is refused by its receivers
            break;
        case FaultClass::kSyncLiar:
            EXPECT_GT(s.syncs, 0U);             // victims came back behind and synced
            EXPECT_GT(s.refusedForgeries, 0U);  // and refused what the liar made up
            break;
        case FaultClass::kMixed:
            EXPECT_GT(s.restarts + s.forgedBlocks + s.withheldVotes + s.dropped, 0U);
            break;
        case FaultClass::kNone:
            EXPECT_EQ(s.timeoutCerts, 0U);  // random link delays alone never time a round out
            break;
        case FaultClass::kBatchForgery:
            EXPECT_GT(s.refusedBatches, 0U);    // honest members refused the bad batches
            EXPECT_GT(s.refusedForgeries, 0U);  // and the certificates the forgers made up
            EXPECT_GT(s.batchTxsExecuted, 0U);  // while the honest batches committed
            break;
        case FaultClass::kBatchHoarding:
            EXPECT_GT(s.batchFetches, 0U);  // hoarded data was fetched from the other signers
            EXPECT_GT(s.batchTxsExecuted, 0U);
            break;
        case FaultClass::kExcessTwins:
            break;
    }
}

class SweepTest : public ::testing::TestWithParam<Sweep> {};

TEST_P(SweepTest, EveryInvariantHoldsOnEverySeed) {
    const Sweep& sweep = GetParam();
    BatchOptions options;
    options.n = sweep.n;
    options.faults = sweep.faults;
    options.reputationWindow = sweep.reputation;
    options.startSeed = 1;
    options.seeds = sweep.seeds;
    const BatchSummary summary = runBatch(options);
    std::cout << "[sim] " << summary.text() << "\n";
    ASSERT_EQ(summary.runs, sweep.seeds);
    std::string reports;
    for (const auto& report : summary.reports) {
        reports += report + "\n";
    }
    EXPECT_EQ(summary.failures, 0U) << summary.text() << "\n" << reports;
    // Every run commits: on average well over one height per scenario.
    EXPECT_GT(summary.committedHeights, 2 * sweep.seeds);
    expectFaultsHappened(sweep.faults, summary);
}

// 2 + 14 + 14 + 14 sweeps, 9,040 scenarios in all.
INSTANTIATE_TEST_SUITE_P(N1, SweepTest, ::testing::ValuesIn(sweepsFor(1, 250)), sweepName);
INSTANTIATE_TEST_SUITE_P(N4, SweepTest, ::testing::ValuesIn(sweepsFor(4, 250)), sweepName);
INSTANTIATE_TEST_SUITE_P(N7, SweepTest, ::testing::ValuesIn(sweepsFor(7, 200)), sweepName);
INSTANTIATE_TEST_SUITE_P(N10, SweepTest, ::testing::ValuesIn(sweepsFor(10, 160)), sweepName);
// Leader reputation on (window 10): every class at n = 4 and 7, 3,500 scenarios.
INSTANTIATE_TEST_SUITE_P(ReputationN4, SweepTest, ::testing::ValuesIn(reputationSweepsFor(4, 150)),
                         sweepName);
INSTANTIATE_TEST_SUITE_P(ReputationN7, SweepTest, ::testing::ValuesIn(reputationSweepsFor(7, 100)),
                         sweepName);

TEST(CertifiedBatches, EachSignatureIsVerifiedByFPlusOneMembersNotByAll) {
    // Honest batches, with hoarders among the members (no forged batch to refuse): every batch
    // is verified by the f + 1 members its author asks (more only when an acknowledgement is
    // lost and the author asks again), and by no one else, not even the members that execute it.
    BatchOptions options;
    options.n = 10;
    options.faults = FaultClass::kBatchHoarding;
    options.seeds = 20;
    const BatchSummary summary = runBatch(options);
    ASSERT_EQ(summary.failures, 0U) << summary.text();
    ASSERT_GT(summary.batchTxsExecuted, 0U);
    const double perTx = static_cast<double>(summary.batchTxsVerified) /
                         static_cast<double>(summary.batchTxsExecuted);
    std::cout << "[sim] n=10, f=3: signature checks per executed transaction " << perTx << "\n";
    EXPECT_GE(perTx, 4.0);
    EXPECT_LE(perTx, 6.0);  // well below the 10 of every member verifying every transaction
}

TEST(Replay, ASeedReproducesItsRunEventForEvent) {
    for (const FaultClass faults :
         {FaultClass::kMixed, FaultClass::kTwins, FaultClass::kTwinsRounds}) {
        const Scenario scenario = makeScenario(7, faults, 42);
        const RunOptions options{500, false, true, {}};
        Simulator first(scenario, options);
        Simulator second(makeScenario(7, faults, 42), options);
        const RunResult a = first.run();
        const RunResult b = second.run();
        EXPECT_EQ(a.steps, b.steps);
        EXPECT_EQ(a.endMs, b.endMs);
        EXPECT_EQ(a.maxHeight, b.maxHeight);
        EXPECT_EQ(a.report, b.report);  // scenario, outcome and the last 500 events
        for (std::size_t i = 0; i < scenario.instances(); ++i) {
            ASSERT_EQ(first.height(i), second.height(i));
            for (std::size_t h = 0; h <= first.height(i); ++h) {
                EXPECT_EQ(first.instance(i).store.ledger[h]->id,
                          second.instance(i).store.ledger[h]->id);
            }
        }
        // Another seed is another run.
        Simulator other(makeScenario(7, faults, 43), options);
        EXPECT_NE(other.run().report, a.report);
    }
}

TEST(Replay, TheReplayLineNamesTheScenario) {
    const Scenario scenario = makeScenario(10, FaultClass::kEquivocation, 977);
    EXPECT_EQ(scenario.replayLine(),
              "gridledger_sim --n 10 --faults equivocation --rules two-chain --start 977 "
              "--seeds 1 --trace 200");
    EXPECT_NE(scenario.describe().find("seed=977"), std::string::npos);
}

}  // namespace
}  // namespace gridledger::sim::sim_test
