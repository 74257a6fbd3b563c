#include "node.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <set>

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
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
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

#include "block_sync.h"
#include "consensus_store.h"
#include "epochs.h"
#include "metrics.h"
#include "peer_messages.h"
#include "tx_gossip.h"

namespace gridledger::node {
namespace asio = boost::asio;

namespace {

std::uint64_t nowMs() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

std::shared_ptr<spdlog::logger> makeLogger(const std::string& name, const std::string& level) {
    auto logger = spdlog::get(name);
    if (!logger) {
        logger = spdlog::stderr_color_mt(name);
    }
    logger->set_level(spdlog::level::from_str(level));
    return logger;
}

/** How often admitted transactions leave for the peers, batched. */
constexpr auto kGossipInterval = std::chrono::milliseconds(5);
/** How often the transport's counters reach the metrics. */
constexpr auto kNetworkMetricsInterval = std::chrono::seconds(1);
/** How long block sync waits for a peer's answer before it asks another peer. */
constexpr auto kSyncRequestTimeout = std::chrono::seconds(10);
/** Peers block sync tries in a row without progress before consensus resumes without it. */
constexpr std::size_t kMaxSyncFailures = 3;
/** A consensus message of a later epoch starts a block sync at most this often. */
constexpr auto kEpochSyncInterval = std::chrono::seconds(5);
/** Outstanding block fetches remembered; beyond it the oldest requests are forgotten. */
constexpr std::size_t kMaxOutstandingFetches = 1024;
/** Ban points for a peer message that fails decoding or a signature check. */
constexpr std::uint32_t kInvalidMessagePoints = 25;
/** Ban points for a gossiped transaction with a bad signature or encoding. */
constexpr std::uint32_t kInvalidTxPoints = 10;
/** Ban points for a sync response that does not verify. */
constexpr std::uint32_t kInvalidSyncPoints = 50;
/** Threads that decode and check peer messages, serve peers and admit gossiped txs. */
constexpr std::size_t kPeerWorkThreads = 2;

}  // namespace

class NodeImpl {
  public:
    NodeImpl(const crypto::SecretKey& validatorKey, const crypto::NodeKey& nodeKey)
        : validatorKey_(validatorKey), nodeKey_(nodeKey), proposer_(validatorKey) {}

    Status open(const Home& home);
    /** Runs the consensus loop until a signal or a fatal storage error. */
    Status run();

  private:
    using EventBody = decltype(consensus::Event::body);

    Status openLedger(const Home& home);
    Status openMempool();
    Status openConsensus();
    /** Builds the core from what the ledger and the consensus store hold now. */
    Status buildCore();
    Status openNetwork();
    Status openRpc();
    Result<consensus::RecoveryData> recoveryData(const consensus::Committee& committee) const;
    Status checkDoubleSign(const consensus::RecoveryData& recovery) const;

    /** Delivers an event to the core, then every event its effects loop back, in order. */
    void deliver(EventBody body);
    void perform(const consensus::Effect& effect);
    void persist(Status status);
    void commit(const consensus::Commit& commit);
    /** Executes a committed block certified by `certifying`; false after a fatal error. */
    std::optional<ledger::ExecRoots> executeCommitted(const codec::Block& block,
                                                      const codec::QuorumCert& certifying);
    void storeCommitProofs(const std::vector<HeightProof>& proofs);
    /**
     * After executing `block`: if it changed the validator set, switches to the next epoch's
     * committee (docs/protocol.md §12) and returns the EpochChange to give the core. False
     * after a fatal error.
     */
    std::optional<std::optional<consensus::EpochChange>> endEpochIfChanged(
        const codec::Block& block);
    /** The committee of the epoch the ledger is in (read by the peer-message workers too). */
    [[nodiscard]] std::shared_ptr<const consensus::Committee> committee() const {
        return committee_.load();
    }
    void buildProposal(const consensus::BuildProposal& request);
    void schedule(const consensus::ScheduleTimer& timer);
    void signalPayload();
    void fatal(const Error& error);

    // P2P: sending what the core decided, and what peers send (docs/p2p.md, "Node messages").
    void sendVote(const consensus::SendVote& send);
    void fetch(const consensus::Fetch& request);
    /** On the network thread: hands the message to the peer work pool. */
    void onPeerMessage(const NodeId& from, p2p::Message message);
    /** On the peer work pool: decodes, checks and routes one message. */
    void handlePeerMessage(const NodeId& from, const p2p::Message& message);
    void admitGossipedTxs(const NodeId& from, ByteView payload);
    void serveBlock(const NodeId& from, ByteView payload);
    void serveSyncRequest(const NodeId& from, ByteView payload);
    void invalidMessage(const NodeId& from, codec::MessageKind kind, const Error& error,
                        std::uint32_t points);
    /** On the consensus thread: a checked consensus message reaches the core. */
    void onChecked(const NodeId& from, CheckedInput input);
    void scheduleGossip();
    void flushGossip();
    void scheduleNetworkMetrics();

    // Block sync (docs/p2p.md, "Block sync"), on the consensus thread.
    /** Starts block sync from `peer` when `height` is too far above the committed root. */
    bool syncIfBehind(const NodeId& peer, std::uint64_t height);
    void requestSync();
    void onSyncResponse(const NodeId& from, codec::SyncResponse response);
    void syncFailed(const std::string& reason);
    void finishSync();

