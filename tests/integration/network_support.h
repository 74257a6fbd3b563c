#pragma once

// Shared helpers of the multi-validator tests: reading heads and blocks over JSON-RPC, waiting on
// a network, streaming transfers, and reading what the nodes logged.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>

#include "support/sanitizer.h"
#include "support/testnet.h"

namespace gridledger::testing {

namespace json = boost::json;

inline std::string field(const json::value& v, std::string_view key) {
    return std::string(v.as_object().at(key).as_string());
}

/** The last `count` characters of `text` (all of it when shorter): the end of a long log. */
inline std::string lastChars(const std::string& text, std::size_t count) {
    return text.size() > count ? text.substr(text.size() - count) : text;
}

/** `validators` validators with a 500 ms round timeout and 50 ms between idle blocks. */
inline TestnetOptions quickTestnet(std::size_t validators) {
    TestnetOptions options;
    options.validators = validators;
    options.roundTimeoutMs = 500;
    options.emptyBlockIntervalMs = 50;
    return options;
}

/** Node i's executed height, or 0 when it does not answer. */
inline std::uint64_t heightOf(const Testnet& net, std::size_t i) {
    auto status = net.call(i, "node_getStatus", json::array{});
    return status ? parseU64(field(*status, "executed_height")).value_or(0) : 0;
}

/**
 * Polls `done` every 50 ms until it holds or `timeout` (set for an uninstrumented build, scaled
 * for a sanitizer build) passes; returns whether it held.
 */
inline bool waitFor(const std::function<bool()>& done, std::chrono::seconds timeout) {
    const auto until = std::chrono::steady_clock::now() + scaledWait(timeout);
    while (std::chrono::steady_clock::now() < until) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
}

/** The block id and state root of node i at `height`, or empty strings when it has none. */
inline std::pair<std::string, std::string> blockOf(const Testnet& net, std::size_t i,
                                                   std::uint64_t height) {
    auto block = net.call(i, "block_get", json::array{json::string(std::to_string(height))});
    if (!block) {
        return {};
    }
    return {field(block->as_object().at("header"), "id"), field(*block, "state_root")};
}

/**
 * Asserts that nodes `nodes` hold the same block id and state root at every height from..top
 * (`from` above 1 for a node started from a snapshot, which holds no block below it).
 */
inline void expectSameChain(const Testnet& net, const std::vector<std::size_t>& nodes,
                            std::uint64_t top, std::uint64_t from = 1) {
    for (std::uint64_t h = from; h <= top; ++h) {
        const auto expected = blockOf(net, nodes.front(), h);
        ASSERT_FALSE(expected.first.empty()) << "node " << nodes.front() << " height " << h;
        for (const auto i : nodes) {
            ASSERT_EQ(blockOf(net, i, h), expected) << "node " << i << " height " << h;
        }
    }
}

/** Replaces the line `key = …` of an INI file (the first one) with `key = value`. */
inline void setConfig(const std::filesystem::path& file, const std::string& key,
                      const std::string& value) {
    const std::string text = readText(file);
    const std::regex line("(^|\n)" + key + " =[^\n]*");
    ASSERT_TRUE(std::regex_search(text, line)) << key << " not in " << file;
    std::ofstream(file, std::ios::trunc) << std::regex_replace(
        text, line, "$1" + key + " = " + value, std::regex_constants::format_first_only);
}

/** Runs the CLI with `args`, its output into a fresh file under `dir`; returns (exit code,
 * output). */
inline std::pair<int, std::string> cli(const Testnet& net, const std::filesystem::path& dir,
                                       const std::vector<std::string>& args) {
    static int serial = 0;
    const auto log = dir / ("cli" + std::to_string(serial++) + ".log");
    const int code = runCommand(net.bin(), args, log);
    return {code, readText(log)};
}

/**
 * Points the `port = ` lines of a node.conf's [rpc], [p2p] and [metrics] sections at `rpcPort`,
 * `rpcPort + 1` and `rpcPort + 2`, and its admin listener at `rpcPort + 3` (four ports from
 * freePortRange(4)), so that no two nodes of parallel tests share the default admin port.
 */
inline void setPorts(const std::filesystem::path& conf, std::uint16_t rpcPort) {
    std::string text = readText(conf);
    std::uint16_t port = rpcPort;
    for (const std::string section : {"rpc", "p2p", "metrics"}) {
        const auto at = text.find("[" + section + "]");
        const auto line = text.find("port = ", at);
        ASSERT_NE(line, std::string::npos) << section;
        const auto end = text.find('\n', line);
        text.replace(line, end - line, "port = " + std::to_string(port++));
    }
    const auto admin = text.find("admin_port = ");
    ASSERT_NE(admin, std::string::npos);
    text.replace(admin, text.find('\n', admin) - admin, "admin_port = " + std::to_string(port));
    std::ofstream(conf, std::ios::trunc) << text;
}

/** The votes a node logged ("signed vote epoch=E round=R block=B"): (epoch, round) → blocks. */
inline std::map<std::pair<std::uint64_t, std::uint64_t>, std::set<std::string>> loggedVotes(
    const std::filesystem::path& log) {
    static const std::regex kVote(R"(signed vote epoch=(\d+) round=(\d+) block=(0x[0-9a-f]+))");
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::set<std::string>> votes;
    const std::string text = readText(log);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kVote);
         it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        votes[{std::stoull(m[1].str()), std::stoull(m[2].str())}].insert(m[3].str());
    }
    return votes;
}

