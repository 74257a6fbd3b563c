#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <gridledger/base/amount.h>
#include <gridledger/consensus/core.h>

#include "block_tree.h"
#include "collectors.h"
#include "pacemaker.h"
#include "rounds.h"

namespace gridledger::consensus {

/** Rounds and heights above this are refused, so that `+ 1` never overflows. */
inline constexpr std::uint64_t kMaxRound = std::uint64_t{1} << 62;

/**
 * The highest exec height a child of `parent` may name: the parent's own, or, when the parent
 * directly extends its QC (round == qc.round + 1), the parent's parent, which the child's QC
 * commits. Every height below this bound is committed by QCs on the child's own chain, so a voter
 * that holds the child's ancestry can always commit and execute up to it.
 */
[[nodiscard]] inline std::uint64_t execBound(const codec::BlockHeader& parent) {
    const bool direct = follows(parent.round, parent.qc.round) && parent.height > 0;
    return std::max(parent.execHeight, direct ? parent.height - 1 : 0);
}

/**
 * The state and logic behind Core. Split by concern over several files:
 * core.cpp (dispatch, certificates, rounds, commits), core_blocks.cpp (proposals, fetched blocks,
 * validation, voting), core_leader.cpp (proposing, timeouts), core_recovery.cpp (start-up).
 */
class CoreImpl {
  public:
    CoreImpl(Options options, const RecoveryData& recovery, std::unique_ptr<Signer> signer,
             std::unique_ptr<SafetyRules> rules);

    /** Replays the persisted state of `recovery`; effects other than Persist* are kept for Start.
     */
    [[nodiscard]] Status recover(const RecoveryData& recovery);

    [[nodiscard]] Effects step(const Event& event);

    [[nodiscard]] std::uint64_t currentRound() const { return pacemaker_.round(); }
    [[nodiscard]] const codec::QuorumCert& highestQc() const { return tree_.highestQc(); }
    [[nodiscard]] const std::optional<codec::TimeoutCert>& highestTc() const { return highestTc_; }
    [[nodiscard]] const SafetyData& safetyData() const { return safety_; }
    [[nodiscard]] const codec::Block& committedRoot() const { return tree_.root(); }
    [[nodiscard]] std::uint64_t certifiedHeight() const {
        const BlockPtr certified = tree_.find(tree_.highestQc().blockId);
        return std::max(certified ? certified->header.height : 0, tree_.root().header.height);
    }
    [[nodiscard]] std::uint64_t executedHeight() const { return executedHeight_; }
    [[nodiscard]] const Committee& committee() const { return committee_; }

  private:
    /** Where a block came from: it decides which checks apply and whether to vote. */
    enum class Origin { kProposal, kOwnProposal, kFetched, kRecovered };

    /** A block kept until its parent arrives. */
    struct Waiting {
        BlockPtr block;
        Origin origin = Origin::kFetched;
        std::uint64_t seq = 0;
    };

    // core.cpp
    void start();
    void onVote(const codec::Vote& vote);
    /** Sends a QC formed here from votes to the leader of the next round. */
    void forwardQc(const codec::QuorumCert& qc);
    /** Asks a voter for the current round's proposal once f + 1 members voted for it unseen. */
    void fetchVotedProposal(const codec::Vote& vote);
    void onTimeout(const codec::Timeout& timeout);
    void onTimer(const TimerFired& timer);
    void onExecuted(const Executed& executed);
    void onPayload();
    void processQc(const codec::QuorumCert& qc, const std::optional<PubKey>& hint);
    /** Takes a TC; `formedHere` (assembled from timeouts here) also broadcasts it. */
    void processTc(const codec::TimeoutCert& tc, bool formedHere);
    void maybeCommit(const codec::QuorumCert& qc);
    void afterCommit();
    void enterRound(std::uint64_t round, bool viaTc);
    void emit(Effect effect);
    void reject(ErrorCode code, std::string message);
    [[nodiscard]] bool isSelf(const PubKey& key) const { return key == signer_->publicKey(); }
    /** The round of the root's QC: the root's round, or 0 when it is the epoch's seed block. */
    [[nodiscard]] std::uint64_t rootRound() const;
    /** The round a QC on `block` names: rootRound() for the root, else the block's round. */
    [[nodiscard]] std::uint64_t certifiedRound(const codec::Block& block) const;
    /** execBound(parent), except for the epoch's seed block: its own height (docs §12). */
    [[nodiscard]] std::uint64_t execBoundOf(const codec::Block& parent) const;
    /** The leader of `round` for a block whose parent is `parent` (leader reputation, §1). */
    [[nodiscard]] const PubKey& leaderAfter(std::uint64_t round, const codec::Block& parent) const;
    /** Remembers committed headers of this epoch for leader reputation, the newest last. */
    void rememberCommitted(const codec::BlockHeader& header);

