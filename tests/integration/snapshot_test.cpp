// `gridledger snapshot export|verify` on a real node's chain: the file holds exactly the state of
// a certified height, every key with the value the node proves over JSON-RPC at that height, and
// any changed byte, a cut file or another chain's genesis is refused.

#include "snapshot.h"

#include <fstream>
#include <iostream>
#include <regex>

#include <signal.h>

#include <gridledger/contracts/accounts.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "home.h"
#include "network_support.h"

namespace gridledger::testing::snapshot_test {
namespace {

namespace fs = std::filesystem;

/** Runs `gridledger snapshot` with `args` on node `node`'s home; the exit code and the output. */
std::pair<int, std::string> snapshotOn(const Testnet& net, std::size_t node,
                                       const std::vector<std::string>& args,
                                       const std::string& logName) {
    std::vector<std::string> all{"snapshot"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--home", net.home(node).string()});
    const fs::path log = net.dir() / logName;
    fs::remove(log);
    const int code = runCommand(net.bin(), all, log);
    return {code, readText(log)};
}

std::pair<int, std::string> snapshot(const Testnet& net, const std::vector<std::string>& args,
                                     const std::string& logName) {
    return snapshotOn(net, 0, args, logName);
}

/** Height and state root of a snapshot command's summary line. */
std::pair<std::uint64_t, std::string> summaryOf(const std::string& out) {
    std::smatch found;
    if (!std::regex_search(
            out, found,
            std::regex(R"(height (\d+), state root (0x[0-9a-f]{64}), .* (\d+) keys)"))) {
        ADD_FAILURE() << "no summary in: " << out;
        return {};
    }
    return {std::stoull(found[1].str()), found[2].str()};
}

/** A copy of `file` with byte `offset` xor-ed with 0x01. */
fs::path withFlippedByte(const fs::path& file, std::size_t offset, const fs::path& to) {
    std::string bytes = readText(file);
    bytes.at(offset) = static_cast<char>(bytes.at(offset) ^ 0x01);
    std::ofstream(to, std::ios::binary) << bytes;
    return to;
}

/** A snapshot file as readSnapshot checks it against the testnet's genesis, and its entries. */
struct ReadBack {
    node::SnapshotSummary summary;
    std::map<Hash256, Bytes> entries;
};

Result<ReadBack> readBack(const Testnet& net, const fs::path& file) {
    GL_ASSIGN_OR_RETURN(text, node::readFile(net.home(0) / "config" / "genesis.json"));
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(text));
    GL_ASSIGN_OR_RETURN(genesisBlock, node::computeGenesisBlock(genesis));
    ReadBack out;
    GL_ASSIGN_OR_RETURN(
        summary,
        node::readSnapshot(
            file, genesis,
            [&](std::uint64_t epoch) {
                return node::snapshotCommittee(genesis, genesisBlock, epoch, std::nullopt);
            },
            [](const node::SnapshotManifest&, const node::CertifiedBase&) -> Status { return {}; },
            [&](const ledger::StateRange& range) -> Status {
                for (const auto& entry : range.entries) {
                    out.entries.emplace(entry.key, entry.value);
                }
                return {};
            }));
    out.summary = summary;
    return out;
}

class Snapshot : public ::testing::Test {
  protected:
    void SetUp() override {
        TestnetOptions options = quickTestnet(1);
        options.emptyBlockIntervalMs = 10;
        net_ = std::make_unique<Testnet>(options);
        net_->start(0);
        auto dev = node::Home(net_->home(0)).loadKey("dev");
        ASSERT_TRUE(dev);
        Sender sender(*net_, 0, *dev, std::string(kTestnetChainId), 5);
        ASSERT_TRUE(sender.resync());
        ASSERT_TRUE(sendUntil(*net_, sender, 120, 60));
        dev_ = crypto::addressOf(dev->publicKey());
        net_->stop(0, SIGTERM);
    }

