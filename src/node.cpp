#include "log_format.h"
#include "node_impl.h"

namespace gridledger::node {

std::uint64_t nowMs() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

namespace {

/**
 * The longest wait before a lost peer is dialed again. Every link between members carries
 * consensus: a link found again only after the transport's default cap (30 s) once a partition
 * healed would cost the committee that member for as long.
 */
constexpr std::chrono::milliseconds kReconnectCap{2'000};

}  // namespace

Status NodeImpl::open(const Home& home) {
    GL_ASSIGN_OR_RETURN(config, home.loadConfig());
    config_ = config;
    log_ = makeLogger("node", config_.logLevel, config_.logFormat);
    GL_ASSIGN_OR_RETURN(genesisText, readFile(home.genesisFile()));
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(genesisText));
    genesis_ = std::move(genesis);
    signingDomain_ = contracts::signingDomainOf(genesis_);
    GL_ASSIGN_OR_RETURN(rpcToken, home.loadRpcToken(config_));
    rpcToken_ = std::move(rpcToken);
    GL_TRY(openLedger(home));
    // One full proposal and the votes and timeouts around it from each peer, four peers' worth
    // in all: what the first rounds of a new epoch send before this node enters it.
    const std::size_t heldPerPeer = genesis_.consensus.maxBlockBytes + kHeldMessageMargin;
    laterEpoch_ = std::make_unique<HeldMessages>(
        HeldMessages::Limits{kHeldMessagesPerPeer, heldPerPeer, kHeldPeers * heldPerPeer});
    sync_ = std::make_unique<SyncClient>(
        syncHost_, signingDomain_,
        SyncLimits{static_cast<std::uint32_t>(config_.syncBatchBlocks),
                   std::chrono::duration_cast<std::chrono::milliseconds>(kSyncRequestTimeout),
                   kMaxSyncFailures, config_.syncLagBlocks,
                   std::chrono::duration_cast<std::chrono::milliseconds>(kEpochProofInterval)},
        log_);
    GL_TRY(openMempool());
    GL_TRY(openJournal(home));
    openBatches();
    GL_TRY(openConsensus());
    GL_ASSIGN_OR_RETURN(metrics, Metrics::start(config_.metricsAddress, config_.metricsPort));
    metrics_ = std::move(metrics);
    log_->info("metrics listening address={}:{}", config_.metricsAddress, metrics_->port());
    GL_TRY(openNetwork());
    return openRpc(home);
}

Status NodeImpl::openLedger(const Home& home) {
    std::error_code ec;
    std::filesystem::create_directories(home.dataDir(), ec);
    GL_ASSIGN_OR_RETURN(store,
                        storage::KvStore::open(home.dataDir() / "chain", ledger::columnNames(),
                                               ledger::storeOptions()));
    store_ = std::move(store);
    tree_ = std::make_unique<ledger::StateTree>(*store_, ledger::kStateNodesColumn,
                                                ledger::kStateValuesColumn);
    blocks_ = std::make_unique<ledger::BlockStore>(*store_);
    executor_ = std::make_unique<contracts::Executor>(*store_, *tree_, *blocks_, genesis_.chainId,
                                                      signingDomain_);
    consensusStore_ = std::make_unique<ConsensusStore>(*store_, *blocks_);
    barrier_ = std::make_unique<SendBarrier>(*store_);
    GL_ASSIGN_OR_RETURN(first, blocks_->firstHeight());
    firstHeight_ = first;
    GL_ASSIGN_OR_RETURN(executed, blocks_->executedHeight());
    // Admission reads the state at this height from the journal's replay on; executeCommitted
    // moves it as soon as a block's write is done, as the store's own record of it moves.
    executedHeight_.store(executed.value_or(0), std::memory_order_release);
    if (!executed) {
        GL_ASSIGN_OR_RETURN(written, executor_->commitGenesis(genesis_));
        log_->info("genesis written chain_id={} state_root={}", genesis_.chainId,
                   written.roots.stateRoot.hex());
    } else {
        GL_ASSIGN_OR_RETURN(genesisBlock, blocks_->blockAt(0));
        GL_ASSIGN_OR_RETURN(genesisRoots, blocks_->rootsAt(0));
        if (!genesisBlock || !genesisRoots ||
            genesisBlock->id != contracts::genesisBlock(genesis_, genesisRoots->stateRoot).id) {
            return fail(ErrorCode::kConfig,
                        "the database holds another chain than config/genesis.json");
        }
    }
    // A committed block's execution is not fsynced on its own: the block stays in the consensus
    // store until that write is in the log before the prune, and a crash that loses the write
    // loses the prune with it, so the block is executed again at start. The send barrier makes
    // it durable before anything this node signs or sends (docs/protocol.md §8).
    executor_->setSyncedWrites(false);
    return {};
}

Status NodeImpl::openMempool() {
    ledger::MempoolOptions options;
    options.chainId = genesis_.chainId;
    options.signingDomain = signingDomain_;
    options.maxTxs = config_.mempoolMaxTxs;
    options.maxBytes = config_.mempoolMaxBytes;
    options.nonceWindow = config_.mempoolNonceWindow;
    options.maxValidityBlocks = genesis_.consensus.maxValidityBlocks;
    options.committedHeight = executedHeight_.load(std::memory_order_acquire);
    options.verifierThreads = config_.verifyThreads;
    options.feeReader = [this](const codec::Payload& payload) -> Result<std::uint64_t> {
        const std::uint64_t height = executedHeight_.load(std::memory_order_acquire);
        const std::lock_guard lock(feesMutex_);
        if (!fees_ || fees_->first != height) {
            GL_ASSIGN_OR_RETURN(params, contracts::readParams(*tree_, height));
            fees_.emplace(height, params.fees);
        }
        return fees_->second.of(payload);
    };
    auto accounts = [this](const Address& address) -> Result<ledger::AccountView> {
        const std::uint64_t height = executedHeight_.load(std::memory_order_acquire);
        GL_ASSIGN_OR_RETURN(account, contracts::readAccount(*tree_, height, address));
        return ledger::AccountView{account.nonce, account.balance};
    };
    mempool_ = std::make_unique<ledger::Mempool>(options, accounts);
    return {};
}

// What the mempool takes back is journaled again; what it refuses now (committed meanwhile, a stale
// nonce, expired) goes with the segments the journal read it from.
Status NodeImpl::openJournal(const Home& home) {
    if (!config_.mempoolJournal) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(journal, AdmissionJournal::open(home.dataDir() / "admission"));
    journal_ = std::move(journal);
    GL_ASSIGN_OR_RETURN(entries, journal_->entries());
    std::size_t admitted = 0;
    for (const JournalEntry& entry : entries) {
        if (mempool_->submit(entry.raw)) {
            journalAdmitted(entry.hash, entry.raw);
            outbox_.add(OutgoingTx{entry.raw, std::nullopt});
            ++admitted;
        }
    }
    GL_TRY(journal_->retireReplayed());
    log_->info("admission journal replayed={} dropped={}", admitted, entries.size() - admitted);
    return {};
}

void NodeImpl::journalAdmitted(const Hash256& hash, ByteView raw) {
    // Gone already only when a block carried it, and then nothing is left to journal.
    if (const auto pending = mempool_->get(hash)) {
        journal_->append(hash, raw, pending->tx->body.validUntilHeight);
    }
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
                                 {},
                                 {},
                                 std::nullopt};
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
    // A ledger started from a snapshot holds the roots of its first height on, not those of the
    // heights below it that the root block's header names: the core knows no execution there.
    for (std::uint64_t h = std::max(data.root.header.execHeight, firstHeight_); h <= *executed;
         ++h) {
        GL_ASSIGN_OR_RETURN(roots, blocks_->rootsAt(h));
        if (!roots) {
            return fail(ErrorCode::kCorrupt, "roots of height " + std::to_string(h) + " missing");
        }
        data.executed.push_back(consensus::ExecRecord{h, roots->stateRoot, roots->resultsRoot});
    }
    // Leader reputation reads the committed chain of this epoch and the previous one up to the
    // root; the previous epoch's certificates name their signers in its committee's order.
    const std::uint64_t window = genesis_.consensus.leaderReputationWindow;
    for (std::uint64_t h = *executed; h > 0 && data.recentCommitted.size() < window; --h) {
        GL_ASSIGN_OR_RETURN(block, blocks_->blockAt(h));
        if (!block || block->header.epoch + 1 < committee.epoch()) {
            break;
        }
        if (block->header.epoch != committee.epoch() && !data.previousCommittee) {
            // The first block of the previous epoch met, its last: the state before it is
            // that epoch's.
            GL_ASSIGN_OR_RETURN(previous, committeeAtHead(genesis_, *blocks_, *tree_, h - 1));
            if (previous.epoch() != block->header.epoch) {
                break;  // an epoch without blocks of its own
            }
            data.previousCommittee = std::move(previous);
        }
        data.recentCommitted.push_back(std::move(block->header));
    }
    std::reverse(data.recentCommitted.begin(), data.recentCommitted.end());
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
    validatorNodes_.assign(set.nodeIds.begin(), set.nodeIds.end());
    member_.store(committee.contains(proposer_.publicKey()));
    committee_.store(std::make_shared<const consensus::Committee>(std::move(committee)));
    updateBatchRoster();
    return buildCore();
}