    NodeConfig config_;
    contracts::Genesis genesis_;
    crypto::SecretKey validatorKey_;
    crypto::NodeKey nodeKey_;
    consensus::KeySigner proposer_;
    std::shared_ptr<spdlog::logger> log_;

    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<ledger::StateTree> tree_;
    std::unique_ptr<ledger::BlockStore> blocks_;
    std::unique_ptr<contracts::Executor> executor_;
    std::unique_ptr<ConsensusStore> consensusStore_;
    std::unique_ptr<ledger::Mempool> mempool_;
    std::atomic<std::shared_ptr<const consensus::Committee>> committee_;
    /** When a message of a later epoch last started a sync (io_ strand only). */
    std::chrono::steady_clock::time_point lastEpochSync_{};
    std::optional<consensus::Core> core_;
    /** The transport id of each validator's consensus key (genesis, then each epoch's set). */
    std::map<PubKey, NodeId> nodeIds_;
    std::unique_ptr<p2p::Network> network_;
    std::unique_ptr<rpc::Server> rpc_;
    std::unique_ptr<Metrics> metrics_;

    asio::io_context io_;
    asio::thread_pool peerWork_{kPeerWorkThreads};
    asio::strand<asio::thread_pool::executor_type> gossipStrand_{peerWork_.get_executor()};
    asio::steady_timer gossipTimer_{gossipStrand_};
    asio::steady_timer networkMetricsTimer_{io_};
    TxOutbox outbox_;
    std::deque<EventBody> loopback_;
    /** Blocks asked for with Fetch and not received yet. */
    std::set<Hash256> fetching_;
    struct SyncState {
        NodeId peer;
        std::uint64_t startHeight = 0;
        std::chrono::steady_clock::time_point started;
        std::uint64_t requestSeq = 0;
        std::size_t failures = 0;
    };
    std::optional<SyncState> sync_;
    asio::steady_timer syncTimer_{io_};
    std::atomic<bool> syncing_{false};
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
};

Status NodeImpl::open(const Home& home) {
    GL_ASSIGN_OR_RETURN(config, home.loadConfig());
    config_ = config;
    log_ = makeLogger("node", config_.logLevel);
    GL_ASSIGN_OR_RETURN(genesisText, readFile(home.genesisFile()));
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(genesisText));
    genesis_ = std::move(genesis);
    GL_TRY(openLedger(home));
    GL_TRY(openMempool());
    GL_TRY(openConsensus());
    GL_ASSIGN_OR_RETURN(metrics, Metrics::start(config_.metricsAddress, config_.metricsPort));
    metrics_ = std::move(metrics);
    log_->info("metrics listening address={}:{}", config_.metricsAddress, metrics_->port());
    GL_TRY(openNetwork());
    return openRpc();
}

Status NodeImpl::openLedger(const Home& home) {
    std::error_code ec;
    std::filesystem::create_directories(home.dataDir(), ec);
    GL_ASSIGN_OR_RETURN(store,
                        storage::KvStore::open(home.dataDir() / "chain", ledger::columnNames()));
    store_ = std::move(store);
    tree_ = std::make_unique<ledger::StateTree>(*store_, ledger::kStateNodesColumn,
                                                ledger::kStateValuesColumn);
    blocks_ = std::make_unique<ledger::BlockStore>(*store_);
    executor_ = std::make_unique<contracts::Executor>(*store_, *tree_, *blocks_, genesis_.chainId);
    consensusStore_ = std::make_unique<ConsensusStore>(*store_);
    GL_ASSIGN_OR_RETURN(executed, blocks_->executedHeight());
    if (!executed) {
        GL_ASSIGN_OR_RETURN(written, executor_->commitGenesis(genesis_));
        log_->info("genesis written chain_id={} state_root={}", genesis_.chainId,
                   written.roots.stateRoot.hex());
        return {};
    }
    GL_ASSIGN_OR_RETURN(genesisBlock, blocks_->blockAt(0));
    GL_ASSIGN_OR_RETURN(genesisRoots, blocks_->rootsAt(0));
    if (!genesisBlock || !genesisRoots ||
        genesisBlock->id != contracts::genesisBlock(genesis_, genesisRoots->stateRoot).id) {
        return fail(ErrorCode::kConfig,
                    "the database holds another chain than config/genesis.json");
    }
    return {};
}

Status NodeImpl::openMempool() {
    GL_ASSIGN_OR_RETURN(executed, blocks_->executedHeight());
    ledger::MempoolOptions options;
    options.chainId = genesis_.chainId;
    options.maxTxs = config_.mempoolMaxTxs;
    options.maxBytes = config_.mempoolMaxBytes;
    options.nonceWindow = config_.mempoolNonceWindow;
    options.maxValidityBlocks = genesis_.consensus.maxValidityBlocks;
    options.committedHeight = *executed;
    options.verifierThreads = config_.verifyThreads;
    auto nonces = [this](const Address& address) -> Result<std::uint64_t> {
        GL_ASSIGN_OR_RETURN(height, blocks_->executedHeight());
        GL_ASSIGN_OR_RETURN(account, contracts::readAccount(*tree_, height.value_or(0), address));
        return account.nonce;
    };
    mempool_ = std::make_unique<ledger::Mempool>(options, nonces);
    return {};
}

