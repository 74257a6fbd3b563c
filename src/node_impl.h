// The node's private parts, shared by its source files: node.cpp (opening, delivery to the
// consensus runner, execution), node_consensus.cpp (the runner's adaptor) and node_peers.cpp (P2P
// messages and block sync).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <gridledger/base/overloaded.h>
#include <gridledger/consensus/core.h>
#include <gridledger/consensus/double_sign_guard.h>
#include <gridledger/consensus/runner.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/contracts/params.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/mempool.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/p2p/network.h>
#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/openrpc.h>
#include <gridledger/rpc/server.h>
#include <gridledger/rpc/subscriptions.h>
#include <gridledger/storage/kv_store.h>

#include "admission_journal.h"
#include "batch_exchange.h"
#include "block_sync.h"
#include "consensus_store.h"
#include "epochs.h"
#include "exec_check.h"
#include "metrics.h"
#include "node.h"
#include "peer_messages.h"
#include "serving_budget.h"
#include "sync_client.h"
#include "tx_gossip.h"

namespace gridledger::node {
namespace asio = boost::asio;

/** How often admitted transactions leave for the peers, batched. */
inline constexpr auto kGossipInterval = std::chrono::milliseconds(5);
/** How often the transport's counters reach the metrics. */
inline constexpr auto kNetworkMetricsInterval = std::chrono::seconds(1);
/** How long block sync waits for a peer's answer before it asks another peer. */
inline constexpr auto kSyncRequestTimeout = std::chrono::seconds(10);
/** Peers block sync tries in a row without progress before it ends. */
inline constexpr std::size_t kMaxSyncFailures = 3;
/** A consensus message of a later epoch makes this node ask for an epoch proof at most this often.
 */
inline constexpr auto kEpochProofInterval = std::chrono::seconds(1);
/** How often a validator that holds its signatures asks its peers where the chain is. */
inline constexpr auto kHoldProbeInterval = std::chrono::milliseconds(500);
/** Outstanding block fetches remembered; beyond it the oldest requests are forgotten. */
inline constexpr std::size_t kMaxOutstandingFetches = 1024;
/** Ban points for a peer message that fails decoding or a signature check. */
inline constexpr std::uint32_t kInvalidMessagePoints = 25;
/** Ban points for a gossiped transaction with a bad signature or encoding. */
inline constexpr std::uint32_t kInvalidTxPoints = 10;
/** Ban points for a sync response that does not verify. */
inline constexpr std::uint32_t kInvalidSyncPoints = 50;
/**
 * Threads that decode and check peer messages other than consensus ones: serve peers, admit
 * gossiped txs, check sync answers and fetched blocks.
 */
inline constexpr std::size_t kPeerWorkThreads = 2;
/**
 * Threads that check consensus messages (proposals, votes, timeouts, TCs): their own queue, so
 * that gossip and serving, however many, never wait in front of them.
 */
inline constexpr std::size_t kConsensusWorkThreads = 2;
/**
 * Bytes of peer messages queued for the peer-work threads; past them further ones are dropped
 * (counted in gridledger_p2p_work_dropped_total) until the queue drains. Consensus messages
 * have their own queue.
 */
inline constexpr std::size_t kMaxQueuedPeerWorkBytes = std::size_t{64} << 20U;
/** Ban points for a request refused because its sender used up its serving budget. */
inline constexpr std::uint32_t kServingFloodPoints = 5;
/** Consensus messages of a later epoch held per peer until this node enters it. */
inline constexpr std::size_t kHeldMessagesPerPeer = 32;
/** Bytes held per peer beyond max_block_bytes (votes, timeouts, a proposal's header). */
inline constexpr std::size_t kHeldMessageMargin = std::size_t{1} << 20U;
/** Peers' worth of held messages in all. */
inline constexpr std::size_t kHeldPeers = 4;

/** Milliseconds since the Unix epoch, the clock the core is given with each event. */
std::uint64_t nowMs();

class NodeImpl;

/**
 * The node's side of the consensus runner (node_consensus.cpp): the consensus store and its send
 * barrier, the P2P network, the mempool, and execution of committed blocks into the ledger.
 */
class NodeAdaptor final : public consensus::Adaptor {
  public:
    explicit NodeAdaptor(NodeImpl& node) : node_(node) {}

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

