#pragma once

// Wide-area runs of the simulator: many validators, a committee chosen among them, WAN link
// delays and loss, and what the benchmark reports of such a run (docs/benchmarks.md).

#include <cstddef>
#include <cstdint>

#include "sim/scenario.h"
#include "sim/simulator.h"

namespace gridledger::sim {

/** The shape of a wide-area run. */
struct WanOptions {
    std::size_t validators = 100;
    /** Every directed pair of validators gets a one-way delay in [minDelayMs, maxDelayMs]. */
    std::uint64_t minDelayMs = 50;
    std::uint64_t maxDelayMs = 200;
    /** Messages lost, for the whole run: retransmitted one TCP retransmission timeout later
     * (Scenario::retransmitLost), or, without `retransmit`, never delivered. */
    unsigned lossPermille = 10;
    bool retransmit = true;
    /** Members of the genesis committee down from the start, for the whole run. */
    std::size_t crashedMembers = 0;
    /** The round timeout T0 (0: the node's default). */
    std::uint64_t t0Ms = 0;
    /**
     * Proposals carry certificates of batches instead of transactions (docs/protocol.md §14).
     * Transactions then arrive at a random validator every 1..2·txIntervalMs, up to 5 at once;
     * a member packs each arrival into a batch and a follower drops it. Without, mempools never
     * run dry.
     */
    bool certifiedBatches = false;
    std::uint64_t txIntervalMs = 25;
    std::uint64_t seed = 1;
    std::uint64_t endMs = 60'000;
};

/**
 * A wide-area run: `validators` validators with the node's consensus defaults (contracts::
 * ConsensusParams: committee_max 31, T0, the empty-block interval, leader reputation), so the
 * committee is the committee_max of them the committee rule picks and the others follow the chain.
 * Each pair of validators is `b` ms apart, `b` drawn once per pair so that the link's delays stay
 * in [minDelayMs, maxDelayMs] with a jitter of a tenth of that range per message. Mempools never
 * run dry. `crashedMembers` members, drawn from the seed, are down from virtual time 0.
 */
[[nodiscard]] Scenario makeWanScenario(const WanOptions& options);

/** What the benchmark reports of a finished wide-area run. */
struct WanFigures {
    std::size_t members = 0;
    std::size_t liveValidators = 0;
    /** Heights every live validator committed whose block was proposed after the warm-up. */
    std::uint64_t blocks = 0;
    /** From a block's broadcast by its leader to its commit, at each live validator: the median,
     * the 99th percentile and the longest, over every (block, validator) pair. */
    std::uint64_t p50Ms = 0;
    std::uint64_t p99Ms = 0;
    std::uint64_t maxMs = 0;
    std::uint64_t timeoutCerts = 0;
    /** Committed heights per second of virtual time, in thousandths. */
    std::uint64_t milliBlocksPerSecond = 0;
    /** Sent per live node per committed height, by live members and by the other validators
     * (whole run, every height committed by every live validator). */
    double memberMessages = 0;
    double memberBytes = 0;
    double followerMessages = 0;
    double followerBytes = 0;
    /** Certified batches: transactions executed (each batch once), and the signature checks
     * the members made of them, per executed transaction. */
    std::uint64_t batchTxsExecuted = 0;
    double checksPerExecutedTx = 0;
    /** Certified batches: from a batch's making by its author to its execution, at each live
     * validator, for batches made after the warm-up: the median and the 99th percentile. */
    std::uint64_t batchP50Ms = 0;
    std::uint64_t batchP99Ms = 0;
};

/** Measures a run of a makeWanScenario scenario (with RunOptions::countTraffic). Blocks proposed
 * before `warmupMs` are left out of the latencies. */
[[nodiscard]] WanFigures measureWan(const Simulator& sim, std::uint64_t warmupMs);

}  // namespace gridledger::sim
