#pragma once

// Prometheus metrics of the node, served on their own port (gridledger_ prefix).

#include <cstdint>
#include <memory>
#include <string>

#include <gridledger/base/result.h>
#include <gridledger/p2p/options.h>

namespace gridledger::node {

class MetricsImpl;

/** The node's metrics and the HTTP exposer that serves them at /metrics. */
class Metrics {
  public:
    /** Starts serving on address:port (port 0: an ephemeral one). */
    [[nodiscard]] static Result<std::unique_ptr<Metrics>> start(const std::string& address,
                                                                std::uint16_t port);
    ~Metrics();
    Metrics(const Metrics&) = delete;
    Metrics& operator=(const Metrics&) = delete;

    [[nodiscard]] std::uint16_t port() const;

    /** After a block was executed and committed. */
    void blockCommitted(std::uint64_t height, std::size_t txs, std::size_t failedTxs,
                        double executionSeconds);
    /** After each consensus step, with the chain database's WAL fsyncs so far. */
    void consensusState(std::uint64_t round, std::uint64_t highestQcRound,
                        std::uint64_t chainFsyncs);
    /**
     * This validator signed a timeout for `round` of `epoch`. Counts each round once: the timeout
     * re-sent at each later fire of the round's timer is not counted again. Consensus thread only.
     */
    void roundTimedOut(std::uint64_t epoch, std::uint64_t round);
    /** The mempool's content, and the transaction signatures its verify pool checked so far. */
    void mempool(std::size_t txs, std::size_t bytes, std::uint64_t signaturesVerified);
    /**
     * The batch exchange's counts since start (docs/protocol.md §14): this member's batches
     * made and certified, and other members' batches admitted on their certificate or verified
     * here.
     */
    void batches(std::uint64_t made, std::uint64_t certified, std::uint64_t admittedCertified,
                 std::uint64_t verifiedHere);
    /** The transport's counters since start and the number of connected peers. */
    void network(const p2p::NetworkStats& stats, std::size_t peers);
    /** Whether the node halted, holds its signatures, syncs (refreshed every second). */
    void nodeState(bool halted, bool signingHeld, bool syncing);
    /** A peer's message failed decoding or a signature check. Thread-safe. */
    void invalidMessage();
    /** A peer's request was refused: it used up its serving budget. Thread-safe. */
    void servingRefused();
    /** A peer's message was dropped: the peer-work queue was full. Thread-safe. */
    void peerWorkDropped();
    /** Block sync executed `blocks` more blocks. */
    void blocksSynced(std::size_t blocks);

  private:
    explicit Metrics(std::unique_ptr<MetricsImpl> impl);
    std::unique_ptr<MetricsImpl> impl_;
};

}  // namespace gridledger::node