  private:
    NodeImpl& node_;
};

/** The node's side of block sync (node_peers.cpp): its ledger, peers and execution. */
class NodeSyncHost final : public SyncHost {
  public:
    explicit NodeSyncHost(NodeImpl& node) : node_(node) {}

    std::chrono::milliseconds now() const override;
    std::uint64_t executedHeight() const override;
    Result<std::optional<codec::Block>> blockAt(std::uint64_t height) const override;
    std::shared_ptr<const consensus::Committee> committee() const override;
    bool send(const NodeId& peer, p2p::Message message) override;
    std::vector<NodeId> connectedPeers() const override;
    void expireAfter(std::uint64_t seq, std::chrono::milliseconds delay,
                     std::string reason) override;
    void prepare(std::span<const codec::Block> blocks) override;
    Result<bool> execute(const codec::Block& block, const codec::QuorumCert& certifying) override;
    Status storeCommitProofs(const std::vector<HeightProof>& proofs) override;
    void synced(std::size_t count) override;
    void refused(const NodeId& peer, codec::MessageKind kind, const Error& error) override;
    void failed(const Error& error) override;
    void caughtUp() override;

  private:
    NodeImpl& node_;
    /** The signature checks prepare() started, one per block: (height, checks), lowest first. */
    std::deque<std::pair<std::uint64_t, ledger::Mempool::ProposedChecks>> checks_;
};

class NodeImpl {
  public:
    NodeImpl(const crypto::SecretKey& validatorKey, const crypto::NodeKey& nodeKey)
        : validatorKey_(validatorKey), nodeKey_(nodeKey), proposer_(validatorKey) {}

    Status open(const Home& home);
    /** Runs the consensus loop until a signal or a fatal storage error. */
    Status run();

  private:
    friend class NodeAdaptor;
    friend class NodeSyncHost;
    using EventBody = decltype(consensus::Event::body);

    Status openLedger(const Home& home);
    Status openMempool();
    /** Opens the admission journal and admits what it holds into the mempool again. */
    Status openJournal(const Home& home);
    /** Journals a transaction the mempool just admitted. */
    void journalAdmitted(const Hash256& hash, ByteView raw);
    Status openConsensus();
    /** Builds the core from what the ledger and the consensus store hold now. */
    Status buildCore();
    Status openNetwork();
    Status openRpc(const Home& home);
    Result<consensus::RecoveryData> recoveryData(const consensus::Committee& committee) const;
    /** The start-up guard over the certificates of the last double_sign_check_height blocks. */
    Status checkDoubleSign(const consensus::RecoveryData& recovery) const;

    /** The runner delivers an event to the core, then every event its effects loop back. */
    void deliver(EventBody body);
    /**
     * Executes a committed block certified by `certifying`. Fails with kDiverged when the roots
     * the block certifies are not this node's own.
     */
    Result<ledger::ExecRoots> executeCommitted(const codec::Block& block,
                                               const codec::QuorumCert& certifying);
    [[nodiscard]] Status storeCommitProofs(const std::vector<HeightProof>& proofs);
    /**
     * After executing `block`: if it changed the validator set, switches to the next epoch's
     * committee (docs/protocol.md §12) and returns the EpochChange to give the core; nullopt
     * when the set did not change. Fails when the state cannot be read.
     */
    Result<std::optional<consensus::EpochChange>> endEpochIfChanged(const codec::Block& block);
    /** The committee of the epoch the ledger is in (read by the peer-message workers too). */
    [[nodiscard]] std::shared_ptr<const consensus::Committee> committee() const {
        return committee_.load();
    }
    void signalPayload();
    void fatal(const Error& error);
    /** halt() for a divergence (kDiverged), fatal() for any other error. */
    void stopFor(const Error& error);
    /**
     * Stops consensus and block sync for good, with a critical log, but keeps serving reads,
     * metrics and /livez; /readyz fails from now on (docs/operations.md).
     */
    void halt(const Error& error);
    /** Why /readyz fails now, nullopt when this node is ready. Thread-safe. */
    [[nodiscard]] std::optional<std::string> notReady() const;

