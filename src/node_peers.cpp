// The node's P2P side: votes and fetches out, peer messages in, block sync
// (docs/p2p.md, "Node messages" and "Block sync").
#include "node_impl.h"
#include "snapshot.h"

namespace gridledger::node {

namespace {

/**
 * The messages that move consensus rounds: checked on their own queue, ahead of the rest. Not
 * block responses, which any peer may send unasked and which wait with the other answers.
 */
bool movesRounds(codec::MessageKind kind) {
    return kind == codec::MessageKind::kProposal || kind == codec::MessageKind::kVote ||
           kind == codec::MessageKind::kTimeout || kind == codec::MessageKind::kTimeoutCert ||
           kind == codec::MessageKind::kQuorumCert;
}

bool isServedKind(codec::MessageKind kind) {
    return kind == codec::MessageKind::kSyncRequest || kind == codec::MessageKind::kBlockRequest ||
           kind == codec::MessageKind::kEpochProofRequest ||
           kind == codec::MessageKind::kStateManifestRequest ||
           kind == codec::MessageKind::kStateChunkRequest;
}

}  // namespace

void NodeImpl::onPeerMessage(const NodeId& from, p2p::Message message) {
    if (movesRounds(message.kind)) {
        asio::post(consensusWork_, [this, from, message = std::move(message)] {
            handlePeerMessage(from, message);
        });
        return;
    }
    // Gossip and serving wait on a queue of their own, bounded in bytes: a peer sending faster
    // than this node can work loses messages (gossip is sent again, requests are asked again),
    // not this node's memory.
    const std::size_t bytes = message.payload.size();
    if (queuedPeerWorkBytes_.load(std::memory_order_relaxed) + bytes > kMaxQueuedPeerWorkBytes) {
        log_->debug("peer message dropped peer={} kind={} reason=peer_work_queue_full", from.hex(),
                    codec::kindName(message.kind));
        metrics_->peerWorkDropped();
        return;
    }
    queuedPeerWorkBytes_.fetch_add(bytes, std::memory_order_relaxed);
    asio::post(peerWork_, [this, from, bytes, message = std::move(message)] {
        queuedPeerWorkBytes_.fetch_sub(bytes, std::memory_order_relaxed);
        if (isServedKind(message.kind)) {
            serveWithinBudget(from, message);
        } else {
            handlePeerMessage(from, message);
        }
    });
}

void NodeImpl::serveWithinBudget(const NodeId& from, const p2p::Message& message) {
    const ServingBudget::Decision decision = serving_.admit(from, ServingBudget::Clock::now());
    switch (decision.verdict) {
        case ServingBudget::Verdict::kServe:
            handlePeerMessage(from, message);
            return;
        case ServingBudget::Verdict::kWait: {
            auto timer = std::make_shared<asio::steady_timer>(peerWork_, decision.wait);
            timer->async_wait([this, timer, from, message](const boost::system::error_code& ec) {
                serving_.resumed(from);
                if (!ec) {
                    serveWithinBudget(from, message);
                }
            });
            return;
        }
        case ServingBudget::Verdict::kRefuse:
            // Honest peers keep one or two requests outstanding; this one asks far faster than
            // it could use the answers.
            log_->debug("request refused peer={} kind={} reason=serving_budget_exceeded",
                        from.hex(), codec::kindName(message.kind));
            metrics_->servingRefused();
            network_->reportMisbehaviour(from, kServingFloodPoints);
            return;
    }
}

void NodeImpl::sendServed(const NodeId& to, const p2p::Message& answer, std::size_t blocks) {
    serving_.charge(to, blocks, answer.payload.size(), ServingBudget::Clock::now());
    (void)network_->send(to, answer);
}

void NodeImpl::handlePeerMessage(const NodeId& from, const p2p::Message& message) {
    switch (message.kind) {
        case codec::MessageKind::kTx:
            admitGossipedTxs(from, message.payload);
            return;
        case codec::MessageKind::kBlockRequest:
            serveBlock(from, message.payload);
            return;
        case codec::MessageKind::kSyncRequest:
            serveSyncRequest(from, message.payload);
            return;
        case codec::MessageKind::kEpochProofRequest:
            serveEpochProofRequest(from, message.payload);
            return;
        case codec::MessageKind::kStateManifestRequest:
            serveStateManifest(from);
            return;
        case codec::MessageKind::kStateChunkRequest:
            serveStateChunk(from, message.payload);
            return;
        case codec::MessageKind::kEpochProof: {
            auto proof = codec::decodeEpochProof(message.payload);
            if (!proof) {
                invalidMessage(from, message.kind, proof.error(), kInvalidSyncPoints);
                return;
            }
            asio::post(io_, [this, from, proof = std::move(*proof)] {
                if (!failed_ && !halted_.load()) {
                    sync_->onEpochProof(from, proof);
                }
            });
            return;
        }
        case codec::MessageKind::kSyncResponse: {
            auto response = codec::decodeSyncResponse(message.payload);
            if (!response) {
                invalidMessage(from, message.kind, response.error(), kInvalidSyncPoints);
                return;
            }
            asio::post(io_, [this, from, response = std::move(*response)]() mutable {
                onSyncResponse(from, std::move(response));
            });
            return;
        }
        case codec::MessageKind::kBatch: {
            auto batch = codec::decodeBatchMessage(message.payload);
            if (!batch) {
                invalidMessage(from, message.kind, batch.error(), kInvalidMessagePoints);
                return;
            }
            batches_->onBatch(from, std::move(*batch), BatchExchange::Clock::now());
            return;
        }
        case codec::MessageKind::kBatchAck: {
            const auto ack = codec::decodeBatchAck(message.payload);
            if (!ack) {
                invalidMessage(from, message.kind, ack.error(), kInvalidMessagePoints);
                return;
            }
            batches_->onAck(from, *ack);
            return;
        }
        case codec::MessageKind::kBatchCert: {
            const auto cert = codec::decodeBatchCert(message.payload);
            if (!cert) {
                invalidMessage(from, message.kind, cert.error(), kInvalidMessagePoints);
                return;
            }
            batches_->onCert(from, *cert, BatchExchange::Clock::now());
            return;
        }
        case codec::MessageKind::kQuorumCert: {
            // Every member forwards the QC it forms to the next leader, which has mostly formed
            // it too: one no higher than the core's highest is dropped before its signatures
            // are checked.
            const auto qc = codec::decodeQc(message.payload);
            if (qc && qc->epoch == epoch_.load(std::memory_order_relaxed) &&
                qc->round <= highestQcRound_.load(std::memory_order_relaxed)) {
                return;
            }
            break;
        }
        default:
            break;
    }
    auto checked = checkConsensusMessage(message, *committee(), signingDomain_);
    if (!checked && checked.error().code == ErrorCode::kWrongEpoch) {
        // Not misbehaviour: around an epoch change honest peers are an epoch apart. The
        // message proves nothing, but a peer ahead of this node can prove that its epoch
        // ended: ask it for that proof.
        log_->debug("message of another epoch peer={} detail={}", from.hex(),
                    checked.error().message);
        if (checked.error().message.starts_with(kLaterEpochMessage)) {
            (void)laterEpoch_->hold(from, message);
            asio::post(io_, [this, from] {
                if (!halted_.load()) {
                    sync_->onLaterEpoch(from);
                }
            });
        }
        return;
    }
    if (!checked) {
        invalidMessage(from, message.kind, checked.error(), kInvalidMessagePoints);
        return;
    }
    if (const auto* proposal = std::get_if<consensus::ProposalReceived>(&*checked)) {
        // Here, on every core, rather than one by one when the block executes on the
        // consensus thread: execution then finds every verdict cached.
        mempool_->verifyProposed(proposal->block.txs);
    }
    asio::post(io_, [this, from, input = std::move(*checked)]() mutable {
        onChecked(from, std::move(input));
    });
}

void NodeImpl::admitGossipedTxs(const NodeId& from, ByteView payload) {
    auto batch = codec::decodeTxBatch(payload);
    if (!batch) {
        invalidMessage(from, codec::MessageKind::kTx, batch.error(), kInvalidMessagePoints);
        return;
    }
    // Verified together on every core, then admitted in order (Mempool::submitBatch).
    const std::vector<ByteView> raws(batch->txs.begin(), batch->txs.end());
    const auto outcomes = mempool_->submitBatch(raws);
    std::vector<Hash256> admitted;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const auto& hash = outcomes[i];
        if (hash) {
            admitted.push_back(*hash);
            outbox_.add(OutgoingTx{std::move(batch->txs[i]), from});
        } else if (hash.error().code == ErrorCode::kBadSignature ||
                   hash.error().code == ErrorCode::kMalformed) {
            // A peer checks a transaction before it passes it on: this one was never valid.
            invalidMessage(from, codec::MessageKind::kTx, hash.error(), kInvalidTxPoints);
        }
    }
    if (admitted.empty()) {
        return;
    }
    // A member's transactions are not packed into batches here (flushGossip): around an epoch
    // change a member may still gossip them, and they are proposed without waiting.
    if (batches_->isMember(from)) {
        mempool_->ready(admitted);
    }
    signalPayload();
}

