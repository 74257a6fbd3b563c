#pragma once

// A test host for consensus cores: deterministic keys, a genesis, fake execution, and a cluster
// of n cores, each run by a consensus::Runner, whose messages go through one FIFO queue in virtual
// time. Its adaptor persists to an in-memory "disk", commits to a ledger and executes, sends a
// vote to the next leader alone, and can kill a node at any effect and restart it from what it
// persisted.

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/core.h>
#include <gridledger/consensus/runner.h>
#include <gridledger/consensus/signer.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::consensus::testing {

inline constexpr std::string_view kChainId = "gridledger-consensus-test";
inline constexpr std::uint64_t kGenesisTimeMs = 1'700'000'000'000;

/** The i-th deterministic test key. */
inline crypto::SecretKey testKey(std::size_t i) {
    const Hash256 seed = crypto::sha256(asBytes("consensus-test-key-" + std::to_string(i)));
    return crypto::SecretKey::fromBytes(seed.view()).value();
}

inline std::vector<crypto::SecretKey> testKeys(std::size_t n) {
    std::vector<crypto::SecretKey> keys;
    for (std::size_t i = 0; i < n; ++i) {
        keys.push_back(testKey(i));
    }
    return keys;
}

inline std::vector<PubKey> publicKeys(const std::vector<crypto::SecretKey>& keys) {
    std::vector<PubKey> out;
    out.reserve(keys.size());
    for (const auto& key : keys) {
        out.push_back(key.publicKey());
    }
    return out;
}

inline codec::Block genesisBlock() {
    codec::BlockHeader header;
    header.timestampMs = kGenesisTimeMs;
    return codec::makeBlock(header, {});
}

/** Fake execution: the roots after executing `block` on top of `previous`. Deterministic. */
inline ExecRecord executeBlock(const ExecRecord& previous, const codec::Block& block) {
    crypto::Sha256 state;
    state.update(previous.stateRoot.view()).update(block.id.view());
    crypto::Sha256 results;
    results.update(previous.resultsRoot.view()).update(block.header.txsRoot.view());
    return ExecRecord{block.header.height, state.finish(), results.finish()};
}

inline ExecRecord genesisState() {
    return ExecRecord{0, crypto::sha256(asBytes("genesis-state")),
                      crypto::sha256(asBytes("genesis-results"))};
}

inline Options testOptions() {
    Options options;
    options.chainId = std::string(kChainId);
    options.t0Ms = 1000;
    options.emptyBlockIntervalMs = 200;
    options.maxClockDriftMs = 2000;
    return options;
}

/** A QC on (round, blockId) signed by the first `signers` keys (all of them by default). */
inline codec::QuorumCert signQc(const Committee& committee,
                                const std::vector<crypto::SecretKey>& keys, std::uint64_t round,
                                const Hash256& blockId, std::size_t signers = SIZE_MAX) {
    std::vector<codec::Vote> votes;
    for (std::size_t i = 0; i < keys.size() && i < signers; ++i) {
        KeySigner signer(keys[i]);
        votes.push_back(signVote(signer, kChainId, committee.epoch(), round, blockId));
    }
    return buildQuorumCert(committee, votes).value();
}

template <typename T>
std::vector<const T*> effectsOf(const Effects& effects) {
    std::vector<const T*> out;
    for (const auto& effect : effects) {
        if (const auto* e = std::get_if<T>(&effect)) {
            out.push_back(e);
        }
    }
    return out;
}

/** What one node's driver persisted: consensus store plus ledger. */
struct Disk {
    SafetyData safety;
    std::map<Hash256, codec::Block> blocks;
    std::map<Hash256, codec::QuorumCert> qcs;
    std::optional<codec::TimeoutCert> tc;
    std::vector<codec::Block> ledger;  // ledger[h] = committed block at height h (0 = genesis)
    codec::QuorumCert rootQc;
    std::vector<ExecRecord> executed;  // executed[h]
};

using EventBody = decltype(Event{}.body);

class Cluster;

/** One node's host for its runner: everything goes through the cluster's queue and disk. */
class ClusterAdaptor final : public Adaptor {
  public:
    ClusterAdaptor(Cluster& cluster, std::size_t i) : cluster_(cluster), i_(i) {}