    // P2P: what peers send (docs/p2p.md, "Node messages").
    /** On the network thread: hands the message to the peer work pool. */
    void onPeerMessage(const NodeId& from, p2p::Message message);
    /** On a peer work pool: decodes, checks and routes one message. */
    void handlePeerMessage(const NodeId& from, const p2p::Message& message);
    /**
     * On the peer work pool: answers a sync, block or epoch proof request within its sender's
     * serving budget, later when the budget is used up, or refuses it (with ban points).
     */
    void serveWithinBudget(const NodeId& from, const p2p::Message& message);
    void admitGossipedTxs(const NodeId& from, ByteView payload);
    /** Builds the batch exchange (docs/protocol.md §14) over this node's mempool and network. */
    void openBatches();
    /** Gives the batch exchange the committee the ledger is in and its members' transport ids. */
    void updateBatchRoster();
    /**
     * Admits the transactions of member `from`'s batch (after Mempool::acceptCertified when
     * `certified`); admitted ones are gossiped on to the peers that are not members.
     */
    void admitBatchTxs(const NodeId& from, std::vector<Bytes> txs, bool certified);
    /** Lets the mempool propose these transactions, held back for their batch's certificate. */
    void readyToPropose(std::span<const Bytes> txs);
    void serveBlock(const NodeId& from, ByteView payload);
    void serveSyncRequest(const NodeId& from, ByteView payload);
    /** Answers with the proof that ended the asked epoch, when it has ended here. */
    void serveEpochProofRequest(const NodeId& from, ByteView payload);
    /** State sync (docs/snapshots.md): this ledger's latest manifest, and one proven range. */
    void serveStateManifest(const NodeId& from);
    void serveStateChunk(const NodeId& from, ByteView payload);
    /** Sends a served answer and charges it to the asking peer's serving budget. */
    void sendServed(const NodeId& to, const p2p::Message& answer, std::size_t blocks);
    void invalidMessage(const NodeId& from, codec::MessageKind kind, const Error& error,
                        std::uint32_t points);
    /** On the consensus thread: a checked consensus message reaches the core. */
    void onChecked(const NodeId& from, CheckedInput input);
    void scheduleGossip();
    void flushGossip();
    void scheduleNetworkMetrics();

    // Block sync (docs/p2p.md, "Block sync"), on the consensus thread. Consensus keeps running
    // meanwhile: a claim only makes this node ask, and only verified blocks change its ledger.
    /** A checked proposal or fetched block reaches the core, or, far above the committed root,
     * is offered to block sync. */
    template <typename BlockEvent>
    void routeBlock(const NodeId& from, BlockEvent event);
    void onSyncResponse(const NodeId& from, codec::SyncResponse response);

    // Holding signatures (docs/protocol.md §9, "A validator with no safety data").
    /** Why this validator signs nothing for now. */
    enum class Hold : std::uint8_t { kNone, kNoSafetyData, kUnrecordedVote };
    /** Stops signing (PersistSafety, votes, timeouts, proposals) for `why`. */
    void holdSignatures(Hold why, const std::string& detail);
    void scheduleHoldProbe();
    /** Counts `peer`'s word that no block above this node's ledger is committed. */
    void noteAtHead(const NodeId& peer, std::uint64_t peerHead);
    /**
     * Resumes signing once f + 1 peers report no committed block above this node's ledger and
     * no recent certificate holds a vote of this key: the safety data then starts above every
     * round this node has seen, and the core is rebuilt.
     */
    void maybeResumeSigning();

