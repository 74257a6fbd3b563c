#pragma once

// Transaction gossip: every transaction a node admits to its mempool (from a client or from a
// peer) is passed on once to every connected peer except the one it came from. The mempool's
// duplicate check ends the flood: a node admits, and so forwards, each transaction at most once.
// Transactions are queued here and leave in batches.

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/codec/p2p.h>

namespace gridledger::node {

/** Most raw transaction bytes in one gossiped batch. */
inline constexpr std::size_t kMaxTxBatchBytes = std::size_t{4} << 20U;

/** An admitted transaction waiting to be gossiped, with the peer it came from. */
struct OutgoingTx {
    Bytes raw;
    /** The peer that sent it; none for a client's transaction. */
    std::optional<NodeId> origin;
};

/**
 * The batches for `peer`: every transaction of `txs` whose origin is not `peer`, in order, cut
 * into TxBatch payloads of at most codec::kMaxTxBatch transactions and kMaxTxBatchBytes bytes.
 */
[[nodiscard]] std::vector<codec::TxBatch> batchesFor(const std::vector<OutgoingTx>& txs,
                                                     const NodeId& peer);

/** The queue of admitted transactions between two gossip rounds. Thread-safe. */
class TxOutbox {
  public:
    void add(OutgoingTx tx);
    /** Takes every queued transaction, oldest first. */
    [[nodiscard]] std::vector<OutgoingTx> take();

  private:
    std::mutex mutex_;
    std::vector<OutgoingTx> queued_;
};

}  // namespace gridledger::node