Result<consensus::RecoveryData> NodeImpl::recoveryData(
    const consensus::Committee& committee) const {
    GL_ASSIGN_OR_RETURN(executed, blocks_->executedHeight());
    GL_ASSIGN_OR_RETURN(root, blocks_->blockAt(*executed));
    GL_ASSIGN_OR_RETURN(rootQc, blocks_->certAt(*executed));
    GL_ASSIGN_OR_RETURN(stored, consensusStore_->load());
    if (!root || !rootQc) {
        return fail(ErrorCode::kCorrupt, "the executed head block or its certificate is missing");
    }
    if (root->id == committee.seedBlockId() && root->header.epoch < committee.epoch()) {
        rootQc = consensus::genesisQc(committee.epoch(), root->id);  // the epoch's first root
    }
    if (!stored.safety || stored.safety->epoch < committee.epoch()) {
        stored.safety = consensus::SafetyData{committee.epoch()};  // nothing signed in this epoch
    }
    consensus::RecoveryData data{committee,
                                 *stored.safety,
                                 std::move(*root),
                                 std::move(*rootQc),
                                 {},
                                 {},
                                 std::move(stored.highestTc),
                                 {}};
    for (auto& block : stored.blocks) {
        if (block.header.height > *executed) {
            data.blocks.push_back(std::move(block));
        }
    }
    for (auto& qc : stored.qcs) {
        if (qc.round > data.rootQc.round) {
            data.qcs.push_back(std::move(qc));
        }
    }
    for (std::uint64_t h = data.root.header.execHeight; h <= *executed; ++h) {
        GL_ASSIGN_OR_RETURN(roots, blocks_->rootsAt(h));
        if (!roots) {
            return fail(ErrorCode::kCorrupt, "roots of height " + std::to_string(h) + " missing");
        }
        data.executed.push_back(consensus::ExecRecord{h, roots->stateRoot, roots->resultsRoot});
    }
    return data;
}

Status NodeImpl::checkDoubleSign(const consensus::RecoveryData& recovery) const {
    std::vector<codec::QuorumCert> recent = recovery.qcs;
    const std::uint64_t head = recovery.root.header.height;
    const std::uint64_t window = std::min(head, config_.doubleSignCheckHeight);
    for (std::uint64_t h = head - window + 1; h <= head && window > 0; ++h) {
        GL_ASSIGN_OR_RETURN(cert, blocks_->certAt(h));
        if (cert) {
            recent.push_back(std::move(*cert));
        }
    }
    const auto vote = consensus::findUnrecordedVote(recent, recovery.committee,
                                                    validatorKey_.publicKey(), recovery.safety);
    if (vote) {
        return fail(ErrorCode::kDoubleSignRisk,
                    "this validator's key voted in round " + std::to_string(vote->round) +
                        " for block " + vote->blockId.hex() +
                        ", which this node did not record (last voted round " +
                        std::to_string(recovery.safety.lastVotedRound) +
                        "): another instance may be running with this key; refusing to sign");
    }
    return {};
}

Status NodeImpl::openConsensus() {
    for (const auto& v : genesis_.validators) {
        nodeIds_.emplace(v.consensusKey, v.nodeId);
    }
    GL_ASSIGN_OR_RETURN(executed, blocks_->executedHeight());
    // The epoch the ledger is in: the last block that changed the validator set seeds it.
    GL_ASSIGN_OR_RETURN(committee,
                        committeeAtHead(genesis_, *blocks_, *tree_, executed.value_or(0)));
    GL_ASSIGN_OR_RETURN(set, validatorKeysAt(*tree_, executed.value_or(0)));
    for (std::size_t i = 0; i < set.keys.size() && i < set.nodeIds.size(); ++i) {
        nodeIds_.insert_or_assign(set.keys[i], set.nodeIds[i]);
    }
    committee_.store(std::make_shared<const consensus::Committee>(std::move(committee)));
    return buildCore();
}

Status NodeImpl::buildCore() {
    GL_ASSIGN_OR_RETURN(recovery, recoveryData(*committee()));
    GL_TRY(checkDoubleSign(recovery));
    inFlight_.clear();
    for (const auto& block : recovery.blocks) {
        track(block);
    }
    consensus::Options options;
    options.chainId = genesis_.chainId;
    options.t0Ms = genesis_.consensus.roundTimeoutMs;
    options.emptyBlockIntervalMs = genesis_.consensus.emptyBlockIntervalMs;
    options.maxClockDriftMs = genesis_.consensus.maxClockDriftMs;
    options.blockTimeMs = genesis_.consensus.blockTimeMs;
    auto signer = std::make_unique<consensus::KeySigner>(validatorKey_);
    GL_ASSIGN_OR_RETURN(core,
                        consensus::Core::create(options, std::move(recovery), std::move(signer)));
    core_.emplace(std::move(core));
    return {};
}

Status NodeImpl::openNetwork() {
    p2p::Options options;
    options.listenHost = config_.p2pAddress;
    options.listenPort = config_.p2pPort;
    for (const auto& validator : genesis_.validators) {
        options.allowed.insert(validator.nodeId);
    }
    options.allowed.insert(config_.allowedNodes.begin(), config_.allowedNodes.end());
    options.persistentPeers = config_.persistentPeers;
    options.logger = makeLogger("p2p", config_.logLevel);
    const NodeId self = nodeKey_.nodeId();
    options.seed = readU64(self.view());
    network_ = std::make_unique<p2p::Network>(std::move(options), nodeKey_);
    network_->onMessage([this](const NodeId& from, p2p::Message message) {
        onPeerMessage(from, std::move(message));
    });
    network_->onPeerUp(
        [this](const NodeId& peer) { log_->info("peer connected node_id={}", peer.hex()); });
    network_->onPeerDown([this](const NodeId& peer, p2p::CloseReason reason) {
        log_->info("peer disconnected node_id={} reason={}", peer.hex(), p2p::reasonName(reason));
    });
    network_->onConnectionFailed([this](const p2p::ConnectionFailure& failure) {
        log_->debug("p2p connection failed node_id={} address={} reason={} detail={}",
                    failure.nodeId.hex(), failure.address, p2p::reasonName(failure.reason),
                    failure.detail);
    });
    GL_TRY(network_->start());
    log_->info("p2p listening address={}:{} node_id={} persistent_peers={}", config_.p2pAddress,
               network_->port(), self.hex(), config_.persistentPeers.size());
    return {};
}

