#include "sim/network.h"

namespace gridledger::sim {
namespace {

/** How late a stale or replayed copy arrives: long enough to land rounds later. */
constexpr std::uint64_t kLateMinMs = 1'000;
constexpr std::uint64_t kLateMaxMs = 12'000;
/** Linux's minimum TCP retransmission timeout, added to the round trip. */
constexpr std::uint64_t kMinRetransmitMs = 200;

}  // namespace

bool Network::connected(std::size_t from, std::size_t to, std::uint64_t nowMs,
                        std::optional<std::uint64_t> round) const {
    if (round && *round >= 1 && *round <= scenario_.roundSides.size() && nowMs < scenario_.gstMs) {
        const std::vector<std::uint8_t>& side = scenario_.roundSides[*round - 1];
        if (!side.empty() && side[from] != side[to]) {
            return false;
        }
    }
    for (const auto& partition : scenario_.partitions) {
        if (nowMs >= partition.startMs && nowMs < partition.healMs &&
            partition.side[from] != partition.side[to]) {
            return false;
        }
    }
    return true;
}

std::vector<std::uint64_t> Network::delays(std::size_t from, std::size_t to, std::uint64_t nowMs,
                                           std::optional<std::uint64_t> round,
                                           std::mt19937_64& rng) {
    ++stats_.sent;
    const LinkDelay& link = scenario_.link(from, to);
    const std::uint64_t onTime = between(rng, link.minMs, link.maxMs);
    if (!connected(from, to, nowMs, round)) {
        ++stats_.partitioned;
        return {};
    }
    if (nowMs >= scenario_.gstMs) {
        return {onTime};
    }
    if (chance(rng, scenario_.dropPermille)) {
        if (scenario_.retransmitLost) {
            ++stats_.retransmitted;
            return {onTime + 2 * onTime + kMinRetransmitMs};
        }
        ++stats_.dropped;
        return {};
    }
    std::vector<std::uint64_t> out;
    if (chance(rng, scenario_.stalePermille)) {
        ++stats_.stale;
        out.push_back(onTime + between(rng, kLateMinMs, kLateMaxMs));
    } else {
        out.push_back(onTime);
    }
    if (chance(rng, scenario_.duplicatePermille)) {
        ++stats_.duplicated;
        out.push_back(between(rng, link.minMs, link.maxMs));
    }
    if (chance(rng, scenario_.replayPermille)) {
        ++stats_.replayed;
        out.push_back(onTime + between(rng, kLateMinMs, kLateMaxMs));
    }
    return out;
}

}  // namespace gridledger::sim
