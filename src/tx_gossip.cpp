#include "tx_gossip.h"

namespace gridledger::node {

std::vector<codec::TxBatch> batchesFor(const std::vector<OutgoingTx>& txs, const NodeId& peer) {
    std::vector<codec::TxBatch> batches;
    std::size_t bytes = 0;
    for (const auto& tx : txs) {
        if (tx.origin == peer) {
            continue;
        }
        if (batches.empty() || batches.back().txs.size() == codec::kMaxTxBatch ||
            bytes + tx.raw.size() > kMaxTxBatchBytes) {
            batches.emplace_back();
            bytes = 0;
        }
        batches.back().txs.push_back(tx.raw);
        bytes += tx.raw.size();
    }
    return batches;
}

void TxOutbox::add(OutgoingTx tx) {
    const std::lock_guard lock(mutex_);
    queued_.push_back(std::move(tx));
}

std::vector<OutgoingTx> TxOutbox::take() {
    const std::lock_guard lock(mutex_);
    return std::exchange(queued_, {});
}

}  // namespace gridledger::node