Status NodeImpl::buildCore() {
    GL_ASSIGN_OR_RETURN(recovery, recoveryData(*committee()));
    GL_ASSIGN_OR_RETURN(safety, consensusStore_->loadSafety());
    const consensus::Committee& members = *committee();
    const bool inCommittee = members.contains(proposer_.publicKey());
    if (auto guard = checkDoubleSign(recovery); !guard) {
        if (!inCommittee || members.size() == 1) {
            return guard;  // a lone validator can never see its old votes age out: refuse
        }
        holdSignatures(Hold::kUnrecordedVote, guard.error().message);
    } else if (!safety && inCommittee && members.size() > 1 && hold_ == Hold::kNone) {
        // A fresh or wiped data dir: what this key signed before, if anything, is unknown.
        holdSignatures(Hold::kNoSafetyData,
                       "no safety data: signing waits until this node is at the head of the "
                       "chain and no recent certificate holds a vote of its key");
    }
    inFlight_.clear();
    for (const auto& block : recovery.blocks) {
        track(block);
    }
    consensus::Options options;
    options.chainId = signingDomain_;
    options.t0Ms = genesis_.consensus.roundTimeoutMs;
    options.emptyBlockIntervalMs = genesis_.consensus.emptyBlockIntervalMs;
    options.maxClockDriftMs = genesis_.consensus.maxClockDriftMs;
    options.blockTimeMs = genesis_.consensus.blockTimeMs;
    options.maxBlockTxs = genesis_.consensus.maxBlockTxs;
    options.maxBlockBytes = genesis_.consensus.maxBlockBytes;
    options.committeeMax = genesis_.consensus.committeeMax;
    options.leaderReputationWindow = genesis_.consensus.leaderReputationWindow;
    auto signer = std::make_unique<consensus::KeySigner>(validatorKey_);
    GL_ASSIGN_OR_RETURN(core, consensus::Core::create(options, recovery, std::move(signer)));
    if (!runner_) {
        runner_ = std::make_unique<consensus::Runner>(
            adaptor_, signingDomain_, std::make_unique<consensus::KeySigner>(validatorKey_));
    }
    runner_->reset(std::move(core));
    return {};
}