    std::unique_ptr<Testnet> net_;
    Address dev_;
};

TEST_F(Snapshot, HoldsEveryKeyOfACertifiedHeightWithTheValuesTheNodeProves) {
    const fs::path file = net_->dir() / "state.snap";
    const auto [code, out] =
        snapshot(*net_, {"export", file.string(), "--chunk-keys", "16"}, "export.log");
    ASSERT_EQ(code, 0) << out;
    std::cout << out;
    const auto [height, root] = summaryOf(out);
    EXPECT_GT(height, 50U);
    const auto [verifyCode, verifyOut] = snapshot(*net_, {"verify", file.string()}, "verify.log");
    ASSERT_EQ(verifyCode, 0) << verifyOut;
    EXPECT_EQ(summaryOf(verifyOut), summaryOf(out));

    // Every key with its value, read back through the reader the import uses.
    auto read = readBack(*net_, file);
    ASSERT_TRUE(read) << read.error().message;
    const auto& entries = read->entries;
    EXPECT_EQ(read->summary.entries, entries.size());
    EXPECT_EQ(read->summary.chunks, (entries.size() + 15) / 16);

    // The node, started again, proves the same root at that height and the same value for every
    // key of the snapshot, the dev account among them.
    net_->start(0);
    EXPECT_TRUE(entries.contains(contracts::accountKey(dev_)));
    for (const auto& [key, value] : entries) {
        auto proof =
            net_->call(0, "state_getProof",
                       json::array{json::string(key.hex()), json::string(std::to_string(height))});
        ASSERT_TRUE(proof);
        EXPECT_EQ(field(*proof, "state_root"), root);
        EXPECT_EQ(field(*proof, "value"), toHex(value)) << key.hex();
    }
    auto absent = net_->call(
        0, "state_getProof",
        json::array{json::string(Hash256{}.hex()), json::string(std::to_string(height))});
    ASSERT_TRUE(absent);
    EXPECT_TRUE(absent->as_object().at("value").is_null());
    EXPECT_FALSE(entries.contains(Hash256{}));
}

TEST_F(Snapshot, AChangedByteACutFileOrAnotherChainIsRefused) {
    const fs::path file = net_->dir() / "state.snap";
    ASSERT_EQ(snapshot(*net_, {"export", file.string(), "--chunk-keys", "8"}, "export.log").first,
              0);
    const std::size_t size = fs::file_size(file);
    // Bytes spread over the whole file: the manifest (anchor header, commit proof), chunk
    // lengths, bounds, entries and proof items.
    std::size_t refused = 0;
    std::size_t tried = 0;
    for (std::size_t offset = 0; offset < size; offset += std::max<std::size_t>(1, size / 110)) {
        const fs::path changed =
            withFlippedByte(file, offset, net_->dir() / ("changed-" + std::to_string(offset)));
        const auto [code, out] = snapshot(*net_, {"verify", changed.string()}, "changed.log");
        ++tried;
        refused += code != 0 ? 1U : 0U;
        EXPECT_NE(code, 0) << "byte " << offset << " of " << size << ": " << out;
        fs::remove(changed);
    }
    EXPECT_GE(tried, 100U);
    EXPECT_EQ(refused, tried);

    const fs::path middle = withFlippedByte(file, size / 2, net_->dir() / "middle.snap");
    const auto [middleCode, middleOut] = snapshot(*net_, {"verify", middle.string()}, "middle.log");
    EXPECT_NE(middleCode, 0);
    EXPECT_TRUE(std::regex_search(middleOut, std::regex("chunk \\d+"))) << middleOut;

    // The file cut after its first half: no chunk may be missing.
    const fs::path cut = net_->dir() / "cut.snap";
    fs::copy_file(file, cut);
    fs::resize_file(cut, size / 2);
    const auto [cutCode, cutOut] = snapshot(*net_, {"verify", cut.string()}, "cut.log");
    EXPECT_NE(cutCode, 0);
    EXPECT_NE(cutOut.find("chunk"), std::string::npos) << cutOut;

    // Another chain's genesis (another chain id) refuses it before reading any chunk.
    json::value other = json::parse(readText(net_->home(0) / "config" / "genesis.json"));
    other.as_object()["chain_id"] = "gridledger-other";
    std::ofstream(net_->home(0) / "config" / "genesis.json") << json::serialize(other);
    const auto [otherCode, otherOut] = snapshot(*net_, {"verify", file.string()}, "other.log");
    EXPECT_NE(otherCode, 0);
    EXPECT_NE(otherOut.find("snapshot of chain gridledger-testnet"), std::string::npos) << otherOut;
}

TEST_F(Snapshot, AnExplicitHeightIsExportedAndOneAboveTheHeadIsRefused) {
    // A height some committed header certifies (execution may skip heights): the exec height of
    // block 25, and the state root the node reports for it.
    net_->start(0);
    auto block = net_->call(0, "block_get", json::array{json::string("25")});
    ASSERT_TRUE(block);
    const std::string certified = field(block->as_object().at("header"), "exec_height");
    const std::string certifiedRoot = blockOf(*net_, 0, std::stoull(certified)).second;
    net_->stop(0, SIGTERM);
    const fs::path file = net_->dir() / "explicit.snap";
    const auto [code, out] =
        snapshot(*net_, {"export", file.string(), "--height", certified}, "explicit.log");
    ASSERT_EQ(code, 0) << out;
    EXPECT_EQ(std::to_string(summaryOf(out).first), certified);
    EXPECT_EQ(summaryOf(out).second, certifiedRoot);
    const auto [farCode, farOut] = snapshot(
        *net_, {"export", (net_->dir() / "far.snap").string(), "--height", "100000"}, "far.log");
    EXPECT_NE(farCode, 0);
    EXPECT_NE(farOut.find("above the executed height"), std::string::npos) << farOut;
    EXPECT_FALSE(fs::exists(net_->dir() / "far.snap"));
    // An existing file is never overwritten.
    const auto [againCode, againOut] =
        snapshot(*net_, {"export", file.string(), "--height", certified}, "again.log");
    EXPECT_NE(againCode, 0);
    EXPECT_NE(againOut.find("already exists"), std::string::npos) << againOut;
}

// A full node of a 4-validator network starts from a snapshot a validator exported, follows the
// head by block sync, and then proves every key of the snapshot exactly as a validator does at a
// height both executed; it says where its history starts, and serves nothing below it.
TEST(SnapshotImport, AFullNodeStartsFromASnapshotAndAnswersAsTheValidatorsDo) {
    TestnetOptions options = quickTestnet(4);
    options.fullNodes = 1;
    Testnet net(options);
    constexpr std::size_t kFull = 4;
    for (std::size_t i = 0; i < 4; ++i) {
        net.start(i);
    }
    auto dev = node::Home(net.home(0)).loadKey("dev");
    ASSERT_TRUE(dev);
    Sender sender(net, 0, *dev, std::string(kTestnetChainId), 9);
    ASSERT_TRUE(sender.resync());
    ASSERT_TRUE(sendUntil(net, sender, 60, 80));

    // Validator 3 stops (the other three go on), exports, and rejoins.
    net.stop(3, SIGTERM);
    const fs::path file = net.dir() / "validator3.snap";
    const auto [exportCode, exportOut] =
        snapshotOn(net, 3, {"export", file.string(), "--chunk-keys", "32"}, "export.log");
    ASSERT_EQ(exportCode, 0) << exportOut;
    std::cout << exportOut;
    const std::uint64_t base = summaryOf(exportOut).first;
    net.start(3);

    const auto [importCode, importOut] =
        snapshotOn(net, kFull, {"import", file.string()}, "import.log");
    ASSERT_EQ(importCode, 0) << importOut;
    EXPECT_EQ(summaryOf(importOut), summaryOf(exportOut));
    net.start(kFull);
    auto status = net.call(kFull, "node_getStatus", json::array{});
    ASSERT_TRUE(status);
    EXPECT_EQ(field(*status, "first_height"), std::to_string(base));

    // It follows the head while transfers go on, executing the blocks above its first height.
    const auto followed = followedHead(net, kFull, 0, sender);
    ASSERT_TRUE(followed) << readText(net.log(kFull));
    const std::uint64_t at = *followed;
    ASSERT_GE(heightOf(net, 0), at);

    // Every key the snapshot held, and the sender's account: the same proofs at that height.
    auto read = readBack(net, file);
    ASSERT_TRUE(read) << read.error().message;
    std::vector<Hash256> keys{contracts::accountKey(crypto::addressOf(dev->publicKey()))};
    for (const auto& [key, value] : read->entries) {
        keys.push_back(key);
    }
    for (const Hash256& key : keys) {
        const json::array params{json::string(key.hex()), json::string(std::to_string(at))};
        auto full = net.call(kFull, "state_getProof", params);
        auto validator = net.call(0, "state_getProof", params);
        ASSERT_TRUE(full && validator);
        EXPECT_EQ(*full, *validator) << key.hex();
    }
    const json::array account{json::string(crypto::addressOf(dev->publicKey()).hex()),
                              json::string(std::to_string(at))};
    EXPECT_EQ(net.call(kFull, "account_get", account).value(),
              net.call(0, "account_get", account).value());
    EXPECT_EQ(blockOf(net, kFull, at), blockOf(net, 0, at));
    EXPECT_EQ(blockOf(net, kFull, base), blockOf(net, 0, base));

    // Below its first height it holds no block and no state, and says so.
    EXPECT_FALSE(net.call(kFull, "block_get", json::array{json::string(std::to_string(base - 1))}));
    auto below = net.call(kFull, "account_get",
                          json::array{account[0], json::string(std::to_string(base - 1))});
    ASSERT_FALSE(below);
    EXPECT_NE(below.error().message.find("first height"), std::string::npos)
        << below.error().message;

    // A second import into a home that has a ledger is refused.
    net.stop(kFull, SIGTERM);
    const auto [againCode, againOut] =
        snapshotOn(net, kFull, {"import", file.string()}, "again.log");
    EXPECT_NE(againCode, 0);
    EXPECT_NE(againOut.find("already holds a ledger"), std::string::npos) << againOut;
}

}  // namespace
}  // namespace gridledger::testing::snapshot_test
