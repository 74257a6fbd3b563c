#pragma once

// The discrete-event simulator: n real consensus::Core instances over the modelled network, in
// virtual time, with the simulator as every instance's driver (docs/protocol.md §8).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/batches.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/core.h>
#include <gridledger/consensus/runner.h>
#include <gridledger/ledger/chain_reader.h>

#include "sim/checker.h"
#include "sim/network.h"
#include "sim/scenario.h"
#include "sim/sim_crypto.h"
#include "sim/trace.h"
#include "sync_client.h"

namespace gridledger::sim {

/** What an instance's driver persisted: the consensus store and the ledger. Survives crashes. */
struct Store {
    consensus::SafetyData safety;
    std::map<Hash256, consensus::BlockPtr> blocks;
    std::map<Hash256, codec::QuorumCert> qcs;
    std::optional<codec::TimeoutCert> tc;
    std::vector<consensus::BlockPtr> ledger;  // ledger[h]: the committed block at height h
    std::map<Hash256, std::uint64_t> ledgerIndex;
    codec::QuorumCert rootQc;                            // certifies ledger.back()
    std::vector<consensus::ExecRecord> executed;         // executed[h]: the state after height h
    std::uint64_t epoch = 0;                             // the epoch the ledger is in
    std::map<std::uint64_t, codec::CommitProof> proofs;  // commit proofs, by height
    /** Certified batches: the data of every batch received, and the batches executed. */
    std::map<Hash256, std::shared_ptr<const consensus::Batch>> batches;
    std::set<Hash256> executedBatches;
};

/** How to take back one write of the consensus store that was not synced yet. */
struct Unsynced {
    enum class Kind : std::uint8_t { kBlock, kQc, kTc };
    Kind kind = Kind::kBlock;
    Hash256 id;  // the block's id, or the id of the block a QC certifies
    /** The value the write replaced (none: the key was absent). */
    std::optional<consensus::BlockPtr> block;
    std::optional<codec::QuorumCert> qc;
    std::optional<codec::TimeoutCert> tc;
};

class Simulator;

/** An instance's host for its runner: the simulator's queue, network, store and checker. */
class InstanceAdaptor final : public consensus::Adaptor {
  public:
    InstanceAdaptor(Simulator& sim, std::size_t i) : sim_(sim), i_(i) {}

    std::uint64_t nowMs() override;
    Status persistSafety(const consensus::SafetyData& data) override;
    Status persistBlock(const consensus::BlockPtr& block) override;
    Status persistQc(const codec::QuorumCert& qc) override;
    Status persistTc(const codec::TimeoutCert& tc) override;
    Status beforeSend() override;
    void broadcast(const consensus::Broadcast& message) override;
    void sendVote(const codec::Vote& vote, const PubKey& nextLeader) override;
    void forwardQc(const codec::QuorumCert& qc, const PubKey& nextLeader) override;
    void schedule(const consensus::ScheduleTimer& timer) override;
    void fetch(const consensus::Fetch& request) override;
    consensus::ProposalPayload collectTxs(const consensus::BuildProposal& request) override;
    std::uint64_t executedHeight() override;
    std::uint64_t ledgerEpoch() override;
    Result<consensus::Execution> execute(const codec::Block& block,
                                         const codec::QuorumCert& certifying) override;
    Status committed(const consensus::Commit& commit,
                     const consensus::CommitOutcome& outcome) override;
    void rejected(const Error& error) override;
    void failed(const Error& error) override;
    std::size_t onStep(const consensus::Event& event, const consensus::Effects& effects) override;

  private:
    Simulator& sim_;
    std::size_t i_;
};

/** An instance's ledger as block sync serves it: the store's ledger and commit proofs. */
class LedgerView final : public ledger::ChainReader {
  public:
    explicit LedgerView(const Store& store) : store_(store) {}

    Result<std::optional<std::uint64_t>> executedHeight() const override;
    Result<std::optional<codec::Block>> blockAt(std::uint64_t height) const override;
    Result<std::optional<codec::CommitProof>> commitProofAt(std::uint64_t height) const override;

  private:
    const Store& store_;
};

/** An instance's host for the node's block sync client: the simulator's clock, network and
 * store, and its execution. */
class InstanceSyncHost final : public node::SyncHost {
  public:
    InstanceSyncHost(Simulator& sim, std::size_t i) : sim_(sim), i_(i) {}