void NodeImpl::openBatches() {
    BatchExchange::Host host;
    host.send = [this](const NodeId& peer, const codec::NetMessage& message) {
        // A batch is droppable: its transactions reach a member without it in a block.
        (void)network_->send(peer, message);
    };
    host.verify = [this](std::span<const Bytes> txs) { return mempool_->signaturesValid(txs); };
    host.admit = [this](const NodeId& from, std::vector<Bytes> txs, bool certified) {
        admitBatchTxs(from, std::move(txs), certified);
    };
    host.ready = [this](std::span<const Bytes> txs) { readyToPropose(txs); };
    host.sign = [this](const Hash256& digest) { return validatorKey_.sign(digest); };
    host.invalid = [this](const NodeId& from, codec::MessageKind kind, const Error& error) {
        invalidMessage(from, kind, error,
                       error.code == ErrorCode::kBadSignature && kind == codec::MessageKind::kBatch
                           ? kInvalidTxPoints
                           : kInvalidMessagePoints);
    };
    batches_ = std::make_unique<BatchExchange>(std::move(host), signingDomain_);
}

void NodeImpl::updateBatchRoster() {
    BatchExchange::Roster roster;
    roster.committee = committee();
    for (const PubKey& key : roster.committee->members()) {
        const auto node = nodeIds_.find(key);
        roster.nodes.push_back(node != nodeIds_.end() ? std::optional<NodeId>(node->second)
                                                      : std::nullopt);
    }
    roster.self = roster.committee->indexOf(proposer_.publicKey());
    batches_->setRoster(std::move(roster));
    mempool_->holdAdmissions(batches_->active());
}

