// Load generator for a 1-validator node or a local network of N validators
// (`gridledger_node_load [--validators N]`): committed signed transfers per second, reported as a
// ratio to the signature-verification ceiling measured in the same run (docs/benchmarks.md):
//   ceiling = verify_rate_per_core × cores / validators_on_this_machine.
//
// It starts real node processes in temporary homes (`gridledger init`, or `gridledger testnet`
// for N > 1), funds sender accounts from the dev account, pre-signs every transfer, submits them
// in JSON-RPC batches over keep-alive HTTP connections from several threads (client t talks to
// node t mod N, so every validator's mempool takes load and gossips it) and waits until every one
// is committed. Then it stops the nodes and replays node 0's chain with `gridledger replay`
// (every signature, certificate and state root checked again), reporting the replay rate as a
// ratio to the one-core verification rate of the same run. With N > 1, before the nodes stop, a
// new full node block-syncs the whole chain from genesis: its blocks/s and transactions/s, as a
// ratio to the all-core verification rate.
//
// `--validators N --crash-one` (N >= 4) measures a crash instead: half of the load with every
// validator up, then the last one killed, and the other half once the chain has gone 40 blocks
// on without it; it reports both rates and their ratio, with leader reputation on (window 20, the
// genesis default) and then off, so that the two runs show what reputation changes.
//
// `--no-journal` runs the 1-validator measurement with the admission journal off
// (mempool.journal = false): beside the default run, the difference between the two
// ratio_to_ceiling figures is what making every acknowledged transaction durable costs.
//
// `--reads` measures reads while a 1-validator node commits at half of the peak rate it just
// reached (read_load.h): wrk's JSON-RPC account_get and block_get, then 1,000 WebSocket
// newHeads subscribers, each checked to see every head, with the delay of each notification.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "load_support.h"
#include "read_load.h"
#include "rpc_connection.h"
#include "support/node_process.h"
#include "support/process.h"
#include "support/testnet.h"

namespace gridledger {
namespace {

namespace json = boost::json;
using bench::Clock;
using bench::Connection;
using bench::kTransferFee;
using bench::nonceOf;
using bench::transfer;
using bench::verifyRatePerCore;
using bench::waitFor;

constexpr std::size_t kSenders = 64;
/**
 * Nonces per sender in the peak phase: 102,400 transfers, about 3 s at 1 validator, so that one
 * stall of the host or the node moves the figure by a few per cent, where 25,600 (under a second)
 * moved it by a fifth.
 */
constexpr std::size_t kTxsPerSender = 1600;
constexpr std::size_t kClientThreads = 4;
/** Nonces per sender in one `POST /txs` body (below the mempool's nonce window of 64). */
constexpr std::size_t kRawNoncesPerBody = 32;

/** How the load reaches the node: raw bytes to `POST /txs`, or JSON-RPC batches of tx_submit. */
enum class Submit : std::uint8_t { kRaw, kJson };
/** The latency run: a batch every kLatencyTickMs for kLatencySeconds. */
constexpr std::size_t kLatencyTickMs = 10;
constexpr std::size_t kLatencySeconds = 10;
/** Every wait of the run is bounded: a run that does not finish in time reports a failure. */
constexpr auto kDeadline = std::chrono::seconds(300);
/** The read run: its subscribers, and how long each of its two phases measures. */
constexpr std::size_t kSubscribers = 1000;
constexpr std::size_t kReadSeconds = 10;
/** Load signed beyond a phase, for the subscribers to connect and the last heads to arrive. */
constexpr std::size_t kReadMarginSeconds = 5;
/** What a run measures: throughput and latency, a crash, or reads under load. */
enum class Mode : std::uint8_t { kThroughput, kCrashOne, kReads };
/** The genesis default leader reputation window, in blocks (docs/protocol.md §1). */
constexpr std::uint32_t kLeaderReputationWindow = 20;
/**
 * The crash run's phases are chunks of kChunkNonces nonces per sender, each committed
 * before the next is sent: kNoFaultChunks with every validator up, then, with leader reputation
 * on, as many as it takes with one member crashed to span kCrashedPeriods periods of open rounds
 * (W · n rounds each, docs/protocol.md §1). The crashed member leads the open round of a period
 * with chance 1 / n, each time a round timeout, so a phase shorter than a few periods measures
 * its luck. At most kCrashedChunks chunks are signed for that phase.
 */
constexpr std::size_t kChunkNonces = 200;
constexpr std::size_t kNoFaultChunks = 4;
constexpr std::uint64_t kCrashedPeriods = 4;
constexpr std::size_t kCrashedChunks = 24;

/** Commit latency at a steady offered load. */
struct Latency {
    double offered = 0;
    std::size_t count = 0;
    double p50Ms = 0;
    double p99Ms = 0;
    double maxMs = 0;
};

/**
 * Replays the stopped node's chain at `home` with `gridledger replay` and prints the blocks and
 * transactions it checked, its rate, and that rate over the one-core verify rate `perCore` (the
 * replay verifies every signature on one thread). False when the replay fails.
 */
bool reportReplay(const std::filesystem::path& home, double perCore) {
    const auto replay = bench::replayFromGenesis(home);
    if (!replay) {
        return false;
    }
    std::cout << "replay_blocks=" << replay->blocks << " replay_txs=" << replay->txs
              << " replay_seconds=" << replay->seconds
              << " replay_blocks_per_s=" << replay->blocksPerS
              << " replay_tx_per_s=" << replay->txsPerS
              << " replay_ratio_to_verify_rate_per_core=" << replay->txsPerS / perCore << "\n";
    return true;
}

/** Keys of a 1-validator node's config/node.conf and the values that replace `init`'s. */
using Settings = std::vector<std::pair<std::string, std::string>>;

/** The node processes under load: one dev node, or a testnet of N validators. */
class Nodes {
  public:
    Nodes(std::size_t validators, std::optional<std::uint32_t> reputationWindow,
          const Settings& settings) {
        if (validators == 1) {
            single_.emplace();
            const auto conf = single_->home() / "config" / "node.conf";
            std::string text = testing::readText(conf);
            for (const auto& [key, value] : settings) {
                std::string line = "\n";
                line += key;
                line += " = ";
                std::string pattern = line;
                pattern += "[^\n]*";
                std::string replacement = line;
                replacement += value;
                text = std::regex_replace(text, std::regex(pattern), replacement);
            }
            std::ofstream(conf, std::ios::trunc) << text;
            single_->start();
            ports_.push_back(single_->port());
            metricsPorts_.push_back(single_->metricsPort());
            dev_ = *node::Home(single_->home()).loadKey("dev");
            chainId_ = "gridledger-dev";
            domain_ = testing::signingDomainOfHome(single_->home());
            return;
        }
        testing::TestnetOptions options;
        options.validators = validators;
        options.fullNodes = 1;  // started by syncFullNode() only
        options.leaderReputationWindow = reputationWindow;
        net_.emplace(options);
        for (std::size_t i = 0; i < validators; ++i) {
            net_->start(i);
            ports_.push_back(net_->rpcPort(i));
            metricsPorts_.push_back(net_->metricsPort(i));
        }
        dev_ = *node::Home(net_->home(0)).loadKey("dev");
        chainId_ = "gridledger-testnet";
        domain_ = testing::signingDomainOfHome(net_->home(0));
    }