    // core_epoch.cpp
    void onEpochChange(const EpochChange& change);
    void enterEpoch(Committee next, const codec::Block& seed);

    // core_blocks.cpp
    void onProposalBuilt(const codec::Block& block);
    void handleBlock(const BlockPtr& block, Origin origin);
    void drainReady();
    [[nodiscard]] Status validateBlock(const codec::Block& block, const codec::Block& parent,
                                       Origin origin) const;
    [[nodiscard]] Status checkExecution(const codec::BlockHeader& header) const;
    /** The block limits of Options (txs, bytes), checked on live proposals. */
    [[nodiscard]] Status checkLimits(const codec::Block& block) const;
    void insertBlock(const BlockPtr& block, Origin origin);
    void wait(const BlockPtr& block, Origin origin);
    [[nodiscard]] bool isWaiting(const Hash256& id) const { return waiting_.contains(id); }
    void rememberQc(const codec::QuorumCert& qc);
    void requestFetch(const Hash256& id, const std::optional<PubKey>& hint);
    /** Votes on `block` when the rules allow; broadcasts it first when it is this leader's own. */
    void tryVote(const BlockPtr& block, bool ownProposal = false);
    /** The vote on `block` when the rules allow it, after its PersistSafety. */
    [[nodiscard]] std::optional<codec::Vote> decideVote(const BlockPtr& block);

    // core_leader.cpp
    void maybePropose();
    [[nodiscard]] bool hasReasonToPropose() const;
    [[nodiscard]] std::optional<ExecRecord> execForProposal(const codec::Block& parent) const;
    void localTimeout();
    void collectTimeout(const codec::Timeout& timeout, std::size_t index);
    void joinTimeoutsIfBehind();

    // Configuration.
    Options options_;
    Committee committee_;
    std::optional<Committee> previousCommittee_;  // for leader reputation across the change
    std::unique_ptr<Signer> signer_;
    std::unique_ptr<SafetyRules> rules_;
    std::optional<std::size_t> selfIndex_;

    // Protocol state.
    SafetyData safety_;
    BlockTree tree_;
    Pacemaker pacemaker_;
    std::optional<codec::TimeoutCert> highestTc_;
    VoteCollector votes_;
    TimeoutCollector timeouts_;
    std::optional<codec::Timeout> ownTimeout_;
    BlockPtr held_;  // a proposal of the current round waiting for execution to catch up
    std::optional<std::pair<std::uint64_t, Hash256>> firstProposal_;  // (round, id) accepted

    // The last committed headers of this epoch and the previous one (up to the root), for
    // leader reputation.
    std::deque<codec::BlockHeader> committedHeaders_;

    // Execution records, by height.
    std::map<std::uint64_t, ExecRecord> execRecords_;
    std::uint64_t executedHeight_ = 0;

    // Leader state.
    std::optional<BuildProposal> request_;
    std::uint64_t proposedRound_ = 0;
    std::uint64_t idleTimerRound_ = 0;
    std::uint64_t idleElapsedRound_ = 0;
    bool payloadAvailable_ = false;

    // Synchronisation: blocks waiting for a parent, QCs waiting for their block, open fetches.
    std::map<Hash256, Waiting> waiting_;
    std::map<Hash256, codec::QuorumCert> pendingQcs_;
    std::set<Hash256> fetching_;
    std::optional<std::pair<std::uint64_t, Hash256>> votedFetch_;  // (round, id) asked to vote
    std::deque<std::pair<BlockPtr, Origin>> ready_;
    std::uint64_t waitSeq_ = 0;

    // The step in progress.
    std::uint64_t nowMs_ = 0;
    bool started_ = false;
    bool recovering_ = false;
    Effects out_;
};

}  // namespace gridledger::consensus
