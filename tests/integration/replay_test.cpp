// `gridledger replay` rebuilds a real node's chain from genesis, checking every certificate and
// state root, and names the height of a block or certificate that was tampered with.

#include <regex>

#include <signal.h>

#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "home.h"
#include "network_support.h"

namespace gridledger::testing {
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
    const fs::path copy = net.dir() / name;
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

}  // namespace
}  // namespace gridledger::testing
