// Reconfiguration: the switch to the next epoch (docs/protocol.md §12). Nodes behind an epoch
// cross it by block sync, not through the core.
#include <string>
#include <utility>

#include "core_impl.h"

namespace gridledger::consensus {

void CoreImpl::onEpochChange(const EpochChange& change) {
    const codec::BlockHeader& h = change.block.header;
    const std::uint64_t epoch = committee_.epoch();
    if (h.epoch != epoch || h.height > tree_.root().header.height || h.height > executedHeight_ ||
        epoch >= kMaxRound) {
        reject(ErrorCode::kInvalidArgument,
               "epoch change: block height=" + std::to_string(h.height) +
                   " is not a committed and executed block of epoch=" + std::to_string(epoch));
        return;
    }
    // The next seed comes from this epoch's, not from the block that ends it: its proposer
    // could otherwise try blocks until the next committee suits it.
    const Hash256 seed = nextEpochSeed(options_.chainId, epoch, committee_.epochSeed());
    auto members = selectCommittee(change.validators, options_.chainId, epoch + 1, seed,
                                   options_.committeeMax);
    if (!members) {
        reject(members.error().code, "epoch change: " + members.error().message);
        return;
    }
    auto next =
        Committee::create(options_.chainId, epoch + 1, change.block.id, seed, std::move(*members));
    if (!next) {
        reject(next.error().code, "epoch change: " + next.error().message);
        return;
    }
    enterEpoch(std::move(*next), change.block);
}

void CoreImpl::enterEpoch(Committee next, const codec::Block& seed) {
    // Leader reputation goes on over the old epoch's chain up to the seed: a member that stopped
    // working before the change leads no round after it.
    std::erase_if(committedHeaders_, [&](const codec::BlockHeader& header) {
        return header.epoch != committee_.epoch() || header.height > seed.header.height;
    });
    previousCommittee_ = std::move(committee_);
    committee_ = std::move(next);
    selfIndex_ = committee_.indexOf(signer_->publicKey());
    // Rounds start again at 1: the safety data of the old epoch says nothing about the new one,
    // and every message of the old epoch is refused from now on (its epoch differs).
    safety_ = SafetyData{committee_.epoch(), 0, 0};
    emit(PersistSafety{safety_});
    tree_ = BlockTree(std::make_shared<const codec::Block>(seed),
                      genesisQc(committee_.epoch(), seed.id));
    pacemaker_ = Pacemaker(options_.t0Ms);
    pacemaker_.enter(1, false);
    highestTc_.reset();
    votes_ = VoteCollector{};
    timeouts_ = TimeoutCollector{};
    ownTimeout_.reset();
    held_.reset();
    firstProposal_.reset();
    request_.reset();
    proposedRound_ = 0;
    idleTimerRound_ = 0;
    idleElapsedRound_ = 0;
    waiting_.clear();
    pendingQcs_.clear();
    fetching_.clear();
    ready_.clear();
    // Execution records from the seed's own height on are what the first proposals name.
    execRecords_.erase(execRecords_.begin(), execRecords_.lower_bound(seed.header.execHeight));
    emit(ScheduleTimer{TimerKind::kRound, 1, pacemaker_.timeoutMs()});
    maybePropose();
}

}  // namespace gridledger::consensus