Status NodeImpl::openRpc() {
    rpc::ChainContext context;
    context.chainId = genesis_.chainId;
    context.mempool = mempool_.get();
    context.blocks = blocks_.get();
    context.tree = tree_.get();
    context.txAdmitted = [this](ByteView raw) {
        outbox_.add(OutgoingTx{Bytes(raw.begin(), raw.end()), std::nullopt});
        signalPayload();
    };
    context.status = [this] {
        return rpc::NodeStatus{GRIDLEDGER_VERSION,
                               proposer_.publicKey(),
                               epoch_.load(std::memory_order_relaxed),
                               round_.load(std::memory_order_relaxed),
                               highestQcRound_.load(std::memory_order_relaxed),
                               nodeKey_.nodeId(),
                               network_->connectedPeers().size(),
                               syncing_.load(std::memory_order_relaxed)};
    };
    rpc::MethodTable methods;
    GL_TRY(rpc::addNodeMethods(methods, context));
    rpc::ServerOptions options;
    options.address = config_.rpcAddress;
    options.port = config_.rpcPort;
    options.ioThreads = config_.rpcThreads;
    options.limits.maxBodyBytes = config_.rpcMaxBodyBytes;
    options.limits.maxBatchItems = config_.rpcMaxBatch;
    options.limits.maxConnections = config_.rpcMaxConnections;
    options.limits.maxWsConnections = config_.rpcMaxWsConnections;
    options.limits.maxSubscriptions = config_.rpcMaxSubscriptions;
    options.limits.maxSendBufferBytes = config_.rpcMaxSendBufferBytes;
    options.limits.idleTimeout = std::chrono::milliseconds(config_.rpcIdleTimeoutMs);
    options.limits.requestTimeout = std::chrono::milliseconds(config_.rpcRequestTimeoutMs);
    options.feed = [context](std::uint64_t height) {
        return rpc::notificationsAt(context, height);
    };
    rpc_ = std::make_unique<rpc::Server>(std::move(methods), options);
    GL_TRY(rpc_->start());
    log_->info("rpc listening address={}:{}", config_.rpcAddress, rpc_->port());
    return {};
}

Status NodeImpl::run() {
    asio::signal_set signals(io_, SIGINT, SIGTERM);
    signals.async_wait([this](const boost::system::error_code& ec, int signal) {
        if (!ec) {
            log_->info("stopping signal={}", signal);
            io_.stop();
        }
    });
    asio::post(io_, [this] { deliver(consensus::Start{}); });
    scheduleGossip();
    scheduleNetworkMetrics();
    log_->info("node started chain_id={} validator={} member={}", genesis_.chainId,
               proposer_.publicKey().hex(), committee()->contains(proposer_.publicKey()));
    io_.run();
    rpc_->stop();
    network_->stop();
    mempool_->shutdown();
    peerWork_.stop();
    peerWork_.join();
    if (failed_) {
        return std::unexpected(failure_);
    }
    return {};
}

void NodeImpl::deliver(EventBody body) {
    if (sync_) {
        return;  // the core resumes, rebuilt, when block sync is done
    }
    loopback_.push_back(std::move(body));
    while (!loopback_.empty() && !failed_) {
        consensus::Event event{nowMs(), std::move(loopback_.front())};
        loopback_.pop_front();
        const consensus::Effects effects = core_->step(event);
        for (const auto& effect : effects) {
            if (failed_) {
                return;  // nothing after a failed persistence may leave the process
            }
            perform(effect);
        }
        metrics_->consensusState(core_->currentRound(), core_->highestQc().round);
        metrics_->mempool(mempool_->size(), mempool_->bytes());
        epoch_.store(core_->highestQc().epoch, std::memory_order_relaxed);
        round_.store(core_->currentRound(), std::memory_order_relaxed);
        highestQcRound_.store(core_->highestQc().round, std::memory_order_relaxed);
    }
}

void NodeImpl::perform(const consensus::Effect& effect) {
    std::visit(
        Overloaded{
            [this](const consensus::PersistSafety& e) {
                persist(consensusStore_->saveSafety(e.data));
            },
            [this](const consensus::PersistBlock& e) {
                track(*e.block);
                persist(consensusStore_->saveBlock(*e.block));
            },
            [this](const consensus::PersistQc& e) { persist(consensusStore_->saveQc(e.qc)); },
            [this](const consensus::PersistTc& e) { persist(consensusStore_->saveTc(e.tc)); },
            [this](const consensus::Broadcast& e) { network_->broadcast(broadcastMessage(e)); },
            [this](const consensus::SendVote& e) { sendVote(e); },
            [this](const consensus::ScheduleTimer& e) { schedule(e); },
            [this](const consensus::Fetch& e) { fetch(e); },
            [this](const consensus::Commit& e) { commit(e); },
            [this](const consensus::BuildProposal& e) { buildProposal(e); },
            [this](const consensus::Rejected& e) {
                log_->debug("consensus refused input reason={} detail={}", e.error.reason(),
                            e.error.message);
            },
        },
        effect);
}

void NodeImpl::persist(Status status) {
    if (!status) {
        fatal(status.error());
    }
}

