#include "node.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <gridledger/consensus/core.h>
#include <gridledger/consensus/double_sign_guard.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/mempool.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/server.h>
#include <gridledger/storage/kv_store.h>

#include "consensus_store.h"
#include "metrics.h"

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

template <class... Fs>
struct Overloaded : Fs... {
    using Fs::operator()...;
};

}  // namespace

class NodeImpl {
  public:
    explicit NodeImpl(const crypto::SecretKey& validatorKey)
        : validatorKey_(validatorKey), proposer_(validatorKey) {}

    Status open(const Home& home);
    /** Runs the consensus loop until a signal or a fatal storage error. */
    Status run();

  private:
    using EventBody = decltype(consensus::Event::body);

    Status openLedger(const Home& home);
    Status openMempool();
    Status openConsensus();
    Status openRpc();
    Result<consensus::RecoveryData> recoveryData(const consensus::Committee& committee) const;
    Status checkDoubleSign(const consensus::RecoveryData& recovery) const;

    /** Delivers an event to the core, then every event its effects loop back, in order. */
    void deliver(EventBody body);
    void perform(const consensus::Effect& effect);
    void persist(Status status);
    void commit(const consensus::Commit& commit);
    void buildProposal(const consensus::BuildProposal& request);
    void schedule(const consensus::ScheduleTimer& timer);
    void signalPayload();
    void fatal(const Error& error);

    NodeConfig config_;
    contracts::Genesis genesis_;
    crypto::SecretKey validatorKey_;
    consensus::KeySigner proposer_;
    std::shared_ptr<spdlog::logger> log_;

    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<ledger::StateTree> tree_;
    std::unique_ptr<ledger::BlockStore> blocks_;
    std::unique_ptr<contracts::Executor> executor_;
    std::unique_ptr<ConsensusStore> consensusStore_;
    std::unique_ptr<ledger::Mempool> mempool_;
    std::optional<consensus::Core> core_;
    std::unique_ptr<rpc::Server> rpc_;
    std::unique_ptr<Metrics> metrics_;