    std::chrono::milliseconds now() const override;
    std::uint64_t executedHeight() const override;
    Result<std::optional<codec::Block>> blockAt(std::uint64_t height) const override;
    std::shared_ptr<const consensus::Committee> committee() const override;
    bool send(const NodeId& peer, p2p::Message message) override;
    std::vector<NodeId> connectedPeers() const override;
    void expireAfter(std::uint64_t seq, std::chrono::milliseconds delay,
                     std::string reason) override;
    /** The simulator's transactions carry no signatures: nothing to check ahead. */
    void prepare(std::span<const codec::Block> /*blocks*/) override {}
    Result<bool> execute(const codec::Block& block, const codec::QuorumCert& certifying) override;
    Status storeCommitProofs(const std::vector<node::HeightProof>& proofs) override;
    void synced(std::size_t count) override;
    void refused(const NodeId& peer, codec::MessageKind kind, const Error& error) override;
    void failed(const Error& error) override;
    void caughtUp() override;

  private:
    Simulator& sim_;
    std::size_t i_;
};

/** What an instance sent: messages (each copy to each peer counts) and their bytes on the
 * wire (the P2P frame: length prefix and envelope). */
struct Traffic {
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
};

/** One running core and its driver's state. */
struct Instance {
    std::size_t key = 0;
    Role role = Role::kHonest;
    std::unique_ptr<InstanceAdaptor> adaptor;
    std::unique_ptr<consensus::Runner> runner;  // without a core while crashed
    Store store;
    std::unique_ptr<LedgerView> ledger;  // what it serves to peers' block sync
    std::unique_ptr<InstanceSyncHost> syncHost;
    std::unique_ptr<node::SyncClient> sync;
    /** Writes of blocks, QCs and TCs since the last synced write, oldest first: a crash loses a
     * random suffix of them (the unsynced tail of a write-ahead log). */
    std::vector<Unsynced> unsynced;
    bool up = true;
    std::uint64_t incarnation = 0;  // timers and loopback events of older incarnations are void
    bool crashArmed = false;        // crash after a random prefix of the next step's effects
    bool dying = false;             // the runner stopped in the middle of a step: crash now
    std::size_t mempool = 0;
    std::uint64_t txSerial = 0;
    std::map<Hash256, consensus::BlockPtr> forged;  // blocks a faulty driver made on its own
    std::vector<std::uint64_t> commitTimes;         // commitTimes[h]: first Commit of height h
    std::size_t restarts = 0;
    std::size_t rejections = 0;
    Traffic sent;  // counted with RunOptions::countTraffic
    /** Certified batches: this member's batches not certified yet (acknowledgements by member),
     * the members asked to sign one of its batches that have not answered yet (until that
     * batch's retry timer, which fires once more after the batch is certified), the members that
     * left a request unanswered until its retry and have not answered since, the certificates it
     * can propose (arrival order), a forger's made-up certificate, blocks held until the data of
     * their batches arrives (each with the digests still missing), and the batches it asks for
     * (the cert's signers, and the next one to ask). */
    std::uint64_t batchSerial = 0;
    std::map<Hash256, std::map<std::size_t, Signature>> acks;
    std::map<Hash256, std::set<std::size_t>> awaiting;
    std::set<PubKey> silent;
    std::vector<consensus::BatchCert> certs;
    std::optional<consensus::BatchCert> forgedCert;
    struct Held {
        std::size_t from = 0;
        std::variant<consensus::ProposalReceived, consensus::BlockFetched> event;
        std::set<Hash256> missing;
    };
    std::map<Hash256, Held> held;
    struct Fetching {
        std::vector<std::size_t> signers;
        std::size_t next = 0;
    };
    std::map<Hash256, Fetching> fetching;
    /** A sync liar's memory: every block and vote it saw, and when it last claimed a far
     * height to each instance. */
    std::map<Hash256, consensus::BlockPtr> seen;
    consensus::BlockPtr latestSeen;  // the highest block seen, the template of its claims
    std::map<Hash256, std::vector<codec::Vote>> votesFor;
    std::map<std::size_t, std::uint64_t>
        claimedAt; /** A TC forger's honest timeouts heard, by (epoch, round) and author; rounds it
                      forged. */
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::map<PubKey, codec::Timeout>> heard;
    std::set<std::pair<std::uint64_t, std::uint64_t>> forgedRounds;