void NodeImpl::readyToPropose(std::span<const Bytes> txs) {
    if (txs.empty()) {
        return;
    }
    std::vector<Hash256> hashes;
    hashes.reserve(txs.size());
    for (const auto& raw : txs) {
        hashes.push_back(crypto::sha256(raw));
    }
    mempool_->ready(hashes);
    signalPayload();
}

void NodeImpl::admitBatchTxs(const NodeId& from, std::vector<Bytes> txs, bool certified) {
    if (certified) {
        mempool_->acceptCertified(txs);
    }
    const std::vector<ByteView> raws(txs.begin(), txs.end());
    const auto outcomes = mempool_->submitBatch(raws);
    std::vector<Hash256> admitted;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (outcomes[i]) {
            admitted.push_back(*outcomes[i]);
            outbox_.add(OutgoingTx{std::move(txs[i]), from});
        }
    }
    // Another member's batch, verified here or certified: nothing to wait for.
    if (!admitted.empty()) {
        mempool_->ready(admitted);
        signalPayload();
    }
}

void NodeImpl::serveBlock(const NodeId& from, ByteView payload) {
    auto request = codec::decodeBlockRequest(payload);
    if (!request) {
        invalidMessage(from, codec::MessageKind::kBlockRequest, request.error(),
                       kInvalidMessagePoints);
        return;
    }
    auto block = blocks_->blockById(request->blockId);
    if (block && !*block) {
        block = consensusStore_->blockById(request->blockId);
    }
    if (!block) {
        log_->warn("cannot serve block {}: {}", request->blockId.hex(), block.error().message);
        return;
    }
    if (*block) {
        sendServed(
            from, p2p::Message{codec::MessageKind::kBlockResponse, codec::encodeBlock(**block)}, 1);
    } else {
        serving_.charge(from, 1, 0, ServingBudget::Clock::now());
    }
}

