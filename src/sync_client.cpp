#include "sync_client.h"

#include <algorithm>
#include <utility>

namespace gridledger::node {

SyncClient::SyncClient(SyncHost& host, std::string chainId, SyncLimits limits,
                       std::shared_ptr<spdlog::logger> log, consensus::SignatureCheck check)
    : host_(host),
      chainId_(std::move(chainId)),
      limits_(limits),
      log_(std::move(log)),
      check_(std::move(check)) {}

p2p::Message SyncClient::requestMessage() const {
    return requestFrom(host_.executedHeight() + 1, limits_.batchBlocks);
}

p2p::Message SyncClient::requestFrom(std::uint64_t fromHeight, std::uint32_t batchBlocks) const {
    const codec::SyncRequest request{fromHeight, batchBlocks};
    return {codec::MessageKind::kSyncRequest, codec::encodeSyncRequest(request)};
}

bool SyncClient::isPeer(const NodeId& peer) const {
    return state_ && state_->peer == peer;
}

bool SyncClient::farAhead(std::uint64_t height, std::uint64_t certified) const {
    return height > certified && height - certified > limits_.lagBlocks;
}

void SyncClient::offer(const NodeId& peer, std::uint64_t height, std::uint64_t certified) {
    if (active() || !farAhead(height, certified)) {
        return;
    }
    // `height` is only the sender's word: ask it for blocks, and change nothing until an
    // answer verifies. Consensus runs on meanwhile, so a peer that lies or falls silent costs
    // this node nothing but the request.
    start(peer);
}

void SyncClient::onLaterEpoch(const NodeId& peer) {
    const auto now = host_.now();
    const auto asked = lastEpochProofAsk_.find(peer);
    if (active() ||
        (asked != lastEpochProofAsk_.end() && now - asked->second < limits_.epochProofInterval)) {
        return;
    }
    // Once per interval per peer: a peer that keeps claiming later epochs cannot take the
    // turn of the others that do.
    lastEpochProofAsk_[peer] = now;
    (void)host_.send(peer, p2p::Message{codec::MessageKind::kEpochProofRequest,
                                        codec::encodeEpochProofRequest(
                                            codec::EpochProofRequest{host_.committee()->epoch()})});
}

void SyncClient::onEpochProof(const NodeId& from, const codec::EpochProof& proof) {
    const auto committee = host_.committee();
    if (proof.reconfig.header.epoch != committee->epoch()) {
        return;  // late: this node's epoch is no longer the one the proof ends
    }
    if (auto verified = verifyEpochProof(proof, *committee, chainId_, check_); !verified) {
        host_.refused(from, codec::MessageKind::kEpochProof, verified.error());
        return;
    }
    if (proof.reconfig.header.height <= host_.executedHeight() || active()) {
        return;
    }
    // Evidence, not a claim: a quorum of this epoch committed a block above this ledger.
    log_->info("epoch proof epoch={} height={} peer={}", proof.reconfig.header.epoch,
               proof.reconfig.header.height, from.hex());
    start(from);
}

void SyncClient::start(const NodeId& peer) {
    const std::uint64_t executed = host_.executedHeight();
    state_ = State{
        .peer = peer,
        .startHeight = executed,
        .started = host_.now(),
        .batchBlocks = std::clamp<std::uint32_t>(limits_.firstBatchBlocks, 1, limits_.batchBlocks)};
    log_->debug("sync asked peer={} executed_height={}", peer.hex(), executed);
    request(executed + 1);
}

void SyncClient::request(std::uint64_t fromHeight) {
    const std::uint64_t seq = ++state_->requestSeq;
    if (!host_.send(state_->peer, requestFrom(fromHeight, state_->batchBlocks))) {
        host_.expireAfter(seq, std::chrono::milliseconds(0), "the peer is not connected");
        return;
    }
    host_.expireAfter(seq, limits_.answerTimeout, "no answer");
}

void SyncClient::expired(std::uint64_t seq, const std::string& reason) {
    if (state_ && state_->requestSeq == seq) {
        nextPeer(reason);
    }
}

void SyncClient::abandon() {
    state_.reset();
    syncing_.store(false, std::memory_order_relaxed);
}

void SyncClient::onResponse(const NodeId& from, codec::SyncResponse response) {
    ++state_->requestSeq;  // the request is answered: its timer no longer applies
    if (response.blocks.empty()) {
        if (!state_->confirmed) {
            // The peer that made this node ask has nothing to show: its word was stale or
            // false, and another peer may still hold what this ledger lacks.
            nextPeer("no blocks above the executed height");
            return;
        }
        finish();
        return;
    }
    apply(from, std::move(response));
}

void SyncClient::apply(const NodeId& from, codec::SyncResponse response) {
    const std::uint64_t executed = host_.executedHeight();
    // Consensus may have committed some of these blocks since the request left: they must be
    // the ones this ledger holds, and are skipped.
    std::size_t known = 0;
    while (known < response.blocks.size() && response.blocks[known].header.height <= executed) {
        auto held = host_.blockAt(response.blocks[known].header.height);
        if (!held) {
            host_.failed(held.error());
            return;
        }
        if (!*held || (*held)->id != response.blocks[known].id) {
            break;  // verifySyncResponse refuses it below
        }
        ++known;
    }
    const std::uint64_t peerHead = response.headHeight;
    if (known == response.blocks.size()) {
        if (peerHead > executed) {
            request(executed + 1);
        } else {
            finish();
        }
        return;
    }
    response.blocks.erase(response.blocks.begin(),
                          response.blocks.begin() + static_cast<std::ptrdiff_t>(known));
    auto head = host_.blockAt(executed);
    if (!head || !*head) {
        host_.failed(head ? Error{ErrorCode::kCorrupt, "the executed head block is missing"}
                          : head.error());
        return;
    }
    auto verified = verifySyncResponse(std::move(response), executed, (*head)->id,
                                       *host_.committee(), chainId_, check_);
    if (!verified) {
        host_.refused(from, codec::MessageKind::kSyncResponse, verified.error());
        nextPeer(verified.error().message);
        return;
    }
    if (!state_->confirmed) {
        state_->confirmed = true;
        syncing_.store(true, std::memory_order_relaxed);
        log_->info("sync started peer={} executed_height={} peer_head={}", from.hex(), executed,
                   peerHead);
    }
    // The next batch is asked for now, so that the peer reads and sends it while this one
    // executes. An honest answer never runs past the block that ends an epoch, so it starts
    // where this one ends even when this one ends an epoch.
    const std::uint64_t verifiedHeight = verified->blocks.back().header.height;
    const bool more = peerHead > verifiedHeight;
    state_->batchBlocks = std::min(limits_.batchBlocks, state_->batchBlocks * 2);
    if (more) {
        request(verifiedHeight + 1);
    }
    host_.prepare(verified->blocks);
    // The batch ends with the block that ends an epoch, whatever a peer sent above it; the
    // core is rebuilt in the new epoch when the sync ends.
    auto applied = applySyncedBlocks(
        *verified, [this](const codec::Block& block, const codec::QuorumCert& cert) {
            return host_.execute(block, cert);
        });
    if (!applied) {
        log_->error("sync stopped peer={} reason={} detail={}", from.hex(),
                    applied.error().reason(), applied.error().message);
        host_.failed(applied.error());
        return;
    }
    if (auto stored = host_.storeCommitProofs(syncedCommitProofs(*verified, *applied)); !stored) {
        host_.failed(stored.error());
        return;
    }
    host_.synced(*applied);
    const std::uint64_t lastHeight = verified->blocks[*applied - 1].header.height;
    log_->debug("synced blocks to height={} peer_head={}", lastHeight, peerHead);
    if (lastHeight < verifiedHeight) {
        // Blocks above the end of an epoch belong to no ledger: no honest peer sends them.
        const Error error{ErrorCode::kInvalidBlock,
                          "sync response runs past the block that ended epoch at height " +
                              std::to_string(lastHeight)};
        host_.refused(from, codec::MessageKind::kSyncResponse, error);
        nextPeer(error.message);
        return;
    }
    state_->failures = 0;
    if (!more) {
        finish();
    }
}

void SyncClient::nextPeer(const std::string& reason) {
    if (!state_) {
        return;
    }
    log_->warn("sync request failed peer={} reason={}", state_->peer.hex(), reason);
    const auto peers = host_.connectedPeers();
    if (++state_->failures > limits_.maxFailures || peers.empty()) {
        finish();
        return;
    }
    // The next connected peer after the current one, in node id order.
    const auto next = std::upper_bound(peers.begin(), peers.end(), state_->peer);
    state_->peer = next != peers.end() ? *next : peers.front();
    request(host_.executedHeight() + 1);
}

void SyncClient::finish() {
    const std::uint64_t height = host_.executedHeight();
    const std::uint64_t blocks = height - std::min(height, state_->startHeight);
    const bool confirmed = state_->confirmed;
    const double seconds = std::chrono::duration<double>(host_.now() - state_->started).count();
    abandon();
    if (!confirmed) {
        log_->debug("sync ended without verified blocks to_height={}", height);
        return;  // nothing changed: the core runs on as it was
    }
    log_->info(
        "sync finished blocks={} from_height={} to_height={} seconds={:.3f} "
        "rate_blocks_per_s={:.1f}",
        blocks, height - blocks, height, seconds,
        seconds > 0 ? static_cast<double>(blocks) / seconds : 0.0);
    host_.caughtUp();
}

}  // namespace gridledger::node