    /** The running core, nullptr while crashed. */
    [[nodiscard]] const consensus::Core* core() const {
        return runner && runner->hasCore() ? &runner->core() : nullptr;
    }
};

/** How to run a scenario. */
struct RunOptions {
    /** Trace entries kept for the report. */
    std::size_t traceDepth = 64;
    /** Run to the end of the scenario even after a violation (to see what else breaks). */
    bool keepGoing = false;
    /** Fill the report of a passing run too. */
    bool report = false;
    /** Check this invariant alone (empty: every invariant). */
    std::string only;
    /** Count each instance's messages and bytes sent (Instance::sent): every message is encoded
     * as the node would frame it, which benchmarks pay for and the test sweeps need not. */
    bool countTraffic = false;
};

/** The outcome of a run. */
struct RunResult {
    /** The first violation, and the names of every invariant broken (with keepGoing). */
    std::optional<Violation> violation;
    std::vector<std::string> violated;
    std::uint64_t endMs = 0;
    std::uint64_t steps = 0;
    /** Lowest and highest committed height among safety-checked instances. */
    std::uint64_t minHeight = 0;
    std::uint64_t maxHeight = 0;
    std::uint64_t maxRound = 0;
    std::uint64_t timeoutCerts = 0;
    std::uint64_t restarts = 0;
    /** Blocks faulty drivers made on their own (equivocations, blocks below the lock), and
     * votes withheld. */
    std::uint64_t forgedBlocks = 0;
    std::uint64_t withheldVotes = 0;
    /** TCs forged by TC forgers, and messages of faulty drivers refused by the driver's checks. */
    std::uint64_t forgedTcs = 0;
    std::uint64_t refusedForgeries = 0;
    /** Epoch changes performed by instances, and the highest epoch reached. */
    std::uint64_t epochChanges = 0;
    std::uint64_t maxEpoch = 0;
    /** Epoch proofs served to lagging instances, syncs that brought verified blocks, and the
     * blocks they brought. */
    std::uint64_t epochProofs = 0;
    std::uint64_t syncs = 0;
    std::uint64_t syncedBlocks = 0;
    /** Sync answers that crossed the end of an epoch, sent by sync liars. */
    std::uint64_t crossingAnswers = 0;
    /** Longest time from GST to an honest instance's first new commit (liveness runs). */
    std::uint64_t recoveryMs = 0;
    /** The liveness bound set at GST, and the time from GST to the end of the run (when every
     * honest instance had committed its new heights). */
    std::uint64_t livenessBoundMs = 0;
    std::uint64_t livenessMs = 0;
    /** Certified batches: transaction signatures checked by the members asked to sign a batch,
     * transactions of batches executed (each batch once), batches an honest member refused to
     * sign (a bad signature), and requests for batch data sent. */
    std::uint64_t batchTxsVerified = 0;
    std::uint64_t batchTxsExecuted = 0;
    std::uint64_t refusedBatches = 0;
    std::uint64_t batchFetches = 0;
    NetworkStats network;
    /** For a failed run (or any run, with RunOptions::report): scenario, violation, replay
     * command and trace. */
    std::string report;
};

/**
 * Runs one scenario. Deterministic: every random choice comes from one std::mt19937_64 seeded
 * from the scenario's seed, time is virtual, and every container is ordered.
 */
class Simulator {
  public:
    /** Builds the committee and every instance's core at virtual time 0. */
    explicit Simulator(Scenario scenario, RunOptions options = {});

    /** Runs until the end of the scenario, the first violation, or (liveness runs) until every
     * honest instance committed its new heights after GST. */
    [[nodiscard]] RunResult run();
    /** Processes events until `done()` holds or the next event lies beyond `untilMs`; returns
     * done(). */
    bool runUntil(const std::function<bool()>& done, std::uint64_t untilMs);
    /** Crashes instance `i` now, between two steps; it stays down. */
    void crash(std::size_t i);