void NodeImpl::commit(const consensus::Commit& commit) {
    auto executed = blocks_->executedHeight();
    if (!executed || !*executed) {
        fatal(executed ? Error{ErrorCode::kCorrupt, "no executed height"} : executed.error());
        return;
    }
    std::uint64_t height = **executed;
    std::optional<std::size_t> endedAt;
    for (std::size_t i = 0; i < commit.blocks.size(); ++i) {
        const codec::Block& block = *commit.blocks[i];
        if (block.header.height <= height || block.header.epoch != committee()->epoch()) {
            continue;  // already executed before a restart, or above the end of its epoch
        }
        const codec::QuorumCert& certifying =
            i + 1 < commit.blocks.size() ? commit.blocks[i + 1]->header.qc : commit.qc;
        const auto roots = executeCommitted(block, certifying);
        if (!roots) {
            return;
        }
        height = block.header.height;
        loopback_.push_back(consensus::Executed{height, roots->stateRoot, roots->resultsRoot});
        const auto change = endEpochIfChanged(block);
        if (!change) {
            return;
        }
        if (*change) {
            // The epoch ends with this block: the blocks above it are never appended, and their
            // transactions stay in the mempool.
            loopback_.push_back(std::move(**change));
            endedAt = i;
            break;
        }
    }
    // Commit proofs for peers that sync from here: each block of the commit proven by its
    // successor when their rounds follow each other, and the last one by the child that
    // commitQc certifies.
    std::vector<const codec::Block*> committed;
    std::vector<const codec::QuorumCert*> certs;
    for (std::size_t i = 0; i < commit.blocks.size(); ++i) {
        committed.push_back(commit.blocks[i].get());
        certs.push_back(i + 1 < commit.blocks.size() ? &commit.blocks[i + 1]->header.qc
                                                     : &commit.qc);
    }
    auto proofs = chainedCommitProofs(committed, certs);
    if (const auto child = inFlight_.find(commit.commitQc.blockId);
        child != inFlight_.end() && !commit.blocks.empty() &&
        (!endedAt || *endedAt + 1 == commit.blocks.size())) {
        auto proof = codec::makeCommitProof(child->second.headerBytes, commit.commitQc);
        if (proof) {
            proofs.push_back(HeightProof{commit.blocks.back()->header.height, std::move(*proof)});
        }
    }
    // Heights above the block that ended the epoch belong to the next epoch's blocks.
    std::erase_if(proofs, [height](const HeightProof& p) { return p.height > height; });
    storeCommitProofs(proofs);
    std::erase_if(inFlight_, [height, &endedAt](const auto& entry) {
        return entry.second.height <= height || endedAt.has_value();
    });
    persist(consensusStore_->prune(height, commit.qc.round));
}

