// The leader's proposals and the round timeouts.
#include <algorithm>
#include <string>
#include <utility>

#include "core_impl.h"

namespace gridledger::consensus {

void CoreImpl::maybePropose() {
    const std::uint64_t round = pacemaker_.round();
    if (!started_ || recovering_ || !selfIndex_ || proposedRound_ >= round ||
        (request_ && request_->round == round)) {
        return;
    }
    const codec::QuorumCert& qc = tree_.highestQc();
    const BlockPtr parent = tree_.find(qc.blockId);
    if (!parent || !isSelf(leaderAfter(round, *parent))) {
        return;  // the highest QC's block is always in the tree
    }
    if (!hasReasonToPropose()) {
        if (idleTimerRound_ != round) {
            idleTimerRound_ = round;
            emit(ScheduleTimer{TimerKind::kProposal, round, options_.emptyBlockIntervalMs});
        }
        return;
    }
    const auto exec = execForProposal(*parent);
    if (!exec) {
        return;  // execution lags behind the parent's exec height: retried on Executed
    }
    BuildProposal request;
    request.epoch = committee_.epoch();
    request.round = round;
    request.height = parent->header.height + 1;
    request.parentId = parent->id;
    request.qc = qc;
    if (!follows(round, qc.round) && highestTc_ && follows(round, highestTc_->round)) {
        request.tc = highestTc_;
    }
    request.execHeight = exec->height;
    request.execStateRoot = exec->stateRoot;
    request.execResultsRoot = exec->resultsRoot;
    if (options_.blockTimeMs != 0) {
        request.minTimestampMs =
            checkedAdd(parent->header.timestampMs, options_.blockTimeMs).value_or(UINT64_MAX);
        request.maxTimestampMs = request.minTimestampMs;
    } else {
        request.minTimestampMs = checkedAdd(parent->header.timestampMs, 1).value_or(UINT64_MAX);
    }
    payloadAvailable_ = false;
    request_ = request;
    emit(std::move(request));
}

bool CoreImpl::hasReasonToPropose() const {
    const std::uint64_t round = pacemaker_.round();
    return pacemaker_.enteredViaTc() || payloadAvailable_ || idleElapsedRound_ == round ||
           tree_.hasUncommittedTxs();
}

std::optional<ExecRecord> CoreImpl::execForProposal(const codec::Block& parent) const {
    const std::uint64_t limit = std::min(executedHeight_, execBoundOf(parent));
    auto it = execRecords_.upper_bound(limit);
    if (it == execRecords_.begin()) {
        return std::nullopt;
    }
    --it;
    if (it->first < parent.header.execHeight) {
        return std::nullopt;
    }
    return it->second;
}

void CoreImpl::localTimeout() {
    const std::uint64_t round = pacemaker_.round();
    if (!selfIndex_) {
        return;
    }
    // Members still in the previous round need the TC that ended it to join this one.
    if (highestTc_ && follows(round, highestTc_->round)) {
        emit(Broadcast{*highestTc_});
    }
    if (ownTimeout_ && ownTimeout_->round == round) {
        emit(Broadcast{*ownTimeout_});  // re-send: some members may have missed it
        return;
    }
    const codec::QuorumCert& hqc = tree_.highestQc();
    TimeoutRequest request{committee_.epoch(), round, hqc.round, std::nullopt};
    if (highestTc_) {
        request.tcRound = highestTc_->round;
    }
    auto decision = rules_->decideTimeout(safety_, request);
    if (!decision) {
        emit(Rejected{toError(decision.error())});
        return;
    }
    safety_ = *decision;
    emit(PersistSafety{safety_});
    ownTimeout_ = signTimeout(*signer_, options_.chainId, committee_.epoch(), round, hqc);
    emit(Broadcast{*ownTimeout_});
    collectTimeout(*ownTimeout_, *selfIndex_);
}

void CoreImpl::collectTimeout(const codec::Timeout& timeout, std::size_t index) {
    if (auto tc = timeouts_.add(committee_, index, timeout)) {
        processTc(*tc, true);
    }
}

void CoreImpl::joinTimeoutsIfBehind() {
    // f + 1 timeouts for our round include an honest member's: the round is lost, join them.
    const std::uint64_t round = pacemaker_.round();
    if (selfIndex_ && timeouts_.count(round) > committee_.maxFaulty() &&
        !(ownTimeout_ && ownTimeout_->round == round)) {
        localTimeout();
    }
}

}  // namespace gridledger::consensus