    [[nodiscard]] std::uint64_t now() const { return now_; }
    [[nodiscard]] const Scenario& scenario() const { return scenario_; }
    /** The genesis committee (epoch 0). */
    [[nodiscard]] const consensus::Committee& committee() const { return committee_; }
    /** The committee of every epoch reached so far. */
    [[nodiscard]] const Verifier::Committees& committees() const { return committees_; }
    [[nodiscard]] const Instance& instance(std::size_t i) const { return instances_.at(i); }
    [[nodiscard]] std::uint64_t height(std::size_t i) const {
        return instances_.at(i).store.ledger.size() - 1;
    }
    /** When the block's author first broadcast it, if it did. */
    [[nodiscard]] std::optional<std::uint64_t> proposedAt(const Hash256& id) const;
    /** Certified batches: for each batch an instance executed, when its author made it and
     * when that instance executed it (the commit of the block that first held it). */
    struct BatchExecution {
        std::uint64_t madeAt = 0;
        std::uint64_t executedAt = 0;
    };
    [[nodiscard]] const std::vector<BatchExecution>& batchExecutions() const {
        return batchExecutions_;
    }
    [[nodiscard]] const Checker& checker() const { return checker_; }
    [[nodiscard]] const Keyring& keys() const { return keys_; }
    /** The outcome so far. */
    [[nodiscard]] RunResult result() const;

  private:
    struct FetchRequest {
        Hash256 id;
    };
    struct FetchReply {
        consensus::BlockPtr block;
    };
    /** Certified batches (docs/protocol.md §14): a batch's data, sent by its author, which asks
     * the receiver to verify and sign it or not; a member's acknowledgement; a certificate; a
     * request for a batch's data and its answer. */
    struct BatchPut {
        std::shared_ptr<const consensus::Batch> batch;
        bool sign = false;
    };
    struct BatchAck {
        Hash256 digest;
        std::size_t member = 0;
        Signature signature;
    };
    struct BatchCertMsg {
        consensus::BatchCert cert;
    };
    struct BatchRequest {
        Hash256 digest;
    };
    struct BatchReply {
        std::shared_ptr<const consensus::Batch> batch;
    };
    /** Block sync and epoch proofs travel as the node's own P2P messages (docs/p2p.md §10). */
    using Payload =
        std::variant<consensus::BlockPtr, codec::Vote, codec::Timeout, codec::TimeoutCert,
                     codec::QuorumCert, FetchRequest, FetchReply, p2p::Message, BatchPut, BatchAck,
                     BatchCertMsg, BatchRequest, BatchReply>;
    struct NetMessage {
        std::size_t from = 0;
        Payload payload;
    };
    enum class Control : std::uint8_t { kCrash, kCrashMidStep, kRestart, kTxArrival };
    /** The timer of a block sync request. */
    struct SyncTimer {
        std::uint64_t seq = 0;
        std::string reason;
    };
    /** A batch's timer: its author asks the members that have not signed yet, or a member that
     * waits for the batch's data asks the next signer. */
    struct BatchTimer {
        Hash256 digest;
        bool fetch = false;
    };
    using EventBody = decltype(consensus::Event{}.body);
    /** A queued event: a network message, a local event of one incarnation, or a control. */
    struct Item {
        std::size_t to = 0;
        std::uint64_t incarnation = 0;
        std::variant<NetMessage, EventBody, Control, SyncTimer, BatchTimer> what;
    };

    // simulator.cpp: queue, steps, crashes.
    void scheduleInitial();
    void stepOnce();
    /** Sets the liveness bound from the leader schedule after the highest round at GST. */
    void markGst();
    void dispatch(const Item& item);
    /** The node's epoch rule for a message of `epoch` from `from`: false when the message is of a
     * later epoch than the instance's core (unverifiable: block sync asks `from` for the proof
     * that ended the instance's epoch). */
    bool epochAdmits(std::size_t i, std::size_t from, std::uint64_t epoch);
    /** The node's route for a checked block: to the core, or far above the committed root, to
     * block sync. */
    template <typename BlockEvent>
    void routeBlock(std::size_t i, std::size_t from, BlockEvent event);
    /** A block sync or epoch proof message, handled as the node handles it. */
    void peerMessage(std::size_t i, std::size_t from, const p2p::Message& message);
    /** After executing `block`, the reconfiguration block of its epoch: the switch of the
     * store (the runner gives the core its EpochChange). */
    void reconfigure(std::size_t i, const codec::Block& block);
    /** Every honest instance reached the last epoch and committed liveCommits blocks in it (true
     * without reconfigurations). */
    [[nodiscard]] bool reconfigDone() const;
    void receive(std::size_t i, const NetMessage& message);
    void control(std::size_t i, Control what);
    void step(std::size_t i, const EventBody& body);
    void crashNow(std::size_t i);
    /** A crash loses a random suffix of instance i's unsynced writes. */
    void loseUnsynced(std::size_t i);
    void restart(std::size_t i);
    void arriveTxs();
    [[nodiscard]] consensus::RecoveryData recoveryOf(std::size_t i) const;
    void boot(std::size_t i);
    void schedule(std::uint64_t atMs, Item item);
    void local(std::size_t i, EventBody body, std::uint64_t delayMs = 0);
    void send(std::size_t from, std::size_t to, const Payload& payload);
    /** The consensus round `payload` belongs to, which a round's partition applies to: a
     * proposal's or fetched block's, a vote's, a timeout's or a TC's. */
    [[nodiscard]] static std::optional<std::uint64_t> roundOf(const Payload& payload);
    /** The payload's size on the wire, framed as the node sends it. */
    [[nodiscard]] static std::uint64_t wireBytes(const Payload& payload);
    void note(std::size_t i, std::size_t peer, TraceKind kind, std::uint64_t round,
              std::uint64_t height, const Hash256* id = nullptr);

