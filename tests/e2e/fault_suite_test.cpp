// The end-to-end fault suite, short form: four, then seven validators as real processes on
// 127.0.0.1, every P2P link through a fault-injecting TCP relay started by the test, a steady load
// of transfers, and a seeded schedule of perturbations, one faulty member at a time: a node cut
// off by its relays, a node paused with SIGSTOP, a node killed and restarted, a node's links
// slowed, a node killed and restarted with its data dir wiped, a node replaced for a while by a
// Byzantine member holding its validator key, and a governance change while a member is down: a
// validator added and another removed, two epoch changes the downed member crosses on its
// restart. After the schedule every node holds the same block ids and state roots at every
// height, every transaction a node acknowledged is committed exactly once, and the chain moved on
// after every perturbation. It reports the worst stall of node 0's head, overall and per kind of
// perturbation.
//
// The long forms run the same schedule with more perturbations, and on seven validators in two
// lanes at once (two faulty members, f = 2), with shorter holds (docs/operations.md):
//   GRIDLEDGER_E2E_PERTURBATIONS=70 GRIDLEDGER_E2E_SEED=7 build/test/tests/e2e/fault_suite_test
//   GRIDLEDGER_E2E_PERTURBATIONS=210 GRIDLEDGER_E2E_LANES=2 GRIDLEDGER_E2E_HOLD_MS=1000 ...
// GRIDLEDGER_E2E_LOG_LEVEL sets the nodes' log level (e.g. debug) and GRIDLEDGER_E2E_LOG_DIR keeps
// their logs there once the test ends, so that a stall can be traced: each perturbation line
// carries the wall-clock time the node logs use.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <signal.h>

#include <gridledger/consensus/committee.h>

#include "home.h"
#include "network_support.h"
#include "support/faulty_member.h"
#include "support/tcp_relay.h"