    std::uint64_t nowMs() override;
    Status persistSafety(const SafetyData& data) override;
    Status persistBlock(const BlockPtr& block) override;
    Status persistQc(const codec::QuorumCert& qc) override;
    Status persistTc(const codec::TimeoutCert& tc) override;
    void broadcast(const Broadcast& message) override;
    void sendVote(const codec::Vote& vote, const PubKey& nextLeader) override;
    void forwardQc(const codec::QuorumCert& qc, const PubKey& nextLeader) override;
    void schedule(const ScheduleTimer& timer) override;
    void fetch(const Fetch& request) override;
    ProposalPayload collectTxs(const BuildProposal& request) override;
    std::uint64_t executedHeight() override;
    /** The cluster's epoch never ends. */
    std::uint64_t ledgerEpoch() override { return 0; }
    Result<Execution> execute(const codec::Block& block,
                              const codec::QuorumCert& certifying) override;
    Status committed(const Commit& commit, const CommitOutcome& outcome) override;
    void rejected(const Error& error) override;
    void failed(const Error& error) override;
    std::size_t onStep(const Event& event, const Effects& effects) override;

  private:
    Cluster& cluster_;
    std::size_t i_;
};

struct Node {
    crypto::SecretKey key;
    std::unique_ptr<ClusterAdaptor> adaptor;
    std::unique_ptr<Runner> runner;
    Disk disk;
    bool up = true;
    /** Set by a crash point: the runner stopped in the middle of a step. */
    bool dying = false;
    std::size_t mempool = 0;
    std::uint64_t txSerial = 0;
    std::vector<Effects> steps;          // every effect list the node's cores returned
    std::vector<codec::Vote> sentVotes;  // every vote the driver actually sent (performed)
    std::vector<Error> rejections;
    std::size_t restarts = 0;

    /** The running core (requires the node up). */
    const Core& core() const { return runner->core(); }
};

class Cluster {
  public:
    explicit Cluster(std::size_t n, Options options = testOptions())
        : options_(std::move(options)),
          keys_(testKeys(n)),
          genesis_(genesisBlock()),
          committee_(Committee::create(kChainId, 0, genesis_.id, publicKeys(keys_)).value()) {
        for (std::size_t i = 0; i < n; ++i) {
            Node node{keys_[i], std::make_unique<ClusterAdaptor>(*this, i),
                      nullptr,  {},
                      true,     false,
                      0,        0,
                      {},       {},
                      {},       0};
            node.runner = std::make_unique<Runner>(*node.adaptor, options_.chainId,
                                                   std::make_unique<KeySigner>(keys_[i]));
            node.disk.safety = SafetyData{0, 0, 0};
            node.disk.ledger.push_back(genesis_);
            node.disk.rootQc = genesisQc(0, genesis_.id);
            node.disk.executed.push_back(genesisState());
            nodes_.push_back(std::move(node));
        }
        for (std::size_t i = 0; i < n; ++i) {
            boot(i);
        }
    }

    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    std::vector<Node>& nodes() { return nodes_; }
    Node& node(std::size_t i) { return nodes_.at(i); }
    const Committee& committee() const { return committee_; }
    const std::vector<crypto::SecretKey>& keys() const { return keys_; }
    const codec::Block& genesis() const { return genesis_; }
    std::uint64_t now() const { return now_; }
    std::size_t indexOf(const PubKey& key) const { return committee_.indexOf(key).value(); }
    const std::vector<codec::Block>& ledger(std::size_t i) const { return nodes_[i].disk.ledger; }
    std::uint64_t height(std::size_t i) const { return nodes_[i].disk.ledger.size() - 1; }

    /** Link control: a message from `from` to `to` is delivered iff this returns true. */
    std::function<bool(std::size_t from, std::size_t to)> linkUp = [](std::size_t, std::size_t) {
        return true;
    };
    /** Observer of every step: the node, the event, the effects (for debugging a scenario). */
    std::function<void(std::size_t node, std::uint64_t nowMs, const EventBody&, const Effects&)>
        trace;
    /** Crash injection: given a node and its step's effects, how many to perform before dying. */
    std::function<std::optional<std::size_t>(std::size_t node, const Effects&)> crashPoint;