std::optional<ledger::ExecRoots> NodeImpl::executeCommitted(const codec::Block& block,
                                                            const codec::QuorumCert& certifying) {
    const auto started = std::chrono::steady_clock::now();
    auto done = executor_->executeAndCommit(
        block, certifying, [this](const Hash256& hash) { return mempool_->isVerified(hash); });
    if (!done) {
        fatal(done.error());
        return std::nullopt;
    }
    const auto failed = std::count_if(done->receipts.begin(), done->receipts.end(),
                                      [](const auto& r) { return !r.success(); });
    metrics_->blockCommitted(
        block.header.height, done->receipts.size(), static_cast<std::size_t>(failed),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    std::vector<Hash256> hashes;
    hashes.reserve(done->receipts.size());
    for (const auto& receipt : done->receipts) {
        hashes.push_back(receipt.txHash);
    }
    mempool_->onCommitted(hashes, block.header.height);
    log_->debug("committed height={} txs={} state_root={}", block.header.height, block.txs.size(),
                done->roots.stateRoot.hex());
    if (rpc_) {
        rpc_->publishExecuted(block.header.height);  // WebSocket subscriptions (docs/rpc.md)
    }
    return done->roots;
}

std::optional<std::optional<consensus::EpochChange>> NodeImpl::endEpochIfChanged(
    const codec::Block& block) {
    const auto current = committee();
    auto next =
        nextEpochAfter(*tree_, block, *current, genesis_.chainId, genesis_.consensus.committeeMax);
    if (!next) {
        fatal(next.error());
        return std::nullopt;
    }
    if (!*next) {
        return std::make_optional(std::optional<consensus::EpochChange>{});  // no change
    }
    auto set = validatorKeysAt(*tree_, block.header.height);
    if (!set) {
        fatal(set.error());
        return std::nullopt;
    }
    for (std::size_t i = 0; i < set->keys.size() && i < set->nodeIds.size(); ++i) {
        nodeIds_.insert_or_assign(set->keys[i], set->nodeIds[i]);
    }
    log_->info("epoch change height={} epoch={} members={} member={}", block.header.height,
               (*next)->committee.epoch(), (*next)->committee.size(),
               (*next)->committee.contains(proposer_.publicKey()));
    committee_.store(std::make_shared<const consensus::Committee>((*next)->committee));
    return std::make_optional(std::make_optional(
        consensus::EpochChange{block, std::move((*next)->validators)}));
}

void NodeImpl::storeCommitProofs(const std::vector<HeightProof>& proofs) {
    if (proofs.empty()) {
        return;
    }
    auto batch = store_->batch();
    for (const auto& [height, proof] : proofs) {
        blocks_->stageCommitProof(batch, height, proof);
    }
    persist(store_->write(batch, false));
}

void NodeImpl::track(const codec::Block& block) {
    InFlight entry{block.header.height, block.header.parentId, block.headerBytes, {}};
    entry.txHashes.reserve(block.txs.size());
    for (const auto& tx : block.txs) {
        entry.txHashes.push_back(crypto::sha256(tx));
    }
    inFlight_.emplace(block.id, std::move(entry));
}

void NodeImpl::buildProposal(const consensus::BuildProposal& request) {
    // Transactions carried by uncommitted ancestors must not be proposed again.
    std::vector<Hash256> carried;
    for (auto it = inFlight_.find(request.parentId); it != inFlight_.end();
         it = inFlight_.find(it->second.parentId)) {
        carried.insert(carried.end(), it->second.txHashes.begin(), it->second.txHashes.end());
    }
    mempool_->releaseAll();
    mempool_->markProposed(carried);
    const auto txs = mempool_->collect(genesis_.consensus.maxBlockTxs,
                                       static_cast<std::size_t>(genesis_.consensus.maxBlockBytes));
    std::vector<Bytes> raw;
    std::vector<Hash256> hashes;
    raw.reserve(txs.size());
    for (const auto& tx : txs) {
        raw.push_back(tx->raw);
        hashes.push_back(tx->hash);
    }
    mempool_->markProposed(hashes);
    std::size_t bytes = 0;
    for (const auto& tx : raw) {
        bytes += tx.size();
    }
    if (txs.size() >= genesis_.consensus.maxBlockTxs ||
        bytes + codec::kMaxTxBytes > genesis_.consensus.maxBlockBytes) {
        signalPayload();  // the block is full: more may be waiting for the next one
    }

    codec::BlockHeader header;
    header.epoch = request.epoch;
    header.round = request.round;
    header.height = request.height;
    header.parentId = request.parentId;
    header.qc = request.qc;
    header.tc = request.tc;
    header.author = proposer_.publicKey();
    header.timestampMs =
        std::min(std::max(nowMs(), request.minTimestampMs), request.maxTimestampMs);
    header.execHeight = request.execHeight;
    header.execStateRoot = request.execStateRoot;
    header.execResultsRoot = request.execResultsRoot;
    codec::Block block = codec::makeBlock(header, std::move(raw));
    consensus::signProposal(proposer_, genesis_.chainId, block);
    loopback_.push_back(consensus::ProposalBuilt{std::move(block)});
}

void NodeImpl::schedule(const consensus::ScheduleTimer& timer) {
    auto handle = std::make_shared<asio::steady_timer>(io_);
    handle->expires_after(std::chrono::milliseconds(timer.delayMs));
    handle->async_wait([this, handle, timer](const boost::system::error_code& ec) {
        if (!ec) {
            deliver(consensus::TimerFired{timer.kind, timer.round});
        }
    });
}

void NodeImpl::signalPayload() {
    if (!payloadSignalled_.exchange(true)) {
        asio::post(io_, [this] {
            payloadSignalled_.store(false);
            deliver(consensus::PayloadAvailable{});
        });
    }
}

void NodeImpl::sendVote(const consensus::SendVote& send) {
    log_->debug("signed vote epoch={} round={} block={}", send.vote.epoch, send.vote.round,
                send.vote.blockId.hex());
    // The vote goes to the next leader and a copy to every other member: each member then forms
    // the QC itself, and a crashed next leader costs one round timeout, not two
    // (docs/protocol.md §5). A vote that cannot leave now is lost; timeouts recover from that.
    loopback_.push_back(consensus::VoteReceived{send.vote});
    network_->broadcast(p2p::Message{codec::MessageKind::kVote, codec::encodeVote(send.vote)});
}

void NodeImpl::fetch(const consensus::Fetch& request) {
    if (fetching_.size() >= kMaxOutstandingFetches) {
        fetching_.clear();  // answers that never came; the core asks again when it still needs
    }
    fetching_.insert(request.blockId);
    const p2p::Message message{codec::MessageKind::kBlockRequest,
                               codec::encodeBlockRequest({request.blockId})};
    if (request.hint) {
        const auto peer = nodeIds_.find(*request.hint);
        if (peer != nodeIds_.end() && network_->send(peer->second, message)) {
            return;
        }
    }
    network_->broadcast(message);
}

void NodeImpl::onPeerMessage(const NodeId& from, p2p::Message message) {
    asio::post(peerWork_,
               [this, from, message = std::move(message)] { handlePeerMessage(from, message); });
}

void NodeImpl::handlePeerMessage(const NodeId& from, const p2p::Message& message) {
    switch (message.kind) {
        case codec::MessageKind::kTx:
            admitGossipedTxs(from, message.payload);
            return;
        case codec::MessageKind::kBlockRequest:
            serveBlock(from, message.payload);
            return;
        case codec::MessageKind::kSyncRequest:
            serveSyncRequest(from, message.payload);
            return;
        case codec::MessageKind::kSyncResponse: {
            auto response = codec::decodeSyncResponse(message.payload);
            if (!response) {
                invalidMessage(from, message.kind, response.error(), kInvalidSyncPoints);
                return;
            }
            asio::post(io_, [this, from, response = std::move(*response)]() mutable {
                onSyncResponse(from, std::move(response));
            });
            return;
        }
        default:
            break;
    }
    auto checked = checkConsensusMessage(message, *committee(), genesis_.chainId);
    if (!checked && checked.error().code == ErrorCode::kWrongEpoch) {
        // Not misbehaviour: around an epoch change honest peers are an epoch apart. A peer
        // ahead of this node has committed past it: catch up by block sync.
        log_->debug("message of another epoch peer={} detail={}", from.hex(),
                    checked.error().message);
        if (checked.error().message.starts_with(kLaterEpochMessage)) {
            asio::post(io_, [this, from] {
                // At most one such sync per interval: the message itself proves nothing.
                const auto now = std::chrono::steady_clock::now();
                if (now - lastEpochSync_ >= kEpochSyncInterval) {
                    lastEpochSync_ = now;
                    syncIfBehind(from, UINT64_MAX);
                }
            });
        }
        return;
    }
    if (!checked) {
        invalidMessage(from, message.kind, checked.error(), kInvalidMessagePoints);
        return;
    }
    asio::post(io_, [this, from, input = std::move(*checked)]() mutable {
        onChecked(from, std::move(input));
    });
}

void NodeImpl::admitGossipedTxs(const NodeId& from, ByteView payload) {
    auto batch = codec::decodeTxBatch(payload);
    if (!batch) {
        invalidMessage(from, codec::MessageKind::kTx, batch.error(), kInvalidMessagePoints);
        return;
    }
    bool admitted = false;
    for (auto& raw : batch->txs) {
        auto hash = mempool_->submit(raw);
        if (hash) {
            outbox_.add(OutgoingTx{std::move(raw), from});
            admitted = true;
        } else if (hash.error().code == ErrorCode::kBadSignature ||
                   hash.error().code == ErrorCode::kMalformed) {
            // A peer checks a transaction before it passes it on: this one was never valid.
            invalidMessage(from, codec::MessageKind::kTx, hash.error(), kInvalidTxPoints);
        }
    }
    if (admitted) {
        signalPayload();
    }
}

void NodeImpl::serveBlock(const NodeId& from, ByteView payload) {
    auto request = codec::decodeBlockRequest(payload);
    if (!request) {
        invalidMessage(from, codec::MessageKind::kBlockRequest, request.error(),
                       kInvalidMessagePoints);
        return;
    }
    auto block = blocks_->blockById(request->blockId);
    if (block && !*block) {
        block = consensusStore_->blockById(request->blockId);
    }
    if (!block) {
        log_->warn("cannot serve block {}: {}", request->blockId.hex(), block.error().message);
        return;
    }
    if (*block) {
        (void)network_->send(
            from, p2p::Message{codec::MessageKind::kBlockResponse, codec::encodeBlock(**block)});
    }
}

void NodeImpl::serveSyncRequest(const NodeId& from, ByteView payload) {
    auto request = codec::decodeSyncRequest(payload);
    if (!request) {
        invalidMessage(from, codec::MessageKind::kSyncRequest, request.error(),
                       kInvalidMessagePoints);
        return;
    }
    auto response = serveSync(*blocks_, *request, config_.syncBatchBlocks);
    if (!response) {
        log_->warn("cannot serve sync request from_height={}: {}", request->fromHeight,
                   response.error().message);
        return;
    }
    (void)network_->send(from, p2p::Message{codec::MessageKind::kSyncResponse,
                                            codec::encodeSyncResponse(*response)});
}

void NodeImpl::invalidMessage(const NodeId& from, codec::MessageKind kind, const Error& error,
                              std::uint32_t points) {
    log_->debug("invalid {} from peer={} reason={} detail={}", codec::kindName(kind), from.hex(),
                error.reason(), error.message);
    metrics_->invalidMessage();
    network_->reportMisbehaviour(from, points);
}

void NodeImpl::onChecked(const NodeId& from, CheckedInput input) {
    std::visit(Overloaded{
                   [&](consensus::ProposalReceived& e) {
                       if (!syncIfBehind(from, e.block.header.height)) {
                           deliver(std::move(e));
                       }
                   },
                   [&](consensus::BlockFetched& e) {
                       if (fetching_.erase(e.block.id) != 0 &&
                           !syncIfBehind(from, e.block.header.height)) {
                           deliver(std::move(e));
                       }
                   },
                   [&](auto& e) { deliver(std::move(e)); },
               },
               input);
}

void NodeImpl::scheduleGossip() {
    gossipTimer_.expires_after(kGossipInterval);
    gossipTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) {
            flushGossip();
            scheduleGossip();
        }
    });
}