    /** Kills validator i (SIGKILL); its port leaves ports(). Requires a testnet. */
    void crash(std::size_t i) {
        net_->stop(i, SIGKILL);
        ports_.erase(ports_.begin() + static_cast<std::ptrdiff_t>(i));
        metricsPorts_.erase(metricsPorts_.begin() + static_cast<std::ptrdiff_t>(i));
    }

    /**
     * The transaction signatures the live validators verified so far, summed
     * (`gridledger_tx_signatures_verified_total`); nullopt when a scrape failed.
     */
    [[nodiscard]] std::optional<double> signaturesVerified() const {
        double total = 0;
        for (const std::uint16_t port : metricsPorts_) {
            const auto verified =
                testing::scrapeMetric(port, "gridledger_tx_signatures_verified_total");
            if (!verified) {
                return std::nullopt;
            }
            total += *verified;
        }
        return total;
    }

    /** What the full node's sync reported. */
    struct FullNodeSync {
        /** Its `sync finished` log line. */
        std::string line;
        /** Transactions it executed, read right after that line. */
        double committedTxs = 0;
    };

    /**
     * Starts the testnet's full node, which block-syncs the whole chain from genesis, and waits
     * for its `sync finished` log line; nullopt when it did not come before `deadline`.
     * Requires a testnet.
     */
    [[nodiscard]] std::optional<FullNodeSync> syncFullNode(Clock::time_point deadline) {
        const std::size_t full = net_->size() - 1;
        net_->start(full);
        std::smatch match;
        const std::regex finished(R"(sync finished [^\n]*)");
        std::string log;
        if (!waitFor(deadline, [&] {
                log = testing::readText(net_->log(full));
                return std::regex_search(log, match, finished);
            })) {
            return std::nullopt;
        }
        return FullNodeSync{match.str(),
                            net_->metric(full, "gridledger_committed_txs_total").value_or(0)};
    }

    void stop() {
        if (single_) {
            single_->stop(SIGTERM);
        } else {
            net_->stopAll(SIGTERM);
        }
    }

    [[nodiscard]] const std::vector<std::uint16_t>& ports() const { return ports_; }
    /** Node 0's home. */
    [[nodiscard]] const std::filesystem::path& home() const {
        return single_ ? single_->home() : net_->home(0);
    }
    [[nodiscard]] const crypto::SecretKey& dev() const { return *dev_; }
    [[nodiscard]] const std::string& chainId() const { return chainId_; }
    /** The chain's signing domain (chain id and genesis hash). */
    [[nodiscard]] const std::string& domain() const { return domain_; }

