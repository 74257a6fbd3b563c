#pragma once

#include <cstdint>

#include <gridledger/base/result.h>

/**
 * Provider reputation (docs/tokenomics.md "Provider reputation"): two decayed counters per
 * provider, good jobs and fault points, halved every `half_life_epochs` epochs, and a score in
 * basis points that matching ranks eligible providers by (docs/tasks.md "Matching"). Integers
 * only; the decay is applied lazily, when a counter moves or a score is read, from the epoch the
 * counters were last brought to, so no block ever sweeps over every provider.
 */
namespace gridledger::contracts {

/** The reputation parameters (genesis section `reputation`, governable as `reputation.*`). */
struct ReputationParams {
    /** Epochs per halving of both counters; 0 turns the decay off. */
    std::uint64_t halfLifeEpochs = 4;
    /** Good jobs every provider is credited with, so that a newcomer scores 10 000; at least 1. */
    std::uint64_t priorJobs = 4;
    /** Fault points per refused task, claim timeout, rejected result, failure or panic. */
    std::uint64_t faultWeight = 4;
    /** Fault points per slash of the bond (an upheld challenge). */
    std::uint64_t slashWeight = 16;

    bool operator==(const ReputationParams&) const = default;
};

/** The largest weight or prior a parameter may take, so that no counter step nears 2^64. */
inline constexpr std::uint64_t kMaxReputationWeight = 1'000'000;

/** Checks priorJobs ≥ 1 and every weight ≤ kMaxReputationWeight (kInvalidArgument naming it). */
[[nodiscard]] Status validateReputation(const ReputationParams& params);

/** A provider's decayed counters as of epoch `epoch`. */
struct Reputation {
    /** Settled jobs (accepted, or verify window passed), halved per half-life. */
    std::uint64_t good = 0;
    /** Fault points (faultWeight per fault, slashWeight per slash), halved per half-life. */
    std::uint64_t faults = 0;
    /** The epoch the counters were last brought to. */
    std::uint64_t epoch = 0;

    bool operator==(const Reputation&) const = default;
};

/**
 * `r` brought to `epoch`: both counters shifted right by h = ⌊epoch / H⌋ − ⌊r.epoch / H⌋
 * halvings (H = halfLifeEpochs; none when H = 0 or epoch ≤ r.epoch; h ≥ 64 gives 0), and the
 * epoch set to max(epoch, r.epoch). Halvings fall on the epochs that are multiples of H, so
 * bringing counters forward in several steps gives the same result as in one.
 */
[[nodiscard]] Reputation decayReputation(const Reputation& r, const ReputationParams& params,
                                         std::uint64_t epoch);

/** `r` brought to `epoch`, then `good` + 1. kOverflow if the counter would pass 2^64 − 1. */
[[nodiscard]] Result<Reputation> creditGoodJob(const Reputation& r, const ReputationParams& params,
                                               std::uint64_t epoch);

/** `r` brought to `epoch`, then `faults` + `points`. kOverflow past 2^64 − 1. */
[[nodiscard]] Result<Reputation> addFaultPoints(const Reputation& r, const ReputationParams& params,
                                                std::uint64_t epoch, std::uint64_t points);

/**
 * The score of counters already brought to the epoch of interest, in basis points:
 * ⌊10 000 × (good + prior) / (good + prior + faults)⌋, in [0, 10 000]; 10 000 with no faults.
 */
[[nodiscard]] std::uint32_t reputationScore(const Reputation& decayed,
                                            const ReputationParams& params);

}  // namespace gridledger::contracts