    /**
     * Network chaos (deterministic for a seed): each message between two nodes is lost with
     * probability dropPercent/100, and the next delivery is drawn from the first reorderWindow
     * queued messages instead of the head.
     */
    void setChaos(std::uint64_t seed, unsigned dropPercent, std::size_t reorderWindow) {
        rng_.seed(seed);
        dropPercent_ = dropPercent;
        reorderWindow_ = std::max<std::size_t>(reorderWindow, 1);
    }

    /** Starts every node that is up. */
    void startAll() {
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            deliver(i, Start{});
        }
    }

    /** Puts `count` transactions in node i's mempool and tells its core. */
    void addTxs(std::size_t i, std::size_t count) {
        nodes_[i].mempool += count;
        queue_.emplace_back(i, PayloadAvailable{});
    }

    /** Stops node i: its queued inputs and timers are lost; what it persisted stays. */
    void crash(std::size_t i) {
        nodes_[i].up = false;
        nodes_[i].runner->clear();
        std::erase_if(queue_, [&](const auto& entry) { return entry.first == i; });
        std::erase_if(timers_, [&](const auto& entry) { return entry.second.first == i; });
    }

    /** Restarts node i from its disk and feeds Start. */
    void restart(std::size_t i) {
        nodes_[i].up = true;
        ++nodes_[i].restarts;
        boot(i);
        deliver(i, Start{});
    }

    RecoveryData recoveryOf(std::size_t i) const {
        const Disk& disk = nodes_[i].disk;
        RecoveryData data{committee_, disk.safety, disk.ledger.back(), disk.rootQc, {}, {}, disk.tc,
                          {},         {},          std::nullopt};
        for (const auto& block : disk.ledger) {
            data.recentCommitted.push_back(block.header);  // the core keeps what it needs
        }
        for (const auto& entry : disk.blocks) {
            data.blocks.push_back(entry.second);
        }
        for (const auto& entry : disk.qcs) {
            data.qcs.push_back(entry.second);
        }
        data.executed = disk.executed;
        return data;
    }

    /** Delivers one queued message, or else fires the next timer. False when both are empty. */
    bool stepOnce() {
        if (!queue_.empty()) {
            const std::size_t window = std::min(queue_.size(), reorderWindow_);
            const auto pick = static_cast<std::ptrdiff_t>(window > 1 ? rng_() % window : 0);
            auto [to, body] = std::move(*(queue_.begin() + pick));
            queue_.erase(queue_.begin() + pick);
            now_ += 1;  // one millisecond of network per message
            deliver(to, body);
            return true;
        }
        if (!timers_.empty()) {
            const auto it = timers_.begin();
            now_ = std::max(now_, it->first.first);
            const auto [to, timer] = it->second;
            timers_.erase(it);
            deliver(to, timer);
            return true;
        }
        return false;
    }

    /** Runs until `done` holds; false if virtual time passes `untilMs` first. */
    bool runUntil(const std::function<bool()>& done, std::uint64_t forMs) {
        const std::uint64_t limit = now_ + forMs;
        while (!done()) {
            if (now_ > limit || !stepOnce()) {
                return false;
            }
        }
        return true;
    }

    /** Runs every up node until all of them committed at least `h`. */
    bool runToHeight(std::uint64_t h, std::uint64_t forMs = 600'000) {
        return runUntil(
            [&] {
                for (std::size_t i = 0; i < nodes_.size(); ++i) {
                    if (nodes_[i].up && height(i) < h) {
                        return false;
                    }
                }
                return true;
            },
            forMs);
    }

    /** Node i's runner takes `body` and everything its effects loop back. */
    void deliver(std::size_t i, const EventBody& body) {
        Node& node = nodes_[i];
        if (!node.up) {
            return;
        }
        node.runner->deliver(body);
        if (node.dying) {
            node.dying = false;
            crash(i);
            restart(i);
        }
    }

    /** Every block any node built, by id (what peers can serve to Fetch). */
    const std::map<Hash256, codec::Block>& allBlocks() const { return allBlocks_; }

  private:
    friend class ClusterAdaptor;

    void boot(std::size_t i) {
        auto core = Core::create(options_, recoveryOf(i), std::make_unique<KeySigner>(keys_[i]));
        ASSERT_TRUE(core.has_value()) << core.error().message;
        nodes_[i].runner->reset(std::move(*core));
    }

    void send(std::size_t from, std::size_t to, EventBody body) {
        if (from != to && dropPercent_ > 0 && rng_() % 100 < dropPercent_) {
            return;
        }
        if (from == to || (nodes_[to].up && linkUp(from, to))) {
            queue_.emplace_back(to, std::move(body));
        }
    }

    Options options_;
    std::vector<crypto::SecretKey> keys_;
    codec::Block genesis_;
    Committee committee_;
    std::vector<Node> nodes_;
    std::deque<std::pair<std::size_t, EventBody>> queue_;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::size_t, TimerFired>> timers_;
    std::uint64_t timerSerial_ = 0;
    std::uint64_t now_ = kGenesisTimeMs + 1000;
    std::map<Hash256, codec::Block> allBlocks_;
    std::mt19937_64 rng_{0};
    unsigned dropPercent_ = 0;
    std::size_t reorderWindow_ = 1;
};