Status NodeImpl::openNetwork() {
    p2p::Options options;
    options.listenHost = config_.p2pAddress;
    options.listenPort = config_.p2pPort;
    options.allowed = allowedNodes();
    options.persistentPeers = config_.persistentPeers;
    options.timers.reconnectCap = kReconnectCap;
    options.logger = makeLogger("p2p", config_.logLevel, config_.logFormat);
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

Status NodeImpl::openRpc(const Home& home) {
    rpc::ChainContext context;
    context.chainId = genesis_.chainId;
    context.genesisHash = contracts::genesisHash(genesis_);
    context.mempool = mempool_.get();
    context.blocks = blocks_.get();
    context.tree = tree_.get();
    context.blockAnswers = std::make_shared<rpc::BlockAnswers>();
    context.txAdmitted = [this](const Hash256& hash, ByteView raw) {
        if (journal_) {
            journalAdmitted(hash, raw);
        }
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
                               sync_->syncing()};
    };
    context.peers = [this] {
        std::vector<rpc::PeerView> out;
        for (const auto& id : network_->connectedPeers()) {
            if (const auto info = network_->peerInfo(id)) {
                out.push_back(rpc::PeerView{info->nodeId, info->outbound, info->remoteAddress});
            }
        }
        return out;
    };
    rpc::ServerOptions options;
    options.address = config_.rpcAddress;
    options.port = config_.rpcPort;
    options.ioThreads = config_.rpcThreads;
    options.ioNice = config_.rpcNice;
    options.limits.maxBodyBytes = config_.rpcMaxBodyBytes;
    options.limits.maxBatchItems = config_.rpcMaxBatch;
    options.limits.maxConnections = config_.rpcMaxConnections;
    options.limits.maxWsConnections = config_.rpcMaxWsConnections;
    options.limits.maxSubscriptions = config_.rpcMaxSubscriptions;
    options.limits.maxSendBufferBytes = config_.rpcMaxSendBufferBytes;
    options.limits.idleTimeout = std::chrono::milliseconds(config_.rpcIdleTimeoutMs);
    options.limits.requestTimeout = std::chrono::milliseconds(config_.rpcRequestTimeoutMs);
    options.limits.maxResponseBytes = config_.rpcMaxResponseBytes;
    options.feed = [context](std::uint64_t height) {
        return rpc::notificationsAt(context, height);
    };
    options.notifyInterval = std::chrono::milliseconds(config_.rpcNotifyIntervalMs);
    options.readiness = [this] { return notReady(); };
    options.submitRaw = [this, admitted = context.txAdmitted](std::span<const ByteView> raws) {
        auto outcomes = mempool_->submitBatch(raws);
        for (std::size_t i = 0; i < raws.size(); ++i) {
            if (outcomes[i]) {
                admitted(*outcomes[i], raws[i]);
            }
        }
        return outcomes;
    };
    options.settle = [this] { return journal_ ? journal_->awaitDurable() : Status{}; };
    if (config_.rpcAdminPort != 0) {
        // Loopback only (checked when the config was read), with the defaults' Host and Origin
        // checks and no token: whoever can reach it is already on the machine.
        rpc::MethodTable adminMethods;
        GL_TRY(rpc::addNodeMethods(adminMethods, context, rpc::Listener::kAdmin));
        rpc::ServerOptions admin = options;
        admin.address = config_.rpcAdminAddress;
        admin.port = config_.rpcAdminPort;
        admin.ioThreads = 1;
        adminRpc_ = std::make_unique<rpc::Server>(std::move(adminMethods), admin);
        GL_TRY(adminRpc_->start());
        log_->info("rpc admin listening address={}:{}", config_.rpcAdminAddress, adminRpc_->port());
    }
    rpc::MethodTable methods;
    GL_TRY(rpc::addNodeMethods(methods, context, rpc::Listener::kPublic));
    options.access.allowedHosts = config_.rpcAllowedHosts;
    options.access.allowedOrigins = config_.rpcAllowedOrigins;
    options.access.bearerToken = rpcToken_;
    options.adminOnlyMethods = rpc::withAliases(rpc::adminMethodNames());
    options.explorerDir = home.explorerDir(config_);
    rpc_ = std::make_unique<rpc::Server>(std::move(methods), options);
    GL_TRY(rpc_->start());
    log_->info("rpc listening address={}:{} token={} explorer={}", config_.rpcAddress, rpc_->port(),
               rpcToken_.empty() ? "none" : "required",
               options.explorerDir.empty() ? "off" : "/explorer/");
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
    if (adminRpc_) {
        adminRpc_->stop();
    }
    network_->stop();
    mempool_->shutdown();
    consensusWork_.stop();
    peerWork_.stop();
    consensusWork_.join();
    peerWork_.join();
    if (failed_) {
        return std::unexpected(failure_);
    }
    return {};
}

