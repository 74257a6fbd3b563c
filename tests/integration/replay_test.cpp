// `gridledger replay` rebuilds a real node's chain from genesis, checking every certificate and
// state root, and names the height of a block or certificate that was tampered with, whether it
// reads a data dir or fetches the blocks from a running node over JSON-RPC (--rpc).

#include <fstream>
#include <iostream>
#include <regex>

#include <signal.h>

#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "home.h"
#include "network_support.h"

namespace gridledger::testing::replay_test {
namespace {

namespace fs = std::filesystem;

/** Runs `gridledger replay` with `args`; returns the exit code and the output. */
std::pair<int, std::string> replay(const Testnet& net, const std::vector<std::string>& args,
                                   const fs::path& log) {
    std::vector<std::string> all{"replay", "--home", net.home(0).string()};
    all.insert(all.end(), args.begin(), args.end());
    fs::remove(log);
    const int code = runCommand(net.bin(), all, log);
    return {code, readText(log)};
}

/** Copies node 0's database and flips one byte of the value under `key` in `column`. */
fs::path tamperedCopy(const Testnet& net, const std::string& name, storage::Column column,
                      const Bytes& key) {
    fs::path copy = net.dir() / name;
    fs::copy(net.home(0) / "data" / "chain", copy, fs::copy_options::recursive);
    auto store = storage::KvStore::open(copy, ledger::columnNames());
    EXPECT_TRUE(store);
    auto value = (*store)->get(column, key);
    EXPECT_TRUE(value && *value);
    Bytes changed = **value;
    changed[changed.size() - 3] ^= 0x01U;  // inside the trailing signature bytes
    EXPECT_TRUE((*store)->put(column, key, changed, true));
    return copy;
}

Bytes heightKey(std::uint64_t height) {
    Bytes key;
    appendU64(key, height);
    return key;
}

/** The replayed head height and state root of a successful replay's output. */
std::pair<std::uint64_t, std::string> replayedHead(const std::string& out) {
    std::smatch summary;
    EXPECT_TRUE(std::regex_search(
        out, summary, std::regex(R"(heights 1\.\.(\d+),.*head state root (0x[0-9a-f]+))")))
        << out;
    return summary.empty() ? std::pair<std::uint64_t, std::string>{}
                           : std::pair<std::uint64_t, std::string>{std::stoull(summary[1].str()),
                                                                   summary[2].str()};
}

/** A copy of node 0's genesis file with the string member `key` set to `value`. */
fs::path changedGenesis(const Testnet& net, const std::string& name, const std::string& key,
                        const std::string& value) {
    json::value genesis = json::parse(readText(net.home(0) / "config" / "genesis.json"));
    EXPECT_TRUE(genesis.as_object().contains(key)) << key;
    genesis.as_object()[key] = value;
    fs::path file = net.dir() / name;
    std::ofstream(file) << json::serialize(genesis);
    return file;
}

TEST(Replay, RebuildsEveryStateRootAndNamesTheHeightOfATamperedBlockOrCertificate) {
    TestnetOptions options;
    options.validators = 1;
    options.roundTimeoutMs = 300;
    options.emptyBlockIntervalMs = 10;
    Testnet net(options);
    net.start(0);
    std::vector<Sender> senders;
    auto dev = node::Home(net.home(0)).loadKey("dev");
    ASSERT_TRUE(dev);
    senders.emplace_back(net, 0, *dev, "gridledger-testnet", 7);
    ASSERT_TRUE(senders.front().resync());
    ASSERT_TRUE(waitFor(
        [&] {
            senders.front().step(8);
            return senders.front().committed().size() >= 300 && heightOf(net, 0) >= 200;
        },
        std::chrono::seconds(120)));
    const std::uint64_t seen = heightOf(net, 0);
    net.stop(0, SIGTERM);

    const auto [code, out] = replay(net, {}, net.dir() / "replay.log");
    ASSERT_EQ(code, 0) << out;
    std::smatch summary;
    ASSERT_TRUE(std::regex_search(
        out, summary, std::regex(R"(heights 1\.\.(\d+),.*head state root (0x[0-9a-f]+))")))
        << out;
    const std::uint64_t replayed = std::stoull(summary[1].str());
    EXPECT_GE(replayed, seen);
    // The node, started again, reports the same state root at the replayed head.
    net.start(0);
    EXPECT_EQ(blockOf(net, 0, replayed).second, summary[2].str());
    net.stop(0, SIGTERM);

    // One flipped byte in the stored block at height 20 (its signature).
    auto blockId = [&] {
        auto store = storage::KvStore::open(net.home(0) / "data" / "chain", ledger::columnNames());
        EXPECT_TRUE(store);
        auto id = (*store)->get(ledger::kHeightsColumn, heightKey(20));
        EXPECT_TRUE(id && *id);
        return **id;
    }();
    const auto badBlock = tamperedCopy(net, "bad-block", ledger::kBlocksColumn, blockId);
    const auto [blockCode, blockOut] =
        replay(net, {"--data", badBlock.string()}, net.dir() / "bad-block.log");
    EXPECT_NE(blockCode, 0) << blockOut;
    EXPECT_NE(blockOut.find("height 20:"), std::string::npos) << blockOut;

    // One flipped byte in the certificate of height 30.
    const auto badCert = tamperedCopy(net, "bad-cert", ledger::kCertsColumn, heightKey(30));
    const auto [certCode, certOut] =
        replay(net, {"--data", badCert.string()}, net.dir() / "bad-cert.log");
    EXPECT_NE(certCode, 0) << certOut;
    EXPECT_NE(certOut.find("height 30:"), std::string::npos) << certOut;

    // The untouched database still replays (the copies were independent).
    EXPECT_EQ(replay(net, {"--to", "50"}, net.dir() / "partial.log").first, 0);
}

TEST(Replay, OverRpcMatchesTheDataDirReplayAndTrustsNothingTheNodeServes) {
    TestnetOptions options;
    options.validators = 1;
    options.roundTimeoutMs = 300;
    options.emptyBlockIntervalMs = 10;
    Testnet net(options);
    net.start(0);
    auto dev = node::Home(net.home(0)).loadKey("dev");
    ASSERT_TRUE(dev);
    Sender sender(net, 0, *dev, "gridledger-testnet", 11);
    ASSERT_TRUE(sender.resync());
    // More than two batches of block_getRaw (256 blocks each), with transfers in them.
    ASSERT_TRUE(sendUntil(net, sender, 150, 600, std::chrono::seconds(180)));
    const std::uint64_t seen = heightOf(net, 0);
    const std::string rpc = "127.0.0.1:" + std::to_string(net.rpcPort(0));
    const std::string genesis = (net.home(0) / "config" / "genesis.json").string();

    // The running node's chain, fetched over RPC, while the node goes on committing blocks.
    const auto [rpcCode, rpcOut] =
        replay(net, {"--rpc", rpc, "--genesis", genesis}, net.dir() / "rpc.log");
    ASSERT_EQ(rpcCode, 0) << rpcOut;
    const auto [rpcHeight, rpcRoot] = replayedHead(rpcOut);
    EXPECT_GE(rpcHeight, seen);
    std::cout << "over RPC: " << rpcOut;

    // A genesis file of another chain, and one of the same chain id but another genesis block.
    const auto other = changedGenesis(net, "other.json", "chain_id", "gridledger-other");
    const auto [otherCode, otherOut] =
        replay(net, {"--rpc", rpc, "--genesis", other.string()}, net.dir() / "other.log");
    EXPECT_NE(otherCode, 0) << otherOut;
    EXPECT_NE(otherOut.find("serves chain \"gridledger-testnet\", the genesis file is for chain "
                            "\"gridledger-other\""),
              std::string::npos)
        << otherOut;
    const std::uint64_t genesisTime = std::stoull(
        field(json::parse(readText(net.home(0) / "config" / "genesis.json")), "genesis_time_ms"));
    const auto forked =
        changedGenesis(net, "forked.json", "genesis_time_ms", std::to_string(genesisTime - 1000));
    const auto [forkedCode, forkedOut] =
        replay(net, {"--rpc", rpc, "--genesis", forked.string()}, net.dir() / "forked.log");
    EXPECT_NE(forkedCode, 0) << forkedOut;
    EXPECT_NE(forkedOut.find("height 0: the stored genesis block is not the one this genesis "
                             "file gives"),
              std::string::npos)
        << forkedOut;
    net.stop(0, SIGTERM);

    // The same chain read from the stopped node's data dir: the same head and state root.
    const auto [dataCode, dataOut] =
        replay(net, {"--to", std::to_string(rpcHeight)}, net.dir() / "data.log");
    ASSERT_EQ(dataCode, 0) << dataOut;
    EXPECT_EQ(replayedHead(dataOut), std::pair(rpcHeight, rpcRoot));
    std::cout << "from the data dir: " << dataOut;

    // The node's own stored block at height 300 gets one flipped byte (its signature); the node,
    // started again, serves it as stored, and the replay over RPC names that height.
    {
        auto store = storage::KvStore::open(net.home(0) / "data" / "chain", ledger::columnNames());
        ASSERT_TRUE(store);
        auto id = (*store)->get(ledger::kHeightsColumn, heightKey(300));
        ASSERT_TRUE(id && *id);
        auto value = (*store)->get(ledger::kBlocksColumn, **id);
        ASSERT_TRUE(value && *value);
        Bytes changed = **value;
        changed[changed.size() - 3] ^= 0x01U;
        ASSERT_TRUE((*store)->put(ledger::kBlocksColumn, **id, changed, true));
    }
    net.start(0);
    const auto [badCode, badOut] =
        replay(net, {"--rpc", rpc, "--genesis", genesis}, net.dir() / "bad.log");
    EXPECT_NE(badCode, 0) << badOut;
    EXPECT_NE(badOut.find("height 300:"), std::string::npos) << badOut;
    // Below it the served chain still replays (the batches end at --to).
    const auto [belowCode, belowOut] =
        replay(net, {"--rpc", rpc, "--genesis", genesis, "--to", "299"}, net.dir() / "below.log");
    EXPECT_EQ(belowCode, 0) << belowOut;
    EXPECT_EQ(replayedHead(belowOut).first, 299U);
    net.stop(0, SIGTERM);
}

}  // namespace
}  // namespace gridledger::testing::replay_test