inline std::uint64_t ClusterAdaptor::nowMs() {
    return cluster_.now_;
}

inline Status ClusterAdaptor::persistSafety(const SafetyData& data) {
    cluster_.nodes_[i_].disk.safety = data;
    return {};
}

inline Status ClusterAdaptor::persistBlock(const BlockPtr& block) {
    cluster_.nodes_[i_].disk.blocks[block->id] = *block;
    return {};
}

inline Status ClusterAdaptor::persistQc(const codec::QuorumCert& qc) {
    cluster_.nodes_[i_].disk.qcs[qc.blockId] = qc;
    return {};
}

inline Status ClusterAdaptor::persistTc(const codec::TimeoutCert& tc) {
    cluster_.nodes_[i_].disk.tc = tc;
    return {};
}

inline void ClusterAdaptor::broadcast(const Broadcast& message) {
    const Committee& committee = cluster_.committee_;
    for (std::size_t j = 0; j < cluster_.nodes_.size(); ++j) {
        if (j == i_) {
            continue;
        }
        if (const auto* block = std::get_if<BlockPtr>(&message.message)) {
            EXPECT_TRUE(verifyProposal(**block, committee, kChainId).has_value());
            cluster_.send(i_, j, ProposalReceived{**block});
        } else if (const auto* timeout = std::get_if<codec::Timeout>(&message.message)) {
            EXPECT_TRUE(verifyTimeout(*timeout, committee, kChainId).has_value());
            cluster_.send(i_, j, TimeoutReceived{*timeout});
        } else {
            const auto& tc = std::get<codec::TimeoutCert>(message.message);
            EXPECT_TRUE(verifyTimeoutCert(tc, committee, kChainId).has_value());
            cluster_.send(i_, j, TimeoutCertReceived{tc});
        }
    }
}

inline void ClusterAdaptor::sendVote(const codec::Vote& vote, const PubKey& nextLeader) {
    // The cluster's network carries a vote to the next leader alone (no copies).
    EXPECT_TRUE(verifyVote(vote, cluster_.committee_, kChainId).has_value());
    cluster_.nodes_[i_].sentVotes.push_back(vote);
    if (const std::size_t to = cluster_.indexOf(nextLeader); to != i_) {
        cluster_.send(i_, to, VoteReceived{vote});
    }
}

inline void ClusterAdaptor::forwardQc(const codec::QuorumCert& qc, const PubKey& nextLeader) {
    EXPECT_TRUE(verifyQuorumCert(qc, cluster_.committee_, kChainId).has_value());
    if (const std::size_t to = cluster_.indexOf(nextLeader); to != i_) {
        cluster_.send(i_, to, QcReceived{qc});
    }
}

inline void ClusterAdaptor::schedule(const ScheduleTimer& timer) {
    cluster_.timers_.emplace(std::make_pair(cluster_.now_ + timer.delayMs, cluster_.timerSerial_++),
                             std::make_pair(i_, TimerFired{timer.kind, timer.round}));
}

inline void ClusterAdaptor::fetch(const Fetch& request) {
    const auto it = cluster_.allBlocks_.find(request.blockId);
    if (it != cluster_.allBlocks_.end()) {
        cluster_.queue_.emplace_back(i_, BlockFetched{it->second});
    }
}

