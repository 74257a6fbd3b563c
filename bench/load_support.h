#pragma once

// What the load generators share: bounded waits, the one-core verify rate, signed transfers and
// `gridledger replay` of a stopped node's chain.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include <gridledger/base/amount.h>
#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

#include "rpc_connection.h"
#include "support/process.h"

namespace gridledger::bench {

using Clock = std::chrono::steady_clock;

/** Waits until `done()`, polling; false when the deadline passes first. */
template <typename Done>
bool waitFor(Clock::time_point deadline, Done done) {
    while (!done()) {
        if (Clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

/** Schnorr verifications per second on this thread (one core), over about `seconds`. */
inline double verifyRatePerCore(double seconds) {
    const auto key = crypto::SecretKey::generate();
    const Hash256 digest = crypto::sha256(asBytes("gridledger load"));
    const Signature sig = key.sign(digest);
    std::size_t count = 0;
    const auto start = Clock::now();
    while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
        for (int i = 0; i < 100; ++i) {
            count += crypto::verify(key.publicKey(), digest, sig) ? 1U : 0U;
        }
    }
    return static_cast<double>(count) / std::chrono::duration<double>(Clock::now() - start).count();
}

/** The next nonce of `address` at node's head. */
inline std::uint64_t nonceOf(Connection& rpc, const Address& address) {
    auto res = rpc.call("account_get", {boost::json::string(address.hex())});
    return *parseU64(res.at("result").at("nonce").as_string());
}

/** The fee of a transfer in the genesis that `init` and `testnet` write (genesis/dev.json). */
inline constexpr std::uint64_t kTransferFee = 1'000'000'000;

/** A signed transfer, valid up to height 90 000. */
inline Bytes transfer(const std::string& chainId, const std::string& domain,
                      const crypto::SecretKey& from, const Address& to, std::uint64_t nonce,
                      u128 amount) {
    codec::TxBody body{chainId,     from.publicKey(), nonce, 90'000, codec::Transfer{to, amount},
                       kTransferFee};
    return codec::signTx(body, from, domain).raw;
}

/** What `gridledger replay` reported. */
struct Replay {
    std::uint64_t blocks = 0;
    std::uint64_t txs = 0;
    double seconds = 0;
    double blocksPerS = 0;
    double txsPerS = 0;
    /** The wall time of the whole command, process start and exit included. */
    double wallSeconds = 0;
};

/**
 * Replays the stopped node's chain at `home` from genesis with `gridledger replay` (every
 * signature, certificate and state root checked), to height `to` when given; nullopt, with the
 * output on stderr, when it fails.
 */
inline std::optional<Replay> replayFromGenesis(const std::filesystem::path& home,
                                               std::optional<std::uint64_t> to = std::nullopt) {
    const auto log = home.parent_path() / "replay.log";
    std::vector<std::string> args{"replay", "--home", home.string()};
    if (to) {
        args.insert(args.end(), {"--to", std::to_string(*to)});
    }
    const auto start = Clock::now();
    const int code = testing::runCommand(GRIDLEDGER_BIN, args, log);
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string output = testing::readText(log);
    std::smatch match;
    const std::regex summary(
        R"(heights 1\.\.(\d+), (\d+) blocks, (\d+) txs, .* ([0-9.]+) s \((\d+) blocks/s, (\d+) txs/s\))");
    if (code != 0 || !std::regex_search(output, match, summary)) {
        std::cerr << "gridledger replay failed: " << output << "\n";
        return std::nullopt;
    }
    return Replay{std::stoull(match[2]), std::stoull(match[3]), std::stod(match[4]),
                  std::stod(match[5]),   std::stod(match[6]),   wall};
}

}  // namespace gridledger::bench
