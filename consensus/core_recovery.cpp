// Building a core: options, recovery data and the replay of persisted state.
#include <algorithm>
#include <string>
#include <utility>

#include "core_impl.h"

namespace gridledger::consensus {
namespace {

/** Longest round timer base accepted (one day): keeps every timer computation far from overflow. */
constexpr std::uint64_t kMaxT0Ms = 86'400'000;
/** Largest collection window accepted: keeps `round + maxRoundsAhead` far from overflow. */
constexpr std::uint64_t kMaxRoundsAhead = 1'000'000;
/** Longest leader reputation window accepted, in blocks. */
constexpr std::size_t kMaxReputationWindow = 10'000;

std::unexpected<Error> invalidArgument(const std::string& message) {
    return fail(ErrorCode::kInvalidArgument, message);
}

Status checkOptions(const Options& options) {
    if (options.chainId.empty()) {
        return invalidArgument("options: chain id is empty");
    }
    if (options.t0Ms == 0 || options.t0Ms > kMaxT0Ms) {
        return invalidArgument("options: t0_ms must be in 1..86400000");
    }
    if (options.emptyBlockIntervalMs >= options.t0Ms) {
        return invalidArgument("options: empty_block_interval_ms must be below t0_ms");
    }
    if (options.maxPendingBlocks == 0 || options.maxRoundsAhead == 0 ||
        options.maxRoundsAhead > kMaxRoundsAhead) {
        return invalidArgument("options: max_pending_blocks >= 1, max_rounds_ahead in 1..1000000");
    }
    if (options.committeeMax == 0) {
        return invalidArgument("options: committee_max must be at least 1");
    }
    if (options.maxBlockTxs == 0 || options.maxBlockBytes == 0) {
        return invalidArgument("options: max_block_txs and max_block_bytes must be at least 1");
    }
    if (options.leaderReputationWindow > kMaxReputationWindow) {
        return invalidArgument("options: leader_reputation_window must be in 0..10000");
    }
    return {};
}

Status checkRecovery(const RecoveryData& data) {
    const std::uint64_t epoch = data.committee.epoch();
    // Right after an epoch change the root is the previous epoch's reconfiguration block, the
    // committee's seed block, certified by the epoch's genesis QC (docs/protocol.md §12).
    const bool seedRoot = data.root.id == data.committee.seedBlockId() &&
                          data.root.header.epoch <= epoch &&
                          data.rootQc == genesisQc(epoch, data.root.id);
    if (data.safety.epoch > epoch || data.rootQc.epoch != epoch ||
        (!seedRoot && data.root.header.epoch != epoch)) {
        return invalidArgument("recovery: safety data, root and root qc must be of epoch " +
                               std::to_string(epoch));
    }
    if (data.root.header.round > kMaxRound || data.root.header.height > kMaxRound) {
        return invalidArgument("recovery: root round or height out of range");
    }
    if (!seedRoot &&
        (data.rootQc.blockId != data.root.id || data.rootQc.round != data.root.header.round)) {
        return invalidArgument("recovery: root qc does not certify the root block");
    }
    if (data.previousCommittee && data.previousCommittee->epoch() + 1 != epoch) {
        return invalidArgument("recovery: the previous committee must be of epoch " +
                               std::to_string(epoch) + " - 1");
    }
    if (data.executed.empty()) {
        return invalidArgument("recovery: at least the latest execution record is required");
    }
    const auto latest = std::max_element(
        data.executed.begin(), data.executed.end(),
        [](const ExecRecord& a, const ExecRecord& b) { return a.height < b.height; });
    if (latest->height > data.root.header.height) {
        return invalidArgument("recovery: executed height is above the committed root");
    }
    return {};
}

}  // namespace

RecoveryData RecoveryData::genesis(Committee committee, codec::Block genesisBlock,
                                   const ExecRecord& genesisState) {
    const std::uint64_t epoch = committee.epoch();
    codec::QuorumCert qc = genesisQc(epoch, genesisBlock.id);
    return RecoveryData{std::move(committee),
                        SafetyData{epoch, 0, 0},
                        std::move(genesisBlock),
                        std::move(qc),
                        {},
                        {},
                        std::nullopt,
                        {genesisState},
                        {},
                        std::nullopt};
}

Result<Core> Core::create(Options options, const RecoveryData& recovery,
                          std::unique_ptr<Signer> signer, std::unique_ptr<SafetyRules> rules) {
    GL_TRY(checkOptions(options));
    GL_TRY(checkRecovery(recovery));
    if (!signer) {
        return invalidArgument("a signer is required");
    }
    if (!rules) {
        rules = std::make_unique<TwoChainSafetyRules>();
    }
    auto impl = std::make_unique<CoreImpl>(std::move(options), recovery, std::move(signer),
                                           std::move(rules));
    GL_TRY(impl->recover(recovery));
    return Core(std::move(impl));
}

CoreImpl::CoreImpl(Options options, const RecoveryData& recovery, std::unique_ptr<Signer> signer,
                   std::unique_ptr<SafetyRules> rules)
    : options_(std::move(options)),
      committee_(recovery.committee),
      previousCommittee_(recovery.previousCommittee),
      signer_(std::move(signer)),
      rules_(std::move(rules)),
      selfIndex_(committee_.indexOf(signer_->publicKey())),
      safety_(recovery.safety.epoch == recovery.committee.epoch()
                  ? recovery.safety
                  : SafetyData{recovery.committee.epoch(), 0, 0}),
      tree_(std::make_shared<const codec::Block>(recovery.root), recovery.rootQc),
      pacemaker_(options_.t0Ms) {
    pacemaker_.enter(recovery.rootQc.round + 1, false);
}

Status CoreImpl::recover(const RecoveryData& recovery) {
    recovering_ = true;
    // The committed chain up to the root (oldest first), for leader reputation.
    for (const auto& header : recovery.recentCommitted) {
        if (header.height <= recovery.root.header.height) {
            rememberCommitted(header);
        }
    }
    for (const auto& record : recovery.executed) {
        execRecords_[record.height] = record;
        executedHeight_ = std::max(executedHeight_, record.height);
    }
    // Parents before children, so that every block finds its parent already in the tree.
    std::vector<const codec::Block*> blocks;
    blocks.reserve(recovery.blocks.size());
    for (const auto& block : recovery.blocks) {
        blocks.push_back(&block);
    }
    std::sort(blocks.begin(), blocks.end(), [](const codec::Block* a, const codec::Block* b) {
        return a->header.height != b->header.height ? a->header.height < b->header.height
                                                    : a->header.round < b->header.round;
    });
    for (const auto* block : blocks) {
        if (block->header.epoch != committee_.epoch()) {
            continue;  // left over from an earlier epoch
        }
        handleBlock(std::make_shared<const codec::Block>(*block), Origin::kRecovered);
        drainReady();
    }
    for (const auto& qc : recovery.qcs) {
        if (qc.epoch == committee_.epoch()) {
            processQc(qc, std::nullopt);
        }
    }
    if (recovery.highestTc && recovery.highestTc->epoch == committee_.epoch()) {
        processTc(*recovery.highestTc, false);
    }
    drainReady();
    // Every own proposal in the store left this validator (the store is synced before a message
    // leaves), also one the tree no longer takes (its height is committed by another block):
    // proposing again in its round would sign two blocks for one round.
    proposedRound_ = tree_.highestRoundBy(signer_->publicKey());
    for (const auto& block : recovery.blocks) {
        if (block.header.epoch == committee_.epoch() &&
            block.header.author == signer_->publicKey()) {
            proposedRound_ = std::max(proposedRound_, block.header.round);
        }
    }
    pacemaker_.resetBackoff();
    recovering_ = false;
    return {};
}

}  // namespace gridledger::consensus