inline ProposalPayload ClusterAdaptor::collectTxs(const BuildProposal& request) {
    (void)request;
    Node& node = cluster_.nodes_[i_];
    ProposalPayload payload;
    const std::size_t take = std::min<std::size_t>(node.mempool, 5);
    for (std::size_t k = 0; k < take; ++k) {
        const std::string tx = "tx-" + std::to_string(i_) + "-" + std::to_string(node.txSerial++);
        payload.txs.emplace_back(tx.begin(), tx.end());
    }
    node.mempool -= take;
    payload.more = node.mempool > 0;
    return payload;
}

inline std::uint64_t ClusterAdaptor::executedHeight() {
    return cluster_.height(i_);
}

inline Result<Execution> ClusterAdaptor::execute(const codec::Block& block,
                                                 const codec::QuorumCert& certifying) {
    (void)certifying;
    Disk& disk = cluster_.nodes_[i_].disk;
    if (block.header.height != disk.ledger.size() ||
        block.header.parentId != disk.ledger.back().id) {
        ADD_FAILURE() << "node " << i_ << " commit does not extend its ledger at "
                      << block.header.height;
        return fail(ErrorCode::kInvalidBlock, "commit does not extend the ledger");
    }
    disk.ledger.push_back(block);
    disk.executed.push_back(executeBlock(disk.executed.back(), block));
    return Execution{disk.executed.back(), std::nullopt};
}

inline Status ClusterAdaptor::committed(const Commit& commit, const CommitOutcome& outcome) {
    (void)outcome;
    Disk& disk = cluster_.nodes_[i_].disk;
    for (const auto& block : commit.blocks) {
        const std::uint64_t h = block->header.height;
        EXPECT_TRUE(h < disk.ledger.size() && disk.ledger[h].id == block->id)
            << "node " << i_ << " forked at " << h;
    }
    if (!commit.blocks.empty() && commit.blocks.back()->id == disk.ledger.back().id) {
        disk.rootQc = commit.qc;
    }
    // The consensus store may drop what the ledger now holds.
    const codec::BlockHeader& root = disk.ledger.back().header;
    std::erase_if(disk.blocks,
                  [&](const auto& entry) { return entry.second.header.round <= root.round; });
    std::erase_if(disk.qcs, [&](const auto& entry) { return entry.second.round <= root.round; });
    return {};
}

inline void ClusterAdaptor::rejected(const Error& error) {
    cluster_.nodes_[i_].rejections.push_back(error);
}

inline void ClusterAdaptor::failed(const Error& error) {
    ADD_FAILURE() << "node " << i_ << " stopped: " << error.message;
}

inline std::size_t ClusterAdaptor::onStep(const Event& event, const Effects& effects) {
    Node& node = cluster_.nodes_[i_];
    if (const auto* built = std::get_if<ProposalBuilt>(&event.body)) {
        cluster_.allBlocks_[built->block.id] = built->block;
    }
    node.steps.push_back(effects);
    if (cluster_.trace) {
        cluster_.trace(i_, event.nowMs, event.body, effects);
    }
    if (cluster_.crashPoint) {
        if (auto cut = cluster_.crashPoint(i_, effects)) {
            node.dying = true;
            return std::min(*cut, effects.size());
        }
    }
    return effects.size();
}

// ---- Properties checked over a node's recorded effects ----

/** The TCs a node's cores persisted (PersistTc effects), in all its steps. */
inline std::size_t countTcs(const Node& node) {
    std::size_t n = 0;
    for (const auto& effects : node.steps) {
        n += effectsOf<PersistTc>(effects).size();
    }
    return n;
}

/** Every node's ledger agrees with node 0's at every height both hold. */
inline void expectSameLedgers(Cluster& cluster) {
    const auto& reference = cluster.ledger(0);
    for (std::size_t i = 1; i < cluster.nodes().size(); ++i) {
        const auto& other = cluster.ledger(i);
        const std::size_t common = std::min(reference.size(), other.size());
        for (std::size_t h = 0; h < common; ++h) {
            ASSERT_EQ(reference[h].id, other[h].id) << "nodes 0 and " << i << " differ at " << h;
        }
    }
}

