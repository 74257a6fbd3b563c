#include <iostream>

#include "cli_options.h"
#include "log_format.h"
#include "node.h"
#include "snapshot.h"
#include "state_sync.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/**
 * --state-sync on a home without a ledger: the latest snapshot the peers serve, fetched and
 * verified (docs/snapshots.md), becomes the ledger the node starts from.
 */
Status startFromPeersSnapshot(const Home& home, std::uint32_t chunkKeys) {
    const fs::path chain = home.dataDir() / "chain";
    if (fs::exists(chain)) {
        return {};  // a ledger is here: the node follows on from it
    }
    GL_ASSIGN_OR_RETURN(config, home.loadConfig());
    GL_ASSIGN_OR_RETURN(text, readFile(home.genesisFile()));
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(text));
    const auto log = makeLogger("state_sync", config.logLevel, config.logFormat);
    const fs::path file = home.dataDir() / "state-sync.snap";
    std::error_code ec;
    fs::create_directories(home.dataDir(), ec);
    fs::remove(file, ec);  // what an interrupted sync left
    StateSyncLimits limits;
    limits.chunkKeys = chunkKeys;
    GL_TRY(fetchSnapshot(home, config, genesis, file, log, limits));
    auto imported = importSnapshot(file, genesis, chain);
    fs::remove(file, ec);
    GL_TRY(imported);
    log->info("state sync imported height={} first_height={}", imported->height, imported->height);
    return {};
}

}  // namespace

int runStart(const Args& args) {
    std::string homeFlag;
    bool stateSync = false;
    std::uint32_t chunkKeys = kSnapshotChunkKeys;
    po::options_description desc("gridledger start");
    desc.add_options()("state-sync", po::bool_switch(&stateSync),
                       "on a home without a ledger, start from the latest state snapshot the "
                       "peers serve instead of genesis (docs/snapshots.md)")(
        "state-sync-chunk-keys", po::value(&chunkKeys),
        "keys asked of a peer per chunk during state sync (1..4096, default 4096)");
    int exitCode = 0;
    if (!parseOptions("start", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    if (!home.initialised()) {
        std::cerr << "gridledger start: " << home.root().string()
                  << " has no genesis; run 'gridledger init' first\n";
        return 1;
    }
    if (chunkKeys == 0 || chunkKeys > kSnapshotChunkKeys) {
        std::cerr << "gridledger start: --state-sync-chunk-keys must be 1..4096\n";
        return 2;
    }
    if (stateSync) {
        if (auto synced = startFromPeersSnapshot(home, chunkKeys); !synced) {
            return reportError("start", synced.error());
        }
    }
    auto node = Node::start(home);
    if (!node) {
        return reportError("start", node.error());
    }
    if (auto stopped = (*node)->runUntilSignalled(); !stopped) {
        return reportError("start", stopped.error());
    }
    return 0;
}

}  // namespace gridledger::node