void NodeImpl::flushGossip() {
    const auto txs = outbox_.take();
    if (txs.empty()) {
        return;
    }
    for (const auto& peer : network_->connectedPeers()) {
        for (const auto& batch : batchesFor(txs, peer)) {
            // Transactions are droppable: a peer whose queue is full misses them, not consensus.
            (void)network_->send(
                peer, p2p::Message{codec::MessageKind::kTx, codec::encodeTxBatch(batch)});
        }
    }
}

void NodeImpl::scheduleNetworkMetrics() {
    networkMetricsTimer_.expires_after(kNetworkMetricsInterval);
    networkMetricsTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) {
            metrics_->network(network_->stats(), network_->connectedPeers().size());
            scheduleNetworkMetrics();
        }
    });
}

bool NodeImpl::syncIfBehind(const NodeId& peer, std::uint64_t height) {
    if (sync_) {
        return true;
    }
    const std::uint64_t committed = core_->committedRoot().header.height;
    if (height <= committed || height - committed <= config_.syncLagBlocks) {
        return false;
    }
    sync_ = SyncState{peer, committed, std::chrono::steady_clock::now(), 0, 0};
    syncing_.store(true, std::memory_order_relaxed);
    log_->info("sync started peer={} committed_height={} seen_height={}", peer.hex(), committed,
               height);
    requestSync();
    return true;
}