void NodeImpl::serveSyncRequest(const NodeId& from, ByteView payload) {
    auto request = codec::decodeSyncRequest(payload);
    if (!request) {
        invalidMessage(from, codec::MessageKind::kSyncRequest, request.error(),
                       kInvalidMessagePoints);
        return;
    }
    auto response = serveSync(*blocks_, *request, config_.syncBatchBlocks);
    if (!response) {
        log_->warn("cannot serve sync request from_height={}: {}", request->fromHeight,
                   response.error().message);
        return;
    }
    const std::size_t blocks = response->blocks.size();
    sendServed(
        from, p2p::Message{codec::MessageKind::kSyncResponse, codec::encodeSyncResponse(*response)},
        blocks);
}

void NodeImpl::serveEpochProofRequest(const NodeId& from, ByteView payload) {
    auto request = codec::decodeEpochProofRequest(payload);
    if (!request) {
        invalidMessage(from, codec::MessageKind::kEpochProofRequest, request.error(),
                       kInvalidMessagePoints);
        return;
    }
    auto proof = epochProofFor(*blocks_, request->epoch, committee()->epoch());
    if (!proof) {
        log_->warn("cannot serve the proof of epoch {}: {}", request->epoch, proof.error().message);
        return;
    }
    if (*proof) {
        sendServed(from,
                   p2p::Message{codec::MessageKind::kEpochProof, codec::encodeEpochProof(**proof)},
                   1);
    } else {
        serving_.charge(from, 1, 0, ServingBudget::Clock::now());
    }
}

void NodeImpl::serveStateManifest(const NodeId& from) {
    auto manifest = genesisVerifiableManifest(*blocks_, genesis_, executedHeight_.load());
    if (!manifest) {
        log_->debug("no state manifest to serve peer={}: {}", from.hex(), manifest.error().message);
    }
    const Bytes encoded = manifest ? encodeManifest(*manifest) : Bytes{};
    sendServed(from,
               p2p::Message{codec::MessageKind::kStateManifest,
                            codec::encodeStateManifest(codec::StateManifest{encoded})},
               1);
}

void NodeImpl::serveStateChunk(const NodeId& from, ByteView payload) {
    auto request = codec::decodeStateChunkRequest(payload);
    if (!request) {
        invalidMessage(from, codec::MessageKind::kStateChunkRequest, request.error(),
                       kInvalidMessagePoints);
        return;
    }
    codec::StateChunk answer{request->height, request->start, {}};
    if (request->height >= firstHeight_ && request->height <= executedHeight_.load()) {
        const std::size_t keys = request->maxKeys == 0
                                     ? kSnapshotChunkKeys
                                     : std::min<std::size_t>(request->maxKeys, kSnapshotChunkKeys);
        auto range = tree_->proveRange(request->start, request->height, keys);
        if (range) {
            answer.range = ledger::encodeRange(*range);
        } else {
            log_->debug("cannot serve state chunk height={} start={}: {}", request->height,
                        request->start.hex(), range.error().message);
        }
    }
    sendServed(from, p2p::Message{codec::MessageKind::kStateChunk, codec::encodeStateChunk(answer)},
               1);
}

void NodeImpl::invalidMessage(const NodeId& from, codec::MessageKind kind, const Error& error,
                              std::uint32_t points) {
    log_->debug("invalid {} from peer={} reason={} detail={}", codec::kindName(kind), from.hex(),
                error.reason(), error.message);
    metrics_->invalidMessage();
    network_->reportMisbehaviour(from, points);
}

void NodeImpl::onChecked(const NodeId& from, CheckedInput input) {
    std::visit(Overloaded{
                   [&](consensus::ProposalReceived& e) {
                       if (e.block.header.height > seenHeight_.load()) {
                           seenHeight_.store(e.block.header.height);
                       }
                       // A block far above this node's ledger is not the core's business (it
                       // would fetch every parent one by one): the node asks for blocks instead.
                       routeBlock(from, std::move(e));
                   },
                   [&](consensus::BlockFetched& e) {
                       if (fetching_.erase(e.block.id) != 0) {
                           routeBlock(from, std::move(e));
                       }
                   },
                   [&](auto& e) { deliver(std::move(e)); },
               },
               input);
}

void NodeImpl::scheduleGossip() {
    gossipTimer_.expires_after(kGossipInterval);
    gossipTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) {
            flushGossip();
            scheduleGossip();
        }
    });
}

