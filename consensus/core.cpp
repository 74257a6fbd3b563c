// Core facade, event dispatch, certificates, rounds and the 2-chain commit rule.
#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include <gridledger/consensus/core.h>

#include "core_impl.h"

namespace gridledger::consensus {

// ---- Core ----

Core::Core(std::unique_ptr<CoreImpl> impl) : impl_(std::move(impl)) {}
Core::Core(Core&&) noexcept = default;
Core& Core::operator=(Core&&) noexcept = default;
Core::~Core() = default;

Effects Core::step(const Event& event) {
    return impl_->step(event);
}
std::uint64_t Core::currentRound() const {
    return impl_->currentRound();
}
const codec::QuorumCert& Core::highestQc() const {
    return impl_->highestQc();
}
const std::optional<codec::TimeoutCert>& Core::highestTc() const {
    return impl_->highestTc();
}
const SafetyData& Core::safetyData() const {
    return impl_->safetyData();
}
const codec::Block& Core::committedRoot() const {
    return impl_->committedRoot();
}
std::uint64_t Core::certifiedHeight() const {
    return impl_->certifiedHeight();
}
std::uint64_t Core::executedHeight() const {
    return impl_->executedHeight();
}
const Committee& Core::committee() const {
    return impl_->committee();
}

// ---- CoreImpl: events ----

Effects CoreImpl::step(const Event& event) {
    nowMs_ = event.nowMs;
    if (!started_) {
        start();
    }
    std::visit(
        [this](const auto& body) {
            using T = std::decay_t<decltype(body)>;
            if constexpr (std::is_same_v<T, ProposalReceived>) {
                handleBlock(std::make_shared<const codec::Block>(body.block), Origin::kProposal);
            } else if constexpr (std::is_same_v<T, VoteReceived>) {
                onVote(body.vote);
            } else if constexpr (std::is_same_v<T, TimeoutReceived>) {
                onTimeout(body.timeout);
            } else if constexpr (std::is_same_v<T, TimeoutCertReceived>) {
                processTc(body.tc, false);
            } else if constexpr (std::is_same_v<T, QcReceived>) {
                processQc(body.qc, std::nullopt);
            } else if constexpr (std::is_same_v<T, TimerFired>) {
                onTimer(body);
            } else if constexpr (std::is_same_v<T, BlockFetched>) {
                if (fetching_.contains(body.block.id)) {
                    // The proposal this validator missed and asked a voter for is handled as
                    // the proposal it is, while its round lasts: checked as live, voted for.
                    const bool proposal =
                        votedFetch_ == std::make_pair(pacemaker_.round(), body.block.id);
                    handleBlock(std::make_shared<const codec::Block>(body.block),
                                proposal ? Origin::kProposal : Origin::kFetched);
                }
            } else if constexpr (std::is_same_v<T, Executed>) {
                onExecuted(body);
            } else if constexpr (std::is_same_v<T, ProposalBuilt>) {
                onProposalBuilt(body.block);
            } else if constexpr (std::is_same_v<T, PayloadAvailable>) {
                onPayload();
            } else if constexpr (std::is_same_v<T, EpochChange>) {
                onEpochChange(body);
            }
            // Start: nothing beyond the implicit start above.
        },
        event.body);
    drainReady();
    return std::exchange(out_, {});
}

void CoreImpl::start() {
    started_ = true;
    // out_ already holds the Commit and Fetch effects of recovery.
    const std::uint64_t round = pacemaker_.round();
    emit(ScheduleTimer{TimerKind::kRound, round, pacemaker_.timeoutMs()});
    const BlockPtr proposal = tree_.findByRound(round);
    if (safety_.lastVotedRound < round) {
        // A proposal of this round persisted before the stop: consider it again for a vote.
        const BlockPtr parent = proposal ? tree_.find(proposal->header.parentId) : nullptr;
        if (parent && proposal->header.author == leaderAfter(round, *parent)) {
            firstProposal_ = std::make_pair(round, proposal->id);
            tryVote(proposal);
        }
    } else if (committee_.size() == 1) {
        // A lone validator that already voted or timed out in this round before the stop can
        // never see it certified now: time it out at once instead of waiting for the timer.
        localTimeout();
    }
    maybePropose();
}

void CoreImpl::onVote(const codec::Vote& vote) {
    const auto index = committee_.indexOf(vote.voter);
    if (vote.epoch != committee_.epoch() || !index || vote.round > kMaxRound) {
        reject(ErrorCode::kInvalidArgument, "vote is not from a member of this epoch");
        return;
    }
    if (vote.round <= tree_.highestQc().round ||
        vote.round > pacemaker_.round() + options_.maxRoundsAhead) {
        return;  // already certified, or too far ahead to keep
    }
    std::optional<codec::QuorumCert> qc;
    if (votes_.add(committee_, *index, vote, qc) == VoteCollector::Added::kEquivocation) {
        reject(ErrorCode::kInvalidArgument,
               "member " + std::to_string(*index) +
                   " voted twice in round=" + std::to_string(vote.round));
    }
    if (qc) {
        forwardQc(*qc);
        processQc(*qc, std::nullopt);
    } else {
        fetchVotedProposal(vote);
    }
}

void CoreImpl::forwardQc(const codec::QuorumCert& qc) {
    // Votes go to every member, so each forms the QC; with exactly a quorum of members alive the
    // next leader forms it only once its own copy of every live vote arrived. Any member's QC
    // will do: the first one to reach the leader moves it to the next round.
    const BlockPtr block = tree_.find(qc.blockId);
    if (!selfIndex_ || !block) {
        return;
    }
    const PubKey& leader = leaderAfter(qc.round + 1, *block);
    if (!isSelf(leader)) {
        emit(ForwardQc{leader, qc});
    }
}

void CoreImpl::fetchVotedProposal(const codec::Vote& vote) {
    // With exactly a quorum of members alive, every live vote is needed: a member whose copy of
    // the proposal is lost or late would hold the round up to its timeout. f + 1 votes show that
    // an honest member holds the block, and they come after the direct copy unless it is late.
    if (!selfIndex_ || vote.round != pacemaker_.round() || safety_.lastVotedRound >= vote.round ||
        tree_.contains(vote.blockId) || isWaiting(vote.blockId) ||
        (firstProposal_ && firstProposal_->first == vote.round) ||
        votes_.count(vote.round, vote.blockId) < maxFaultyOf(committee_.size()) + 1) {
        return;
    }
    votedFetch_ = std::make_pair(vote.round, vote.blockId);
    requestFetch(vote.blockId, vote.voter);
}

void CoreImpl::onTimeout(const codec::Timeout& timeout) {
    const auto index = committee_.indexOf(timeout.author);
    if (timeout.epoch != committee_.epoch() || !index || timeout.round > kMaxRound ||
        timeout.highQc.round >= timeout.round) {
        reject(ErrorCode::kInvalidArgument,
               "timeout is malformed or not from a member of this epoch");
        return;
    }
    processQc(timeout.highQc, timeout.author);  // sync info first: it may move the round
    if (timeout.round < pacemaker_.round() ||
        timeout.round > pacemaker_.round() + options_.maxRoundsAhead) {
        return;
    }
    collectTimeout(timeout, *index);
    joinTimeoutsIfBehind();
}

void CoreImpl::onTimer(const TimerFired& timer) {
    if (timer.kind == TimerKind::kRound) {
        // Every round timer, also one of a round already left, retries the open fetches: a
        // validator that keeps entering rounds through TCs never sees its current round's timer
        // fire, and a lost fetch would otherwise never be asked again.
        for (const auto& id : fetching_) {
            emit(Fetch{id, std::nullopt});
        }
    }
    if (timer.round != pacemaker_.round()) {
        return;  // a timer of an earlier round
    }
    if (timer.kind == TimerKind::kProposal) {
        idleElapsedRound_ = timer.round;
        maybePropose();
        return;
    }
    localTimeout();
    if (timer.round == pacemaker_.round()) {
        // Still here: keep re-sending the timeout until the round ends.
        emit(ScheduleTimer{TimerKind::kRound, timer.round, pacemaker_.timeoutMs()});
    }
}

void CoreImpl::onExecuted(const Executed& executed) {
    if (executed.height <= executedHeight_) {
        return;  // already known (e.g. replayed after a restart)
    }
    if (executed.height > tree_.root().header.height) {
        reject(ErrorCode::kInvalidArgument,
               "executed height=" + std::to_string(executed.height) +
                   " is above the committed height=" + std::to_string(tree_.root().header.height));
        return;
    }
    execRecords_[executed.height] =
        ExecRecord{executed.height, executed.stateRoot, executed.resultsRoot};
    executedHeight_ = executed.height;
    if (held_) {
        const BlockPtr block = std::exchange(held_, nullptr);
        tryVote(block);
    }
    maybePropose();
}

void CoreImpl::onPayload() {
    payloadAvailable_ = true;
    maybePropose();
}

// ---- CoreImpl: certificates, rounds, commits ----

void CoreImpl::processQc(const codec::QuorumCert& qc, const std::optional<PubKey>& hint) {
    if (qc.epoch != committee_.epoch() || qc.round > kMaxRound) {
        reject(ErrorCode::kInvalidCertificate, "qc of another epoch or an impossible round");
        return;
    }
    if (qc.round <= rootRound()) {
        return;  // at or below the committed root: nothing to learn
    }
    if (!tree_.contains(qc.blockId)) {
        rememberQc(qc);
        if (!isWaiting(qc.blockId)) {
            requestFetch(qc.blockId, hint);
        }
        return;
    }
    if (!tree_.insertQc(qc)) {
        return;
    }
    emit(PersistQc{qc});
    maybeCommit(qc);
    if (qc.round >= pacemaker_.round()) {
        enterRound(qc.round + 1, false);
    }
}

void CoreImpl::processTc(const codec::TimeoutCert& tc, bool formedHere) {
    if (tc.epoch != committee_.epoch() || tc.round > kMaxRound) {
        reject(ErrorCode::kInvalidCertificate, "tc of another epoch or an impossible round");
        return;
    }
    // The TC's high QC is sync info like a timeout's: a leader that lacked it can now propose
    // a block that honest voters accept after this TC.
    processQc(tc.highQc, std::nullopt);
    if (highestTc_ && tc.round <= highestTc_->round) {
        return;
    }
    highestTc_ = tc;
    emit(PersistTc{tc});
    if (formedHere && committee_.size() > 1) {
        // Members that missed some timeouts (the next leader among them) learn the TC at once.
        emit(Broadcast{tc});
    }
    if (tc.round >= pacemaker_.round()) {
        enterRound(tc.round + 1, true);
    }
}

void CoreImpl::maybeCommit(const codec::QuorumCert& qc) {
    const BlockPtr child = tree_.find(qc.blockId);
    const BlockPtr block = child ? tree_.find(child->header.parentId) : nullptr;
    if (!block || block->id == tree_.root().id ||
        !follows(child->header.round, block->header.round)) {
        return;
    }
    const codec::QuorumCert* blockQc = tree_.qcFor(block->id);
    if (blockQc == nullptr) {
        return;  // cannot happen: a child is inserted only after its parent's QC
    }
    auto path = tree_.pathFromRoot(block->id);
    for (const auto& committed : path) {
        rememberCommitted(committed->header);
    }
    emit(Commit{std::move(path), *blockQc, qc});
    tree_.commit(block->id);
    afterCommit();
}

const PubKey& CoreImpl::leaderAfter(std::uint64_t round, const codec::Block& parent) const {
    const std::size_t window = options_.leaderReputationWindow;
    if (window == 0) {
        return committee_.leaderOf(round);
    }
    // The parent's chain, newest first: the blocks above the root, then the committed ones.
    std::vector<const codec::BlockHeader*> recent;
    const Hash256& rootId = tree_.root().id;
    for (BlockPtr block = tree_.find(parent.id);
         block && block->id != rootId && recent.size() < window;
         block = tree_.find(block->header.parentId)) {
        recent.push_back(&block->header);
    }
    for (auto it = committedHeaders_.rbegin();
         it != committedHeaders_.rend() && recent.size() < window; ++it) {
        recent.push_back(&*it);
    }
    return committee_.member(committee_.reputationLeaderIndex(
        round, recent, window, previousCommittee_ ? &*previousCommittee_ : nullptr));
}

void CoreImpl::rememberCommitted(const codec::BlockHeader& header) {
    const bool ofPrevious = previousCommittee_ && header.epoch == previousCommittee_->epoch();
    if (options_.leaderReputationWindow == 0 ||
        (header.epoch != committee_.epoch() && !ofPrevious) || header.round == 0) {
        return;
    }
    committedHeaders_.push_back(header);
    while (committedHeaders_.size() > options_.leaderReputationWindow) {
        committedHeaders_.pop_front();
    }
}

void CoreImpl::afterCommit() {
    const codec::BlockHeader& root = tree_.root().header;
    const std::uint64_t rootRnd = rootRound();
    std::erase_if(waiting_,
                  [&](const auto& entry) { return entry.second.block->header.round <= rootRnd; });
    std::erase_if(pendingQcs_, [&](const auto& entry) { return entry.second.round <= rootRnd; });
    std::erase_if(fetching_, [&](const Hash256& id) {
        return !pendingQcs_.contains(id) &&
               std::none_of(waiting_.begin(), waiting_.end(), [&](const auto& entry) {
                   return entry.second.block->header.parentId == id;
               });
    });
    // A proposal on this tree names an exec height at or above the root's: older records are moot.
    const std::uint64_t keepFrom = std::min(root.execHeight, executedHeight_);
    execRecords_.erase(execRecords_.begin(), execRecords_.lower_bound(keepFrom));
    if (held_ && !tree_.contains(held_->id)) {
        held_.reset();
    }
}

void CoreImpl::enterRound(std::uint64_t round, bool viaTc) {
    pacemaker_.enter(round, viaTc);
    if (recovering_) {
        return;  // Start schedules the timer of the round recovery ends in
    }
    held_.reset();
    votes_.pruneBelow(round - 1);
    timeouts_.pruneBelow(round);
    emit(ScheduleTimer{TimerKind::kRound, round, pacemaker_.timeoutMs()});
    maybePropose();
    joinTimeoutsIfBehind();
}

std::uint64_t CoreImpl::rootRound() const {
    const codec::QuorumCert* qc = tree_.qcFor(tree_.root().id);
    return qc != nullptr ? qc->round : tree_.root().header.round;
}

std::uint64_t CoreImpl::certifiedRound(const codec::Block& block) const {
    return block.id == tree_.root().id ? rootRound() : block.header.round;
}

std::uint64_t CoreImpl::execBoundOf(const codec::Block& parent) const {
    // Every member of the epoch executed its seed block before it could know the committee.
    return parent.id == committee_.seedBlockId() ? parent.header.height : execBound(parent.header);
}

void CoreImpl::emit(Effect effect) {
    if (recovering_ &&
        (std::holds_alternative<PersistSafety>(effect) ||
         std::holds_alternative<PersistBlock>(effect) ||
         std::holds_alternative<PersistQc>(effect) || std::holds_alternative<PersistTc>(effect))) {
        return;  // replaying what is already on disk
    }
    out_.push_back(std::move(effect));
}

void CoreImpl::reject(ErrorCode code, std::string message) {
    emit(Rejected{Error{code, std::move(message)}});
}

}  // namespace gridledger::consensus
