#pragma once

// The one reading of the core's effect contract (docs/protocol.md §8). A Runner owns a core and
// performs its effects in order: the generic part (the loopback of events the effects produce,
// the vote's loopback, a proposal's header and signature, which committed blocks to execute and
// where an epoch ends, the send barrier, holding signatures) lives here once, and each host (the
// node, the simulator, the unit harness) implements only the narrow Adaptor below.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/core.h>
#include <gridledger/consensus/effect.h>
#include <gridledger/consensus/event.h>
#include <gridledger/consensus/signer.h>

namespace gridledger::consensus {

/** The transactions of a proposal the host collected, and whether more wait for the next one. */
struct ProposalPayload {
    std::vector<Bytes> txs;
    bool more = false;
};

/** What executing one committed block did. */
struct Execution {
    /** The roots after the block (its height is the block's). */
    ExecRecord state;
    /** Set when the block changed the validator set: the new set, and the block ends its epoch. */
    std::optional<std::vector<PubKey>> nextValidators;
};

/** Which blocks of a Commit the runner executed. */
struct CommitOutcome {
    /** Index in Commit::blocks of the first block executed (blocks.size() when none was). */
    std::size_t first = 0;
    /** How many blocks were executed, from `first` on. */
    std::size_t executed = 0;
    /** Index of the block that ended the epoch, when one did (nothing above it was executed). */
    std::optional<std::size_t> endedEpochAt;
};

/**
 * The host's side of the effect contract: storage, network, clock, mempool and execution. The
 * runner calls these from its one thread, in the order of the core's effects; none of them may
 * call Runner::deliver (events go back through the host's own queue or timers).
 */
class Adaptor {
  public:
    virtual ~Adaptor() = default;

    /** The clock the core is given with each event (milliseconds since the Unix epoch). */
    [[nodiscard]] virtual std::uint64_t nowMs() = 0;

    /** Makes the safety data durable (synced) before it returns. */
    [[nodiscard]] virtual Status persistSafety(const SafetyData& data) = 0;
    /** Stores a block of the tree for recovery (it need not be synced before beforeSend()). */
    [[nodiscard]] virtual Status persistBlock(const BlockPtr& block) = 0;
    [[nodiscard]] virtual Status persistQc(const codec::QuorumCert& qc) = 0;
    [[nodiscard]] virtual Status persistTc(const codec::TimeoutCert& tc) = 0;
    /** Makes everything persisted so far durable; called before every message leaves. */
    [[nodiscard]] virtual Status beforeSend() { return {}; }

    /** Sends a proposal, timeout or TC to every other member. */
    virtual void broadcast(const Broadcast& message) = 0;
    /**
     * Sends this validator's vote to `nextLeader` and, by the host's network policy, copies to
     * the other members. The runner has already looped the vote back to its own core.
     */
    virtual void sendVote(const codec::Vote& vote, const PubKey& nextLeader) = 0;
    /** Sends `qc` to `nextLeader`, which delivers it (checked) as QcReceived. */
    virtual void forwardQc(const codec::QuorumCert& qc, const PubKey& nextLeader) = 0;
    /** Delivers TimerFired{kind, round} to Runner::deliver after the delay. */
    virtual void schedule(const ScheduleTimer& timer) = 0;
    /** Obtains the block and delivers it (checked) as BlockFetched. */
    virtual void fetch(const Fetch& request) = 0;

    /** The transactions for the proposal `request` asks for (none of its ancestors' txs). */
    [[nodiscard]] virtual ProposalPayload collectTxs(const BuildProposal& request) = 0;

    /** The highest executed height of the ledger. */
    [[nodiscard]] virtual std::uint64_t executedHeight() = 0;
    /**
     * The epoch of the ledger's next block: the executed head's, or the next one once the head
     * ended its epoch. Block sync can end an epoch before the core hears of it; a block the core
     * then commits in the old epoch lies above that epoch's end and is never executed.
     */
    [[nodiscard]] virtual std::uint64_t ledgerEpoch() = 0;
    /**
     * Appends the committed `block` (above executedHeight(), the child of the last one) to the
     * ledger and executes it; `certifying` is the QC that certifies it. A failure stops the
     * runner (failed() is called with it).
     */
    [[nodiscard]] virtual Result<Execution> execute(const codec::Block& block,
                                                    const codec::QuorumCert& certifying) = 0;
    /**
     * After the runner executed what a Commit added: commit proofs, pruning of the consensus
     * store. A failure stops the runner.
     */
    [[nodiscard]] virtual Status committed(const Commit& commit, const CommitOutcome& outcome) {
        (void)commit;
        (void)outcome;
        return {};
    }

    /** The core refused an input (peers can cause it: log at debug level at most). */
    virtual void rejected(const Error& error) { (void)error; }
    /** A persist, an execution or committed() failed: the runner performs nothing more. */
    virtual void failed(const Error& error) = 0;
    /**
     * Sees each step of the core before its effects are performed, and answers how many of them
     * to perform. Fewer than all is a crash in the middle of the step: the runner performs that
     * prefix, then stops for good.
     */
    [[nodiscard]] virtual std::size_t onStep(const Event& event, const Effects& effects) {
        (void)event;
        return effects.size();
    }
};

/**
 * Runs one core for a host: Runner::deliver steps the core with an event and performs its
 * effects in order, then every event those effects loop back (ProposalBuilt, this validator's own
 * VoteReceived, Executed, EpochChange, PayloadAvailable), until none is left.
 */
class Runner {
  public:
    /**
     * `proposer` signs this validator's proposals (the key of the core's signer); `chainId` is the
     * core's. The runner starts without a core: see reset().
     */
    Runner(Adaptor& adaptor, std::string chainId, std::unique_ptr<Signer> proposer);

    /**
     * Installs a (new) core, as after a restart, and runs again after stop(): events not yet
     * delivered are dropped.
     */
    void reset(Core core);
    /** Drops the core and everything pending (a crash); deliver() does nothing until reset(). */
    void clear();
    /**
     * Delivers `body` to the core, then every event the effects loop back, in order. Does nothing
     * without a core or once stopped. Called while the runner is delivering, it queues `body`.
     */
    void deliver(decltype(Event::body) body);
    /** Stops for good: nothing more is delivered or performed (a halt, a failure). */
    void stop();

    /**
     * While held, nothing this validator signs is performed: no PersistSafety, vote, broadcast
     * or proposal (docs/protocol.md §9, "A validator with no safety data").
     */
    void holdSignatures(bool held) { held_ = held; }

    [[nodiscard]] bool hasCore() const { return core_.has_value(); }
    /** Requires hasCore(). */
    [[nodiscard]] const Core& core() const { return *core_; }
    [[nodiscard]] bool stopped() const { return stopped_; }

  private:
    void perform(const Effect& effect);
    void commit(const Commit& commit);
    void buildProposal(const BuildProposal& request);
    /** Stops and tells the host when `status` failed; returns whether it succeeded. */
    bool check(const Status& status);
    void failWith(const Error& error);

    Adaptor& adaptor_;
    std::string chainId_;
    std::unique_ptr<Signer> proposer_;
    std::optional<Core> core_;
    std::deque<decltype(Event::body)> loopback_;
    bool delivering_ = false;
    bool stopped_ = false;
    bool held_ = false;
    /** An executed block ended the epoch and EpochChange is not delivered yet: execute nothing. */
    bool epochEnding_ = false;
};

}  // namespace gridledger::consensus
