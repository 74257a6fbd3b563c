#include <cstdio>
#include <iostream>
#include <random>

#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "cli_options.h"
#include "replay.h"
#include "replay_rpc.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/** A fresh directory name under the system temp dir for the replayed database. */
fs::path scratchDir() {
    std::random_device random;
    return fs::temp_directory_path() / ("gridledger-replay-" + std::to_string(random()));
}

}  // namespace

int runReplay(const Args& args) {
    std::string homeFlag;
    std::string dataFlag;
    std::string genesisFlag;
    std::string rpcFlag;
    std::uint64_t toHeight = 0;
    po::options_description desc("gridledger replay");
    desc.add_options()("data", po::value(&dataFlag),
                       "the chain database to replay (default: <home>/data/chain)")(
        "genesis", po::value(&genesisFlag),
        "the genesis file (default: <home>/config/genesis.json; required with --rpc)")(
        "rpc", po::value(&rpcFlag),
        "fetch the blocks from the node at HOST:PORT instead of a data dir (nothing it says is "
        "trusted: every block and certificate is verified)")(
        "to", po::value(&toHeight), "stop after this height (default: the executed height)");
    int exitCode = 0;
    if (!parseOptions("replay", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    if (!rpcFlag.empty() && (genesisFlag.empty() || !dataFlag.empty())) {
        return reportError("replay", Error{ErrorCode::kInvalidArgument,
                                           "--rpc needs --genesis FILE (the genesis the auditor "
                                           "trusts) and excludes --data"});
    }
    const Home home = Home::resolve(homeFlag);
    const fs::path data = dataFlag.empty() ? home.dataDir() / "chain" : fs::path(dataFlag);
    const fs::path genesisFile = genesisFlag.empty() ? home.genesisFile() : fs::path(genesisFlag);
    auto text = readFile(genesisFile);
    auto genesis = text ? contracts::parseGenesis(*text) : std::unexpected(text.error());
    if (!genesis) {
        return reportError("replay", genesis.error());
    }
    const std::optional<std::uint64_t> to = toHeight == 0 ? std::nullopt : std::optional(toHeight);
    std::unique_ptr<storage::KvStore> database;
    std::unique_ptr<ledger::BlockStore> blocks;
    std::unique_ptr<ReplaySource> source;
    if (!rpcFlag.empty()) {
        auto endpoint = resolveEndpoint(rpcFlag, home);  // the token of $GRIDLEDGER_RPC_TOKEN_FILE
        auto fetched = endpoint ? RpcReplaySource::open(*endpoint, genesis->chainId, to)
                                : std::unexpected(endpoint.error());
        if (!fetched) {
            return reportError("replay", fetched.error());
        }
        source = std::move(*fetched);
    } else {
        if (!fs::exists(data)) {
            return reportError("replay", Error{ErrorCode::kIo, data.string() + " does not exist"});
        }
        storage::KvOptions options;
        options.createIfMissing = false;
        auto opened =
            storage::KvStore::open(data, ledger::columnNames(), ledger::storeOptions(options));
        if (!opened) {
            return reportError("replay", Error{opened.error().code,
                                               opened.error().message +
                                                   " (a running node holds its database: stop it "
                                                   "or replay a copy, or replay over --rpc)"});
        }
        database = std::move(*opened);
        blocks = std::make_unique<ledger::BlockStore>(*database);
        source = std::make_unique<BlockStoreSource>(*blocks);
    }
    const fs::path scratch = scratchDir();
    std::uint64_t lastReport = 0;
    auto summary = replayChain(*genesis, *source, scratch, to, [&lastReport](std::uint64_t height) {
        if (height - lastReport >= 1000) {
            std::cerr << "replayed height " << height << "\n";
            lastReport = height;
        }
    });
    std::error_code ec;
    fs::remove_all(scratch, ec);
    if (!summary) {
        return reportError("replay", summary.error());
    }
    std::printf(
        "replay ok: chain %s, heights 1..%llu, %llu blocks, %llu txs, %llu certificates verified, "
        "every state root reproduced, head state root %s, %.2f s (%.0f blocks/s, %.0f txs/s)\n",
        genesis->chainId.c_str(), static_cast<unsigned long long>(summary->height),
        static_cast<unsigned long long>(summary->blocks),
        static_cast<unsigned long long>(summary->txs),
        static_cast<unsigned long long>(summary->certificates), summary->stateRoot.hex().c_str(),
        summary->seconds, static_cast<double>(summary->blocks) / std::max(summary->seconds, 1e-9),
        static_cast<double>(summary->txs) / std::max(summary->seconds, 1e-9));
    return 0;
}

}  // namespace gridledger::node