void NodeImpl::flushGossip() {
    const auto now = BatchExchange::Clock::now();
    batches_->tick(now);
    const auto txs = outbox_.take();
    if (txs.empty()) {
        return;
    }
    // A member sends the transactions it admitted from clients and from peers that are not
    // members to the other members in batches (docs/protocol.md §14), not as gossip.
    const bool batching = batches_->active();
    if (batching) {
        // Another member's transactions were made ready to propose when they were admitted.
        std::vector<Bytes> packed;
        for (const auto& tx : txs) {
            if (!tx.origin || !batches_->isMember(*tx.origin)) {
                packed.push_back(tx.raw);
            }
        }
        batches_->pack(std::move(packed), now);
    }
    for (const auto& peer : network_->connectedPeers()) {
        if (batching && batches_->isMember(peer)) {
            continue;
        }
        for (const auto& batch : batchesFor(txs, peer)) {
            // Transactions are droppable: a peer whose queue is full misses them, not consensus.
            (void)network_->send(
                peer, p2p::Message{codec::MessageKind::kTx, codec::encodeTxBatch(batch)});
        }
    }
}

void NodeImpl::scheduleNetworkMetrics() {
    networkMetricsTimer_.expires_after(kNetworkMetricsInterval);
    networkMetricsTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) {
            metrics_->network(network_->stats(), network_->connectedPeers().size());
            metrics_->nodeState(halted_.load(), hold_.load() != Hold::kNone, sync_->syncing());
            scheduleNetworkMetrics();
        }
    });
}

template <typename BlockEvent>
void NodeImpl::routeBlock(const NodeId& from, BlockEvent event) {
    // A block far above what this node holds certified is not the core's business (it would
    // fetch every parent one by one): the node asks for blocks instead. Not the committed root:
    // a chain may certify more than the lag in blocks before one commits.
    const std::uint64_t height = event.block.header.height;
    const std::uint64_t certified = runner_->core().certifiedHeight();
    if (!sync_->farAhead(height, certified)) {
        deliver(std::move(event));
    } else if (!halted_.load()) {
        sync_->offer(from, height, certified);
    }
}

void NodeImpl::onSyncResponse(const NodeId& from, codec::SyncResponse response) {
    if (failed_ || halted_.load()) {
        return;
    }
    if (!sync_->isPeer(from)) {
        // Answers to a held validator's probes (or late ones): a peer's word that nothing is
        // committed above this node, or blocks that, once verified, start a sync from it.
        if (hold_ == Hold::kNone || sync_->active()) {
            return;
        }
        if (response.blocks.empty()) {
            noteAtHead(from, response.headHeight);
            return;
        }
        sync_->start(from);
    }
    if (response.blocks.empty() && hold_ != Hold::kNone) {
        noteAtHead(from, response.headHeight);
    }
    sync_->onResponse(from, std::move(response));
}

std::chrono::milliseconds NodeSyncHost::now() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
}

std::uint64_t NodeSyncHost::executedHeight() const {
    return node_.executedHeight_.load(std::memory_order_relaxed);
}

Result<std::optional<codec::Block>> NodeSyncHost::blockAt(std::uint64_t height) const {
    return node_.blocks_->blockAt(height);
}

std::shared_ptr<const consensus::Committee> NodeSyncHost::committee() const {
    return node_.committee();
}

bool NodeSyncHost::send(const NodeId& peer, p2p::Message message) {
    return node_.network_->send(peer, message).has_value();
}

std::vector<NodeId> NodeSyncHost::connectedPeers() const {
    return node_.network_->connectedPeers();
}

void NodeSyncHost::expireAfter(std::uint64_t seq, std::chrono::milliseconds delay,
                               std::string reason) {
    node_.syncTimer_.expires_after(delay);
    node_.syncTimer_.async_wait(
        [this, seq, reason = std::move(reason)](const boost::system::error_code& ec) {
            if (!ec) {
                node_.sync_->expired(seq, reason);
            }
        });
}

void NodeSyncHost::prepare(std::span<const codec::Block> blocks) {
    // Each block's checks go to the verify pool's workers, in height order, while this thread
    // executes the blocks before it; execute() ends them, and the verdicts it remembers are
    // found cached when the block executes (as for a proposal).
    checks_.clear();
    for (const auto& block : blocks) {
        checks_.emplace_back(block.header.height,
                             node_.mempool_->startVerifyingProposed(block.txs));
    }
}

