#pragma once

// What serving peers may cost this node (docs/p2p.md §11, "Serving budget"): every sync, block
// and epoch proof request is charged to the peer that asked, in blocks read and bytes answered.

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>

#include <gridledger/base/bytes.h>
#include <gridledger/base/token_bucket.h>

namespace gridledger::node {

/** Per-peer token buckets of serving, with the requests that wait for them. Thread-safe. */
class ServingBudget {
  public:
    using Clock = TokenBucket::Clock;

    struct Limits {
        /**
         * Blocks read for one peer per second (a request that finds none costs one): about twice
         * what block sync executes of empty blocks on one core, so it never slows a sync.
         */
        double blocksPerSecond = 8'192;
        double blocksBurst = 16'384;
        /** Bytes answered to one peer per second; the burst holds at least one answer. */
        double bytesPerSecond = 32.0 * 1024 * 1024;
        double bytesBurst = 64.0 * 1024 * 1024;
        /** Requests of one peer waiting for its budget; past them a request is refused. */
        std::size_t maxWaiting = 4;
    };

    enum class Verdict : std::uint8_t { kServe, kWait, kRefuse };

    struct Decision {
        Verdict verdict = Verdict::kServe;
        /** For kWait: when to ask again (the request is counted as waiting until resumed()). */
        std::chrono::milliseconds wait{0};
    };

    explicit ServingBudget(Limits limits) : limits_(limits) {}

    /**
     * A request of `peer` at `now`: serve it when the peer's budget holds no debt, else let it
     * wait (while fewer than maxWaiting of the peer's requests wait), else refuse it.
     */
    [[nodiscard]] Decision admit(const NodeId& peer, Clock::time_point now);
    /** A request that waited is taken up again (then admitted anew). */
    void resumed(const NodeId& peer);
    /** What answering a request of `peer` cost. */
    void charge(const NodeId& peer, std::size_t blocks, std::size_t bytes, Clock::time_point now);

  private:
    struct Peer {
        TokenBucket blocks;
        TokenBucket bytes;
        std::size_t waiting = 0;
    };

    Peer& peerLocked(const NodeId& peer, Clock::time_point now);

    Limits limits_;
    std::mutex mutex_;  // guards peers_
    std::map<NodeId, Peer> peers_;
};

}  // namespace gridledger::node
