// Joining a running chain (`gridledger_join_load [--blocks N] [--accounts M]`): how long a new
// full node takes to serve the head by state sync, against a replay from genesis and a block
// sync from genesis of the same chain, in the same run (docs/snapshots.md, docs/benchmarks.md).
//
// It starts a 4-validator network on 127.0.0.1 (real processes, `gridledger testnet`) whose
// genesis makes empty blocks as fast as consensus runs (empty_block_interval_ms = 1), funds M
// new accounts from the dev account (M state keys beside the genesis ones) and waits until the
// chain is N blocks long (defaults: 10 000 blocks, 5 000 accounts). Then, with the validators
// still committing:
//   1. full node A starts with --state-sync; its join time runs from its start until it has
//      executed the head the validators had then (snapshot fetched, every chunk verified,
//      imported, and the blocks above it followed);
//   2. A's account_get and state_getProof answers for the dev account and a sample of the new
//      ones equal validator 0's at a height both executed (any difference fails the run);
//   3. full node B block-syncs from genesis to that same head, every block checked;
//   4. the validators stop and validator 0's chain is replayed from genesis to that head with
//      `gridledger replay` (every signature, certificate and state root checked).
// It prints each time and the ratios join / replay and join / block sync.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <signal.h>

#include <gridledger/base/amount.h>

#include "home.h"
#include "load_support.h"
#include "rpc_connection.h"
#include "support/dev_chain.h"
#include "support/process.h"
#include "support/testnet.h"