/**
 * One account that streams transfers through one node and records what that node reports
 * committed (tx hash → height). When its node is down it waits; after a restart it re-reads its
 * committed nonce (what died with the process never committed).
 */
class Sender {
  public:
    Sender(const Testnet& net, std::size_t node, crypto::SecretKey key, std::string chainId,
           std::uint64_t seed)
        : net_(net),
          node_(node),
          key_(std::move(key)),
          chainId_(std::move(chainId)),
          domain_(signingDomainOfHome(net.home(node))),
          rng_(seed) {}

    [[nodiscard]] Address address() const { return crypto::addressOf(key_.publicKey()); }

    /** Re-reads the committed nonce and forgets txs that are not committed. */
    bool resync() {
        auto account = net_.call(node_, "account_get", json::array{json::string(address().hex())});
        if (!account) {
            return false;
        }
        nonce_ = parseU64(field(*account, "nonce")).value_or(0);
        validUntil_ = parseU64(field(*account, "height")).value_or(0) + 100'000;
        pending_.clear();
        return true;
    }

    /** Submits up to `count` transfers and collects the ones committed since the last call. */
    void step(std::size_t count) {
        for (std::size_t k = 0; k < count && pending_.size() < 48; ++k) {
            Address to;
            for (std::size_t b = 0; b < to.size(); ++b) {
                to[b] = static_cast<std::uint8_t>(rng_());
            }
            codec::TxBody body{chainId_,
                               key_.publicKey(),
                               nonce_,
                               validUntil_,
                               codec::Transfer{to, u128{1 + rng_() % 1000}},
                               kDevFee};
            const auto tx = codec::signTx(body, key_, domain_);
            if (!net_.call(node_, "tx_submit", json::array{json::string(toHex(tx.raw))})) {
                break;  // the node is down or refused: try again after a resync
            }
            ++nonce_;
            pending_.push_back(tx.hash.hex());
        }
        for (auto it = pending_.begin(); it != pending_.end();) {
            auto tx = net_.call(node_, "tx_get", json::array{json::string(*it)});
            if (tx && field(*tx, "status") == "committed") {
                committed_[*it] = field(*tx, "height");
                it = pending_.erase(it);
            } else {
                ++it;
            }
        }
    }

    [[nodiscard]] const std::map<std::string, std::string>& committed() const { return committed_; }
    [[nodiscard]] std::size_t node() const { return node_; }

  private:
    const Testnet& net_;
    std::size_t node_;
    crypto::SecretKey key_;
    std::string chainId_;
    std::string domain_;
    std::mt19937_64 rng_;
    std::uint64_t nonce_ = 0;
    std::uint64_t validUntil_ = 0;
    std::vector<std::string> pending_;
    std::map<std::string, std::string> committed_;
};

/**
 * Streams `sender`'s transfers until at least `committed` of them committed and node 0 executed
 * `height` (`timeout` at most); whether that happened.
 */
inline bool sendUntil(const Testnet& net, Sender& sender, std::size_t committed,
                      std::uint64_t height,
                      std::chrono::seconds timeout = std::chrono::seconds(120)) {
    return waitFor(
        [&] {
            sender.step(8);
            return sender.committed().size() >= committed && heightOf(net, 0) >= height;
        },
        timeout);
}

/**
 * Streams `sender`'s transfers until node `follower` has executed 30 heights past node
 * `leader`'s head at the call (120 s at most); its height then, or nullopt.
 */
inline std::optional<std::uint64_t> followedHead(const Testnet& net, std::size_t follower,
                                                 std::size_t leader, Sender& sender) {
    const std::uint64_t target = heightOf(net, leader) + 30;
    if (!waitFor(
            [&] {
                sender.step(8);
                return heightOf(net, follower) >= target && heightOf(net, leader) >= target;
            },
            std::chrono::seconds(120))) {
        return std::nullopt;
    }
    return target;
}

}  // namespace gridledger::testing
