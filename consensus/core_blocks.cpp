// Proposals and fetched blocks: validation, the block tree, synchronisation and voting.
#include <algorithm>
#include <string>
#include <utility>

#include "core_impl.h"

namespace gridledger::consensus {
namespace {

std::unexpected<Error> invalidBlock(const std::string& message) {
    return fail(ErrorCode::kInvalidBlock, message);
}

std::string roundField(const codec::BlockHeader& header) {
    return " round=" + std::to_string(header.round) + " height=" + std::to_string(header.height);
}

/** True iff the built block has exactly the header fields the core asked for. */
bool matchesRequest(const codec::BlockHeader& h, const BuildProposal& request, const PubKey& self) {
    return h.epoch == request.epoch && h.round == request.round && h.height == request.height &&
           h.parentId == request.parentId && h.qc == request.qc && h.tc == request.tc &&
           h.execHeight == request.execHeight && h.execStateRoot == request.execStateRoot &&
           h.execResultsRoot == request.execResultsRoot && h.author == self &&
           h.timestampMs >= request.minTimestampMs && h.timestampMs <= request.maxTimestampMs;
}

}  // namespace

void CoreImpl::onProposalBuilt(const codec::Block& block) {
    if (!request_ || request_->round != pacemaker_.round()) {
        reject(ErrorCode::kInvalidArgument, "built proposal for a round without a request");
        return;
    }
    if (!matchesRequest(block.header, *request_, signer_->publicKey())) {
        reject(ErrorCode::kInvalidBlock,
               "built proposal does not match the request" + roundField(block.header));
        return;
    }
    request_.reset();
    handleBlock(std::make_shared<const codec::Block>(block), Origin::kOwnProposal);
}

void CoreImpl::handleBlock(const BlockPtr& block, Origin origin) {
    const codec::BlockHeader& h = block->header;
    if (h.epoch != committee_.epoch() || h.round > kMaxRound || h.height > kMaxRound) {
        reject(ErrorCode::kInvalidBlock, "block of another epoch or an impossible round");
        return;
    }
    if (h.round <= rootRound() || tree_.contains(block->id) || isWaiting(block->id)) {
        return;  // committed already, or known
    }
    if (h.qc.blockId != h.parentId) {
        reject(ErrorCode::kInvalidBlock, "qc does not certify the parent" + roundField(h));
        return;
    }
    // Sync first: the block's certificates were verified by the driver and stand on their own.
    processQc(h.qc, h.author);
    if (h.tc) {
        processTc(*h.tc, false);
    }
    const BlockPtr parent = tree_.find(h.parentId);
    if (!parent) {
        if (h.qc.round > rootRound()) {
            wait(block, origin);  // processQc asked for the parent
        }
        return;
    }
    bool live = origin == Origin::kProposal || origin == Origin::kOwnProposal;
    if (live && pendingQcs_.contains(block->id)) {
        // A QC seen meanwhile certifies it (typically: it waited for its parent, so no fetch was
        // asked for it). Keep it like a fetched block, whatever the round and even if another
        // proposal of its round came first: the blocks waiting on it need it, and nothing would
        // ask for it again.
        origin = Origin::kFetched;
        live = false;
    }
    if (live && h.round != pacemaker_.round()) {
        return;  // stale: if it was certified, its QC will make this validator fetch it
    }
    if (live && firstProposal_ && firstProposal_->first == h.round &&
        firstProposal_->second != block->id) {
        // One proposal per round is kept: further ones cannot be certified by honest members
        // that saw the first, and storing them would let a leader fill the disk.
        reject(ErrorCode::kInvalidBlock, "second proposal of the leader" + roundField(h));
        return;
    }
    if (auto valid = validateBlock(*block, *parent, origin); !valid) {
        reject(valid.error().code, valid.error().message);
        return;
    }
    insertBlock(block, origin);
    if (live) {
        firstProposal_ = std::make_pair(h.round, block->id);
        tryVote(block, origin == Origin::kOwnProposal);
    }
}

void CoreImpl::drainReady() {
    while (!ready_.empty()) {
        auto [block, origin] = std::move(ready_.front());
        ready_.pop_front();
        handleBlock(block, origin);
    }
}

Status CoreImpl::validateBlock(const codec::Block& block, const codec::Block& parent,
                               Origin origin) const {
    const codec::BlockHeader& h = block.header;
    const codec::BlockHeader& p = parent.header;
    if (h.author != leaderAfter(h.round, parent)) {
        return invalidBlock("author does not lead" + roundField(h));
    }
    if (!follows(h.height, p.height)) {
        return invalidBlock("height is not the parent's + 1" + roundField(h));
    }
    if (h.qc.blockId != parent.id || h.qc.round != certifiedRound(parent)) {
        return invalidBlock("qc does not certify the parent" + roundField(h));
    }
    if (h.round <= h.qc.round) {
        return invalidBlock("round is not above the qc round" + roundField(h));
    }
    if (h.tc && h.tc->epoch != h.epoch) {
        return invalidBlock("tc is of another epoch" + roundField(h));
    }
    if (h.tc ? !follows(h.round, h.tc->round) : !follows(h.round, h.qc.round)) {
        return invalidBlock("round follows neither its qc nor its tc" + roundField(h));
    }
    if (h.timestampMs <= p.timestampMs) {
        return invalidBlock("timestamp is not after the parent's" + roundField(h));
    }
    if (options_.blockTimeMs != 0 && h.timestampMs - p.timestampMs != options_.blockTimeMs) {
        return invalidBlock("timestamp is not the parent's + block_time_ms=" +
                            std::to_string(options_.blockTimeMs) + roundField(h));
    }
    const bool live = origin == Origin::kProposal || origin == Origin::kOwnProposal;
    if (live) {
        GL_TRY(checkLimits(block));
    }
    const std::uint64_t latest = checkedAdd(nowMs_, options_.maxClockDriftMs).value_or(UINT64_MAX);
    if (live && h.timestampMs > latest) {
        return invalidBlock("timestamp is too far ahead of the clock" + roundField(h));
    }
    if (h.execHeight < p.execHeight) {
        return invalidBlock("exec height decreases" + roundField(h));
    }
    if (h.execHeight > execBoundOf(parent)) {
        return invalidBlock("exec height is above what the chain proves committed" + roundField(h));
    }
    if (live && h.execHeight <= executedHeight_) {
        return checkExecution(h);
    }
    return {};
}

Status CoreImpl::checkLimits(const codec::Block& block) const {
    // A leader fills blocks up to these limits; a voter refuses more, so that one faulty leader
    // cannot make every member store, verify and execute a block of any size.
    if (block.txs.size() > options_.maxBlockTxs) {
        return invalidBlock("block holds " + std::to_string(block.txs.size()) +
                            " txs, max_block_txs=" + std::to_string(options_.maxBlockTxs) +
                            roundField(block.header));
    }
    std::uint64_t bytes = 0;
    for (const auto& tx : block.txs) {
        bytes += tx.size();
    }
    if (bytes > options_.maxBlockBytes) {
        return invalidBlock("block holds " + std::to_string(bytes) + " tx bytes, max_block_bytes=" +
                            std::to_string(options_.maxBlockBytes) + roundField(block.header));
    }
    return {};
}

Status CoreImpl::checkExecution(const codec::BlockHeader& h) const {
    const auto it = execRecords_.find(h.execHeight);
    if (it == execRecords_.end()) {
        return invalidBlock("no execution record for exec height=" + std::to_string(h.execHeight) +
                            roundField(h));
    }
    if (it->second.stateRoot != h.execStateRoot || it->second.resultsRoot != h.execResultsRoot) {
        return invalidBlock("exec roots differ from this validator's at exec height=" +
                            std::to_string(h.execHeight) + roundField(h));
    }
    return {};
}

void CoreImpl::insertBlock(const BlockPtr& block, Origin origin) {
    tree_.insert(block);
    emit(PersistBlock{block});
    if (origin == Origin::kOwnProposal) {
        proposedRound_ = std::max(proposedRound_, block->header.round);
    }
    fetching_.erase(block->id);
    if (const auto it = pendingQcs_.find(block->id); it != pendingQcs_.end()) {
        const codec::QuorumCert qc = std::move(it->second);
        pendingQcs_.erase(it);
        processQc(qc, std::nullopt);
    }
    // Children waiting for this block become ready, oldest first.
    std::vector<Waiting> children;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        if (it->second.block->header.parentId == block->id) {
            children.push_back(std::move(it->second));
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
    std::sort(children.begin(), children.end(),
              [](const Waiting& a, const Waiting& b) { return a.seq < b.seq; });
    for (auto& child : children) {
        ready_.emplace_back(std::move(child.block), child.origin);
    }
}

void CoreImpl::wait(const BlockPtr& block, Origin origin) {
    if (waiting_.size() >= options_.maxPendingBlocks) {
        const auto oldest = std::min_element(
            waiting_.begin(), waiting_.end(),
            [](const auto& a, const auto& b) { return a.second.seq < b.second.seq; });
        waiting_.erase(oldest);
    }
    waiting_.emplace(block->id, Waiting{block, origin, waitSeq_++});
}

void CoreImpl::rememberQc(const codec::QuorumCert& qc) {
    if (pendingQcs_.contains(qc.blockId)) {
        return;
    }
    if (pendingQcs_.size() >= options_.maxPendingBlocks) {
        const auto lowest = std::min_element(
            pendingQcs_.begin(), pendingQcs_.end(),
            [](const auto& a, const auto& b) { return a.second.round < b.second.round; });
        if (lowest->second.round >= qc.round) {
            return;
        }
        pendingQcs_.erase(lowest);
    }
    pendingQcs_.emplace(qc.blockId, qc);
}

void CoreImpl::requestFetch(const Hash256& id, const std::optional<PubKey>& hint) {
    if (fetching_.contains(id) || fetching_.size() >= options_.maxPendingBlocks) {
        return;
    }
    fetching_.insert(id);
    emit(Fetch{id, hint && !isSelf(*hint) ? hint : std::nullopt});
}

void CoreImpl::tryVote(const BlockPtr& block, bool ownProposal) {
    const std::optional<codec::Vote> vote = decideVote(block);
    // A leader broadcasts its proposal after the PersistSafety of its own vote on it: the one
    // fsync that makes the safety data durable makes the block durable too (docs/protocol.md §8).
    if (ownProposal) {
        emit(Broadcast{block});
    }
    if (vote) {
        emit(SendVote{leaderAfter(block->header.round + 1, *block), *vote});
    }
}

std::optional<codec::Vote> CoreImpl::decideVote(const BlockPtr& block) {
    const codec::BlockHeader& h = block->header;
    if (!selfIndex_ || h.round != pacemaker_.round()) {
        return std::nullopt;
    }
    if (h.execHeight > executedHeight_) {
        held_ = block;  // vote once Executed catches up with the proposer
        return std::nullopt;
    }
    if (auto executed = checkExecution(h); !executed) {
        reject(executed.error().code, executed.error().message);
        return std::nullopt;
    }
    auto decision = rules_->decideVote(safety_, VoteRequest::of(h));
    if (!decision) {
        emit(Rejected{toError(decision.error())});
        return std::nullopt;
    }
    safety_ = *decision;
    emit(PersistSafety{safety_});
    return signVote(*signer_, options_.chainId, h.epoch, h.round, block->id);
}

}  // namespace gridledger::consensus