void NodeImpl::deliver(EventBody body) {
    if (halted_.load() || failed_) {
        return;
    }
    runner_->holdSignatures(hold_.load() != Hold::kNone);
    runner_->deliver(std::move(body));
    if (!runner_->hasCore()) {
        return;
    }
    const consensus::Core& core = runner_->core();
    metrics_->consensusState(core.currentRound(), core.highestQc().round, store_->walSyncs());
    metrics_->mempool(mempool_->size(), mempool_->bytes(), mempool_->verifyPool().verifiedCount());
    const BatchExchange::Stats batches = batches_->stats();
    metrics_->batches(batches.made, batches.certified, batches.admittedCertified,
                      batches.verifiedHere);
    epoch_.store(core.highestQc().epoch, std::memory_order_relaxed);
    round_.store(core.currentRound(), std::memory_order_relaxed);
    highestQcRound_.store(core.highestQc().round, std::memory_order_relaxed);
}

Result<ledger::ExecRoots> NodeImpl::executeCommitted(const codec::Block& block,
                                                     const codec::QuorumCert& certifying) {
    // The roots this block certifies must be this node's own: a node whose state left the
    // certified one stops rather than execute and serve more of it. A node started from a
    // snapshot has no roots of the heights below its first one, which its certificates vouch for.
    if (block.header.execHeight >= firstHeight_) {
        GL_ASSIGN_OR_RETURN(local, blocks_->rootsAt(block.header.execHeight));
        GL_TRY(checkCertifiedRoots(block.header, local));
    }
    const auto started = std::chrono::steady_clock::now();
    GL_ASSIGN_OR_RETURN(done,
                        executor_->executeAndCommit(block, certifying, [this](const Hash256& hash) {
                            return mempool_->known(hash);
                        }));
    barrier_->wrote(false);
    // Before the mempool learns of the block: admission that sees its commit reads this height.
    executedHeight_.store(block.header.height, std::memory_order_release);
    const auto failed = std::count_if(done.receipts.begin(), done.receipts.end(),
                                      [](const auto& r) { return !r.success(); });
    metrics_->blockCommitted(
        block.header.height, done.receipts.size(), static_cast<std::size_t>(failed),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    std::vector<Hash256> hashes;
    hashes.reserve(done.receipts.size());
    for (const auto& receipt : done.receipts) {
        hashes.push_back(receipt.txHash);
    }
    mempool_->onCommitted(hashes, block.header.height);
    if (journal_) {
        journal_->prune(hashes, block.header.height + 1);
    }
    log_->debug("committed height={} txs={} state_root={}", block.header.height, block.txs.size(),
                done.roots.stateRoot.hex());
    if (rpc_) {
        rpc_->publishExecuted(block.header.height);  // WebSocket subscriptions (docs/rpc.md)
        if (adminRpc_) {
            adminRpc_->publishExecuted(block.header.height);
        }
    }
    return done.roots;
}

Result<std::optional<consensus::EpochChange>> NodeImpl::endEpochIfChanged(
    const codec::Block& block) {
    GL_ASSIGN_OR_RETURN(next, nextEpochAfter(*tree_, block, *committee(), signingDomain_,
                                             genesis_.consensus.committeeMax));
    if (!next) {
        return std::optional<consensus::EpochChange>{};  // no change
    }
    for (std::size_t i = 0; i < next->validators.size() && i < next->nodeIds.size(); ++i) {
        nodeIds_.insert_or_assign(next->validators[i], next->nodeIds[i]);
    }
    // Validators added by governance may connect from now on, removed ones no longer.
    validatorNodes_.assign(next->nodeIds.begin(), next->nodeIds.end());
    if (network_) {
        network_->setAllowed(allowedNodes());
    }
    log_->info("epoch change height={} epoch={} members={} member={}", block.header.height,
               next->committee.epoch(), next->committee.size(),
               next->committee.contains(proposer_.publicKey()));
    member_.store(next->committee.contains(proposer_.publicKey()));
    committee_.store(std::make_shared<const consensus::Committee>(next->committee));
    updateBatchRoster();
    // Messages of the new epoch that came early are checked again, after the core entered it.
    for (auto& [from, message] : laterEpoch_->take()) {
        onPeerMessage(from, std::move(message));
    }
    return std::optional<consensus::EpochChange>{
        consensus::EpochChange{block, std::move(next->validators)}};
}

std::set<NodeId> NodeImpl::allowedNodes() const {
    std::set<NodeId> allowed(validatorNodes_.begin(), validatorNodes_.end());
    allowed.insert(config_.allowedNodes.begin(), config_.allowedNodes.end());
    return allowed;
}

Status NodeImpl::storeCommitProofs(const std::vector<HeightProof>& proofs) {
    if (proofs.empty()) {
        return {};
    }
    auto batch = store_->batch();
    for (const auto& [height, proof] : proofs) {
        blocks_->stageCommitProof(batch, height, proof);
    }
    return store_->write(batch, false);
}

void NodeImpl::track(const codec::Block& block) {
    InFlight entry{block.header.height, block.header.parentId, block.headerBytes, {}};
    entry.txHashes.reserve(block.txs.size());
    for (const auto& tx : block.txs) {
        entry.txHashes.push_back(crypto::sha256(tx));
    }
    inFlight_.emplace(block.id, std::move(entry));
}

void NodeImpl::signalPayload() {
    if (!payloadSignalled_.exchange(true)) {
        asio::post(io_, [this] {
            payloadSignalled_.store(false);
            deliver(consensus::PayloadAvailable{});
        });
    }
}

void NodeImpl::halt(const Error& error) {
    if (halted_.load()) {
        return;
    }
    log_->critical("halted: consensus and sync stopped, reads still served reason={} detail={}",
                   error.reason(), error.message);
    haltReason_ = std::string(error.reason()) + ": " + error.message;
    halted_.store(true);
    runner_->stop();
    syncTimer_.cancel();
    sync_->abandon();
}

std::optional<std::string> NodeImpl::notReady() const {
    if (halted_.load()) {
        return "halted: " + haltReason_;
    }
    if (sync_->syncing()) {
        return "syncing";
    }
    if (hold_.load() != Hold::kNone) {
        return "signing held until this validator is at the head and the start-up guard passes";
    }
    const std::uint64_t executed = executedHeight_.load(std::memory_order_relaxed);
    const std::uint64_t seen = seenHeight_.load(std::memory_order_relaxed);
    if (!member_.load(std::memory_order_relaxed) && seen > executed &&
        seen - executed > config_.syncLagBlocks) {
        return "behind: executed height " + std::to_string(executed) + ", proposals at " +
               std::to_string(seen);
    }
    return std::nullopt;
}

void NodeImpl::stopFor(const Error& error) {
    if (error.code == ErrorCode::kDiverged) {
        halt(error);
    } else {
        fatal(error);
    }
}

void NodeImpl::fatal(const Error& error) {
    log_->critical("stopping: reason={} detail={}", error.reason(), error.message);
    failed_ = true;
    failure_ = error;
    if (runner_) {
        runner_->stop();  // nothing after a failed write leaves the process
    }
    io_.stop();
}

Result<std::unique_ptr<Node>> Node::start(const Home& home) {
    GL_ASSIGN_OR_RETURN(config, home.loadConfig());
    const auto log = makeLogger("node", config.logLevel, config.logFormat);
    Passphrase passphrase(PassphraseSource{
        .file = config.keyPassphraseFile.empty() ? std::filesystem::path()
                                                 : home.root() / config.keyPassphraseFile,
        .envVar = config.keyPassphraseEnv,
        .prompt = true,
        .hint =
            "set passphrase_file or passphrase_env in [keys] of " + home.configFile().string()});
    GL_ASSIGN_OR_RETURN(key, home.loadKey(std::string(kConsensusKeyName), passphrase));
    GL_ASSIGN_OR_RETURN(nodeKey, home.loadNodeKey(passphrase));
    std::string plain;
    for (const char* name : {"validator", "node"}) {
        if (!home.keyEncrypted(name).value_or(false)) {
            plain += (plain.empty() ? "" : ", ") + std::string(name);
        }
    }
    if (!plain.empty()) {
        // Said on every start so that a production home with plain keys is noticed.
        log->warn("keys are stored unencrypted: {} (dev chain only; see docs/operations.md)",
                  plain);
    }
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
