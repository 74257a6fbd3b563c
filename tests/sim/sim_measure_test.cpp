// Latencies measured in virtual time on a fault-free committee of 4 with every link at exactly
// d = 50 ms and mempools that never run dry (docs/protocol.md §11 reports these figures).
#include <algorithm>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/consensus/core.h>

#include "sim/simulator.h"

namespace gridledger::sim::sim_measure_test {
namespace {

constexpr std::uint64_t kDelayMs = 50;

double inDelays(std::uint64_t ms) {
    return static_cast<double>(ms) / static_cast<double>(kDelayMs);
}

TEST(Measure, FourValidatorsCommitABlockTwoRoundTripsAfterItsProposal) {
    Simulator sim(makeSteadyScenario(4, kDelayMs, 20'000));
    const RunResult r = sim.run();
    ASSERT_FALSE(r.violation.has_value()) << r.report;
    ASSERT_EQ(r.timeoutCerts, 0U);
    ASSERT_GE(r.minHeight, 50U);
    // From the leader's broadcast of a block to its commit: at the first validator to commit it
    // and at the last one. The first and last heights are left out (start-up and the cut-off).
    std::uint64_t firstMin = UINT64_MAX;
    std::uint64_t firstMax = 0;
    std::uint64_t lastMax = 0;
    std::size_t blocks = 0;
    for (std::uint64_t h = 5; h + 5 <= r.minHeight; ++h) {
        const auto proposed = sim.proposedAt(sim.instance(0).store.ledger[h]->id);
        ASSERT_TRUE(proposed.has_value());
        const std::uint64_t proposedMs = proposed.value_or(0);
        std::uint64_t first = UINT64_MAX;
        std::uint64_t last = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            const std::uint64_t latency = sim.instance(i).commitTimes.at(h) - proposedMs;
            first = std::min(first, latency);
            last = std::max(last, latency);
        }
        firstMin = std::min(firstMin, first);
        firstMax = std::max(firstMax, first);
        lastMax = std::max(lastMax, last);
        ++blocks;
    }
    std::printf(
        "[sim measure] n=4, one-way delay d=%llu ms, %zu blocks: proposal to commit at the first "
        "validator %.1f..%.1f d (%.1f round trips), at every validator <= %.1f d\n",
        static_cast<unsigned long long>(kDelayMs), blocks, inDelays(firstMin), inDelays(firstMax),
        inDelays(firstMax) / 2, inDelays(lastMax));
    // Proposal (d) -> votes to every member (d): QC, next proposal (d) -> votes (d): the QC of
    // the child commits the block, 2 round trips after the proposal. Every member receives every
    // vote, so every member forms that QC and commits at the same moment.
    EXPECT_EQ(firstMin, 4 * kDelayMs);
    EXPECT_EQ(firstMax, 4 * kDelayMs);
    EXPECT_EQ(lastMax, 4 * kDelayMs);
}

TEST(Measure, AfterALeaderCrashTheChainResumesWithinOneRoundTimeout) {
    Simulator sim(makeSteadyScenario(4, kDelayMs, 120'000));
    const consensus::Committee& committee = sim.committee();
    ASSERT_TRUE(sim.runUntil([&] { return sim.height(0) >= 20; }, 30'000));
    // The dead leader X leads round s, and none of s - 2, s - 1, s + 1 .. s + 3: one crashed
    // leader, crashed while idle.
    std::uint64_t s = sim.instance(0).core()->currentRound() + 3;
    while (committee.leaderIndex(s - 2) == committee.leaderIndex(s) ||
           committee.leaderIndex(s - 1) == committee.leaderIndex(s) ||
           committee.leaderIndex(s + 1) == committee.leaderIndex(s) ||
           committee.leaderIndex(s + 2) == committee.leaderIndex(s) ||
           committee.leaderIndex(s + 3) == committee.leaderIndex(s)) {
        ++s;
    }
    const std::size_t dead = committee.leaderIndex(s);
    std::vector<std::size_t> alive;
    for (std::size_t i = 0; i < 4; ++i) {
        if (i != dead) {
            alive.push_back(i);
        }
    }
    // X crashes while the others are in round s - 2: it is idle, and the votes of round s - 1,
    // addressed to it, reach the others too.
    ASSERT_TRUE(sim.runUntil(
        [&] {
            return std::all_of(alive.begin(), alive.end(), [&](std::size_t i) {
                return sim.instance(i).core()->currentRound() >= s - 2;
            });
        },
        60'000));
    const std::uint64_t crashAt = sim.now();
    std::vector<std::uint64_t> heightAt;
    heightAt.reserve(alive.size());
    for (const auto i : alive) {
        heightAt.push_back(sim.height(i));
    }
    sim.crash(dead);
    constexpr std::uint64_t kAfter = 6;
    ASSERT_TRUE(sim.runUntil(
        [&] {
            for (std::size_t k = 0; k < alive.size(); ++k) {
                if (sim.height(alive[k]) < heightAt[k] + kAfter) {
                    return false;
                }
            }
            return true;
        },
        crashAt + 30'000));
    // The stall: at each live validator, the first time between two consecutive commits that
    // exceeds T0 / 2 (X may lead again later; each time costs the same again).
    const std::uint64_t t0 = sim.scenario().options.t0Ms;
    std::uint64_t gap = 0;
    for (std::size_t k = 0; k < alive.size(); ++k) {
        const auto& times = sim.instance(alive[k]).commitTimes;
        std::uint64_t stall = 0;
        for (std::uint64_t h = heightAt[k]; h < heightAt[k] + kAfter && stall == 0; ++h) {
            const std::uint64_t between = times.at(h + 1) - times.at(h);
            stall = between > t0 / 2 ? between : 0;
        }
        ASSERT_GT(stall, 0U) << "validator " << alive[k] << " never stalled";
        gap = std::max(gap, stall);
    }
    // Every member forms QC(s - 1) from the broadcast votes at t and commits the block of s - 2;
    // round s has no proposal: its timer fires at t + T0, the TC forms at t + T0 + d, the leader
    // of s + 1 proposes (TC, QC(s - 1)), QC(s + 1) at t + T0 + 3d, the block of s + 2 and its QC
    // at t + T0 + 5d, which commits s + 1 and s - 1: one round timeout and five delays.
    const std::uint64_t oneTimer = consensus::roundTimeoutMs(t0, 0);
    std::printf(
        "[sim measure] n=4, d=%llu ms, T0=%llu ms, leader of round %llu crashed: no commit "
        "for %llu ms = %.2f T0 = one round timeout (%llu ms) + %.1f d\n",
        static_cast<unsigned long long>(kDelayMs), static_cast<unsigned long long>(t0),
        static_cast<unsigned long long>(s), static_cast<unsigned long long>(gap),
        static_cast<double>(gap) / static_cast<double>(t0),
        static_cast<unsigned long long>(oneTimer), inDelays(gap - std::min(gap, oneTimer)));
    EXPECT_EQ(gap, oneTimer + 5 * kDelayMs);
    EXPECT_FALSE(sim.checker().failed()) << sim.result().report;
}

}  // namespace
}  // namespace gridledger::sim::sim_measure_test