    // driver.cpp: the adaptor's side of each instance's runner.
    friend class InstanceAdaptor;
    friend class InstanceSyncHost;
    /** Sees a step before its effects: trace, checker, commit times, a crash in the middle. */
    std::size_t observeStep(std::size_t i, const consensus::Event& event,
                            const consensus::Effects& effects);
    void sendProposal(std::size_t i, const consensus::BlockPtr& block);
    void sendVote(std::size_t i, const codec::Vote& vote, const PubKey& nextLeader);
    void forwardQc(std::size_t i, const codec::QuorumCert& qc, const PubKey& nextLeader);
    void fetch(std::size_t i, const consensus::Fetch& request);
    [[nodiscard]] consensus::ProposalPayload collectTxs(std::size_t i);
    [[nodiscard]] Result<consensus::Execution> execute(std::size_t i, const codec::Block& block);
    void committed(std::size_t i, const consensus::Commit& commit,
                   const consensus::CommitOutcome& outcome);
    void broadcast(std::size_t i, const Payload& payload);
    void equivocate(std::size_t i, const consensus::BlockPtr& block);
    void voteForged(std::size_t i, const consensus::BlockPtr& block);
    void fork(std::size_t i, const consensus::BlockPtr& block);
    [[nodiscard]] consensus::BlockPtr belowLock(std::size_t i, const codec::Block& block);
    [[nodiscard]] consensus::BlockPtr findBlock(std::size_t i, const Hash256& id) const;
    /** A TC forger heard a verified timeout: forges a TC once it holds q - 1 of its round. */
    void forgeTc(std::size_t i, const codec::Timeout& timeout);
    void answerFetch(std::size_t i, std::size_t from, const Hash256& id);
    [[nodiscard]] consensus::BlockPtr signBlock(std::size_t i, const codec::BlockHeader& header,
                                                std::vector<Bytes> txs);
    [[nodiscard]] std::vector<std::size_t> instancesOf(const PubKey& key) const;

    // batches.cpp: certified batches (docs/protocol.md §14).
    /** Member i packs `count` arriving transactions into a batch and sends it. */
    void makeBatch(std::size_t i, std::size_t count);
    void onBatchPut(std::size_t i, std::size_t from, const BatchPut& put);
    void onBatchAck(std::size_t i, const BatchAck& ack);
    [[nodiscard]] Status onBatchCert(std::size_t i, const consensus::BatchCert& cert);
    void onBatchRequest(std::size_t i, std::size_t from, const Hash256& digest);
    void onBatchReply(std::size_t i, const std::shared_ptr<const consensus::Batch>& batch);
    void batchTimer(std::size_t i, const BatchTimer& timer);
    /** The certificates a block carries, each verified; the digests whose data i lacks. */
    [[nodiscard]] Result<std::set<Hash256>> missingBatches(std::size_t i,
                                                           const codec::Block& block);
    /** The instances holding the keys of `cert`'s signers (none when it does not verify). */
    [[nodiscard]] std::vector<std::size_t> signerInstances(const consensus::BatchCert& cert) const;
    /** Asks the signers of `cert`, one after the other, for its batch's data. */
    void fetchBatch(std::size_t i, const consensus::BatchCert& cert);
    /** The leader's payload: certificates of batches not executed yet. */
    [[nodiscard]] consensus::ProposalPayload collectCerts(std::size_t i);
    /** Executes the batches of a committed block: each once, its data at hand or fetched from
     * its signers, and every transaction valid. */
    void executeBatches(std::size_t i, const codec::Block& block);
    /** A checked block, handed on at once or held until the data of its batches arrives. */
    template <typename BlockEvent>
    [[nodiscard]] Status deliverBlock(std::size_t i, std::size_t from, BlockEvent event);
    /** Hands on the blocks held for batch `digest` that miss nothing more. */
    void releaseHeld(std::size_t i, const Hash256& digest);