void NodeImpl::requestSync() {
    auto executed = blocks_->executedHeight();
    if (!executed || !*executed) {
        fatal(executed ? Error{ErrorCode::kCorrupt, "no executed height"} : executed.error());
        return;
    }
    const std::uint64_t seq = ++sync_->requestSeq;
    const codec::SyncRequest request{**executed + 1,
                                     static_cast<std::uint32_t>(config_.syncBatchBlocks)};
    if (!network_->send(sync_->peer, p2p::Message{codec::MessageKind::kSyncRequest,
                                                  codec::encodeSyncRequest(request)})) {
        asio::post(io_, [this] { syncFailed("the peer is not connected"); });
        return;
    }
    syncTimer_.expires_after(kSyncRequestTimeout);
    syncTimer_.async_wait([this, seq](const boost::system::error_code& ec) {
        if (!ec && sync_ && sync_->requestSeq == seq) {
            syncFailed("no answer");
        }
    });
}

void NodeImpl::onSyncResponse(const NodeId& from, codec::SyncResponse response) {
    if (!sync_ || from != sync_->peer || failed_) {
        return;  // unsolicited or late
    }
    ++sync_->requestSeq;  // the request is answered: its timer no longer applies
    if (response.blocks.empty()) {
        finishSync();
        return;
    }
    auto executed = blocks_->executedHeight();
    auto head = executed && *executed ? blocks_->blockAt(**executed)
                                      : Result<std::optional<codec::Block>>(std::nullopt);
    if (!head || !*head) {
        fatal(head ? Error{ErrorCode::kCorrupt, "the executed head block is missing"}
                   : head.error());
        return;
    }
    const std::uint64_t headHeight = (*head)->header.height;
    const std::uint64_t peerHead = response.headHeight;
    auto verified = verifySyncResponse(std::move(response), headHeight, (*head)->id, *committee(),
                                       genesis_.chainId);
    if (!verified) {
        invalidMessage(from, codec::MessageKind::kSyncResponse, verified.error(),
                       kInvalidSyncPoints);
        syncFailed(verified.error().message);
        return;
    }
    for (std::size_t i = 0; i < verified->blocks.size(); ++i) {
        if (!executeCommitted(verified->blocks[i], verified->certs[i])) {
            return;
        }
        // Synced blocks stop at an epoch's end (serveSync): the core is rebuilt in the new
        // epoch when the sync ends.
        if (!endEpochIfChanged(verified->blocks[i])) {
            return;
        }
    }
    const std::uint64_t lastHeight = verified->blocks.back().header.height;
    std::vector<const codec::Block*> synced;
    std::vector<const codec::QuorumCert*> certs;
    for (std::size_t i = 0; i < verified->blocks.size(); ++i) {
        synced.push_back(&verified->blocks[i]);
        certs.push_back(&verified->certs[i]);
    }
    auto proofs = chainedCommitProofs(synced, certs);
    proofs.push_back(HeightProof{lastHeight, verified->proof});
    storeCommitProofs(proofs);
    metrics_->blocksSynced(verified->blocks.size());
    sync_->failures = 0;
    log_->debug("synced blocks to height={} peer_head={}", lastHeight, peerHead);
    if (peerHead > lastHeight) {
        requestSync();
    } else {
        finishSync();
    }
}

void NodeImpl::syncFailed(const std::string& reason) {
    if (!sync_) {
        return;
    }
    log_->warn("sync request failed peer={} reason={}", sync_->peer.hex(), reason);
    const auto peers = network_->connectedPeers();
    if (++sync_->failures > kMaxSyncFailures || peers.empty()) {
        finishSync();
        return;
    }
    // The next connected peer after the current one, in node id order.
    const auto next = std::upper_bound(peers.begin(), peers.end(), sync_->peer);
    sync_->peer = next != peers.end() ? *next : peers.front();
    requestSync();
}

void NodeImpl::finishSync() {
    syncTimer_.cancel();
    const auto executed = blocks_->executedHeight();
    const std::uint64_t height = executed && *executed ? **executed : sync_->startHeight;
    const std::uint64_t blocks = height - sync_->startHeight;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sync_->started).count();
    log_->info(
        "sync finished blocks={} from_height={} to_height={} seconds={:.3f} "
        "rate_blocks_per_s={:.1f}",
        blocks, sync_->startHeight, height, seconds,
        seconds > 0 ? static_cast<double>(blocks) / seconds : 0.0);
    sync_.reset();
    syncing_.store(false, std::memory_order_relaxed);
    fetching_.clear();
    // The core restarts from the synced head, as after a restart; the double-sign guard runs
    // again over the blocks that sync brought in.
    if (auto built = buildCore(); !built) {
        fatal(built.error());
        return;
    }
    deliver(consensus::Start{});
}

void NodeImpl::fatal(const Error& error) {
    log_->critical("stopping: reason={} detail={}", error.reason(), error.message);
    failed_ = true;
    failure_ = error;
    io_.stop();
}

Result<std::unique_ptr<Node>> Node::start(const Home& home) {
    GL_ASSIGN_OR_RETURN(key, home.loadKey("validator"));
    GL_ASSIGN_OR_RETURN(nodeKey, home.loadNodeKey());
    auto impl = std::make_unique<NodeImpl>(key, nodeKey);
    GL_TRY(impl->open(home));
    return std::unique_ptr<Node>(new Node(std::move(impl)));
}

Node::Node(std::unique_ptr<NodeImpl> impl) : impl_(std::move(impl)) {}
Node::~Node() = default;

Status Node::runUntilSignalled() {
    return impl_->run();
}

}  // namespace gridledger::node