namespace gridledger::testing {
namespace {

/** Node 0 takes the load and is never perturbed: what it acknowledges must commit. */
constexpr std::size_t kLoadNode = 0;
constexpr std::size_t kSenders = 8;

std::uint64_t envOr(const char* name, std::uint64_t fallback) {
    const char* value = std::getenv(name);
    return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

/** Every node's node_getStatus, one line each (what a failed wait shows). */
std::string statusOf(const Testnet& net) {
    std::string out;
    for (std::size_t i = 0; i < net.size(); ++i) {
        auto status = net.call(i, "node_getStatus", json::array{});
        out += "node " + std::to_string(i) + ": " +
               (status ? json::serialize(*status) : std::string("no answer")) + "\n";
    }
    return out;
}

/** Funds `to` from the dev account through node 0 and waits until they are committed. */
void fund(const Testnet& net, const std::vector<crypto::SecretKey>& to) {
    auto dev = node::Home(net.home(0)).loadKey("dev");
    ASSERT_TRUE(dev);
    const std::string domain = signingDomainOfHome(net.home(0));
    for (std::uint64_t n = 0; n < to.size(); ++n) {
        codec::TxBody body{std::string(kTestnetChainId),
                           dev->publicKey(),
                           n,
                           50'000,
                           codec::Transfer{crypto::addressOf(to[n].publicKey()),
                                           u128{1'000'000'000'000'000'000ULL}},
                           kDevFee};
        ASSERT_TRUE(
            net.call(0, "tx_submit",
                     json::array{json::string(toHex(codec::signTx(body, *dev, domain).raw))}));
    }
    const Address devAddress = crypto::addressOf(dev->publicKey());
    ASSERT_TRUE(waitFor(
        [&] {
            auto account = net.call(0, "account_get", json::array{json::string(devAddress.hex())});
            return account && parseU64(field(*account, "nonce")).value_or(0) >= to.size();
        },
        std::chrono::seconds(60)));
}

/**
 * Transfers from kSenders funded keys to node 0, a few every 20 ms, each sender at most 32
 * ahead of its committed nonce. Records every hash node 0 acknowledged.
 */
class Load {
  public:
    Load(const Testnet& net, std::vector<crypto::SecretKey> senders)
        : net_(net),
          senders_(std::move(senders)),
          nonces_(senders_.size(), 0),
          domain_(signingDomainOfHome(net.home(0))) {}

    void start() {
        thread_ = std::thread([this] { run(); });
    }
    void stop() {
        running_ = false;
        if (thread_.joinable()) {
            thread_.join();
        }
    }
    ~Load() { stop(); }
    Load(const Load&) = delete;
    Load& operator=(const Load&) = delete;

    /** (sender index, nonce) → hash of every acknowledged transaction. */
    [[nodiscard]] std::map<std::pair<std::size_t, std::uint64_t>, std::string> acknowledged() {
        const std::lock_guard lock(mutex_);
        return acknowledged_;
    }
    [[nodiscard]] std::uint64_t sent(std::size_t sender) {
        const std::lock_guard lock(mutex_);
        return nonces_[sender];
    }

  private:
    void run() {
        Address sink;
        sink[0] = 0x7e;
        while (running_) {
            for (std::size_t s = 0; s < senders_.size() && running_; ++s) {
                const Address address = crypto::addressOf(senders_[s].publicKey());
                auto account =
                    net_.call(kLoadNode, "account_get", json::array{json::string(address.hex())});
                const std::uint64_t committed =
                    account ? parseU64(field(*account, "nonce")).value_or(0) : 0;
                std::uint64_t nonce = sent(s);
                if (!account || nonce >= committed + 32) {
                    continue;
                }
                codec::TxBody body{std::string(kTestnetChainId),
                                   senders_[s].publicKey(),
                                   nonce,
                                   100'000,
                                   codec::Transfer{sink, u128{1}},
                                   kDevFee};
                const auto tx = codec::signTx(body, senders_[s], domain_);
                if (net_.call(kLoadNode, "tx_submit", json::array{json::string(toHex(tx.raw))})) {
                    const std::lock_guard lock(mutex_);
                    acknowledged_[{s, nonce}] = tx.hash.hex();
                    nonces_[s] = nonce + 1;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    const Testnet& net_;
    std::vector<crypto::SecretKey> senders_;
    std::mutex mutex_;
    std::vector<std::uint64_t> nonces_;
    std::string domain_;
    std::map<std::pair<std::size_t, std::uint64_t>, std::string> acknowledged_;
    std::atomic<bool> running_{true};
    std::thread thread_;
};

/** The wall-clock time of day in UTC, as the nodes' log lines show it (hh:mm:ss.mmm). */
std::string wallClock(std::chrono::system_clock::time_point now) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    std::ostringstream out;
    out << std::put_time(&utc, "%H:%M:%S") << '.' << std::setw(3) << std::setfill('0') << millis;
    return out.str();
}

/**
 * Polls node 0's head every 50 ms and keeps every time it stood still, so that the stalls
 * within any window of the run can be asked for (two perturbations may overlap).
 */
class StallWatch {
  public:
    using Clock = std::chrono::steady_clock;

    explicit StallWatch(const Testnet& net) : net_(net) {
        thread_ = std::thread([this] { run(); });
    }
    ~StallWatch() {
        running_ = false;
        thread_.join();
    }
    StallWatch(const StallWatch&) = delete;
    StallWatch& operator=(const StallWatch&) = delete;

    /** A time node 0's head stood still. */
    struct Stall {
        double seconds = 0;
        /** When it began, as the wall-clock time of day the node logs show. */
        std::string began;
    };

    [[nodiscard]] double worstSeconds() const {
        return worstBetween(Clock::time_point{}, Clock::now()).seconds;
    }
    /** The longest stall that overlaps [from, to] (0 s, beginning at `to`, when none). */
    [[nodiscard]] Stall worstBetween(Clock::time_point from, Clock::time_point to) const {
        const std::lock_guard lock(mutex_);
        std::pair<Clock::time_point, Clock::time_point> worst{to, to};
        for (const auto& [start, end] : stalls_) {
            if (end >= from && start <= to && end - start > worst.second - worst.first) {
                worst = {start, end};
            }
        }
        const auto ago = std::chrono::duration_cast<std::chrono::system_clock::duration>(
            Clock::now() - worst.first);
        return {std::chrono::duration<double>(worst.second - worst.first).count(),
                wallClock(std::chrono::system_clock::now() - ago)};
    }

  private:
    void run() {
        std::uint64_t height = 0;
        auto since = Clock::now();
        while (running_) {
            const std::uint64_t now = heightOf(net_, 0);
            const auto at = Clock::now();
            const std::lock_guard lock(mutex_);
            if (now > height) {
                height = now;
                since = at;
            } else if (!stalls_.empty() && stalls_.back().first == since) {
                stalls_.back().second = at;  // the same stall, longer
            } else {
                stalls_.emplace_back(since, at);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }

    const Testnet& net_;
    std::atomic<bool> running_{true};
    mutable std::mutex mutex_;
    /** (start, last seen) of every time the head stood still. */
    std::vector<std::pair<Clock::time_point, Clock::time_point>> stalls_;
    std::thread thread_;
};

/**
 * Who may perturb now. Perturbations of different lanes run at once on different members; a
 * governance change waits until no other perturbation runs and holds the others off until it
 * is done (every running member votes on it).
 */
class Gate {
  public:
    /** Waits until `member` may be a victim of `kind`, then takes it. */
    void enter(std::size_t member, bool exclusive) {
        std::unique_lock lock(mutex_);
        if (exclusive) {
            ++exclusiveWaiting_;
        }
        changed_.wait(lock, [&] {
            return !exclusiveRunning_ && !busy_.contains(member) &&
                   (exclusive ? busy_.empty() : exclusiveWaiting_ == 0);
        });
        if (exclusive) {
            --exclusiveWaiting_;
            exclusiveRunning_ = true;
        }
        busy_.insert(member);
    }
    void leave(std::size_t member, bool exclusive) {
        const std::lock_guard lock(mutex_);
        busy_.erase(member);
        exclusiveRunning_ = exclusiveRunning_ && !exclusive;
        changed_.notify_all();
    }
    /** The members perturbed now. */
    [[nodiscard]] std::set<std::size_t> busy() const {
        const std::lock_guard lock(mutex_);
        return busy_;
    }

  private:
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::set<std::size_t> busy_;
    std::size_t exclusiveWaiting_ = 0;
    bool exclusiveRunning_ = false;
};

/**
 * The state of every node's links, each through its relays: a link is cut while either end is
 * cut off, and slow while either end's links are slowed, so two lanes can partition or slow
 * two nodes at once and heal each without healing the other.
 */
class Links {
  public:
    Links(std::vector<std::vector<std::unique_ptr<TcpRelay>>>& relays)
        : relays_(relays), cut_(relays.size(), false), slow_(relays.size(), false) {}

    void setCut(std::size_t node, bool cut) {
        const std::lock_guard lock(mutex_);
        cut_[node] = cut;
        apply(node);
    }
    void setSlow(std::size_t node, bool slow) {
        const std::lock_guard lock(mutex_);
        slow_[node] = slow;
        apply(node);
    }

  private:
    /** Sets every link of `node` from both ends' state. */
    void apply(std::size_t node) {
        for (std::size_t j = 0; j < relays_.size(); ++j) {
            if (j == node) {
                continue;
            }
            const bool cut = cut_[node] || cut_[j];
            const auto delay = std::chrono::milliseconds(slow_[node] || slow_[j] ? 150 : 0);
            for (auto* link : {relays_[node][j].get(), relays_[j][node].get()}) {
                if (cut) {
                    link->cut();
                } else {
                    link->heal();
                }
                link->setDelay(delay);
            }
        }
    }

    std::vector<std::vector<std::unique_ptr<TcpRelay>>>& relays_;
    std::mutex mutex_;
    std::vector<bool> cut_;
    std::vector<bool> slow_;
};

/**
 * One Byzantine phase: validator `member`'s key on a FaultyMember endpoint (node key `nodeKey`)
 * that, for `hold`, sends every 100 ms the next of: a proposal claiming a far height, a vote of
 * a later epoch, a TC that does not prove its highest QC (once it heard enough honest timeouts),
 * and a 2 MiB proposal above max_block_bytes; and answers epoch proof requests with forgeries.
 */
class ByzantineRun {
  public:
    ByzantineRun(const Testnet& net, std::size_t member, const crypto::NodeKey& nodeKey,
                 std::chrono::milliseconds hold)
        : faulty_(net, member, nodeKey) {
        EXPECT_TRUE(faulty_.started());
        auto genesis = net.call(kLoadNode, "block_get", json::array{json::string("0")});
        auto status = net.call(kLoadNode, "node_getStatus", json::array{});
        if (!genesis || !status) {
            ADD_FAILURE() << "node 0 does not answer";
            return;
        }
        const Hash256 genesisId = *Hash256::fromHex(field(genesis->as_object().at("header"), "id"));
        const std::uint64_t epoch = parseU64(field(*status, "consensus_epoch")).value_or(0);
        faulty_.forgeEpochProofs();
        const auto until = std::chrono::steady_clock::now() + hold;
        for (std::uint64_t i = 1; std::chrono::steady_clock::now() < until; ++i) {
            std::optional<p2p::Message> message;
            switch (i % 4) {
                case 0:
                    message = faulty_.farHeightProposal(genesisId, i);
                    break;
                case 1:
                    message = faulty_.laterEpochVote(i);
                    break;
                case 2:
                    message = faulty_.forgedTc();
                    forgedTcs_ += message ? 1U : 0U;
                    break;
                default:
                    message = faulty_.oversizedProposal(genesisId, epoch, i, 2U << 20U);
                    break;
            }
            // Sends fail once the honest nodes banned this endpoint: that is the point.
            if (message && faulty_.sendAll(*message)) {
                ++sent_;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }

    [[nodiscard]] std::size_t sent() const { return sent_; }
    [[nodiscard]] std::size_t forgedTcs() const { return forgedTcs_; }

  private:
    FaultyMember faulty_;
    std::size_t sent_ = 0;
    std::size_t forgedTcs_ = 0;
};

enum class Perturbation : std::uint8_t {
    kPartition,
    kPause,
    kCrash,
    kSlowLinks,
    kWipe,
    kByzantine,
    kGovernance
};

/** Every kind with its name, in the order the schedule applies them. */
constexpr std::array<std::pair<Perturbation, std::string_view>, 7> kKinds{{
    {Perturbation::kPartition, "partition"},
    {Perturbation::kPause, "pause"},
    {Perturbation::kCrash, "crash"},
    {Perturbation::kSlowLinks, "slow-links"},
    {Perturbation::kWipe, "wipe"},
    {Perturbation::kByzantine, "byzantine"},
    {Perturbation::kGovernance, "governance"},
}};

std::string nameOf(Perturbation p) {
    for (const auto& [kind, name] : kKinds) {
        if (kind == p) {
            return std::string(name);
        }
    }
    return "?";
}

/** The kinds named in GRIDLEDGER_E2E_KINDS (comma-separated), or every kind. */
std::vector<Perturbation> kindsToRun() {
    const char* names = std::getenv("GRIDLEDGER_E2E_KINDS");
    const std::string list = names != nullptr ? "," + std::string(names) + "," : std::string();
    std::vector<Perturbation> out;
    for (const auto& [kind, name] : kKinds) {
        if (names == nullptr || list.find("," + std::string(name) + ",") != std::string::npos) {
            out.push_back(kind);
        }
    }
    return out;
}

/** The number of lines of `file` that contain `text`. */
std::size_t countLines(const std::filesystem::path& file, const std::string& text) {
    const std::string all = readText(file);
    std::size_t count = 0;
    for (auto at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) {
        ++count;
    }
    return count;
}

/** The number `name` of node i's node_getStatus, 0 when it does not answer. */
std::uint64_t statusField(const Testnet& net, std::size_t i, const char* name) {
    auto status = net.call(i, "node_getStatus", json::array{});
    return status ? parseU64(field(*status, name)).value_or(0) : 0;
}

std::uint64_t epochOf(const Testnet& net, std::size_t i) {
    return statusField(net, i, "consensus_epoch");
}

/**
 * Governance while a member is down: the chain's validator set, with one node that is not in it
 * (the spare). `change(down)` adds the spare and removes another member (neither node 0 nor
 * `down`), each by a proposal from node 0's validator and the votes of every running member, and
 * waits for both epoch changes on node 0. The removed member becomes the spare: it keeps
 * following the chain as a full node (every node allows every other).
 */
class Governance {
  public:
    Governance(const Testnet& net, std::size_t validators, const std::filesystem::path& dir)
        : net_(net), dir_(dir), member_(net.size(), false) {
        for (std::size_t i = 0; i < validators; ++i) {
            member_[i] = true;
        }
    }

    [[nodiscard]] bool member(std::size_t i) const {
        const std::lock_guard lock(mutex_);
        return member_.at(i);
    }
    /** The members other than node 0, in index order. */
    [[nodiscard]] std::vector<std::size_t> others() const {
        const std::lock_guard lock(mutex_);
        std::vector<std::size_t> out;
        for (std::size_t i = 1; i < member_.size(); ++i) {
            if (member_[i]) {
                out.push_back(i);
            }
        }
        return out;
    }

    /** The change described above; `rng` picks the member removed. Fails the test on a stall. */
    void change(std::size_t down, std::mt19937_64& rng) {
        const auto spare = std::find(member_.begin(), member_.end(), false);
        ASSERT_NE(spare, member_.end());
        const auto added = static_cast<std::size_t>(spare - member_.begin());
        const node::Home addedHome(net_.home(added));
        auto key = addedHome.loadKey("validator");
        auto account = addedHome.keyPublicKey("validator-account");
        auto nodeKey = addedHome.loadNodeKey();
        ASSERT_TRUE(key && account && nodeKey);
        // A full node's account is not funded at genesis: the dev account pays for its votes.
        const auto [code, out] = cli(
            net_, dir_,
            {"tx", "transfer", "--to", crypto::addressOf(*account).hex(), "--amount",
             "1000000000000000000", "--from", "dev", "--wait", "--home", net_.home(0).string()});
        ASSERT_EQ(code, 0) << out;
        const std::uint64_t epoch = epochOf(net_, 0);
        ASSERT_NO_FATAL_FAILURE(
            decide({"tx", "propose", "add-validator", "--name", "node" + std::to_string(added),
                    "--consensus-key", key->publicKey().hex(), "--node-id", nodeKey->nodeId().hex(),
                    "--account", crypto::addressOf(*account).hex()},
                   down, epoch + 1));
        setMember(added, true);
        std::vector<std::size_t> removable;
        for (const auto i : others()) {
            if (i != down && i != added) {
                removable.push_back(i);
            }
        }
        ASSERT_FALSE(removable.empty());
        const std::size_t removed = removable[rng() % removable.size()];
        auto removedKey = node::Home(net_.home(removed)).loadKey("validator");
        ASSERT_TRUE(removedKey);
        ASSERT_NO_FATAL_FAILURE(decide(
            {"tx", "propose", "remove-validator", "--consensus-key", removedKey->publicKey().hex()},
            down, epoch + 2));
        setMember(removed, false);
        std::cout << "[e2e]   node " << added << " added, node " << removed << " removed: epoch "
                  << epoch + 2 << std::endl;
    }

  private:
    /** Only change() writes member_; the lanes read it meanwhile. */
    void setMember(std::size_t i, bool member) {
        const std::lock_guard lock(mutex_);
        member_[i] = member;
    }
    /** Submits the proposal `propose` from node 0, the votes of every running member but
     * `down`, and waits until node 0 is in `epoch`. */
    void decide(std::vector<std::string> propose, std::size_t down, std::uint64_t epoch) {
        propose.insert(propose.end(),
                       {"--from", "validator-account", "--wait", "--home", net_.home(0).string()});
        const auto [code, out] = cli(net_, dir_, propose);
        ASSERT_EQ(code, 0) << out;
        const std::string proposal = std::to_string(proposals_++);
        for (std::size_t i = 0; i < member_.size(); ++i) {
            if (member_[i] && i != down) {
                // A vote after the proposal passed is refused: the change is what is waited for.
                (void)cli(net_, dir_,
                          {"tx", "vote", "--proposal", proposal, "--from", "validator-account",
                           "--wait", "--home", net_.home(i).string()});
            }
        }
        ASSERT_TRUE(waitFor([&] { return epochOf(net_, 0) >= epoch; }, std::chrono::seconds(60)))
            << "no epoch change to " << epoch << " after proposal " << proposal << "\n"
            << statusOf(net_);
    }

    const Testnet& net_;
    std::filesystem::path dir_;
    mutable std::mutex mutex_;
    std::vector<bool> member_;
    std::uint64_t proposals_ = 0;
};

/** Copies every node's log into GRIDLEDGER_E2E_LOG_DIR, when set, as the test ends. */
class KeptLogs {
  public:
    explicit KeptLogs(const Testnet& net) : net_(net) {}
    ~KeptLogs() {
        const char* dir = std::getenv("GRIDLEDGER_E2E_LOG_DIR");
        if (dir == nullptr) {
            return;
        }
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        for (std::size_t i = 0; i < net_.size(); ++i) {
            std::filesystem::copy_file(
                net_.log(i), std::filesystem::path(dir) / ("node" + std::to_string(i) + ".log"),
                std::filesystem::copy_options::overwrite_existing, ec);
        }
    }
    KeptLogs(const KeptLogs&) = delete;
    KeptLogs& operator=(const KeptLogs&) = delete;

  private:
    const Testnet& net_;
};

/** The suite on `validators` validators (docs/operations.md, "The fault suite"). */
void runSuite(std::size_t validators) {
    const std::uint64_t seed = envOr("GRIDLEDGER_E2E_SEED", 1);
    const std::uint64_t perturbations = envOr("GRIDLEDGER_E2E_PERTURBATIONS", kKinds.size());
    // Each perturbation holds for a time drawn from [holdMin, holdMin + holdSpread).
    const std::uint64_t holdMin = std::max<std::uint64_t>(envOr("GRIDLEDGER_E2E_HOLD_MS", 2000), 1);
    const std::uint64_t holdSpread = holdMin * 3 / 2;
    TestnetOptions options;
    options.validators = validators;
    options.fullNodes = 1;  // the spare that governance adds (docs/operations.md)
    options.emptyBlockIntervalMs = 100;
    if (const char* level = std::getenv("GRIDLEDGER_E2E_LOG_LEVEL")) {
        options.logLevel = level;
    }
    Testnet net(options);
    const KeptLogs keptLogs(net);
    const std::size_t nodes = net.size();
    TempDir cliDir;
    Governance governance(net, validators, cliDir.path());

    // relays[i][j] carries node i's dials to node j; node i lists node j at that relay.
    std::vector<NodeId> ids;
    for (std::size_t i = 0; i < nodes; ++i) {
        ids.push_back(node::Home(net.home(i)).loadNodeKey().value().nodeId());
    }
    // Each Byzantine phase speaks from a node key of its own, which every node allows (as an
    // operator allows a full node): the honest nodes ban that key, not the validator's node.
    // Every node allows every other as well, so that a validator that governance removed
    // follows the chain as a full node and can be added back.
    std::vector<crypto::NodeKey> byzantineKeys;
    std::string allowed;
    for (const auto& id : ids) {
        allowed += (allowed.empty() ? "" : ",") + id.hex();
    }
    for (std::uint64_t k = 0; k < perturbations / kKinds.size() + 1; ++k) {
        byzantineKeys.push_back(crypto::NodeKey::generate());
        allowed += "," + byzantineKeys.back().nodeId().hex();
    }
    std::vector<std::vector<std::unique_ptr<TcpRelay>>> relays(nodes);
    for (std::size_t i = 0; i < nodes; ++i) {
        ASSERT_NO_FATAL_FAILURE(
            setConfig(net.home(i) / "config" / "node.conf", "allowed_nodes", allowed));
        std::string peers;
        relays[i].resize(nodes);
        for (std::size_t j = 0; j < nodes; ++j) {
            if (i == j) {
                continue;
            }
            relays[i][j] = std::make_unique<TcpRelay>(net.p2pPort(j));
            peers += (peers.empty() ? "" : ",") + ids[j].hex() +
                     "@127.0.0.1:" + std::to_string(relays[i][j]->port());
        }
        ASSERT_NO_FATAL_FAILURE(
            setConfig(net.home(i) / "config" / "node.conf", "persistent_peers", peers));
    }
    Links links(relays);

    net.startAll();
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= 3; }, std::chrono::seconds(60)));
    std::vector<crypto::SecretKey> senders;
    for (std::size_t s = 0; s < kSenders; ++s) {
        senders.push_back(crypto::SecretKey::generate());
    }
    ASSERT_NO_FATAL_FAILURE(fund(net, senders));

    Load load(net, senders);
    load.start();
    const std::vector<Perturbation> kinds = kindsToRun();
    ASSERT_FALSE(kinds.empty()) << "GRIDLEDGER_E2E_KINDS names no known kind";
    // Lanes run their perturbations at once, each on its own member: at most f faulty members.
    const std::size_t lanes = std::clamp<std::size_t>(envOr("GRIDLEDGER_E2E_LANES", 1), 1,
                                                      consensus::maxFaultyOf(validators));
    std::mutex reportMutex;  // guards what the lanes report below
    std::map<std::string, std::size_t> applied;
    std::size_t byzantineSent = 0;
    std::size_t byzantineTcs = 0;
    std::map<std::string, double> worstStallOf;
    std::atomic<std::size_t> byzantinePhases{0};
    std::atomic<bool> failed{false};
    Gate gate;
    StallWatch stalls(net);
    const auto started = std::chrono::steady_clock::now();

    // One perturbation of `kind` on `victim` for `hold`; false when the test failed.
    const auto perturb = [&](Perturbation kind, std::size_t victim, std::chrono::milliseconds hold,
                             std::mt19937_64& rng) -> bool {
        switch (kind) {
            case Perturbation::kPartition: {
                links.setCut(victim, true);
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
                const std::uint64_t cutAt = heightOf(net, victim);
                std::this_thread::sleep_for(hold);
                // Cut off from every peer, the victim committed nothing meanwhile.
                EXPECT_EQ(heightOf(net, victim), cutAt) << "node " << victim;
                links.setCut(victim, false);
                return true;
            }
            case Perturbation::kPause:
                net.signal(victim, SIGSTOP);
                std::this_thread::sleep_for(hold);
                net.signal(victim, SIGCONT);
                return true;
            case Perturbation::kCrash:
                net.stop(victim, SIGKILL);
                std::this_thread::sleep_for(hold);
                net.start(victim);
                return true;
            case Perturbation::kSlowLinks:
                links.setSlow(victim, true);
                std::this_thread::sleep_for(hold);
                links.setSlow(victim, false);
                return true;
            case Perturbation::kByzantine: {
                // The member's process dies and this test speaks with its validator key.
                net.stop(victim, SIGKILL);
                ByzantineRun run(net, victim, byzantineKeys.at(byzantinePhases++), hold);
                net.start(victim);
                const std::lock_guard lock(reportMutex);
                byzantineSent += run.sent();
                byzantineTcs += run.forgedTcs();
                return true;
            }
            case Perturbation::kGovernance: {
                // The victim is down while the set changes twice; restarted in the old epoch,
                // it crosses both changes on epoch proofs and sync.
                net.stop(victim, SIGKILL);
                const auto down = std::chrono::steady_clock::now();
                governance.change(victim, rng);
                if (::testing::Test::HasFatalFailure()) {
                    return false;
                }
                std::this_thread::sleep_until(down + hold);
                net.start(victim);
                const std::uint64_t epoch = epochOf(net, 0);
                const bool crossed = waitFor([&] { return epochOf(net, victim) >= epoch; },
                                             std::chrono::seconds(60));
                EXPECT_TRUE(crossed)
                    << "node " << victim << " never crossed into epoch " << epoch << "\n"
                    << statusOf(net);
                return crossed;
            }
            case Perturbation::kWipe: {
                // Keys and config stay; the chain, the consensus store and the safety data go.
                // The node syncs from genesis and signs nothing before it is at the head.
                net.stop(victim, SIGKILL);
                std::filesystem::remove_all(net.home(victim) / "data");
                const std::size_t resumed = countLines(net.log(victim), "signing resumed");
                std::this_thread::sleep_for(hold);
                net.start(victim);
                const auto restarted = std::chrono::steady_clock::now();
                // Until it signs again it is still a faulty member: the next perturbation would
                // make one too many.
                const bool signing = waitFor(
                    [&] { return countLines(net.log(victim), "signing resumed") > resumed; },
                    std::chrono::seconds(180));
                EXPECT_TRUE(signing) << "node " << victim << " never signed again after its wipe\n"
                                     << statusOf(net);
                std::cout << "[e2e]   node " << victim << " signing again "
                          << std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                           restarted)
                                 .count()
                          << " s after the restart" << std::endl;
                return signing;
            }
        }
        return false;
    };

    // Lane `lane` applies every lanes-th perturbation of the schedule, each kind in turn.
    const auto runLane = [&](std::size_t lane) {
        std::mt19937_64 rng(seed + lane * 0x9e3779b97f4a7c15ULL);
        for (std::uint64_t k = lane; k < perturbations && !failed; k += lanes) {
            const Perturbation kind = kinds[k % kinds.size()];
            const bool exclusive = kind == Perturbation::kGovernance;
            // A member other than the load's node and another lane's victim, chosen by the seed.
            std::size_t victim = 0;
            for (;;) {
                const std::set<std::size_t> busy = gate.busy();
                std::vector<std::size_t> members;
                for (const auto i : governance.others()) {
                    if (!busy.contains(i)) {
                        members.push_back(i);
                    }
                }
                victim = members.at(rng() % members.size());
                gate.enter(victim, exclusive);
                if (governance.member(victim)) {
                    break;
                }
                gate.leave(victim, exclusive);  // a governance change removed it meanwhile
            }
            const auto hold = std::chrono::milliseconds(holdMin + rng() % holdSpread);
            std::cout << "[e2e] " << nameOf(kind) << " node " << victim << " for " << hold.count()
                      << " ms at height " << heightOf(net, 0) << " ("
                      << wallClock(std::chrono::system_clock::now()) << ")" << std::endl;
            const auto from = std::chrono::steady_clock::now();
            bool ok = perturb(kind, victim, hold, rng);
            // Progress after every perturbation: the whole network, the victim included, but
            // not another lane's victim.
            const std::uint64_t target = heightOf(net, 0) + 3;
            ok = ok &&
                 waitFor(
                     [&] {
                         const std::set<std::size_t> busy = gate.busy();
                         for (std::size_t i = 0; i < nodes; ++i) {
                             if ((i == victim || !busy.contains(i)) && heightOf(net, i) < target) {
                                 return false;
                             }
                         }
                         return true;
                     },
                     std::chrono::seconds(60));
            // And the victim is back in consensus, not only synced: it holds a QC as high as
            // the one node 0 held once the heights were reached, and it is connected to every
            // node that no other lane holds (one link that is not back yet leaves it a member
            // that some peers never hear). Otherwise the next perturbation would make one
            // faulty member too many.
            const std::uint64_t epoch = epochOf(net, 0);
            const std::uint64_t qcRound = statusField(net, 0, "highest_qc_round");
            ok = ok && waitFor(
                           [&] {
                               const auto status =
                                   net.call(victim, "node_getStatus", json::array{});
                               if (!status) {
                                   return false;
                               }
                               const auto number = [&](const char* name) {
                                   return parseU64(field(*status, name)).value_or(0);
                               };
                               const std::uint64_t at = number("consensus_epoch");
                               const json::value& peers = status->as_object().at("peers");
                               const std::uint64_t connected =
                                   peers.is_uint64() ? peers.as_uint64()
                                                     : static_cast<std::uint64_t>(peers.as_int64());
                               return (at > epoch ||
                                       (at == epoch && number("highest_qc_round") >= qcRound)) &&
                                      connected >= nodes - gate.busy().size();
                           },
                           std::chrono::seconds(60));
            EXPECT_TRUE(ok) << "no progress after " << nameOf(kind) << " of node " << victim << "\n"
                            << statusOf(net) << readText(net.log(victim));
            const StallWatch::Stall worst =
                stalls.worstBetween(from, std::chrono::steady_clock::now());
            const double stall = worst.seconds;
            gate.leave(victim, exclusive);
            std::cout << "[e2e]   " << nameOf(kind) << " node " << victim
                      << ": node 0's head stood still at most " << stall << " s (from "
                      << worst.began << ")" << std::endl;
            const std::lock_guard lock(reportMutex);
            ++applied[nameOf(kind)];
            worstStallOf[nameOf(kind)] = std::max(worstStallOf[nameOf(kind)], stall);
            if (!ok) {
                failed = true;
            }
        }
    };
    std::vector<std::thread> laneThreads;
    for (std::size_t lane = 1; lane < lanes; ++lane) {
        laneThreads.emplace_back(runLane, lane);
    }
    runLane(0);
    for (auto& thread : laneThreads) {
        thread.join();
    }
    ASSERT_FALSE(failed);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double worstStall = stalls.worstSeconds();
    load.stop();

    // Every acknowledged transaction commits, and exactly once.
    const auto acknowledged = load.acknowledged();
    for (std::size_t s = 0; s < kSenders; ++s) {
        const Address address = crypto::addressOf(senders[s].publicKey());
        const std::uint64_t sent = load.sent(s);
        ASSERT_TRUE(waitFor(
            [&] {
                auto account = net.call(0, "account_get", json::array{json::string(address.hex())});
                return account && parseU64(field(*account, "nonce")).value_or(0) >= sent;
            },
            std::chrono::seconds(60)))
            << "sender " << s << " lost transactions below nonce " << sent;
    }
    const std::uint64_t top = heightOf(net, 0);
    std::map<std::string, std::size_t> seen;
    for (std::uint64_t h = 1; h <= top; ++h) {
        auto block = net.call(0, "block_get", json::array{json::string(std::to_string(h))});
        ASSERT_TRUE(block);
        for (const auto& tx : block->as_object().at("txs").as_array()) {
            ++seen[std::string(tx.as_string())];
        }
    }
    std::size_t lost = 0;
    std::size_t duplicated = 0;
    for (const auto& [key, hash] : acknowledged) {
        const auto it = seen.find(hash);
        lost += it == seen.end() ? 1U : 0U;
        duplicated += it != seen.end() && it->second > 1 ? 1U : 0U;
    }
    EXPECT_EQ(lost, 0U);
    EXPECT_EQ(duplicated, 0U);

    // Every node holds the same chain: block ids and state roots at every height.
    ASSERT_TRUE(waitFor(
        [&] {
            for (std::size_t i = 0; i < nodes; ++i) {
                if (heightOf(net, i) < top) {
                    return false;
                }
            }
            return true;
        },
        std::chrono::seconds(60)));
    std::vector<std::size_t> all(nodes);
    std::iota(all.begin(), all.end(), std::size_t{0});
    expectSameChain(net, all, top);

    std::uint64_t relayed = 0;
    for (std::size_t i = 0; i < nodes; ++i) {
        for (std::size_t j = 0; j < nodes; ++j) {
            relayed += i != j ? relays[i][j]->connections() : 0;
        }
    }
    EXPECT_GE(relayed, validators * (validators - 1) / 2);  // the links went through relays
    std::cout << "[e2e] validators=" << validators << " lanes=" << lanes
              << " epoch=" << epochOf(net, 0) << " seed=" << seed
              << " perturbations=" << perturbations << " seconds=" << seconds;
    for (const auto& [kind, count] : applied) {
        std::cout << " " << kind << "=" << count << " (worst stall " << worstStallOf[kind] << " s)";
    }
    std::cout << " byzantine_messages=" << byzantineSent << " forged_tcs=" << byzantineTcs
              << " acknowledged=" << acknowledged.size() << " lost=" << lost
              << " duplicated=" << duplicated << " forks=0 height=" << top
              << " relayed_connections=" << relayed << " worst_stall_s=" << worstStall << std::endl;
    // With at most one faulty member at a time and a round timeout of 1 s, each faulty leader
    // in a row costs a round timeout (1 s, then 1.2 s, 1.44 s, ...): the head never stands
    // still for 10 s.
    EXPECT_LE(worstStall, 10.0);
}

TEST(FaultSuite, FourValidatorsUnderLoadAgreeAndLoseNothingThroughPartitionsPausesAndCrashes) {
    runSuite(4);
}

TEST(FaultSuite, SevenValidatorsUnderLoadAgreeAndLoseNothingThroughPartitionsPausesAndCrashes) {
    runSuite(7);
}

}  // namespace
}  // namespace gridledger::testing