Result<bool> NodeSyncHost::execute(const codec::Block& block, const codec::QuorumCert& certifying) {
    if (!checks_.empty() && checks_.front().first == block.header.height) {
        node_.mempool_->finishVerifyingProposed(std::move(checks_.front().second));
        checks_.pop_front();
    }
    // A synced block is certified and can be fetched again after a crash: its write waits for
    // the one fsync that ends the batch (storeCommitProofs).
    GL_TRY(node_.executeCommitted(block, certifying));
    GL_ASSIGN_OR_RETURN(change, node_.endEpochIfChanged(block));
    return change.has_value();
}

Status NodeSyncHost::storeCommitProofs(const std::vector<HeightProof>& proofs) {
    GL_TRY(node_.storeCommitProofs(proofs));
    GL_TRY(node_.store_->syncWal());  // the batch's blocks, state and proofs, all durable now
    node_.barrier_->wrote(true);
    return {};
}

void NodeSyncHost::synced(std::size_t count) {
    node_.metrics_->blocksSynced(count);
}

void NodeSyncHost::refused(const NodeId& peer, codec::MessageKind kind, const Error& error) {
    node_.invalidMessage(peer, kind, error, kInvalidSyncPoints);
}

void NodeSyncHost::failed(const Error& error) {
    node_.stopFor(error);
}

void NodeSyncHost::caughtUp() {
    checks_.clear();  // those of blocks a batch did not reach, past the end of an epoch
    node_.fetching_.clear();
    // The core restarts from the synced head, as after a restart; the double-sign guard runs
    // again over the blocks that sync brought in.
    if (auto built = node_.buildCore(); !built) {
        node_.fatal(built.error());
        return;
    }
    node_.deliver(consensus::Start{});
    node_.maybeResumeSigning();
}

void NodeImpl::holdSignatures(Hold why, const std::string& detail) {
    const bool wasSigning = hold_ == Hold::kNone;
    hold_ = why;
    if (wasSigning) {
        log_->error("signing held: this validator follows the chain without signing detail={}",
                    detail);
        scheduleHoldProbe();
    }
}

void NodeImpl::scheduleHoldProbe() {
    holdProbeTimer_.expires_after(kHoldProbeInterval);
    holdProbeTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || hold_ == Hold::kNone || failed_ || halted_.load()) {
            return;
        }
        if (!sync_->active()) {
            const p2p::Message message = sync_->requestMessage();
            for (const auto& peer : network_->connectedPeers()) {
                (void)network_->send(peer, message);
            }
        }
        maybeResumeSigning();
        scheduleHoldProbe();
    });
}

void NodeImpl::noteAtHead(const NodeId& peer, std::uint64_t peerHead) {
    if (peerHead <= executedHeight_.load(std::memory_order_relaxed)) {
        atHeadPeers_.insert(peer);
    }
    maybeResumeSigning();
}

void NodeImpl::maybeResumeSigning() {
    if (hold_ == Hold::kNone || sync_->active() || failed_ || halted_.load()) {
        return;
    }
    // f + 1 peers saying that nothing above this ledger is committed include an honest one.
    const std::size_t needed = committee()->maxFaulty() + 1;
    if (atHeadPeers_.size() < needed) {
        return;
    }
    auto recovery = recoveryData(*committee());
    if (!recovery) {
        fatal(recovery.error());
        return;
    }
    // Any vote of this key in the recent certificates may be one this node no longer knows.
    recovery->safety = consensus::SafetyData{committee()->epoch()};
    if (auto guard = checkDoubleSign(*recovery); !guard) {
        if (hold_ != Hold::kUnrecordedVote) {
            log_->error("signing still held detail={}", guard.error().message);
        }
        hold_ = Hold::kUnrecordedVote;
        return;
    }
    // Every round this key may have signed in before lies below the round the network is in
    // now: start the safety data above everything this node has seen.
    const consensus::Core& core = runner_->core();
    consensus::SafetyData safety{committee()->epoch(), core.currentRound(), core.highestQc().round};
    if (auto saved = consensusStore_->saveSafety(safety); !saved) {
        fatal(saved.error());
        return;
    }
    log_->info("signing resumed epoch={} last_voted_round={} at_head_peers={}", safety.epoch,
               safety.lastVotedRound, atHeadPeers_.size());
    hold_ = Hold::kNone;
    atHeadPeers_.clear();
    holdProbeTimer_.cancel();
    if (auto built = buildCore(); !built) {
        fatal(built.error());
        return;
    }
    deliver(consensus::Start{});
}

}  // namespace gridledger::node
