// The event queue, delivery of messages and local events, crashes and restarts.
#include "sim/simulator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/safety_rules.h>
#include <gridledger/crypto/sha256.h>

#include "sim/weak_rules.h"

namespace gridledger::sim {
namespace {

/** Endless mempools (latency measurements) hold this many transactions. */
constexpr std::size_t kEndlessMempool = std::size_t{1} << 40U;

/** The state before the first block. It depends on the seed, and so does the genesis block
 * that records it, and the leader schedule drawn from the genesis id. */
consensus::ExecRecord genesisStateOf(std::uint64_t seed) {
    const std::string tag = "gridledger-sim/genesis/" + std::to_string(seed);
    return consensus::ExecRecord{0, crypto::sha256(asBytes(tag + "/state")),
                                 crypto::sha256(asBytes(tag + "/results"))};
}

codec::Block makeGenesis(const consensus::ExecRecord& state) {
    codec::BlockHeader header;
    header.timestampMs = kClockBaseMs;
    header.execStateRoot = state.stateRoot;
    header.execResultsRoot = state.resultsRoot;
    return codec::makeBlock(header, {});
}

consensus::Committee makeCommittee(const Keyring& keys, const codec::Block& genesis,
                                   const Scenario& s) {
    std::vector<PubKey> validators = keys.publicKeys();
    if (!s.validatorSets.empty()) {
        validators.clear();
        for (const auto key : s.validatorSets.front()) {
            validators.push_back(keys.publicKey(key));
        }
    }
    const Hash256 seed = consensus::epochSeedOf(s.options.chainId, genesis.id, 0);
    const auto members =
        consensus::selectCommittee(validators, s.options.chainId, 0, seed, s.options.committeeMax);
    return consensus::Committee::create(s.options.chainId, 0, genesis.id, members.value()).value();
}

/** A message's size on the wire: the frame's u32 length and the envelope holding it. */
std::uint64_t frameBytes(codec::MessageKind kind, Bytes payload) {
    return 4 + codec::encodeEnvelope(codec::NetMessage{kind, std::move(payload)}).size();
}

/** Block sync's log in the simulator: off (thousands of runs). */
std::shared_ptr<spdlog::logger> quietLogger() {
    static const auto logger = [] {
        auto made = std::make_shared<spdlog::logger>("sim-sync");
        made->set_level(spdlog::level::off);
        return made;
    }();
    return logger;
}

std::mt19937_64 runRng(const Scenario& s) {
    std::seed_seq sequence{
        static_cast<std::uint32_t>(s.seed),  static_cast<std::uint32_t>(s.seed >> 32),
        static_cast<std::uint32_t>(s.n),     static_cast<std::uint32_t>(s.faults),
        static_cast<std::uint32_t>(s.rules), 0x5133U};
    return std::mt19937_64(sequence);
}

}  // namespace

consensus::ExecRecord executeBlock(const consensus::ExecRecord& previous,
                                   const codec::Block& block) {
    crypto::Sha256 state;
    state.update(previous.stateRoot.view()).update(block.id.view());
    crypto::Sha256 results;
    results.update(previous.resultsRoot.view()).update(block.header.txsRoot.view());
    return consensus::ExecRecord{block.header.height, state.finish(), results.finish()};
}

Simulator::Simulator(Scenario scenario, RunOptions options)
    : scenario_(std::move(scenario)),
      options_(std::move(options)),
      keys_(scenario_.keyCount()),
      genesisState_(genesisStateOf(scenario_.seed)),
      genesis_(makeGenesis(genesisState_)),
      committee_(makeCommittee(keys_, genesis_, scenario_)),
      committees_{{0, committee_}},
      verifier_(keys_, committees_, scenario_.options.chainId, scenario_.rules),
      checker_(scenario_, committees_, verifier_),
      network_(scenario_),
      trace_(options_.traceDepth),
      rng_(runRng(scenario_)) {
    if (!options_.only.empty()) {
        checker_.checkOnly(options_.only);
    }
    const auto genesis = std::make_shared<const codec::Block>(genesis_);
    instances_.resize(scenario_.instances());
    for (std::size_t i = 0; i < instances_.size(); ++i) {
        Instance& inst = instances_[i];
        inst.key = scenario_.keyOf[i];
        inst.role = scenario_.roles[i];
        inst.adaptor = std::make_unique<InstanceAdaptor>(*this, i);
        inst.runner = std::make_unique<consensus::Runner>(*inst.adaptor, scenario_.options.chainId,
                                                          keys_.signer(inst.key));
        inst.ledger = std::make_unique<LedgerView>(inst.store);
        inst.syncHost = std::make_unique<InstanceSyncHost>(*this, i);
        inst.sync = std::make_unique<node::SyncClient>(
            *inst.syncHost, scenario_.options.chainId,
            node::SyncLimits{scenario_.syncBatchBlocks,
                             std::chrono::milliseconds(scenario_.syncAnswerMs), 3,
                             scenario_.syncLagBlocks, std::chrono::milliseconds(200)},
            quietLogger(), verifier_.signatureCheck());
        inst.store.ledger.push_back(genesis);
        inst.store.ledgerIndex.emplace(genesis->id, 0);
        inst.store.rootQc = consensus::genesisQc(0, genesis->id);
        inst.store.executed.push_back(genesisState_);
        inst.commitTimes.push_back(0);
        inst.mempool = scenario_.endlessMempool ? kEndlessMempool : 0;
        boot(i);
    }
    scheduleInitial();
}

void Simulator::scheduleInitial() {
    for (std::size_t i = 0; i < instances_.size(); ++i) {
        local(i, consensus::Start{});
        if (scenario_.endlessMempool) {
            local(i, consensus::PayloadAvailable{});
        }
    }
    for (const auto& crash : scenario_.crashes) {
        schedule(crash.atMs,
                 Item{crash.instance, 0, crash.midStep ? Control::kCrashMidStep : Control::kCrash});
        if (crash.restartMs) {
            schedule(*crash.restartMs, Item{crash.instance, 0, Control::kRestart});
        }
    }
    if (!scenario_.endlessMempool) {
        schedule(between(rng_, 1, 2 * scenario_.txIntervalMs), Item{0, 0, Control::kTxArrival});
    }
}

RunResult Simulator::run() {
    while (!queue_.empty() && (options_.keepGoing || !checker_.failed()) &&
           queue_.begin()->first.first <= scenario_.endMs) {
        stepOnce();
        if (scenario_.checkLiveness && checker_.liveDone() && reconfigDone()) {
            break;
        }
    }
    if (scenario_.checkLiveness && !checker_.failed() && !checker_.liveDone()) {
        checker_.flag("liveness", "the run ended before every honest instance committed", now_);
    }
    if (scenario_.checkLiveness && !checker_.failed() && !reconfigDone()) {
        checker_.flag("liveness",
                      "the run ended before every honest instance reached the last epoch", now_);
    }
    return result();
}

bool Simulator::runUntil(const std::function<bool()>& done, std::uint64_t untilMs) {
    while (!done() && !checker_.failed() && !queue_.empty() &&
           queue_.begin()->first.first <= untilMs) {
        stepOnce();
    }
    return done();
}

void Simulator::stepOnce() {
    auto node = queue_.extract(queue_.begin());
    now_ = node.key().first;
    if (!gstMarked_ && scenario_.checkLiveness && now_ >= scenario_.gstMs) {
        markGst();
    }
    checker_.onClock(now_);
    ++steps_;
    dispatch(node.mapped());
}

void Simulator::markGst() {
    gstMarked_ = true;
    std::uint64_t r0 = 1;
    for (const auto& inst : instances_) {
        if (inst.core()) {
            r0 = std::max(r0, inst.core()->currentRound());
        }
    }
    // The latest committee leads from now on (instance k holds key k for every key).
    const consensus::Committee& committee = committees_.rbegin()->second;
    const auto good = [&](std::uint64_t round) {
        return scenario_.roles[keys_.indexOf(committee.leaderOf(round))] == Role::kHonest;
    };
    // The first run of `window` rounds with honest leaders from r0 on (the scan is bounded: with
    // at most f faulty members, pseudo-random leaders give such runs often).
    const std::uint64_t window = scenario_.liveCommits + 2;
    std::uint64_t w = r0;
    std::uint64_t run = 0;
    for (std::uint64_t r = r0; run < window && r < r0 + 100'000; ++r) {
        if (!good(r)) {
            run = 0;
        } else if (run++ == 0) {
            w = r;
        }
    }
    std::uint64_t maxDelay = 0;
    for (const auto& link : scenario_.links) {
        maxDelay = std::max(maxDelay, link.maxMs);
    }
    const std::uint64_t rounds = w + window - r0 + scenario_.livenessSlackRounds;
    const std::uint64_t perRound =
        consensus::roundTimeoutMs(scenario_.options.t0Ms, consensus::kMaxBackoffSteps) +
        4 * maxDelay + scenario_.options.emptyBlockIntervalMs;
    checker_.startLiveness(now_, rounds * perRound);
}

void Simulator::dispatch(const Item& item) {
    Instance& inst = instances_[item.to];
    if (const auto* message = std::get_if<NetMessage>(&item.what)) {
        if (inst.up) {
            receive(item.to, *message);
        }
    } else if (const auto* body = std::get_if<EventBody>(&item.what)) {
        if (inst.up && item.incarnation == inst.incarnation) {
            step(item.to, *body);
        }
    } else if (const auto* timer = std::get_if<SyncTimer>(&item.what)) {
        if (inst.up && item.incarnation == inst.incarnation) {
            syncTimer(item.to, *timer);
        }
    } else if (const auto* batch = std::get_if<BatchTimer>(&item.what)) {
        if (inst.up && item.incarnation == inst.incarnation) {
            batchTimer(item.to, *batch);
        }
    } else {
        control(item.to, std::get<Control>(item.what));
    }
}

bool Simulator::reconfigDone() const {
    if (scenario_.validatorSets.empty()) {
        return true;
    }
    // Every honest instance is in the last epoch and committed liveCommits blocks of it.
    const std::uint64_t last = scenario_.validatorSets.size() - 1;
    const std::uint64_t target = scenario_.reconfigHeight(last - 1) + scenario_.liveCommits;
    for (std::size_t i = 0; i < instances_.size(); ++i) {
        const Instance& inst = instances_[i];
        if (scenario_.roles[i] == Role::kHonest &&
            (!inst.core() || inst.core()->committee().epoch() != last ||
             inst.store.ledger.size() <= target)) {
            return false;
        }
    }
    return true;
}

bool Simulator::epochAdmits(std::size_t i, std::size_t from, std::uint64_t epoch) {
    Instance& inst = instances_[i];
    if (!inst.core() || epoch <= inst.core()->committee().epoch()) {
        return true;  // an older epoch's message still reaches the core, which must refuse it
    }
    if (scenario_.rules == RulesVariant::kClaimStartsSync) {
        if (!inst.sync->active()) {
            inst.sync->start(nodeIdOf(from));  // the negative control: a claim is taken as proof
        }
        return false;
    }
    // Unverifiable here (the committee of that epoch is unknown): block sync asks `from` for
    // the proof that ended this instance's epoch.
    inst.sync->onLaterEpoch(nodeIdOf(from));
    return false;
}

template <typename BlockEvent>
void Simulator::routeBlock(std::size_t i, std::size_t from, BlockEvent event) {
    Instance& inst = instances_[i];
    const std::uint64_t height = event.block.header.height;
    const std::uint64_t certified = inst.core()->certifiedHeight();
    if (!inst.sync->farAhead(height, certified)) {
        step(i, std::move(event));
    } else {
        inst.sync->offer(nodeIdOf(from), height, certified);
    }
}

template <typename BlockEvent>
Status Simulator::deliverBlock(std::size_t i, std::size_t from, BlockEvent event) {
    if (!scenario_.certifiedBatches) {
        routeBlock(i, from, std::move(event));
        return {};
    }
    GL_ASSIGN_OR_RETURN(missing, missingBatches(i, event.block));
    if (missing.empty()) {
        routeBlock(i, from, std::move(event));
    } else {
        const Hash256 id = event.block.id;
        instances_[i].held.insert_or_assign(id, Instance::Held{from, std::move(event), missing});
    }
    return {};
}

void Simulator::releaseHeld(std::size_t i, const Hash256& digest) {
    Instance& inst = instances_[i];
    inst.fetching.erase(digest);
    std::vector<Instance::Held> ready;
    for (auto it = inst.held.begin(); it != inst.held.end();) {
        it->second.missing.erase(digest);
        if (it->second.missing.empty()) {
            ready.push_back(std::move(it->second));
            it = inst.held.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& held : ready) {
        if (inst.core()) {
            std::visit([&](auto& event) { routeBlock(i, held.from, std::move(event)); },
                       held.event);
        }
    }
}

void Simulator::receive(std::size_t i, const NetMessage& message) {
    if (const auto* p2p = std::get_if<p2p::Message>(&message.payload)) {
        peerMessage(i, message.from, *p2p);
        return;
    }
    if (scenario_.rules == RulesVariant::kClaimStartsSync && instances_[i].sync->active() &&
        !std::holds_alternative<FetchRequest>(message.payload)) {
        return;  // the negative control: an instance in sync hands its core nothing
    }
    std::visit(
        [&](const auto& payload) {
            using T = std::decay_t<decltype(payload)>;
            Status ok;
            if constexpr (std::is_same_v<T, consensus::BlockPtr>) {
                if (!epochAdmits(i, message.from, payload->header.epoch)) {
                    return;
                }
                const auto& h = payload->header;
                note(i, message.from, TraceKind::kProposal, h.round, h.height, &payload->id);
                ok = verifier_.proposal(*payload);
                if (ok) {
                    if (instances_[i].role == Role::kSyncLiar) {
                        liarSaw(i, message.from, payload);
                    }
                    ok = deliverBlock(i, message.from, consensus::ProposalReceived{*payload});
                }
            } else if constexpr (std::is_same_v<T, codec::Vote>) {
                if (!epochAdmits(i, message.from, payload.epoch)) {
                    return;
                }
                note(i, message.from, TraceKind::kVote, payload.round, 0, &payload.blockId);
                ok = verifier_.vote(payload);
                if (ok) {
                    if (instances_[i].role == Role::kSyncLiar) {
                        liarSawVote(i, payload);
                    }
                    step(i, consensus::VoteReceived{payload});
                }
            } else if constexpr (std::is_same_v<T, codec::Timeout>) {
                if (!epochAdmits(i, message.from, payload.epoch)) {
                    return;
                }
                note(i, message.from, TraceKind::kTimeout, payload.round, payload.highQc.round);
                ok = verifier_.timeout(payload);
                if (ok) {
                    if (instances_[i].role == Role::kSyncLiar) {
                        liarClaims(i, message.from);
                    }
                    step(i, consensus::TimeoutReceived{payload});
                    if (instances_[i].role == Role::kTcForger) {
                        forgeTc(i, payload);
                    }
                }
            } else if constexpr (std::is_same_v<T, codec::TimeoutCert>) {
                if (!epochAdmits(i, message.from, payload.epoch)) {
                    return;
                }
                note(i, message.from, TraceKind::kTc, payload.round, 0);
                ok = verifier_.timeoutCert(payload);
                if (ok) {
                    step(i, consensus::TimeoutCertReceived{payload});
                }
            } else if constexpr (std::is_same_v<T, codec::QuorumCert>) {
                if (!epochAdmits(i, message.from, payload.epoch)) {
                    return;
                }
                note(i, message.from, TraceKind::kQc, payload.round, 0, &payload.blockId);
                ok = verifier_.quorumCert(payload);
                if (ok) {
                    step(i, consensus::QcReceived{payload});
                }
            } else if constexpr (std::is_same_v<T, FetchRequest>) {
                answerFetch(i, message.from, payload.id);
            } else if constexpr (std::is_same_v<T, BatchPut>) {
                onBatchPut(i, message.from, payload);
            } else if constexpr (std::is_same_v<T, BatchAck>) {
                onBatchAck(i, payload);
            } else if constexpr (std::is_same_v<T, BatchCertMsg>) {
                ok = onBatchCert(i, payload.cert);
            } else if constexpr (std::is_same_v<T, BatchRequest>) {
                onBatchRequest(i, message.from, payload.digest);
            } else if constexpr (std::is_same_v<T, BatchReply>) {
                onBatchReply(i, payload.batch);
            } else if constexpr (std::is_same_v<T, FetchReply>) {
                if (!epochAdmits(i, message.from, payload.block->header.epoch)) {
                    return;
                }
                const auto& h = payload.block->header;
                note(i, message.from, TraceKind::kFetched, h.round, h.height, &payload.block->id);
                ok = verifier_.proposal(*payload.block);
                if (ok) {
                    ok = deliverBlock(i, message.from, consensus::BlockFetched{*payload.block});
                }
            }
            if (!ok && (instances_[message.from].role == Role::kTcForger ||
                        instances_[message.from].role == Role::kSyncLiar ||
                        instances_[message.from].role == Role::kBatchForger)) {
                ++refusedForgeries_;  // what a forger makes up is refused, as it must be
            } else if (!ok) {
                checker_.flag("bad-message",
                              "instance=i" + std::to_string(i) + " from i" +
                                  std::to_string(message.from) + ": " + ok.error().message,
                              now_);
            }
        },
        message.payload);
}

void Simulator::control(std::size_t i, Control what) {
    Instance& inst = instances_[i];
    switch (what) {
        case Control::kCrash:
            if (inst.up) {
                crashNow(i);
            }
            break;
        case Control::kCrashMidStep:
            inst.crashArmed = inst.up;
            break;
        case Control::kRestart:
            inst.crashArmed = false;
            if (!inst.up) {
                restart(i);
            }
            break;
        case Control::kTxArrival:
            arriveTxs();
            break;
    }
}

void Simulator::arriveTxs() {
    const std::size_t target = between(rng_, 0, instances_.size() - 1);
    Instance& inst = instances_[target];
    if (inst.up && scenario_.certifiedBatches) {
        makeBatch(target, between(rng_, 1, scenario_.txBatchMax));
    } else if (inst.up) {
        inst.mempool += between(rng_, 1, scenario_.txBatchMax);
        local(target, consensus::PayloadAvailable{});
    }
    schedule(now_ + between(rng_, 1, 2 * scenario_.txIntervalMs), Item{0, 0, Control::kTxArrival});
}

void Simulator::step(std::size_t i, const EventBody& body) {
    Instance& inst = instances_[i];
    if (!inst.core()) {
        return;  // down: dispatch() delivers nothing to a crashed instance
    }
    inst.runner->deliver(body);
    if (inst.dying) {
        crashNow(i);
    }
}

namespace {

/** Puts back the value a write replaced, or removes the key it added. */
template <typename Map, typename Value>
void restore(Map& map, const Hash256& key, const std::optional<Value>& previous) {
    if (previous) {
        map[key] = *previous;
    } else {
        map.erase(key);
    }
}

}  // namespace

void Simulator::loseUnsynced(std::size_t i) {
    Instance& inst = instances_[i];
    if (inst.unsynced.empty()) {
        return;
    }
    Store& st = inst.store;
    for (std::size_t lost = between(rng_, 0, inst.unsynced.size()); lost > 0; --lost) {
        const Unsynced& undo = inst.unsynced.back();
        switch (undo.kind) {
            case Unsynced::Kind::kBlock:
                restore(st.blocks, undo.id, undo.block);
                break;
            case Unsynced::Kind::kQc:
                restore(st.qcs, undo.id, undo.qc);
                break;
            case Unsynced::Kind::kTc:
                st.tc = undo.tc;
                break;
        }
        inst.unsynced.pop_back();
    }
    inst.unsynced.clear();
}

void Simulator::crashNow(std::size_t i) {
    Instance& inst = instances_[i];
    loseUnsynced(i);
    note(i, i, TraceKind::kCrash, 0, inst.store.ledger.size() - 1);
    inst.up = false;
    inst.crashArmed = false;
    inst.dying = false;
    inst.runner->clear();
    inst.sync->abandon();  // a sync lives in memory only
    inst.held.clear();     // so do held blocks, fetches and the acknowledgements of own batches
    inst.fetching.clear();
    inst.acks.clear();
    inst.awaiting.clear();
    inst.silent.clear();
    ++inst.incarnation;  // its timers and loopback events die with it
}

void Simulator::crash(std::size_t i) {
    if (instances_.at(i).up) {
        crashNow(i);
    }
}

void Simulator::restart(std::size_t i) {
    Instance& inst = instances_[i];
    inst.up = true;
    ++inst.restarts;
    note(i, i, TraceKind::kRestart, inst.store.safety.lastVotedRound, inst.store.ledger.size() - 1);
    boot(i);
    if (inst.core()) {
        local(i, consensus::Start{});
        if (scenario_.endlessMempool) {
            local(i, consensus::PayloadAvailable{});
        }
    }
}

consensus::RecoveryData Simulator::recoveryOf(std::size_t i) const {
    const Store& st = instances_[i].store;
    // The committee of the ledger's epoch (its reconfiguration blocks name them all).
    consensus::RecoveryData data{committees_.at(st.epoch),
                                 st.safety,
                                 *st.ledger.back(),
                                 st.rootQc,
                                 {},
                                 {},
                                 st.tc,
                                 {},
                                 {},
                                 std::nullopt};
    // The committed chain of the epoch and the previous one, newest last, for leader reputation.
    const std::size_t window = scenario_.options.leaderReputationWindow;
    for (auto it = st.ledger.rbegin();
         it != st.ledger.rend() && (*it)->header.epoch + 1 >= st.epoch &&
         data.recentCommitted.size() < window;
         ++it) {
        data.recentCommitted.push_back((*it)->header);
    }
    if (const auto previous = committees_.find(st.epoch - 1);
        st.epoch > 0 && previous != committees_.end()) {
        data.previousCommittee = previous->second;
    }
    std::reverse(data.recentCommitted.begin(), data.recentCommitted.end());
    for (const auto& entry : st.blocks) {
        data.blocks.push_back(*entry.second);
    }
    for (const auto& entry : st.qcs) {
        data.qcs.push_back(entry.second);
    }
    const std::uint64_t from = st.ledger.back()->header.execHeight;
    data.executed.assign(st.executed.begin() + static_cast<std::ptrdiff_t>(from),
                         st.executed.end());
    return data;
}

void Simulator::boot(std::size_t i) {
    Instance& inst = instances_[i];
    auto core = consensus::Core::create(scenario_.options, recoveryOf(i), keys_.signer(inst.key),
                                        makeRules(scenario_.rules));
    if (!core) {
        inst.up = false;
        checker_.flag("recovery", "instance=i" + std::to_string(i) + ": " + core.error().message,
                      now_);
        return;
    }
    inst.runner->reset(std::move(*core));
}

void Simulator::schedule(std::uint64_t atMs, Item item) {
    queue_.emplace(std::make_pair(atMs, sequence_++), std::move(item));
}

void Simulator::local(std::size_t i, EventBody body, std::uint64_t delayMs) {
    schedule(now_ + delayMs, Item{i, instances_[i].incarnation, std::move(body)});
}

std::optional<std::uint64_t> Simulator::roundOf(const Payload& payload) {
    return std::visit(
        [](const auto& value) -> std::optional<std::uint64_t> {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, consensus::BlockPtr>) {
                return value->header.round;
            } else if constexpr (std::is_same_v<T, FetchReply>) {
                return value.block->header.round;  // a block travels in its own round
            } else if constexpr (std::is_same_v<T, codec::Vote> ||
                                 std::is_same_v<T, codec::Timeout> ||
                                 std::is_same_v<T, codec::TimeoutCert> ||
                                 std::is_same_v<T, codec::QuorumCert>) {
                return value.round;
            } else {
                return std::nullopt;
            }
        },
        payload);
}

std::uint64_t Simulator::wireBytes(const Payload& payload) {
    using codec::MessageKind;
    return std::visit(
        [](const auto& value) -> std::uint64_t {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, consensus::BlockPtr>) {
                return frameBytes(MessageKind::kProposal, codec::encodeBlock(*value));
            } else if constexpr (std::is_same_v<T, codec::Vote>) {
                return frameBytes(MessageKind::kVote, codec::encodeVote(value));
            } else if constexpr (std::is_same_v<T, codec::Timeout>) {
                return frameBytes(MessageKind::kTimeout, codec::encodeTimeout(value));
            } else if constexpr (std::is_same_v<T, codec::TimeoutCert>) {
                return frameBytes(MessageKind::kTimeoutCert, codec::encodeTc(value));
            } else if constexpr (std::is_same_v<T, codec::QuorumCert>) {
                return frameBytes(MessageKind::kQuorumCert, codec::encodeQc(value));
            } else if constexpr (std::is_same_v<T, FetchRequest>) {
                return frameBytes(MessageKind::kBlockRequest,
                                  codec::encodeBlockRequest(codec::BlockRequest{value.id}));
            } else if constexpr (std::is_same_v<T, FetchReply>) {
                return frameBytes(MessageKind::kBlockResponse, codec::encodeBlock(*value.block));
            } else if constexpr (std::is_same_v<T, p2p::Message>) {
                return frameBytes(value.kind, value.payload);
            } else {
                // Certified batches have no wire form yet: the runs that count traffic carry none.
                return 0;
            }
        },
        payload);
}

