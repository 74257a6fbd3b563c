// gridledger snapshot export|verify|fetch|import: the state of one height as a file of proven
// chunks, anchored to a committed header; its check; the same fetched from peers; and a new
// node's ledger started from it (docs/snapshots.md).

#include <cstdio>
#include <iostream>

#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "cli_options.h"
#include "epochs.h"
#include "log_format.h"
#include "snapshot.h"
#include "state_sync.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/** An open chain database of a stopped node (a running node holds it locked). */
struct Ledger {
    std::unique_ptr<storage::KvStore> store;
    std::unique_ptr<ledger::StateTree> tree;
    std::unique_ptr<ledger::BlockStore> blocks;
};

Result<Ledger> openLedger(const fs::path& data) {
    if (!fs::exists(data)) {
        return fail(ErrorCode::kIo, data.string() + " does not exist");
    }
    storage::KvOptions options;
    options.createIfMissing = false;
    auto opened =
        storage::KvStore::open(data, ledger::columnNames(), ledger::storeOptions(options));
    if (!opened) {
        return fail(opened.error().code, opened.error().message +
                                             " (a running node holds its database: stop it or "
                                             "use a copy)");
    }
    Ledger out;
    out.store = std::move(*opened);
    out.tree = std::make_unique<ledger::StateTree>(*out.store, ledger::kStateNodesColumn,
                                                   ledger::kStateValuesColumn);
    out.blocks = std::make_unique<ledger::BlockStore>(*out.store);
    return out;
}

Result<contracts::Genesis> loadGenesis(const fs::path& file) {
    GL_ASSIGN_OR_RETURN(text, readFile(file));
    return contracts::parseGenesis(text);
}

void printSummary(const char* verb, const SnapshotSummary& summary) {
    std::printf(
        "snapshot %s: height %llu, state root %s, epoch %llu, %zu chunks, %zu keys, "
        "%llu bytes\n",
        verb, static_cast<unsigned long long>(summary.height), summary.stateRoot.hex().c_str(),
        static_cast<unsigned long long>(summary.epoch), summary.chunks, summary.entries,
        static_cast<unsigned long long>(summary.bytes));
}

int runExportSnapshot(const Home& home, const fs::path& data, const fs::path& out,
                      std::optional<std::uint64_t> height, std::size_t chunkKeys) {
    auto genesis = loadGenesis(home.genesisFile());
    if (!genesis) {
        return reportError("snapshot", genesis.error());
    }
    auto opened = openLedger(data);
    if (!opened) {
        return reportError("snapshot", opened.error());
    }
    auto executed = opened->blocks->executedHeight();
    if (!executed || !*executed) {
        return reportError(
            "snapshot", executed ? Error{ErrorCode::kNotFound, "empty ledger"} : executed.error());
    }
    auto manifest = snapshotManifest(*opened->blocks, *genesis, **executed, height);
    if (!manifest) {
        return reportError("snapshot", manifest.error());
    }
    auto summary = writeSnapshot(*opened->tree, *manifest, chunkKeys, out);
    if (!summary) {
        return reportError("snapshot", summary.error());
    }
    printSummary("written", *summary);
    std::printf("anchor: block %s at height %llu\n", manifest->anchor.id.hex().c_str(),
                static_cast<unsigned long long>(manifest->anchor.header.height));
    return 0;
}

int runVerifySnapshot(const Home& home, const fs::path& data, const fs::path& file) {
    auto genesis = loadGenesis(home.genesisFile());
    if (!genesis) {
        return reportError("snapshot", genesis.error());
    }
    auto genesisBlock = computeGenesisBlock(*genesis);
    if (!genesisBlock) {
        return reportError("snapshot", genesisBlock.error());
    }
    // The committee this home's own ledger is in, when it has one that is not in use.
    std::optional<consensus::Committee> local;
    if (auto opened = openLedger(data)) {
        auto executed = opened->blocks->executedHeight();
        if (executed && *executed) {
            if (auto committee =
                    committeeAtHead(*genesis, *opened->blocks, *opened->tree, **executed)) {
                local = std::move(*committee);
            }
        }
    }
    auto summary = readSnapshot(
        file, *genesis,
        [&](std::uint64_t epoch) {
            return snapshotCommittee(*genesis, *genesisBlock, epoch, local);
        },
        [](const SnapshotManifest&, const CertifiedBase&) -> Status { return {}; },
        [](const ledger::StateRange&) -> Status { return {}; });
    if (!summary) {
        return reportError("snapshot", summary.error());
    }
    printSummary("ok", *summary);
    return 0;
}

int runFetchSnapshot(const Home& home, const fs::path& file) {
    auto genesis = loadGenesis(home.genesisFile());
    auto config = home.loadConfig();
    if (!genesis || !config) {
        return reportError("snapshot", genesis ? config.error() : genesis.error());
    }
    auto report = fetchSnapshot(home, *config, *genesis, file,
                                makeLogger("state_sync", config->logLevel, config->logFormat));
    if (!report) {
        return reportError("snapshot", report.error());
    }
    printSummary("fetched", report->summary);
    std::printf("from %zu peers, %zu answers refused\n", report->servingPeers, report->refused);
    return 0;
}

int runImportSnapshot(const Home& home, const fs::path& data, const fs::path& file) {
    auto genesis = loadGenesis(home.genesisFile());
    if (!genesis) {
        return reportError("snapshot", genesis.error());
    }
    auto summary = importSnapshot(file, *genesis, data);
    if (!summary) {
        return reportError("snapshot", summary.error());
    }
    printSummary("imported", *summary);
    std::printf("the node starts from height %llu: blocks below it are not held here\n",
                static_cast<unsigned long long>(summary->height));
    return 0;
}

}  // namespace

int runSnapshot(const Args& args) {
    std::string homeFlag;
    std::string what;
    std::string file;
    std::string dataFlag;
    std::uint64_t height = 0;
    bool heightGiven = false;
    std::size_t chunkKeys = kSnapshotChunkKeys;
    po::options_description desc(
        "gridledger snapshot export FILE | verify FILE | fetch FILE | import FILE");
    desc.add_options()("what", po::value(&what)->required(), "export, verify, fetch or import")(
        "file", po::value(&file)->required(), "the snapshot file")(
        "data", po::value(&dataFlag), "the chain database (default: <home>/data/chain)")(
        "height", po::value(&height)->notifier([&](std::uint64_t) { heightGiven = true; }),
        "export: the executed height whose state to write (default: the highest one a committed "
        "header certifies)")("chunk-keys", po::value(&chunkKeys),
                             "export: keys per chunk (default 4096)");
    po::positional_options_description positional;
    positional.add("what", 1).add("file", 1);
    int exitCode = 0;
    if (!parseOptions("snapshot", desc, positional, args, homeFlag, exitCode)) {
        return exitCode;
    }
    if ((what != "export" && what != "verify" && what != "fetch" && what != "import") ||
        chunkKeys == 0) {
        std::cerr << "gridledger snapshot: expected export|verify|fetch|import FILE and "
                     "--chunk-keys above 0\n"
                  << desc;
        return 2;
    }
    const Home home = Home::resolve(homeFlag);
    const fs::path data = dataFlag.empty() ? home.dataDir() / "chain" : fs::path(dataFlag);
    if (what == "export") {
        return runExportSnapshot(home, data, file,
                                 heightGiven ? std::optional(height) : std::nullopt, chunkKeys);
    }
    if (what == "import") {
        return runImportSnapshot(home, data, file);
    }
    if (what == "fetch") {
        return runFetchSnapshot(home, file);
    }
    return runVerifySnapshot(home, data, file);
}

}  // namespace gridledger::node
