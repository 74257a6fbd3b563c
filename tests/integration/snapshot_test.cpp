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

namespace gridledger::testing {
namespace {

namespace fs = std::filesystem;

/** Runs `gridledger snapshot` with `args` on node 0's home; the exit code and the output. */
std::pair<int, std::string> snapshot(const Testnet& net, const std::vector<std::string>& args,
                                     const std::string& logName) {
    std::vector<std::string> all{"snapshot"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--home", net.home(0).string()});
    const fs::path log = net.dir() / logName;
    fs::remove(log);
    const int code = runCommand(net.bin(), all, log);
    return {code, readText(log)};
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
        ASSERT_TRUE(waitFor(
            [&] {
                sender.step(8);
                return sender.committed().size() >= 120 && heightOf(*net_, 0) >= 60;
            },
            std::chrono::seconds(120)));
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
    std::map<Hash256, Bytes> entries;
    auto genesis = contracts::parseGenesis(readText(net_->home(0) / "config" / "genesis.json"));
    ASSERT_TRUE(genesis);
    auto genesisBlock = node::computeGenesisBlock(*genesis, net_->dir() / "genesis-scratch");
    ASSERT_TRUE(genesisBlock) << genesisBlock.error().message;
    auto read = node::readSnapshot(
        file, *genesis,
        [&](std::uint64_t epoch) {
            return node::snapshotCommittee(*genesis, *genesisBlock, epoch, std::nullopt);
        },
        [&](const ledger::StateRange& range) -> Status {
            for (const auto& entry : range.entries) {
                entries.emplace(entry.key, entry.value);
            }
            return {};
        });
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_EQ(read->entries, entries.size());
    EXPECT_GT(read->chunks, entries.size() / 16);

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
    const fs::path file = net_->dir() / "at-20.snap";
    const auto [code, out] = snapshot(*net_, {"export", file.string(), "--height", "20"}, "20.log");
    ASSERT_EQ(code, 0) << out;
    EXPECT_EQ(summaryOf(out).first, 20U);
    net_->start(0);
    EXPECT_EQ(summaryOf(out).second, blockOf(*net_, 0, 20).second);
    net_->stop(0, SIGTERM);
    const auto [farCode, farOut] = snapshot(
        *net_, {"export", (net_->dir() / "far.snap").string(), "--height", "100000"}, "far.log");
    EXPECT_NE(farCode, 0);
    EXPECT_NE(farOut.find("above the executed height"), std::string::npos) << farOut;
    EXPECT_FALSE(fs::exists(net_->dir() / "far.snap"));
    // An existing file is never overwritten.
    const auto [againCode, againOut] =
        snapshot(*net_, {"export", file.string(), "--height", "20"}, "again.log");
    EXPECT_NE(againCode, 0);
    EXPECT_NE(againOut.find("already exists"), std::string::npos) << againOut;
}

}  // namespace
}  // namespace gridledger::testing