/** Every SendVote is preceded, in its own effect list, by PersistSafety covering its round. */
inline void expectSafetyPersistedBeforeEveryVote(const Node& node) {
    for (const auto& effects : node.steps) {
        std::optional<std::uint64_t> persisted;
        for (const auto& effect : effects) {
            if (const auto* p = std::get_if<PersistSafety>(&effect)) {
                persisted = p->data.lastVotedRound;
            } else if (const auto* v = std::get_if<SendVote>(&effect)) {
                ASSERT_TRUE(persisted.has_value()) << "vote without PersistSafety before it";
                EXPECT_EQ(*persisted, v->vote.round);
            }
        }
    }
}

/**
 * Across every incarnation of the node, the votes that left it name at most one block per round.
 * (A vote signed in a step whose PersistSafety was never performed died with the process.)
 */
inline void expectAtMostOneVotePerRound(const Node& node) {
    std::map<std::uint64_t, std::set<Hash256>> voted;
    for (const auto& vote : node.sentVotes) {
        voted[vote.round].insert(vote.blockId);
    }
    for (const auto& [round, blocks] : voted) {
        EXPECT_EQ(blocks.size(), 1U) << "two different votes in round " << round;
    }
}

/** Every Commit obeys the 2-chain rule and the ledger is one chain of consecutive heights. */
inline void expectTwoChainCommits(const Node& node,
                                  const std::map<Hash256, codec::Block>& allBlocks) {
    for (const auto& effects : node.steps) {
        for (const auto* commit : effectsOf<Commit>(effects)) {
            ASSERT_FALSE(commit->blocks.empty());
            const codec::Block& last = *commit->blocks.back();
            EXPECT_EQ(commit->qc.blockId, last.id);
            const auto child = allBlocks.find(commit->commitQc.blockId);
            ASSERT_NE(child, allBlocks.end());
            EXPECT_EQ(child->second.header.parentId, last.id);
            EXPECT_EQ(child->second.header.round, last.header.round + 1);
            for (std::size_t k = 1; k < commit->blocks.size(); ++k) {
                EXPECT_EQ(commit->blocks[k]->header.parentId, commit->blocks[k - 1]->id);
            }
        }
    }
    const auto& ledger = node.disk.ledger;
    for (std::size_t h = 1; h < ledger.size(); ++h) {
        EXPECT_EQ(ledger[h].header.height, h);
        EXPECT_EQ(ledger[h].header.parentId, ledger[h - 1].id);
        EXPECT_GT(ledger[h].header.timestampMs, ledger[h - 1].header.timestampMs);
    }
}

/**
 * A four-member committee at genesis, a clock, and single cores driven by hand: the base of the
 * core's unit tests.
 */
class CoreFixture : public ::testing::Test {
  protected:
    std::vector<crypto::SecretKey> keys_ = testKeys(4);
    codec::Block genesis_ = genesisBlock();
    Committee committee_ = Committee::create(kChainId, 0, genesis_.id, publicKeys(keys_)).value();
    std::uint64_t now_ = kGenesisTimeMs + 1000;

    /**
     * Member `i`'s core at genesis, of `committee` (default: the fixture's committee), with
     * `options` (default: testOptions()).
     */
    Core makeCore(std::size_t i, std::optional<Committee> committee = std::nullopt,
                  Options options = testOptions()) {
        const Committee& c = committee ? *committee : committee_;
        auto core =
            Core::create(std::move(options), RecoveryData::genesis(c, genesis_, genesisState()),
                         std::make_unique<KeySigner>(keys_[i]));
        EXPECT_TRUE(core.has_value()) << core.error().message;
        return std::move(*core);
    }

    Effects step(Core& core, EventBody body) { return core.step(Event{now_, std::move(body)}); }

    /** A member that leads none of `rounds`. */
    std::size_t nonLeaderOf(const std::vector<std::uint64_t>& rounds) const {
        for (std::size_t i = 0; i < keys_.size(); ++i) {
            bool leads = false;
            for (auto r : rounds) {
                leads = leads || committee_.leaderIndex(r) == i;
            }
            if (!leads) {
                return i;
            }
        }
        ADD_FAILURE() << "every member leads one of the rounds";
        return 0;
    }
};

}  // namespace gridledger::consensus::testing
