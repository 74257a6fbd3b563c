// The node's side of the consensus runner (docs/protocol.md §8): the consensus store and the send
// barrier, the P2P network, the mempool, and execution of committed blocks into the ledger.
#include "node_impl.h"

namespace gridledger::node {

std::uint64_t NodeAdaptor::nowMs() {
    return node::nowMs();
}

// The safety data is written with an fsync; blocks, QCs and TCs are not, and the barrier makes
// them durable before the next message leaves (docs/protocol.md §8).
Status NodeAdaptor::persistSafety(const consensus::SafetyData& data) {
    GL_TRY(node_.consensusStore_->saveSafety(data));
    node_.barrier_->wrote(true);
    return {};
}

Status NodeAdaptor::persistBlock(const consensus::BlockPtr& block) {
    node_.track(*block);
    GL_TRY(node_.consensusStore_->saveBlock(*block));
    node_.barrier_->wrote(false);
    return {};
}

Status NodeAdaptor::persistQc(const codec::QuorumCert& qc) {
    GL_TRY(node_.consensusStore_->saveQc(qc));
    node_.barrier_->wrote(false);
    return {};
}

Status NodeAdaptor::persistTc(const codec::TimeoutCert& tc) {
    GL_TRY(node_.consensusStore_->saveTc(tc));
    node_.barrier_->wrote(false);
    return {};
}

Status NodeAdaptor::beforeSend() {
    return node_.barrier_->beforeSend();
}

void NodeAdaptor::broadcast(const consensus::Broadcast& message) {
    if (const auto* block = std::get_if<consensus::BlockPtr>(&message.message)) {
        node_.log_->debug("proposed epoch={} round={} height={} txs={}", (*block)->header.epoch,
                          (*block)->header.round, (*block)->header.height, (*block)->txs.size());
    } else if (const auto* timeout = std::get_if<codec::Timeout>(&message.message)) {
        node_.log_->debug("signed timeout epoch={} round={} high_qc_round={}", timeout->epoch,
                          timeout->round, timeout->highQc.round);
        node_.metrics_->roundTimedOut(timeout->epoch, timeout->round);
    }
    node_.network_->broadcast(broadcastMessage(message));
}

void NodeAdaptor::sendVote(const codec::Vote& vote, const PubKey& nextLeader) {
    (void)nextLeader;
    node_.log_->debug("signed vote epoch={} round={} block={}", vote.epoch, vote.round,
                      vote.blockId.hex());
    // The vote goes to the next leader and a copy to every other member: each member then forms
    // the QC itself, and a crashed next leader costs one round timeout, not two
    // (docs/protocol.md §5). A vote that cannot leave now is lost; timeouts recover from that.
    node_.network_->broadcast(p2p::Message{codec::MessageKind::kVote, codec::encodeVote(vote)});
}

void NodeAdaptor::forwardQc(const codec::QuorumCert& qc, const PubKey& nextLeader) {
    // To the next leader alone (docs/protocol.md §6): not connected, it hears of the QC through
    // the other members' copies or forms it itself.
    const auto peer = node_.nodeIds_.find(nextLeader);
    if (peer != node_.nodeIds_.end()) {
        (void)node_.network_->send(
            peer->second, p2p::Message{codec::MessageKind::kQuorumCert, codec::encodeQc(qc)});
    }
}

void NodeAdaptor::schedule(const consensus::ScheduleTimer& timer) {
    auto handle = std::make_shared<asio::steady_timer>(node_.io_);
    handle->expires_after(std::chrono::milliseconds(timer.delayMs));
    handle->async_wait([this, handle, timer](const boost::system::error_code& ec) {
        if (!ec) {
            node_.deliver(consensus::TimerFired{timer.kind, timer.round});
        }
    });
}

void NodeAdaptor::fetch(const consensus::Fetch& request) {
    auto& fetching = node_.fetching_;
    if (fetching.size() >= kMaxOutstandingFetches) {
        fetching.clear();  // answers that never came; the core asks again when it still needs
    }
    fetching.insert(request.blockId);
    const p2p::Message message{codec::MessageKind::kBlockRequest,
                               codec::encodeBlockRequest({request.blockId})};
    if (request.hint) {
        const auto peer = node_.nodeIds_.find(*request.hint);
        if (peer != node_.nodeIds_.end() && node_.network_->send(peer->second, message)) {
            return;
        }
    }
    node_.network_->broadcast(message);
}

consensus::ProposalPayload NodeAdaptor::collectTxs(const consensus::BuildProposal& request) {
    ledger::Mempool& mempool = *node_.mempool_;
    const contracts::ConsensusParams& limits = node_.genesis_.consensus;
    // Transactions carried by uncommitted ancestors must not be proposed again.
    std::vector<Hash256> carried;
    for (auto it = node_.inFlight_.find(request.parentId); it != node_.inFlight_.end();
         it = node_.inFlight_.find(it->second.parentId)) {
        carried.insert(carried.end(), it->second.txHashes.begin(), it->second.txHashes.end());
    }
    mempool.releaseAll();
    mempool.markProposed(carried);
    const auto txs =
        mempool.collect(limits.maxBlockTxs, static_cast<std::size_t>(limits.maxBlockBytes));
    consensus::ProposalPayload payload;
    std::vector<Hash256> hashes;
    payload.txs.reserve(txs.size());
    hashes.reserve(txs.size());
    std::size_t bytes = 0;
    for (const auto& tx : txs) {
        payload.txs.push_back(tx->raw);
        hashes.push_back(tx->hash);
        bytes += tx->raw.size();
    }
    mempool.markProposed(hashes);
    // A full block: more may be waiting for the next one.
    payload.more =
        txs.size() >= limits.maxBlockTxs || bytes + codec::kMaxTxBytes > limits.maxBlockBytes;
    return payload;
}

std::uint64_t NodeAdaptor::executedHeight() {
    return node_.executedHeight_.load(std::memory_order_relaxed);
}

std::uint64_t NodeAdaptor::ledgerEpoch() {
    return node_.committee()->epoch();  // switched as soon as a block that ended the epoch executed
}

Result<consensus::Execution> NodeAdaptor::execute(const codec::Block& block,
                                                  const codec::QuorumCert& certifying) {
    GL_ASSIGN_OR_RETURN(roots, node_.executeCommitted(block, certifying));
    GL_ASSIGN_OR_RETURN(change, node_.endEpochIfChanged(block));
    consensus::Execution done{
        consensus::ExecRecord{block.header.height, roots.stateRoot, roots.resultsRoot},
        std::nullopt};
    if (change) {
        // The epoch ends with this block: the blocks above it are never appended, and their
        // transactions stay in the mempool.
        done.nextValidators = std::move(change->validators);
    }
    return done;
}

Status NodeAdaptor::committed(const consensus::Commit& commit,
                              const consensus::CommitOutcome& outcome) {
    // Commit proofs for peers that sync from here.
    const std::uint64_t height = executedHeight();
    auto& inFlight = node_.inFlight_;
    const auto child = inFlight.find(commit.commitQc.blockId);
    const auto proofs =
        commitProofsOf(commit, outcome.endedEpochAt,
                       child != inFlight.end() ? &child->second.headerBytes : nullptr, height);
    GL_TRY(node_.storeCommitProofs(proofs));
    const bool ended = outcome.endedEpochAt.has_value();
    std::erase_if(inFlight, [height, ended](const auto& entry) {
        return entry.second.height <= height || ended;
    });
    return node_.consensusStore_->prune(height, commit.qc.round);
}

void NodeAdaptor::rejected(const Error& error) {
    node_.log_->debug("consensus refused input reason={} detail={}", error.reason(), error.message);
}

void NodeAdaptor::failed(const Error& error) {
    node_.stopFor(error);
}

}  // namespace gridledger::node
