// `gridledger testnet`: N validator homes that share one genesis and name each other as peers, and
// the Testnet harness that runs them as real processes.

#include <chrono>
#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/contracts/genesis.h>
#include <gridledger/crypto/ed25519.h>
#include <gridledger/crypto/schnorr.h>

#include "genesis_builder.h"
#include "home.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/testnet.h"

namespace gridledger::testnet_cli_test {
namespace {
namespace fs = std::filesystem;

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/** Runs the CLI with `args`; returns its exit code and output. */
std::pair<int, std::string> cli(const testing::TempDir& dir, const std::vector<std::string>& args) {
    const auto out = dir.path() / "cli.out";
    fs::remove(out);
    const int code = testing::runCommand(GRIDLEDGER_BIN, args, out);
    return {code, readAll(out)};
}

/** The bytes of a key file (0x hex and a newline). */
Bytes keyBytes(const fs::path& path) {
    auto text = readAll(path);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
        text.pop_back();
    }
    auto bytes = fromHex(text);
    EXPECT_TRUE(bytes.has_value()) << path;
    return bytes.value_or(Bytes{});
}

std::vector<std::string> testnetArgs(const fs::path& out, const std::string& validators,
                                     const std::string& basePort) {
    return {"testnet", "--validators", validators, "--out", out.string(), "--base-port", basePort};
}

std::uint64_t headHeight(const testing::Testnet& net, std::size_t node) {
    const auto head = net.call(node, "chain_getHead", boost::json::array{});
    EXPECT_TRUE(head.has_value()) << (head ? "" : head.error().message);
    return head ? std::stoull(std::string(head->at("height").as_string())) : 0;
}

/** Waits (at most 20 s) until node's head height exceeds `height`; returns the last height seen. */
std::uint64_t waitForHeightAbove(const testing::Testnet& net, std::size_t node,
                                 std::uint64_t height) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::uint64_t seen = headHeight(net, node);
    while (seen <= height && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        seen = headHeight(net, node);
    }
    return seen;
}

constexpr int kBasePort = 30000;

TEST(TestnetCli, WritesFourHomesSharingOneGenesisWithTheirOwnKeysAndTheOthersAsPeers) {
    testing::TempDir dir;
    const auto out = dir.path() / "net";
    const auto [code, output] = cli(dir, testnetArgs(out, "4", std::to_string(kBasePort)));
    ASSERT_EQ(code, 0) << output;

    std::set<std::string> entries;
    for (const auto& entry : fs::directory_iterator(out)) {
        entries.insert(entry.path().filename().string());
    }
    EXPECT_EQ(entries, (std::set<std::string>{"node0", "node1", "node2", "node3"}));

    const auto home = [&](std::size_t i) { return out / ("node" + std::to_string(i)); };
    const std::string genesisText = readAll(home(0) / "config" / "genesis.json");
    auto genesis = contracts::parseGenesis(genesisText);
    ASSERT_TRUE(genesis.has_value()) << genesis.error().message;
    ASSERT_EQ(genesis->validators.size(), 4U);

    const Bytes devKey = keyBytes(home(0) / "keys" / "dev.key");
    auto dev = crypto::SecretKey::fromBytes(devKey);
    ASSERT_TRUE(dev.has_value());
    ASSERT_EQ(genesis->accounts.size(), 5U) << "the dev account and one per validator";
    EXPECT_EQ(genesis->accounts[0].address, crypto::addressOf(dev->publicKey()));
    EXPECT_TRUE(genesis->accounts[0].balance == node::kDevBalance);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(genesis->accounts[i + 1].address, genesis->validators[i].account);
        EXPECT_TRUE(genesis->accounts[i + 1].balance == node::kValidatorBalance);
    }
    for (const auto fee : genesis->fees.byKind) {
        EXPECT_EQ(fee, testing::kDevFee) << "every kind pays the dev fee, low but not zero";
    }

    std::vector<NodeId> nodeIds;
    std::set<PubKey> consensusKeys;
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE("node" + std::to_string(i));
        EXPECT_EQ(readAll(home(i) / "config" / "genesis.json"), genesisText);
        EXPECT_EQ(keyBytes(home(i) / "keys" / "dev.key"), devKey);
        auto validator = crypto::SecretKey::fromBytes(keyBytes(home(i) / "keys" / "validator.key"));
        auto nodeKey = crypto::NodeKey::fromSeed(keyBytes(home(i) / "keys" / "node.key"));
        ASSERT_TRUE(validator.has_value());
        ASSERT_TRUE(nodeKey.has_value());
        const auto& entry = genesis->validators[i];
        EXPECT_EQ(entry.name, "node" + std::to_string(i));
        EXPECT_EQ(entry.consensusKey, validator->publicKey());
        EXPECT_EQ(entry.nodeId, crypto::nodeIdOf(nodeKey->publicKey()));
        nodeIds.push_back(crypto::nodeIdOf(nodeKey->publicKey()));
        consensusKeys.insert(validator->publicKey());
        for (const char* name : {"validator", "node", "dev"}) {
            EXPECT_EQ(fs::status(home(i) / "keys" / (std::string(name) + ".key")).permissions() &
                          fs::perms::all,
                      fs::perms::owner_read | fs::perms::owner_write)
                << name;
        }
    }
    EXPECT_EQ(consensusKeys.size(), 4U);
    EXPECT_EQ(std::set<NodeId>(nodeIds.begin(), nodeIds.end()).size(), 4U);

    std::set<int> ports;
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE("node" + std::to_string(i));
        auto config = node::Home(home(i)).loadConfig();
        ASSERT_TRUE(config.has_value()) << config.error().message;
        const int slot = kBasePort + 4 * static_cast<int>(i);
        EXPECT_EQ(config->p2pPort, slot);
        EXPECT_EQ(config->rpcPort, slot + 1);
        EXPECT_EQ(config->metricsPort, slot + 2);
        EXPECT_EQ(config->rpcAdminPort, slot + 3);
        EXPECT_EQ(config->rpcAdminAddress, "127.0.0.1");
        EXPECT_EQ(config->p2pAddress, "127.0.0.1");
        EXPECT_EQ(config->rpcAddress, "127.0.0.1");
        ports.insert({config->p2pPort, config->rpcPort, config->metricsPort, config->rpcAdminPort});

        std::set<std::string> expected;
        for (std::size_t j = 0; j < 4; ++j) {
            if (j != i) {
                const auto port = static_cast<std::uint16_t>(kBasePort + 4 * static_cast<int>(j));
                expected.insert(node::formatPeerAddress({nodeIds[j], "127.0.0.1", port}));
            }
        }
        std::set<std::string> actual;
        for (const auto& peer : config->persistentPeers) {
            actual.insert(node::formatPeerAddress(peer));
        }
        EXPECT_EQ(config->persistentPeers.size(), 3U);
        EXPECT_EQ(actual, expected);
    }
    EXPECT_EQ(ports.size(), 16U);

    // A second run into the now non-empty directory fails and leaves the homes alone.
    const auto [again, againOutput] = cli(dir, testnetArgs(out, "4", std::to_string(kBasePort)));
    EXPECT_NE(again, 0) << againOutput;
    EXPECT_EQ(readAll(home(0) / "config" / "genesis.json"), genesisText);
}