namespace gridledger {
namespace {

namespace json = boost::json;
using bench::Clock;
using bench::Connection;
using bench::waitFor;

constexpr std::size_t kValidators = 4;
constexpr std::size_t kStateSyncNode = kValidators;
constexpr std::size_t kBlockSyncNode = kValidators + 1;
/** Transactions of the dev account in flight at once, below the mempool's nonce window of 64. */
constexpr std::uint64_t kInFlight = 60;
/** The new accounts whose answers are compared, spread over all of them. */
constexpr std::size_t kCompared = 20;
constexpr auto kDeadline = std::chrono::minutes(20);

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

/** The i-th new account: an address no key controls, derived from i. */
Address accountOf(std::uint64_t i) {
    const Hash256 digest = crypto::sha256(asBytes("join-load account " + std::to_string(i)));
    return *Address::fromBytes(ByteView(digest.data(), Address::size()));
}

/** Node i's executed height, or 0 when it does not answer. */
std::uint64_t executedHeight(const testing::Testnet& net, std::size_t i) {
    auto status = net.call(i, "node_getStatus", json::array{});
    if (!status) {
        return 0;
    }
    return parseU64(std::string(status->at("executed_height").as_string())).value_or(0);
}

/** Funds `count` new accounts from the dev account through validator 0's POST /txs. */
bool fundAccounts(const testing::Testnet& net, std::uint64_t count, Clock::time_point deadline) {
    const auto dev = *node::Home(net.home(0)).loadKey("dev");
    const Address devAddress = crypto::addressOf(dev.publicKey());
    const std::string domain = testing::signingDomainOfHome(net.home(0));
    Connection rpc(net.rpcPort(0));
    const std::uint64_t first = bench::nonceOf(rpc, devAddress);
    std::uint64_t sent = 0;
    std::uint64_t done = 0;
    while (done < count) {
        std::vector<Bytes> batch;
        for (; sent < count && sent < done + kInFlight; ++sent) {
            batch.push_back(bench::transfer(std::string(testing::kTestnetChainId), domain, dev,
                                            accountOf(sent), first + sent, u128{1'000 + sent}));
        }
        if (!batch.empty()) {
            const std::vector<ByteView> views(batch.begin(), batch.end());
            for (const auto& reason : rpc.postRaw(views)) {
                if (!reason.empty()) {
                    std::cerr << "a funding transfer was refused: " << reason << "\n";
                    return false;
                }
            }
        }
        if (Clock::now() > deadline) {
            std::cerr << "funding the accounts did not commit in time\n";
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        done = bench::nonceOf(rpc, devAddress) - first;
    }
    return true;
}

/** Node `i`'s answer to `method(params)`, or its error's text. */
std::string answerOf(const testing::Testnet& net, std::size_t i, const std::string& method,
                     const json::array& params) {
    auto answer = net.call(i, method, params);
    return answer ? json::serialize(*answer) : "error: " + answer.error().message;
}

/**
 * Compares account_get and state_getProof of the dev account and kCompared new accounts between
 * validator 0 and node `joined` at a height both executed; the number of differing answers.
 */
std::size_t compareAnswers(const testing::Testnet& net, std::size_t joined, std::uint64_t accounts,
                           Clock::time_point deadline) {
    const std::uint64_t at = std::max(executedHeight(net, 0), executedHeight(net, joined)) + 5;
    if (!waitFor(deadline, [&] {
            return executedHeight(net, 0) >= at && executedHeight(net, joined) >= at;
        })) {
        std::cerr << "validator 0 and the joined node did not both reach height " << at << "\n";
        return 1;
    }
    const auto dev = *node::Home(net.home(0)).loadKey("dev");
    std::vector<Address> addresses{crypto::addressOf(dev.publicKey())};
    for (std::uint64_t k = 0; k < kCompared; ++k) {
        addresses.push_back(accountOf(k * accounts / kCompared));
    }
    std::size_t differing = 0;
    const json::string height(std::to_string(at));
    for (const auto& address : addresses) {
        const json::array account{json::string(address.hex()), height};
        const json::array proof{json::object{{"account", address.hex()}}, height};
        for (const auto& [method, params] :
             {std::pair{"account_get", account}, std::pair{"state_getProof", proof}}) {
            const std::string theirs = answerOf(net, 0, method, params);
            const std::string ours = answerOf(net, joined, method, params);
            if (theirs != ours || theirs.starts_with("error")) {
                std::cerr << method << " of " << address.hex() << " at " << at
                          << " differs:\n  validator 0: " << theirs << "\n  joined: " << ours
                          << "\n";
                ++differing;
            }
        }
    }
    std::cout << "compared_height=" << at << " compared_answers=" << 2 * addresses.size()
              << " differing=" << differing << std::endl;
    return differing;
}

/** Starts node `i` with `args` and returns the seconds until it executed `head`, or nullopt. */
std::optional<double> join(testing::Testnet& net, std::size_t i,
                           const std::vector<std::string>& args, std::uint64_t head,
                           Clock::time_point deadline) {
    const auto start = Clock::now();
    net.start(i, args);
    if (!waitFor(deadline, [&] { return executedHeight(net, i) >= head; })) {
        std::cerr << "node " << i << " did not reach height " << head << " in time:\n"
                  << testing::readText(net.log(i)) << "\n";
        return std::nullopt;
    }
    return secondsSince(start);
}

int run(std::uint64_t blocks, std::uint64_t accounts) {
    const auto deadline = Clock::now() + kDeadline;
    testing::TestnetOptions options;
    options.validators = kValidators;
    options.fullNodes = 2;
    options.emptyBlockIntervalMs = 1;
    testing::Testnet net(options);
    for (std::size_t i = 0; i < kValidators; ++i) {
        net.start(i);
    }
    const auto building = Clock::now();
    if (!fundAccounts(net, accounts, deadline)) {
        return 1;
    }
    if (!waitFor(deadline, [&] { return executedHeight(net, 0) >= blocks; })) {
        std::cerr << "the chain did not reach " << blocks << " blocks in time\n";
        return 1;
    }
    const std::uint64_t head = executedHeight(net, 0);
    const double buildSeconds = secondsSince(building);
    std::cout << "validators=" << kValidators << " chain_blocks=" << head
              << " funded_accounts=" << accounts << " build_seconds=" << buildSeconds
              << " blocks_per_s=" << static_cast<double>(head) / buildSeconds << std::endl;

    const auto stateSync = join(net, kStateSyncNode, {"--state-sync"}, head, deadline);
    if (!stateSync) {
        return 1;
    }
    const std::string log = testing::readText(net.log(kStateSyncNode));
    std::smatch fetched;
    if (!std::regex_search(log, fetched,
                           std::regex(R"(state sync fetched height=(\d+) chunks=(\d+) keys=(\d+) )"
                                      R"(bytes=(\d+) refused=(\d+) seconds=([0-9.]+))"))) {
        std::cerr << "the state-synced node logged no fetch:\n" << log << "\n";
        return 1;
    }
    std::cout << "state_sync_height=" << fetched[1] << " chunks=" << fetched[2]
              << " keys=" << fetched[3] << " bytes=" << fetched[4] << " refused=" << fetched[5]
              << " fetch_seconds=" << fetched[6] << " join_seconds=" << *stateSync << std::endl;
    if (compareAnswers(net, kStateSyncNode, accounts, deadline) != 0) {
        return 1;
    }

    const auto blockSync = join(net, kBlockSyncNode, {}, head, deadline);
    if (!blockSync) {
        return 1;
    }
    std::cout << "block_sync_join_seconds=" << *blockSync
              << " blocks_per_s=" << static_cast<double>(head) / *blockSync << std::endl;

    net.stopAll(SIGTERM);
    const auto replay = bench::replayFromGenesis(net.home(0), head);
    if (!replay) {
        return 1;
    }
    std::cout << "replay_blocks=" << replay->blocks << " replay_txs=" << replay->txs
              << " replay_seconds=" << replay->seconds
              << " replay_wall_seconds=" << replay->wallSeconds << "\n"
              << "join_ratio_to_replay=" << *stateSync / replay->wallSeconds
              << " join_ratio_to_block_sync=" << *stateSync / *blockSync << std::endl;
    return 0;
}

}  // namespace
}  // namespace gridledger

int main(int argc, char** argv) {
    std::uint64_t blocks = 10'000;
    std::uint64_t accounts = 5'000;
    const std::vector<std::string> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const bool valued = i + 1 < args.size();
        if (args[i] == "--blocks" && valued) {
            blocks = gridledger::parseU64(args[++i]).value_or(0);
        } else if (args[i] == "--accounts" && valued) {
            accounts = gridledger::parseU64(args[++i]).value_or(0);
        } else {
            blocks = 0;
            break;
        }
    }
    if (blocks == 0 || accounts < 1 || accounts > 1'000'000) {
        std::cerr
            << "usage: gridledger_join_load [--blocks N (>= 1)] [--accounts M (1..1000000)]\n";
        return 2;
    }
    return gridledger::run(blocks, accounts);
}
