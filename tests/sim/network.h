#pragma once

// The modelled network: per-link delays, loss, duplicates, stale and replayed copies, and
// partitions, all drawn from the run's seeded generator.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "sim/scenario.h"

namespace gridledger::sim {

/** Counters of what the network did to the messages of a run. */
struct NetworkStats {
    std::uint64_t sent = 0;
    std::uint64_t dropped = 0;
    std::uint64_t retransmitted = 0;
    std::uint64_t partitioned = 0;
    std::uint64_t duplicated = 0;
    std::uint64_t stale = 0;
    std::uint64_t replayed = 0;
};

/**
 * Decides the fate of each message. Before GST a message can be lost, duplicated, delivered
 * seconds late (stale) or delivered again seconds later (replayed), and partitions cut links.
 * From GST on every message arrives once, within its link's delay bounds.
 */
class Network {
  public:
    /** Keeps a reference: `scenario` must outlive the network. */
    explicit Network(const Scenario& scenario) : scenario_(scenario) {}

    /**
     * The delays after which copies of a message sent at `nowMs` from `from` to `to` (two
     * different instances) arrive; empty when it is lost. `round` is the consensus round the
     * message belongs to (a proposal's, vote's, timeout's or TC's), if any.
     */
    [[nodiscard]] std::vector<std::uint64_t> delays(std::size_t from, std::size_t to,
                                                    std::uint64_t nowMs,
                                                    std::optional<std::uint64_t> round,
                                                    std::mt19937_64& rng);

    /** True iff no partition separates `from` and `to` at `nowMs`, nor, for a message of
     * `round`, that round's partition. */
    [[nodiscard]] bool connected(std::size_t from, std::size_t to, std::uint64_t nowMs,
                                 std::optional<std::uint64_t> round) const;

    [[nodiscard]] const NetworkStats& stats() const { return stats_; }

  private:
    const Scenario& scenario_;
    NetworkStats stats_;
};

}  // namespace gridledger::sim