TEST(TestnetCli, FullNodesFollowTheGenesisValidatorsAndEveryNodeAllowsAndDialsThem) {
    testing::TempDir dir;
    const auto out = dir.path() / "net";
    auto args = testnetArgs(out, "3", std::to_string(kBasePort));
    args.insert(args.end(), {"--full-nodes", "2"});
    const auto [code, output] = cli(dir, args);
    ASSERT_EQ(code, 0) << output;
    EXPECT_NE(output.find("full node"), std::string::npos) << output;
    const auto home = [&](std::size_t i) { return out / ("node" + std::to_string(i)); };
    auto genesis = contracts::parseGenesis(readAll(home(0) / "config" / "genesis.json"));
    ASSERT_TRUE(genesis.has_value());
    ASSERT_EQ(genesis->validators.size(), 3U);  // the full nodes are not validators

    std::vector<NodeId> ids;
    for (std::size_t i = 0; i < 5; ++i) {
        auto nodeKey = crypto::NodeKey::fromSeed(keyBytes(home(i) / "keys" / "node.key"));
        ASSERT_TRUE(nodeKey.has_value());
        ids.push_back(crypto::nodeIdOf(nodeKey->publicKey()));
        // Each full node holds validator keys of its own, for governance to add.
        EXPECT_TRUE(fs::exists(home(i) / "keys" / "validator.key"));
        EXPECT_EQ(readAll(home(i) / "config" / "genesis.json"),
                  readAll(home(0) / "config" / "genesis.json"));
    }
    for (std::size_t i = 0; i < 5; ++i) {
        SCOPED_TRACE("node" + std::to_string(i));
        auto config = node::Home(home(i)).loadConfig();
        ASSERT_TRUE(config.has_value());
        EXPECT_EQ(config->p2pPort, kBasePort + 4 * static_cast<int>(i));
        EXPECT_EQ(config->persistentPeers.size(), 4U);  // every other node
        EXPECT_EQ(std::set<NodeId>(config->allowedNodes.begin(), config->allowedNodes.end()),
                  (std::set<NodeId>{ids[3], ids[4]}));
    }
    EXPECT_NE(cli(dir,
                  [&] {
                      auto tooMany = testnetArgs(dir.path() / "other", "4", "20000");
                      tooMany.insert(tooMany.end(), {"--full-nodes", "65"});
                      return tooMany;
                  }())
                  .first,
              0);
}