    // sync.cpp: block sync through the node's client, and the sync liar.
    void syncTimer(std::size_t i, const SyncTimer& timer);
    /** Rebuilds instance i's core from its store after a sync brought verified blocks. */
    void rebootAfterSync(std::size_t i);
    /** A sync liar remembers a proposal it received from `from`, and claims a far height to
     * the other instances. */
    void liarSaw(std::size_t i, std::size_t from, const consensus::BlockPtr& block);
    /** A sync liar claims a far height and a later epoch to every instance but itself and
     * `from`, at most once per kClaimIntervalMs each: on every proposal it sees, and on every
     * timeout, so that it goes on claiming while the chain stands still. */
    void liarClaims(std::size_t i, std::size_t from);
    void liarSawVote(std::size_t i, const codec::Vote& vote);
    /** A sync liar's answer to a request, made from the true one `honest`: across the end of an
     * epoch when it can; nullopt when it stays silent. */
    [[nodiscard]] std::optional<codec::SyncResponse> liarAnswer(std::size_t i,
                                                                codec::SyncResponse honest);

    Scenario scenario_;
    RunOptions options_;
    Keyring keys_;
    consensus::ExecRecord genesisState_;
    codec::Block genesis_;
    consensus::Committee committee_;
    Verifier::Committees committees_;
    Verifier verifier_;
    Checker checker_;
    Network network_;
    Trace trace_;
    std::mt19937_64 rng_;
    std::vector<Instance> instances_;
    std::map<std::pair<std::uint64_t, std::uint64_t>, Item> queue_;  // (time, sequence)
    std::uint64_t sequence_ = 0;
    std::uint64_t now_ = 0;
    std::uint64_t steps_ = 0;
    std::uint64_t timeoutCerts_ = 0;
    std::uint64_t forgedBlocks_ = 0;
    std::uint64_t withheldVotes_ = 0;
    std::uint64_t forgedTcs_ = 0;
    std::uint64_t refusedForgeries_ = 0;
    bool gstMarked_ = false;
    std::uint64_t epochChanges_ = 0;
    std::uint64_t epochProofs_ = 0;
    std::uint64_t syncs_ = 0;
    std::uint64_t syncedBlocks_ = 0;
    std::uint64_t crossingAnswers_ = 0;
    std::map<Hash256, std::uint64_t> proposedAt_;
    std::uint64_t batchTxsVerified_ = 0;
    std::set<Hash256> executedBatches_;  // by any instance
    std::map<Hash256, std::uint64_t> batchMadeAt_;
    std::vector<BatchExecution> batchExecutions_;
    std::uint64_t batchTxsExecuted_ = 0;
    std::uint64_t refusedBatches_ = 0;
    std::uint64_t batchFetches_ = 0;
};

/** The committee of a scenario's epoch 0, as the simulator builds it: the validators (every key,
 * or validatorSets[0]) and, of more than options.committeeMax, the ones the committee rule picks
 * (consensus::selectCommittee over the genesis block's seed). */
[[nodiscard]] consensus::Committee genesisCommitteeOf(const Scenario& scenario);

/** The node id instance `i` has on the simulated P2P network (ids sort as the indices do). */
[[nodiscard]] NodeId nodeIdOf(std::size_t i);
/** The instance of a node id made by nodeIdOf. */
[[nodiscard]] std::size_t instanceOf(const NodeId& id);

/** The deterministic fake execution of the simulator: roots chained from the previous ones. */
[[nodiscard]] consensus::ExecRecord executeBlock(const consensus::ExecRecord& previous,
                                                 const codec::Block& block);

}  // namespace gridledger::sim