    asio::io_context io_;
    std::deque<EventBody> loopback_;
    /** A block persisted by the core and not yet committed: its txs are in flight. */
    struct InFlight {
        std::uint64_t height = 0;
        Hash256 parentId;
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
    consensus::RecoveryData data{committee,
                                 stored.safety.value_or(consensus::SafetyData{committee.epoch()}),
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
    GL_ASSIGN_OR_RETURN(genesisBlock, blocks_->blockAt(0));
    std::vector<PubKey> validators;
    for (const auto& v : genesis_.validators) {
        validators.push_back(v.consensusKey);
    }
    const std::uint64_t epoch = genesisBlock->header.epoch;
    GL_ASSIGN_OR_RETURN(
        members, consensus::selectCommittee(validators, genesis_.chainId, epoch, genesisBlock->id,
                                            genesis_.consensus.committeeMax));
    GL_ASSIGN_OR_RETURN(committee, consensus::Committee::create(genesis_.chainId, epoch,
                                                                genesisBlock->id, members));
    GL_ASSIGN_OR_RETURN(recovery, recoveryData(committee));
    GL_TRY(checkDoubleSign(recovery));
    for (const auto& block : recovery.blocks) {
        track(block);
    }
    consensus::Options options;
    options.chainId = genesis_.chainId;
    options.t0Ms = genesis_.consensus.roundTimeoutMs;
    options.emptyBlockIntervalMs = genesis_.consensus.emptyBlockIntervalMs;
    options.maxClockDriftMs = genesis_.consensus.maxClockDriftMs;
    auto signer = std::make_unique<consensus::KeySigner>(validatorKey_);
    GL_ASSIGN_OR_RETURN(core,
                        consensus::Core::create(options, std::move(recovery), std::move(signer)));
    core_.emplace(std::move(core));
    return {};
}

Status NodeImpl::openRpc() {
    rpc::ChainContext context;
    context.chainId = genesis_.chainId;
    context.mempool = mempool_.get();
    context.blocks = blocks_.get();
    context.tree = tree_.get();
    context.txAdmitted = [this] { signalPayload(); };
    context.status = [this] {
        return rpc::NodeStatus{GRIDLEDGER_VERSION, proposer_.publicKey(),
                               epoch_.load(std::memory_order_relaxed),
                               round_.load(std::memory_order_relaxed),
                               highestQcRound_.load(std::memory_order_relaxed)};
    };
    rpc::MethodTable methods;
    GL_TRY(rpc::addChainMethods(methods, context));
    rpc::ServerOptions options;
    options.address = config_.rpcAddress;
    options.port = config_.rpcPort;
    options.ioThreads = config_.rpcThreads;
    options.limits.maxBodyBytes = config_.rpcMaxBodyBytes;
    options.limits.maxBatchItems = config_.rpcMaxBatch;
    options.limits.maxConnections = config_.rpcMaxConnections;
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
    log_->info("node started chain_id={} validator={}", genesis_.chainId,
               proposer_.publicKey().hex());
    io_.run();
    rpc_->stop();
    mempool_->shutdown();
    if (failed_) {
        return std::unexpected(failure_);
    }
    return {};
}

void NodeImpl::deliver(EventBody body) {
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
    const PubKey& self = proposer_.publicKey();
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
            [](const consensus::Broadcast&) {
                // A committee of one has nobody else to tell; the P2P layer sends these later.
            },
            [this, &self](const consensus::SendVote& e) {
                if (e.to == self) {
                    loopback_.push_back(consensus::VoteReceived{e.vote});
                }
            },
            [this](const consensus::ScheduleTimer& e) { schedule(e); },
            [this](const consensus::Fetch& e) {
                log_->debug("fetch requested block={} (no peers)", e.blockId.hex());
            },
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
    for (std::size_t i = 0; i < commit.blocks.size(); ++i) {
        const codec::Block& block = *commit.blocks[i];
        if (block.header.height <= height) {
            continue;  // already executed before a restart
        }
        const codec::QuorumCert& certifying =
            i + 1 < commit.blocks.size() ? commit.blocks[i + 1]->header.qc : commit.qc;
        const auto started = std::chrono::steady_clock::now();
        auto done = executor_->executeAndCommit(
            block, certifying, [this](const Hash256& hash) { return mempool_->isVerified(hash); });
        if (!done) {
            fatal(done.error());
            return;
        }
        const auto failed = std::count_if(done->receipts.begin(), done->receipts.end(),
                                          [](const auto& r) { return !r.success(); });
        metrics_->blockCommitted(
            block.header.height, done->receipts.size(), static_cast<std::size_t>(failed),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        height = block.header.height;
        std::vector<Hash256> hashes;
        hashes.reserve(done->receipts.size());
        for (const auto& receipt : done->receipts) {
            hashes.push_back(receipt.txHash);
        }
        mempool_->onCommitted(hashes, height);
        log_->debug("committed height={} txs={} state_root={}", height, block.txs.size(),
                    done->roots.stateRoot.hex());
        loopback_.push_back(
            consensus::Executed{height, done->roots.stateRoot, done->roots.resultsRoot});
    }
    std::erase_if(inFlight_, [height](const auto& entry) { return entry.second.height <= height; });
    persist(consensusStore_->prune(height, commit.qc.round));
}

void NodeImpl::track(const codec::Block& block) {
    InFlight entry{block.header.height, block.header.parentId, {}};
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
    header.timestampMs = std::max(nowMs(), request.minTimestampMs);
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

void NodeImpl::fatal(const Error& error) {
    log_->critical("stopping: storage failed reason={} detail={}", error.reason(), error.message);
    failed_ = true;
    failure_ = error;
    io_.stop();
}

Result<std::unique_ptr<Node>> Node::start(const Home& home) {
    GL_ASSIGN_OR_RETURN(key, home.loadKey("validator"));
    auto impl = std::make_unique<NodeImpl>(key);
    GL_TRY(impl->open(home));
    return std::unique_ptr<Node>(new Node(std::move(impl)));
}

Node::Node(std::unique_ptr<NodeImpl> impl) : impl_(std::move(impl)) {}
Node::~Node() = default;

Status Node::runUntilSignalled() {
    return impl_->run();
}

}  // namespace gridledger::node