  private:
    std::optional<testing::NodeProcess> single_;
    std::optional<testing::Testnet> net_;
    std::vector<std::uint16_t> ports_;
    std::vector<std::uint16_t> metricsPorts_;
    std::optional<crypto::SecretKey> dev_;
    std::string chainId_;
    std::string domain_;
};

/**
 * Block sync of the whole chain into a new full node while the validators idle: blocks and
 * transactions per second, and the transaction rate over the all-core verify rate (sync checks
 * every transaction signature on every core, and every certificate). False when it failed.
 */
bool reportSync(Nodes& nodes, double perCore, unsigned cores, Clock::time_point deadline) {
    const auto sync = nodes.syncFullNode(deadline);
    std::smatch match;
    const std::regex fields(R"(blocks=(\d+) .*seconds=([0-9.]+) rate_blocks_per_s=([0-9.]+))");
    if (!sync || !std::regex_search(sync->line, match, fields)) {
        std::cerr << "the full node's sync did not finish in time\n";
        return false;
    }
    const double seconds = std::stod(match[2]);
    const double txsPerS = seconds > 0 ? sync->committedTxs / seconds : 0;
    std::cout << "sync_blocks=" << match[1] << " sync_txs=" << sync->committedTxs
              << " sync_seconds=" << seconds << " sync_blocks_per_s=" << match[3]
              << " sync_tx_per_s=" << txsPerS
              << " sync_ratio_to_verify_rate_all_cores=" << txsPerS / (perCore * cores)
              << std::endl;
    return true;
}

/** Runs `work(i)` for every i in [0, count), the indices shared out over one thread per core. */
template <typename Work>
void onEveryCore(std::size_t count, const Work& work) {
    const std::size_t threads = std::max(1U, std::thread::hardware_concurrency());
    std::vector<std::thread> workers;
    for (std::size_t first = 0; first < threads; ++first) {
        workers.emplace_back([&, first] {
            for (std::size_t i = first; i < count; i += threads) {
                work(i);
            }
        });
    }
    for (auto& worker : workers) {
        worker.join();
    }
}

/** Transfers signed ahead for a steady load: the `POST /txs` body of each kLatencyTickMs. */
struct SteadyLoad {
    std::vector<std::vector<Bytes>> batches;
    std::vector<std::vector<Hash256>> hashes;
    std::size_t perTick = 0;
};

/**
 * Signs `seconds` of `txPerSecond` transfers on every core, the senders taking turns from their
 * `nonces` on (the k-th transfer is sender k mod senders' (k / senders)-th).
 */
SteadyLoad signSteadyLoad(const Nodes& nodes, const std::vector<crypto::SecretKey>& senders,
                          const std::vector<std::uint64_t>& nonces, double txPerSecond,
                          std::size_t seconds) {
    SteadyLoad load;
    load.perTick =
        std::max<std::size_t>(1, static_cast<std::size_t>(txPerSecond * kLatencyTickMs / 1000.0));
    const std::size_t ticks = seconds * 1000 / kLatencyTickMs;
    load.batches.resize(ticks);
    load.hashes.resize(ticks);
    Address sink;
    sink[0] = 0x5f;
    const auto sign = [&](std::size_t t) {
        for (std::size_t i = 0; i < load.perTick; ++i) {
            const std::size_t k = t * load.perTick + i;
            const std::size_t s = k % senders.size();
            codec::TxBody body{
                nodes.chainId(), senders[s].publicKey(),         nonces[s] + k / senders.size(),
                90'000,          codec::Transfer{sink, u128{1}}, kTransferFee};
            const auto tx = codec::signTx(body, senders[s], nodes.domain());
            load.batches[t].push_back(tx.raw);
            load.hashes[t].push_back(tx.hash);
        }
    };
    onEveryCore(ticks, sign);
    return load;
}

/**
 * Posts the load's bodies to node 0, body t at kLatencyTickMs × t from now, calling
 * `beforePost(t)` before each, until they run out or `stop` is set. Returns the bodies posted.
 */
template <typename BeforePost>
std::size_t offerSteadyLoad(const Nodes& nodes, const SteadyLoad& load,
                            const std::atomic<bool>& stop, BeforePost beforePost) {
    Connection rpc(nodes.ports().front());
    const auto begin = Clock::now();
    std::size_t t = 0;
    for (; t < load.batches.size() && !stop; ++t) {
        std::this_thread::sleep_until(begin + std::chrono::milliseconds(t * kLatencyTickMs));
        beforePost(t);
        (void)rpc.postRaw(std::vector<ByteView>(load.batches[t].begin(), load.batches[t].end()));
    }
    return t;
}

/**
 * Offers `txPerSecond` transfers for kLatencySeconds (a `POST /txs` body every kLatencyTickMs,
 * through node 0, senders continuing at nonce kTxsPerSender) and measures, per transaction, the
 * time from its submission to the moment a poll of node 0's head first shows the block that carries
 * it.
 */
std::optional<Latency> measureLatency(const Nodes& nodes,
                                      const std::vector<crypto::SecretKey>& senders,
                                      double txPerSecond, Clock::time_point deadline) {
    std::vector<std::uint64_t> nonces(senders.size(), kTxsPerSender);
    const SteadyLoad load = signSteadyLoad(nodes, senders, nonces, txPerSecond, kLatencySeconds);
    const std::size_t expected = load.batches.size() * load.perTick;
    std::map<Hash256, Clock::time_point> sentAt;
    std::map<Hash256, Clock::time_point> seenAt;
    std::mutex mutex;
    std::atomic<bool> submitting{true};
    std::thread watcher([&] {
        Connection rpc(nodes.ports().front());
        std::uint64_t seen =
            *parseU64(rpc.call("chain_getHead", {}).at("result").at("height").as_string());
        while (Clock::now() < deadline) {
            const std::uint64_t head =
                *parseU64(rpc.call("chain_getHead", {}).at("result").at("height").as_string());
            const auto now = Clock::now();
            for (; seen < head; ++seen) {
                const auto block = rpc.call("block_get", {json::string(std::to_string(seen + 1))});
                const std::lock_guard lock(mutex);
                for (const auto& tx : block.at("result").at("txs").as_array()) {
                    seenAt.emplace(*Hash256::fromHex(tx.as_string()), now);
                }
            }
            {
                const std::lock_guard lock(mutex);
                if (!submitting && seenAt.size() >= expected) {
                    return;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    });
    const std::atomic<bool> stop{false};
    (void)offerSteadyLoad(nodes, load, stop, [&](std::size_t t) {
        const auto now = Clock::now();
        const std::lock_guard lock(mutex);
        for (const auto& hash : load.hashes[t]) {
            sentAt.emplace(hash, now);
        }
    });
    submitting = false;
    watcher.join();
    std::vector<double> latencies;
    for (const auto& [hash, sent] : sentAt) {
        const auto seen = seenAt.find(hash);
        if (seen == seenAt.end()) {
            return std::nullopt;
        }
        latencies.push_back(std::chrono::duration<double, std::milli>(seen->second - sent).count());
    }
    std::sort(latencies.begin(), latencies.end());
    const auto at = [&](double q) {
        return latencies[std::min(
            latencies.size() - 1,
            static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
    };
    return Latency{static_cast<double>(load.perTick) * 1000.0 / kLatencyTickMs, latencies.size(),
                   at(0.5), at(0.99), latencies.back()};
}

/** The pause before a refused transaction is sent again, doubling up to the longest. */
constexpr auto kFirstRetryPause = std::chrono::milliseconds(5);
constexpr auto kLongestRetryPause = std::chrono::milliseconds(40);

/**
 * Sends `todo` (sender, nonce) transfers through `send`, which returns the indexes refused, and
 * sends those again until none is refused (the nonce window frees as blocks commit). The pause
 * between two sends doubles from kFirstRetryPause to kLongestRetryPause, as a client backs off
 * from a busy node: the transactions already admitted keep the node busy meanwhile, and a client
 * that sends refused ones again every few milliseconds spends the cores the node shares with it.
 */
template <typename Send>
void sendUntilAdmitted(std::vector<std::pair<std::size_t, std::size_t>> todo,
                       Clock::time_point deadline, std::atomic<std::size_t>& refused, Send send) {
    std::chrono::milliseconds pause = kFirstRetryPause;
    while (!todo.empty() && Clock::now() < deadline) {
        std::vector<std::pair<std::size_t, std::size_t>> again;
        for (const std::size_t i : send(todo)) {
            again.push_back(todo[i]);
        }
        refused += again.size();
        if (!again.empty()) {
            std::this_thread::sleep_for(pause);
            pause = std::min(2 * pause, kLongestRetryPause);
        }
        todo = std::move(again);
    }
}

/**
 * Submits every sender's transfers with nonces [from, to) from kClientThreads clients (client t
 * talks to the t mod N-th live node) and waits until all of them are committed. A client sends
 * its senders' transactions of kRawNoncesPerBody nonces in one `POST /txs` body, or, with
 * Submit::kJson, of one nonce in one JSON-RPC batch; and sends again those the nonce window
 * refused, until earlier ones commit. Returns when the submissions ended (before the commits);
 * nullopt when the deadline passed first.
 */
std::optional<Clock::time_point> submitAndCommit(const Nodes& nodes,
                                                 const std::vector<crypto::SecretKey>& senders,
                                                 const std::vector<std::vector<Bytes>>& work,
                                                 std::size_t from, std::size_t to,
                                                 Clock::time_point deadline,
                                                 std::atomic<std::size_t>& refused, Submit path) {
    using Todo = std::vector<std::pair<std::size_t, std::size_t>>;  // (sender, nonce)
    const auto sendRaw = [&work](Connection& rpc, const Todo& todo) {
        std::vector<ByteView> txs;
        for (const auto& [sender, nonce] : todo) {
            txs.emplace_back(work[sender][nonce]);
        }
        const std::vector<std::string> reasons = rpc.postRaw(txs);
        std::vector<std::size_t> refusedAt;
        for (std::size_t i = 0; i < reasons.size(); ++i) {
            if (!reasons[i].empty()) {
                refusedAt.push_back(i);
            }
        }
        return refusedAt;
    };
    const auto sendJson = [&work](Connection& rpc, const Todo& todo) {
        json::array batch;
        for (std::size_t i = 0; i < todo.size(); ++i) {
            batch.push_back(json::object{
                {"jsonrpc", "2.0"},
                {"id", i},
                {"method", "tx_submit"},
                {"params", json::array{json::string(toHex(work[todo[i].first][todo[i].second]))}}});
        }
        std::vector<std::size_t> refusedAt;
        const json::value replies = rpc.post(json::serialize(batch));
        for (const auto& reply : replies.as_array()) {
            if (!reply.as_object().contains("result")) {
                refusedAt.push_back(static_cast<std::size_t>(reply.at("id").as_int64()));
            }
        }
        return refusedAt;
    };
    const std::size_t noncesPerSend = path == Submit::kRaw ? kRawNoncesPerBody : 1;
    std::vector<std::thread> clients;
    for (std::size_t t = 0; t < kClientThreads; ++t) {
        clients.emplace_back([&, t] {
            Connection rpc(nodes.ports()[t % nodes.ports().size()]);
            for (std::size_t n = from; n < to; n += noncesPerSend) {
                Todo todo;
                for (std::size_t nonce = n; nonce < std::min(to, n + noncesPerSend); ++nonce) {
                    for (std::size_t s = t; s < senders.size(); s += kClientThreads) {
                        todo.emplace_back(s, nonce);
                    }
                }
                sendUntilAdmitted(std::move(todo), deadline, refused, [&](const Todo& batch) {
                    return path == Submit::kRaw ? sendRaw(rpc, batch) : sendJson(rpc, batch);
                });
            }
        });
    }
    for (auto& c : clients) {
        c.join();
    }
    const auto submitted = Clock::now();
    Connection rpc(nodes.ports().front());
    for (const auto& sender : senders) {
        const Address address = crypto::addressOf(sender.publicKey());
        if (!waitFor(deadline, [&] { return nonceOf(rpc, address) >= to; })) {
            std::cerr << "the load did not commit in time\n";
            return std::nullopt;
        }
    }
    return submitted;
}

std::uint64_t headOf(Connection& rpc) {
    return *parseU64(rpc.call("chain_getHead", {}).at("result").at("height").as_string());
}

/** The header of the block at `height`. */
json::object headerAt(Connection& rpc, std::uint64_t height) {
    const json::value block = rpc.call("block_get", {json::string(std::to_string(height))});
    return block.at("result").at("header").as_object();
}

/** The round of the block at `height`. */
std::uint64_t roundAt(Connection& rpc, std::uint64_t height) {
    return *parseU64(headerAt(rpc, height).at("round").as_string());
}

/** How many of the blocks at heights (from, to] carry a TC: each follows a round that timed out. */
std::uint64_t blocksAfterATimeout(Connection& rpc, std::uint64_t from, std::uint64_t to) {
    std::uint64_t count = 0;
    for (std::uint64_t height = from + 1; height <= to; ++height) {
        if (headerAt(rpc, height).contains("tc")) {
            ++count;
        }
    }
    return count;
}

/**
 * The crash run (`--crash-one`): kNoFaultChunks of the load with every validator up, then the last
 * validator is killed, the chain runs on until the crashed member has left the leader schedule
 * (2 × the leader reputation window of blocks), and chunks of the load go to the live validators
 * until they span `crashedRounds` rounds (one chunk when 0). Reports both rates and their ratio,
 * then replays node 0's chain.
 */
int runWithACrash(Nodes& nodes, const std::vector<crypto::SecretKey>& senders,
                  const std::vector<std::vector<Bytes>>& work, std::uint64_t crashedRounds,
                  double perCore, unsigned cores, Clock::time_point deadline) {
    std::atomic<std::size_t> refused{0};
    const std::size_t chunk = kChunkNonces;
    const double chunkTxs = static_cast<double>(senders.size() * chunk);
    const auto submitChunk = [&](std::size_t index) {
        return submitAndCommit(nodes, senders, work, index * chunk, (index + 1) * chunk, deadline,
                               refused, Submit::kRaw)
            .has_value();
    };
    auto start = Clock::now();
    for (std::size_t index = 0; index < kNoFaultChunks; ++index) {
        if (!submitChunk(index)) {
            return 1;
        }
    }
    const double noFault = chunkTxs * static_cast<double>(kNoFaultChunks) /
                           std::chrono::duration<double>(Clock::now() - start).count();
    const std::size_t validators = nodes.ports().size();
    nodes.crash(validators - 1);
    Connection rpc(nodes.ports().front());
    const auto crashed = Clock::now();
    const std::uint64_t crashHeight = headOf(rpc);
    const std::uint64_t settled = crashHeight + std::uint64_t{2} * kLeaderReputationWindow;
    if (!waitFor(deadline, [&] { return headOf(rpc) >= settled; })) {
        std::cerr << "the chain did not go on after the crash\n";
        return 1;
    }
    const double settleSeconds = std::chrono::duration<double>(Clock::now() - crashed).count();
    const std::uint64_t fromHeight = headOf(rpc);
    const std::uint64_t fromRound = roundAt(rpc, fromHeight);
    std::uint64_t toHeight = 0;
    std::uint64_t toRound = 0;
    std::size_t chunks = 0;
    start = Clock::now();
    do {
        if ((kNoFaultChunks + chunks + 1) * chunk > work.front().size()) {
            std::cerr << "the crashed phase ran out of signed chunks before it spanned "
                      << crashedRounds << " rounds\n";
            return 1;
        }
        if (!submitChunk(kNoFaultChunks + chunks)) {
            return 1;
        }
        ++chunks;
        toHeight = headOf(rpc);
        toRound = roundAt(rpc, toHeight);
    } while (toRound - fromRound < crashedRounds);
    const double oneCrashed = chunkTxs * static_cast<double>(chunks) /
                              std::chrono::duration<double>(Clock::now() - start).count();
    const double ceiling = perCore * cores / static_cast<double>(validators);
    std::cout << "validators=" << validators << " txs_per_chunk=" << chunkTxs
              << " no_fault_chunks=" << kNoFaultChunks << " refused_retries=" << refused.load()
              << "\n"
              << "verify_rate_per_core=" << perCore << " cores=" << cores << " ceiling=" << ceiling
              << "\n"
              << "committed_tx_per_s_no_fault=" << noFault
              << " ratio_to_ceiling=" << noFault / ceiling << "\n"
              << "crash_height=" << crashHeight << " blocks_until_settled=" << settled - crashHeight
              << " settle_seconds=" << settleSeconds << "\n"
              << "committed_tx_per_s_one_crashed=" << oneCrashed
              << " one_crashed_to_no_fault=" << oneCrashed / noFault << "\n"
              << "one_crashed_chunks=" << chunks << " one_crashed_first_round=" << fromRound + 1
              << " one_crashed_last_round=" << toRound << " one_crashed_blocks_after_a_timeout="
              << blocksAfterATimeout(rpc, fromHeight, toHeight) << std::endl;
    nodes.stop();
    return reportReplay(nodes.home(), perCore) ? 0 : 1;
}

/** The sum of the senders' nonces on the chain: the transfers of theirs committed so far. */
std::uint64_t committedTransfers(Connection& rpc, const std::vector<crypto::SecretKey>& senders) {
    std::uint64_t total = 0;
    for (const auto& sender : senders) {
        total += nonceOf(rpc, crypto::addressOf(sender.publicKey()));
    }
    return total;
}

/**
 * Runs `phase` while node 0 is offered `txPerSecond` transfers from the senders' `nonces` on
 * (signed ahead for kReadSeconds and kReadMarginSeconds more), prints `<name>_commit_tx_per_s=`,
 * the rate the node committed while `phase` ran, and waits until what was offered committed
 * (`nonces` then follow it). Returns what `phase` returned; nullopt when the load did not commit.
 */
template <typename Phase>
auto underSteadyLoad(const Nodes& nodes, const std::vector<crypto::SecretKey>& senders,
                     std::vector<std::uint64_t>& nonces, double txPerSecond,
                     const std::string& name, Phase phase) -> decltype(phase()) {
    const SteadyLoad load =
        signSteadyLoad(nodes, senders, nonces, txPerSecond, kReadSeconds + kReadMarginSeconds);
    std::atomic<bool> stop{false};
    std::size_t posted = 0;
    std::thread writer([&] { posted = offerSteadyLoad(nodes, load, stop, [](std::size_t) {}); });
    Connection rpc(nodes.ports().front());
    const std::uint64_t before = committedTransfers(rpc, senders);
    const auto start = Clock::now();
    auto result = phase();
    const double committed = static_cast<double>(committedTransfers(rpc, senders) - before);
    std::cout << name << "_commit_tx_per_s="
              << committed / std::chrono::duration<double>(Clock::now() - start).count()
              << std::endl;
    stop = true;
    writer.join();
    const std::size_t transfers = posted * load.perTick;
    for (std::size_t s = 0; s < senders.size(); ++s) {
        nonces[s] += transfers / senders.size() + (s < transfers % senders.size() ? 1 : 0);
        const Address address = crypto::addressOf(senders[s].publicKey());
        if (!waitFor(Clock::now() + std::chrono::seconds(30),
                     [&] { return nonceOf(rpc, address) >= nonces[s]; })) {
            std::cerr << "the load offered during " << name << " did not commit\n";
            return std::nullopt;
        }
    }
    return result;
}

/**
 * The read run (`--reads`), at half of the `peak` committed rate just measured: wrk's JSON-RPC
 * reads of the senders' accounts and of the blocks so far, then kSubscribers newHeads
 * subscribers, each for kReadSeconds. Stops the node. Fails when an answer was not a result or
 * a subscriber missed a head.
 */
int runReads(Nodes& nodes, const std::vector<crypto::SecretKey>& senders, double peak) {
    const std::uint16_t port = nodes.ports().front();
    std::vector<std::uint64_t> nonces(senders.size(), kTxsPerSender);
    std::vector<std::string> accounts;
    accounts.reserve(senders.size());
    for (const auto& sender : senders) {
        accounts.push_back(crypto::addressOf(sender.publicKey()).hex());
    }
    Connection rpc(port);
    std::cout << "read_load_tx_per_s=" << peak / 2 << std::endl;
    const auto reads = underSteadyLoad(nodes, senders, nonces, peak / 2, "reads", [&] {
        return bench::runWrk(port, headOf(rpc), accounts, kReadSeconds,
                             nodes.home().parent_path() / "wrk.log");
    });
    if (reads) {
        std::cout << "reads_per_s=" << reads->requestsPerS << " reads_ms_p50=" << reads->p50Ms
                  << " reads_ms_p99=" << reads->p99Ms << " reads_non2xx=" << reads->non2xx
                  << " reads_socket_errors=" << reads->socketErrors
                  << " reads_rpc_errors=" << reads->rpcErrors << std::endl;
    }
    const auto heads = underSteadyLoad(
        nodes, senders, nonces, peak / 2, "subscribers", [&]() -> std::optional<bench::HeadDelays> {
            try {
                bench::HeadSubscribers subscribers(port, kSubscribers, Clock::now() + kDeadline);
                const std::uint64_t first = headOf(rpc) + 1;
                std::this_thread::sleep_for(std::chrono::seconds(kReadSeconds));
                return subscribers.finish(first, headOf(rpc), Clock::now() + kDeadline);
            } catch (const std::exception& e) {
                std::cerr << e.what() << "\n";
                return std::nullopt;
            }
        });
    nodes.stop();
    if (heads) {
        std::cout << "subscribers=" << kSubscribers << " notifications=" << heads->notifications
                  << " head_delay_ms_p50=" << heads->p50Ms << " head_delay_ms_p99=" << heads->p99Ms
                  << " head_delay_ms_max=" << heads->maxMs
                  << " fan_out_ms_p99=" << heads->fanOutP99Ms
                  << " fan_out_ms_max=" << heads->fanOutMaxMs << std::endl;
    }
    return reads && reads->non2xx + reads->socketErrors + reads->rpcErrors == 0 && heads ? 0 : 1;
}

int run(std::size_t validators, Mode mode, std::optional<std::uint32_t> reputationWindow,
        bool journal, Submit path) {
    Settings settings;
    if (!journal) {
        settings.emplace_back("journal", "false");
    }
    if (mode == Mode::kReads) {
        settings.emplace_back("max_ws_connections", std::to_string(kSubscribers));
    }
    Nodes nodes(validators, reputationWindow, settings);
    const auto& dev = nodes.dev();
    const std::string& chainId = nodes.chainId();
    const std::uint16_t port = nodes.ports().front();

    std::vector<crypto::SecretKey> senders;
    for (std::size_t i = 0; i < kSenders; ++i) {
        senders.push_back(crypto::SecretKey::generate());
    }
    Connection setup(port);
    for (std::size_t i = 0; i < kSenders; ++i) {
        const auto raw = transfer(chainId, nodes.domain(), dev,
                                  crypto::addressOf(senders[i].publicKey()), i, u128{1} << 80U);
        setup.call("tx_submit", {json::string(toHex(raw))});
    }
    const Address devAddress = crypto::addressOf(dev.publicKey());
    const auto deadline = Clock::now() + kDeadline;
    if (!waitFor(deadline, [&] { return nonceOf(setup, devAddress) >= kSenders; })) {
        std::cerr << "funding the senders did not commit in time\n";
        return 1;
    }

    // With leader reputation on, the crashed phase spans kCrashedPeriods periods of open rounds.
    const std::uint64_t crashedRounds =
        mode == Mode::kCrashOne ? kCrashedPeriods * reputationWindow.value_or(0) * validators : 0;
    const std::size_t noncesPerSender =
        mode == Mode::kCrashOne
            ? kChunkNonces * (kNoFaultChunks + (crashedRounds > 0 ? kCrashedChunks : 1))
            : kTxsPerSender;
    std::vector<std::vector<Bytes>> work(kSenders);
    Address sink;
    sink[0] = 0x5e;
    onEveryCore(kSenders, [&](std::size_t s) {
        for (std::size_t n = 0; n < noncesPerSender; ++n) {
            work[s].push_back(transfer(chainId, nodes.domain(), senders[s], sink, n, u128{1}));
        }
    });
    const double perCoreBefore = verifyRatePerCore(1.0);
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());

    std::atomic<std::size_t> refused{0};
    if (mode == Mode::kCrashOne) {
        return runWithACrash(nodes, senders, work, crashedRounds, perCoreBefore, cores, deadline);
    }
    const auto verifiedBefore = nodes.signaturesVerified();
    const auto start = Clock::now();
    const auto submitted =
        submitAndCommit(nodes, senders, work, 0, kTxsPerSender, deadline, refused, path);
    if (!submitted) {
        return 1;
    }
    const auto committed = Clock::now();
    const auto verifiedAfter = nodes.signaturesVerified();
    if (!verifiedBefore || !verifiedAfter) {
        std::cerr << "a node's metrics did not answer\n";
        return 1;
    }
    // The host's speed drifts by more than a tenth within a minute: the ceiling is the mean of
    // the verify rate measured just before the phase and just after it.
    const double perCoreAfter = verifyRatePerCore(1.0);
    const double perCore = (perCoreBefore + perCoreAfter) / 2;
    const double total = static_cast<double>(kSenders * kTxsPerSender);
    const double seconds = std::chrono::duration<double>(committed - start).count();
    const double rate = total / seconds;
    const double ceiling = perCore * cores / static_cast<double>(validators);
    std::cout << "submit=" << (path == Submit::kRaw ? "raw" : "json")
              << " admission_journal=" << (journal ? "on" : "off") << " txs=" << total
              << " seconds=" << seconds
              << " submit_seconds=" << std::chrono::duration<double>(*submitted - start).count()
              << " refused_retries=" << refused.load() << "\n"
              << "verify_rate_per_core=" << perCore << " before=" << perCoreBefore
              << " after=" << perCoreAfter << " cores=" << cores
              << " validators_on_machine=" << validators << " ceiling=" << ceiling << "\n"
              << "committed_tx_per_s=" << rate << " ratio_to_ceiling=" << rate / ceiling << "\n"
              << "tx_signatures_verified=" << *verifiedAfter - *verifiedBefore
              << " per_committed_tx=" << (*verifiedAfter - *verifiedBefore) / total << std::endl;
    if (mode == Mode::kReads) {
        return runReads(nodes, senders, rate);
    }

    const auto latency = measureLatency(nodes, senders, rate / 2, deadline);
    if (!latency) {
        nodes.stop();
        std::cerr << "the latency run did not commit in time\n";
        return 1;
    }
    std::cout << "latency_load_tx_per_s=" << latency->offered << " txs=" << latency->count
              << " commit_latency_ms_p50=" << latency->p50Ms << " p99=" << latency->p99Ms
              << " max=" << latency->maxMs << "\n";
    const bool synced =
        validators == 1 || reportSync(nodes, perCore, cores, Clock::now() + kDeadline);
    nodes.stop();
    return synced && reportReplay(nodes.home(), perCore) ? 0 : 1;
}

}  // namespace
}  // namespace gridledger

int main(int argc, char** argv) {
    std::size_t validators = 1;
    bool crashOne = false;
    std::vector<std::string> args(argv + 1, argv + argc);
    using gridledger::Mode;
    using gridledger::Submit;
    Submit path = Submit::kRaw;
    if (!args.empty() && args.back() == "--json") {
        path = Submit::kJson;
        args.pop_back();
    }
    if (args.size() == 1 && args[0] == "--no-journal") {
        return gridledger::run(1, Mode::kThroughput, std::nullopt, false, path);
    }
    if (args.size() == 1 && args[0] == "--reads") {
        return gridledger::run(1, Mode::kReads, std::nullopt, true, path);
    }
    if (!args.empty() && args.back() == "--crash-one") {
        crashOne = true;
        args.pop_back();
    }
    if (args.size() == 2 && args[0] == "--validators") {
        validators = std::stoul(args[1]);
    } else if (!args.empty()) {
        std::cerr << "usage: gridledger_node_load [--validators N [--crash-one] | --no-journal | "
                     "--reads] [--json]\n";
        return 2;
    }
    if (validators == 0 || validators > 16 || (crashOne && validators < 4)) {
        std::cerr << "gridledger_node_load: --validators must be 1..16, at least 4 with "
                     "--crash-one\n";
        return 2;
    }
    if (!crashOne) {
        return gridledger::run(validators, Mode::kThroughput, std::nullopt, true, path);
    }
    // The same crash with leader reputation on (the genesis default) and off, for comparison.
    for (const std::uint32_t window : {gridledger::kLeaderReputationWindow, 0U}) {
        std::cout << "leader_reputation_window=" << window << std::endl;
        if (const int code =
                gridledger::run(validators, Mode::kCrashOne, window, true, Submit::kRaw);
            code != 0) {
            return code;
        }
    }
    return 0;
}
