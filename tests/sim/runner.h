#pragma once

// Runs many seeds of one (n, fault class, rules) and sums them up: shared by sim_test and the
// gridledger_sim soak command.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace gridledger::sim {

/** Which scenarios to run: seeds startSeed .. startSeed + seeds - 1. */
struct BatchOptions {
    std::size_t n = 4;
    FaultClass faults = FaultClass::kNone;
    RulesVariant rules = RulesVariant::kTwoChain;
    /** Leader reputation window of every core (0: off). */
    std::size_t reputationWindow = 0;
    std::uint64_t startSeed = 1;
    std::size_t seeds = 1;
    /** Trace entries printed for a failed run. */
    std::size_t traceDepth = 64;
    /** Full reports kept (the failing seeds are all listed). */
    std::size_t maxReports = 3;
    /** Stop at the first failing seed. */
    bool stopAtFirst = false;
    /** Keep the report of passing runs too (to read the trace of a replay). */
    bool reportAll = false;
    /** Run each scenario to its end after a violation; byInvariant then counts, per invariant,
     * the runs that broke it. */
    bool keepGoing = false;
    /** Check this invariant alone (empty: every invariant). */
    std::string only;
};

/** The totals of a batch. */
struct BatchSummary {
    BatchOptions options;
    std::size_t runs = 0;
    std::size_t failures = 0;
    std::map<std::string, std::size_t> byInvariant;
    std::vector<std::uint64_t> failingSeeds;
    std::vector<std::string> reports;
    std::uint64_t steps = 0;
    std::uint64_t virtualMs = 0;
    std::uint64_t committedHeights = 0;  // sum over runs of the lowest checked height
    std::uint64_t timeoutCerts = 0;
    std::uint64_t restarts = 0;
    std::uint64_t forgedBlocks = 0;
    std::uint64_t withheldVotes = 0;
    std::uint64_t forgedTcs = 0;
    std::uint64_t refusedForgeries = 0;
    std::uint64_t syncs = 0;
    std::uint64_t syncedBlocks = 0;
    std::uint64_t crossingAnswers = 0;
    /** Certified batches: transaction signatures checked by signers, transactions executed,
     * batches refused for a bad signature, requests for batch data. */
    std::uint64_t batchTxsVerified = 0;
    std::uint64_t batchTxsExecuted = 0;
    std::uint64_t refusedBatches = 0;
    std::uint64_t batchFetches = 0;
    std::uint64_t maxRecoveryMs = 0;
    /** Longest time from GST until every honest instance had its new commits, and the bound
     * of that run; and the smallest margin (bound - time) over all runs. */
    std::uint64_t maxLivenessMs = 0;
    std::uint64_t maxLivenessBoundMs = 0;
    std::uint64_t minLivenessMarginMs = UINT64_MAX;
    std::uint64_t dropped = 0;
    std::uint64_t duplicated = 0;
    std::uint64_t replayed = 0;

    /** One line: n, faults, runs, failures, totals; then the failing seeds' replay lines. */
    [[nodiscard]] std::string text() const;
};

/** Runs the batch. Deterministic. */
[[nodiscard]] BatchSummary runBatch(const BatchOptions& options);

/**
 * The seeds a sweep of `seeds` runs: all of them, or one in GRIDLEDGER_SIM_SEED_DIVISOR (at least
 * one) when that is set, as the sanitizer build does: its instrumented runs look for memory and
 * undefined-behaviour errors, which a sample of the seeds the plain build sweeps finds as well.
 */
[[nodiscard]] std::size_t sweepSeeds(std::size_t seeds);

}  // namespace gridledger::sim