void Simulator::send(std::size_t from, std::size_t to, const Payload& payload) {
    if (options_.countTraffic) {
        Traffic& sent = instances_[from].sent;
        ++sent.messages;
        sent.bytes += wireBytes(payload);
    }
    for (const std::uint64_t delay : network_.delays(from, to, now_, roundOf(payload), rng_)) {
        schedule(now_ + delay, Item{to, 0, NetMessage{from, payload}});
    }
}

void Simulator::note(std::size_t i, std::size_t peer, TraceKind kind, std::uint64_t round,
                     std::uint64_t height, const Hash256* id) {
    trace_.add(TraceEntry{now_, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(peer),
                          kind, round, height, id ? Trace::prefix(*id) : 0});
}

std::optional<std::uint64_t> Simulator::proposedAt(const Hash256& id) const {
    const auto it = proposedAt_.find(id);
    if (it == proposedAt_.end()) {
        return std::nullopt;
    }
    return it->second;
}

consensus::Committee genesisCommitteeOf(const Scenario& scenario) {
    return makeCommittee(Keyring(scenario.keyCount()), makeGenesis(genesisStateOf(scenario.seed)),
                         scenario);
}

RunResult Simulator::result() const {
    RunResult r;
    r.violation = checker_.violation();
    for (const auto& entry : checker_.violations()) {
        r.violated.push_back(entry.first);
    }
    r.endMs = now_;
    r.steps = steps_;
    r.timeoutCerts = timeoutCerts_;
    r.batchTxsVerified = batchTxsVerified_;
    r.batchTxsExecuted = batchTxsExecuted_;
    r.refusedBatches = refusedBatches_;
    r.batchFetches = batchFetches_;
    r.forgedBlocks = forgedBlocks_;
    r.withheldVotes = withheldVotes_;
    r.forgedTcs = forgedTcs_;
    r.refusedForgeries = refusedForgeries_;
    r.epochChanges = epochChanges_;
    r.epochProofs = epochProofs_;
    r.syncs = syncs_;
    r.syncedBlocks = syncedBlocks_;
    r.crossingAnswers = crossingAnswers_;
    r.recoveryMs = checker_.recoveryMs();
    r.livenessBoundMs = checker_.livenessBoundMs();
    r.livenessMs = gstMarked_ && now_ > scenario_.gstMs ? now_ - scenario_.gstMs : 0;
    r.network = network_.stats();
    bool first = true;
    for (std::size_t i = 0; i < instances_.size(); ++i) {
        const Instance& inst = instances_[i];
        r.restarts += inst.restarts;
        if (inst.core()) {
            r.maxRound = std::max(r.maxRound, inst.core()->currentRound());
        }
        r.maxEpoch = std::max(r.maxEpoch, inst.store.epoch);
        if (!safetyChecked(inst.role)) {
            continue;
        }
        const std::uint64_t h = inst.store.ledger.size() - 1;
        r.minHeight = first ? h : std::min(r.minHeight, h);
        r.maxHeight = std::max(r.maxHeight, h);
        first = false;
    }
    if (r.violation || options_.report) {
        const std::string outcome =
            r.violation
                ? "violation: " + r.violation->invariant +
                      " at t=" + std::to_string(r.violation->atMs) + " ms: " + r.violation->detail
                : "no violation; ended at t=" + std::to_string(now_) + " ms";
        r.report = scenario_.describe() + outcome + "\nreplay: " + scenario_.replayLine() +
                   "\nlast events:\n" + trace_.format();
    }
    return r;
}

}  // namespace gridledger::sim