TEST(TestnetCli, RefusesBadCountsPortsAndTimingsAndLeavesNothingBehind) {
    testing::TempDir dir;
    const auto out = dir.path() / "net";
    EXPECT_NE(cli(dir, testnetArgs(out, "0", "20000")).first, 0);
    EXPECT_NE(cli(dir, testnetArgs(out, "65", "20000")).first, 0);
    EXPECT_NE(cli(dir, testnetArgs(out, "4", "65530")).first, 0);  // 12 ports do not fit
    EXPECT_NE(cli(dir, testnetArgs(out, "4", "0")).first, 0);
    auto equal = testnetArgs(out, "4", "20000");
    equal.insert(equal.end(), {"--round-timeout-ms", "500", "--empty-block-interval-ms", "500"});
    EXPECT_NE(cli(dir, equal).first, 0);
    auto badHost = testnetArgs(out, "4", "20000");
    badHost.insert(badHost.end(), {"--host", "0.0.0.0"});
    EXPECT_NE(cli(dir, badHost).first, 0);
    EXPECT_FALSE(fs::exists(out));

    // A file in the way is refused too; 64 validators is the most.
    std::ofstream(dir.path() / "file") << "x";
    EXPECT_NE(cli(dir, testnetArgs(dir.path() / "file", "1", "20000")).first, 0);
    const auto [code, output] = cli(dir, testnetArgs(out, "64", "20000"));
    EXPECT_EQ(code, 0) << output;
    EXPECT_TRUE(fs::exists(out / "node63" / "config" / "genesis.json"));
}

TEST(TestnetCli, TimingFlagsAndChainIdGoIntoTheGenesis) {
    testing::TempDir dir;
    const auto out = dir.path() / "net";
    auto args = testnetArgs(out, "2", "20000");
    args.insert(args.end(), {"--round-timeout-ms", "3000", "--empty-block-interval-ms", "250",
                             "--chain-id", "grid-test-7"});
    const auto [code, output] = cli(dir, args);
    ASSERT_EQ(code, 0) << output;
    auto genesis = contracts::parseGenesis(readAll(out / "node1" / "config" / "genesis.json"));
    ASSERT_TRUE(genesis.has_value());
    EXPECT_EQ(genesis->chainId, "grid-test-7");
    EXPECT_EQ(genesis->consensus.roundTimeoutMs, 3000U);
    EXPECT_EQ(genesis->consensus.emptyBlockIntervalMs, 250U);
}

TEST(Testnet, OneValidatorNetworkCommitsBlocksAcceptsADevTransferAndRestarts) {
    testing::Testnet net({.validators = 1,
                          .roundTimeoutMs = 1000,
                          .emptyBlockIntervalMs = 100,
                          .logLevel = "debug",
                          .leaderReputationWindow = 5});
    ASSERT_EQ(net.size(), 1U);
    EXPECT_NE(readAll(net.home(0) / "config" / "node.conf").find("\nlevel = debug\n"),
              std::string::npos);
    EXPECT_NE(
        readAll(net.home(0) / "config" / "genesis.json").find("\"leader_reputation_window\":5"),
        std::string::npos);
    net.start(0);
    EXPECT_TRUE(net.running(0));

    const auto first = headHeight(net, 0);
    EXPECT_GT(waitForHeightAbove(net, 0, first + 2), first + 2);
    EXPECT_GE(net.metric(0, "gridledger_executed_height").value_or(-1), 3.0);

    // The dev key copied into the home pays from it.
    const testing::TempDir cliDir;
    const auto [code, output] =
        cli(cliDir, {"tx", "transfer", "--from", "dev", "--to",
                     "0x00000000000000000000000000000000000000aa", "--amount", "5", "--wait",
                     "--home", net.home(0).string()});
    EXPECT_EQ(code, 0) << output;
    EXPECT_NE(output.find("\"status\":\"committed\""), std::string::npos) << output;

    net.stop(0, SIGTERM);
    EXPECT_FALSE(net.running(0));
    EXPECT_FALSE(net.call(0, "node_getStatus", boost::json::array{}).has_value());
    const std::string firstLog = readAll(net.log(0));
    ASSERT_FALSE(firstLog.empty());

    net.start(0);
    const auto resumed = headHeight(net, 0);
    EXPECT_GE(resumed, first + 3);
    EXPECT_GT(waitForHeightAbove(net, 0, resumed), resumed);
    const std::string bothLogs = readAll(net.log(0));
    EXPECT_TRUE(bothLogs.starts_with(firstLog));
    EXPECT_GT(bothLogs.size(), firstLog.size());
    net.stop(0, SIGTERM);
}

}  // namespace
}  // namespace gridledger::testnet_cli_test
