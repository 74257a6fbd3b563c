#include <cstdio>
#include <iostream>
#include <random>

#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "cli_options.h"
#include "replay.h"

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
    std::uint64_t toHeight = 0;
    po::options_description desc("gridledger replay");
    desc.add_options()("data", po::value(&dataFlag),
                       "the chain database to replay (default: <home>/data/chain)")(
        "genesis", po::value(&genesisFlag),
        "the genesis file (default: <home>/config/genesis.json)")(
        "to", po::value(&toHeight), "stop after this height (default: the executed height)");
    int exitCode = 0;
    if (!parseOptions("replay", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    const fs::path data = dataFlag.empty() ? home.dataDir() / "chain" : fs::path(dataFlag);
    const fs::path genesisFile = genesisFlag.empty() ? home.genesisFile() : fs::path(genesisFlag);
    auto text = readFile(genesisFile);
    auto genesis = text ? contracts::parseGenesis(*text) : std::unexpected(text.error());
    if (!genesis) {
        return reportError("replay", genesis.error());
    }
    if (!fs::exists(data)) {
        return reportError("replay", Error{ErrorCode::kIo, data.string() + " does not exist"});
    }
    storage::KvOptions options;
    options.createIfMissing = false;
    auto source = storage::KvStore::open(data, ledger::columnNames(), options);
    if (!source) {
        return reportError("replay", Error{source.error().code,
                                           source.error().message +
                                               " (a running node holds its database: stop it or "
                                               "replay a copy)"});
    }
    const ledger::BlockStore blocks(**source);
    const fs::path scratch = scratchDir();
    std::uint64_t lastReport = 0;
    auto summary = replayChain(*genesis, blocks, scratch,
                               toHeight == 0 ? std::nullopt : std::optional(toHeight),
                               [&lastReport](std::uint64_t height) {
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
