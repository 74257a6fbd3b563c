#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>

#include <gridledger/base/bytes.h>
#include <gridledger/p2p/options.h>

namespace gridledger::p2p {

/**
 * Ban scores per node id (docs/p2p.md, "Ban score"). Time is passed in, so the rules are tested
 * without a clock. Not thread-safe: the network guards it with a mutex.
 */
class BanList {
  public:
    using Clock = std::chrono::steady_clock;

    explicit BanList(BanPolicy policy);

    /**
     * Adds `points` to `nodeId`'s decayed score. Returns true when this reached the threshold:
     * the node is then banned until `now + banDuration` and its score restarts at 0. Points for
     * a node already banned are ignored (returns false).
     */
    bool add(const NodeId& nodeId, std::uint32_t points, Clock::time_point now);

    [[nodiscard]] bool isBanned(const NodeId& nodeId, Clock::time_point now) const;
    /** When the ban of `nodeId` ends, if it is banned at `now`. */
    [[nodiscard]] std::optional<Clock::time_point> bannedUntil(const NodeId& nodeId,
                                                               Clock::time_point now) const;
    /** The decayed score of `nodeId` at `now` (0 while banned). */
    [[nodiscard]] std::uint32_t score(const NodeId& nodeId, Clock::time_point now) const;

  private:
    struct Record {
        std::uint32_t score = 0;
        Clock::time_point scoredAt{};
        Clock::time_point bannedUntil{};
    };

    [[nodiscard]] std::uint32_t decayed(const Record& record, Clock::time_point now) const;
    /** Forgets records with no score and no ban, so the map stays small. */
    void prune(Clock::time_point now);

    BanPolicy policy_;
    std::map<NodeId, Record> records_;
};

}  // namespace gridledger::p2p