    NodeConfig config_;
    contracts::Genesis genesis_;
    /** signingDomainOf(genesis_): what every signature of the chain is made in. */
    std::string signingDomain_;
    crypto::SecretKey validatorKey_;
    crypto::NodeKey nodeKey_;
    consensus::KeySigner proposer_;
    std::shared_ptr<spdlog::logger> log_;

    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<ledger::StateTree> tree_;
    std::unique_ptr<ledger::BlockStore> blocks_;
    std::unique_ptr<contracts::Executor> executor_;
    std::unique_ptr<ConsensusStore> consensusStore_;
    std::unique_ptr<SendBarrier> barrier_;
    /** The fees of the executed height the mempool last asked at (admission's fee floor). */
    std::mutex feesMutex_;
    std::optional<std::pair<std::uint64_t, contracts::FeeParams>> fees_;
    std::unique_ptr<ledger::Mempool> mempool_;
    /** What tx_submit acknowledged and no block carried yet; null with mempool.journal off. */
    std::unique_ptr<AdmissionJournal> journal_;
    std::atomic<std::shared_ptr<const consensus::Committee>> committee_;
    /** When a message of a later epoch last made this node ask for an epoch proof (io_ only). */
    NodeAdaptor adaptor_{*this};
    /** Runs the core (built by buildCore()). */
    std::unique_ptr<consensus::Runner> runner_;
    /** The transport id of each validator's consensus key (genesis, then each epoch's set). */
    std::map<PubKey, NodeId> nodeIds_;
    /** The transport ids of the validator set this node's ledger is in. */
    std::vector<NodeId> validatorNodes_;
    /** The P2P allow-list: validatorNodes_ and the configured p2p.allowed_nodes. */
    [[nodiscard]] std::set<NodeId> allowedNodes() const;
    std::unique_ptr<p2p::Network> network_;
    std::unique_ptr<rpc::Server> rpc_;
    /** The admin listener (node-internal methods, loopback only); null when disabled. */
    std::unique_ptr<rpc::Server> adminRpc_;
    /** The bearer token the public listener requires (rpc.auth_token_file); empty: none. */
    std::string rpcToken_;
    std::unique_ptr<Metrics> metrics_;

    asio::io_context io_;
    asio::thread_pool peerWork_{kPeerWorkThreads};
    asio::thread_pool consensusWork_{kConsensusWorkThreads};
    /** Payload bytes posted to peerWork_ and not yet taken up. */
    std::atomic<std::size_t> queuedPeerWorkBytes_{0};
    ServingBudget serving_{ServingBudget::Limits{}};
    asio::strand<asio::thread_pool::executor_type> gossipStrand_{peerWork_.get_executor()};
    asio::steady_timer gossipTimer_{gossipStrand_};
    asio::steady_timer networkMetricsTimer_{io_};
    TxOutbox outbox_;
    /** Certified batches between the committee's members (built by open()). */
    std::unique_ptr<BatchExchange> batches_;
    /** Blocks asked for with Fetch and not received yet. */
    std::set<Hash256> fetching_;
    /** Consensus messages of a later epoch, until this node enters it (built by open()). */
    std::unique_ptr<HeldMessages> laterEpoch_;
    NodeSyncHost syncHost_{*this};
    /** Block sync (built by open()). */
    std::unique_ptr<SyncClient> sync_;
    /** The timer of the sync's outstanding request. */
    asio::steady_timer syncTimer_{io_};
    /** A block persisted by the core and not yet committed: its txs are in flight. */
    struct InFlight {
        std::uint64_t height = 0;
        Hash256 parentId;
        Bytes headerBytes;
        std::vector<Hash256> txHashes;
    };
    /** Remembers `block` as in flight, hashing its txs once. */
    void track(const codec::Block& block);
    std::map<Hash256, InFlight> inFlight_;
    std::atomic<bool> payloadSignalled_{false};
    std::atomic<std::uint64_t> epoch_{0};
    std::atomic<std::uint64_t> round_{0};
    std::atomic<std::uint64_t> highestQcRound_{0};
    bool failed_ = false;
    Error failure_;
    /** Set once by halt(); then haltReason_ holds why (written before the flag). */
    std::atomic<bool> halted_{false};
    std::string haltReason_;
    /** The highest block height seen in a checked proposal (a claim: for /readyz only). */
    std::atomic<std::uint64_t> seenHeight_{0};
    /** The store's executed height, moved as soon as a block's write is done (release). */
    std::atomic<std::uint64_t> executedHeight_{0};
    /** The ledger's first height: 0, or the height of the snapshot it started from. */
    std::uint64_t firstHeight_ = 0;
    std::atomic<bool> member_{false};
    /** Written on the consensus thread; read by /readyz and the metrics too. */
    std::atomic<Hold> hold_{Hold::kNone};
    std::string holdDetail_;
    std::set<NodeId> atHeadPeers_;
    asio::steady_timer holdProbeTimer_{io_};
};

}  // namespace gridledger::node
