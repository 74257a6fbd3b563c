// Reconfiguration on a running network (docs/protocol.md §12): four validators of
// `gridledger testnet` and a full node; governance adds the full node as a fifth validator with
// `gridledger tx propose add-validator` and three votes, the chain continues in the next epoch and
// the new member signs votes; then governance removes a validator and the chain continues again.
// A validator that was down while the set changed crosses the epoch on the epoch proof it asks
// for when it hears the next epoch's messages.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <signal.h>

#include "home.h"
#include "network_support.h"

namespace gridledger::testing::reconfig_test {
namespace {

/** The number of lines of `log` that match `pattern`. */
std::size_t countMatches(const std::filesystem::path& log, const std::string& pattern) {
    const std::string text = readText(log);
    const std::regex re(pattern);
    return static_cast<std::size_t>(
        std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(Reconfiguration, GovernanceAddsAFifthValidatorThatSignsThenRemovesOneAndTheChainContinues) {
    TestnetOptions options;
    options.validators = 4;
    options.logLevel = "debug";
    Testnet net(options);

    // The full node: its own home and keys, the network's genesis, the validators as peers.
    TempDir fullDir;
    const auto fullHome = fullDir.path() / "home";
    ASSERT_EQ(
        runCommand(net.bin(), {"init", "--home", fullHome.string()}, fullDir.path() / "init.log"),
        0);
    std::filesystem::copy_file(net.home(0) / "config" / "genesis.json",
                               fullHome / "config" / "genesis.json",
                               std::filesystem::copy_options::overwrite_existing);
    auto fullNodeKey = node::Home(fullHome).loadNodeKey();
    auto fullValidatorKey = node::Home(fullHome).loadKey("validator");
    auto fullAccountKey = node::Home(fullHome).loadKey("validator-account");
    ASSERT_TRUE(fullNodeKey && fullValidatorKey && fullAccountKey);
    const auto ports = freePortRange(4);
    const auto conf = fullHome / "config" / "node.conf";
    std::string peers;
    for (std::size_t i = 0; i < 4; ++i) {
        auto key = node::Home(net.home(i)).loadNodeKey();
        ASSERT_TRUE(key);
        peers += (i > 0 ? "," : "") + key->nodeId().hex() +
                 "@127.0.0.1:" + std::to_string(net.p2pPort(i));
        ASSERT_NO_FATAL_FAILURE(setConfig(net.home(i) / "config" / "node.conf", "allowed_nodes",
                                          fullNodeKey->nodeId().hex()));
    }
    ASSERT_NO_FATAL_FAILURE(setConfig(conf, "persistent_peers", peers));
    ASSERT_NO_FATAL_FAILURE(setConfig(conf, "level", "debug"));
    ASSERT_NO_FATAL_FAILURE(setPorts(conf, ports));
    const node::Endpoint fullRpc{"127.0.0.1", ports};
    const auto fullHeight = [&] {
        auto status = node::callRpc(fullRpc, "node_getStatus", json::array{});
        return status ? parseU64(field(*status, "executed_height")).value_or(0) : 0;
    };
    const auto fullLog = fullDir.path() / "node.log";

    net.startAll();
    auto full = std::make_unique<Process>(
        net.bin(), std::vector<std::string>{"start", "--home", fullHome.string()}, fullLog);
    ASSERT_TRUE(waitFor([&] { return fullHeight() >= 5; }, std::chrono::seconds(60)))
        << readText(fullLog);
    EXPECT_EQ(countMatches(fullLog, "signed vote"), 0U);  // a follower signs nothing

    // Governance: validator 0 proposes the full node, validators 0, 1, 2 vote (3 of 4 > 2/3).
    const std::string newKey = fullValidatorKey->publicKey().hex();
    auto [code, out] = cli(net, fullDir.path(),
                           {"tx", "propose", "add-validator", "--name", "v4", "--consensus-key",
                            newKey, "--node-id", fullNodeKey->nodeId().hex(), "--account",
                            crypto::addressOf(fullAccountKey->publicKey()).hex(), "--from",
                            "validator-account", "--wait", "--home", net.home(0).string()});
    ASSERT_EQ(code, 0) << out;
    for (std::size_t i = 0; i < 3; ++i) {
        std::tie(code, out) = cli(net, fullDir.path(),
                                  {"tx", "vote", "--proposal", "0", "--from", "validator-account",
                                   "--wait", "--home", net.home(i).string()});
        ASSERT_EQ(code, 0) << out;
    }
    // Every node switches to the five-member committee, and the chain goes on in the new epoch.
    for (std::size_t i = 0; i < 4; ++i) {
        ASSERT_TRUE(
            waitFor([&] { return countMatches(net.log(i), "epoch change .*members=5") > 0; },
                    std::chrono::seconds(60)))
            << "node " << i;
    }
    ASSERT_TRUE(
        waitFor([&] { return countMatches(fullLog, "epoch change .*members=5 member=true") > 0; },
                std::chrono::seconds(60)))
        << readText(fullLog);
    const std::uint64_t switched = heightOf(net, 0);
    ASSERT_TRUE(
        waitFor([&] { return heightOf(net, 0) >= switched + 10; }, std::chrono::seconds(90)));
    // The fifth validator signs votes of the new epoch (epoch 2: genesis is epoch 1).
    EXPECT_GT(countMatches(fullLog, "signed vote epoch=2"), 0U) << readText(fullLog);
    ASSERT_TRUE(waitFor([&] { return fullHeight() >= switched + 10; }, std::chrono::seconds(60)));

    // Governance removes validator 3 (4 of 5 votes > 2/3); the chain continues with four.
    auto removed = node::Home(net.home(3)).loadKey("validator");
    ASSERT_TRUE(removed);
    std::tie(code, out) =
        cli(net, fullDir.path(),
            {"tx", "propose", "remove-validator", "--consensus-key", removed->publicKey().hex(),
             "--from", "validator-account", "--wait", "--home", net.home(0).string()});
    ASSERT_EQ(code, 0) << out;
    for (std::size_t i = 0; i < 3; ++i) {
        std::tie(code, out) = cli(net, fullDir.path(),
                                  {"tx", "vote", "--proposal", "1", "--from", "validator-account",
                                   "--wait", "--home", net.home(i).string()});
        ASSERT_EQ(code, 0) << out;
    }
    // The fifth validator's account was not in genesis: the dev account funds its fees.
    std::tie(code, out) = cli(
        net, fullDir.path(),
        {"tx", "transfer", "--to", crypto::addressOf(fullAccountKey->publicKey()).hex(), "--amount",
         "1000000000000000000", "--from", "dev", "--wait", "--home", net.home(0).string()});
    ASSERT_EQ(code, 0) << out;
    std::tie(code, out) = cli(net, fullDir.path(),
                              {"tx", "vote", "--proposal", "1", "--from", "validator-account",
                               "--wait", "--home", fullHome.string()});
    ASSERT_EQ(code, 0) << out;
    ASSERT_TRUE(waitFor([&] { return countMatches(net.log(0), "epoch change .*members=4") > 0; },
                        std::chrono::seconds(60)));
    ASSERT_TRUE(waitFor([&] { return countMatches(net.log(3), "member=false") > 0; },
                        std::chrono::seconds(60)));
    const std::uint64_t removedAt = heightOf(net, 0);
    // The allow-list follows the validator set: the others disconnect the removed validator.
    const std::string removedId = node::Home(net.home(3)).loadNodeKey().value().nodeId().hex();
    const auto peersOf = [&](std::size_t i) {
        std::set<std::string> ids;
        if (auto connected = net.callAdmin(i, "node_getPeers", json::array{})) {
            for (const auto& peer : connected->as_object().at("items").as_array()) {
                ids.insert(field(peer, "node_id"));
            }
        }
        return ids;
    };
    ASSERT_TRUE(waitFor(
        [&] {
            for (std::size_t i = 0; i < 3; ++i) {
                if (peersOf(i).contains(removedId)) {
                    return false;
                }
            }
            return true;
        },
        std::chrono::seconds(30)))
        << "a removed validator keeps its connections";
    ASSERT_TRUE(
        waitFor([&] { return heightOf(net, 0) >= removedAt + 10; }, std::chrono::seconds(90)));
    ASSERT_TRUE(waitFor([&] { return fullHeight() >= removedAt + 10; }, std::chrono::seconds(60)));
    EXPECT_GT(countMatches(fullLog, "signed vote epoch=3"), 0U);
    expectSameChain(net, {0, 1, 2}, removedAt);
    // The removed validator, disconnected, holds the chain up to the epoch's end at least.
    expectSameChain(net, {0, 3}, heightOf(net, 3));
    std::cout << "[reconfig] five members from height ~" << switched << ", four from height ~"
              << removedAt << "; the fifth validator signed votes: epoch 2: "
              << countMatches(fullLog, "signed vote epoch=2")
              << ", epoch 3: " << countMatches(fullLog, "signed vote epoch=3")
              << "; removed validator's votes in epoch 3: "
              << countMatches(net.log(3), "signed vote epoch=3") << "\n";
    EXPECT_EQ(countMatches(net.log(3), "signed vote epoch=3"), 0U);  // removed: signs nothing

    // An auditor's replay of a validator's ledger checks every block against the committee of its
    // epoch, through both changes; the validator, started again, finds its epoch from its ledger
    // and signs in it.
    net.stop(1, SIGTERM);
    std::tie(code, out) = cli(net, fullDir.path(), {"replay", "--home", net.home(1).string()});
    ASSERT_EQ(code, 0) << out;
    std::smatch summary;
    ASSERT_TRUE(std::regex_search(out, summary, std::regex(R"(heights 1\.\.(\d+),)"))) << out;
    EXPECT_GE(std::stoull(summary[1].str()), removedAt + 10);
    const std::size_t votesBefore = countMatches(net.log(1), "signed vote epoch=3");
    net.start(1);
    const std::uint64_t restartedAt = heightOf(net, 0);
    ASSERT_TRUE(waitFor(
        [&] {
            return heightOf(net, 1) >= restartedAt + 5 &&
                   countMatches(net.log(1), "signed vote epoch=3") > votesBefore;
        },
        std::chrono::seconds(90)))
        << readText(net.log(1));
    full->stop(SIGTERM);
}

TEST(Reconfiguration, AValidatorThatWasDownWhileTheSetChangedCrossesTheEpochOnItsEpochProof) {
    TestnetOptions options;
    options.validators = 4;
    options.fullNodes = 1;  // joins by state sync at the end
    options.logLevel = "debug";
    Testnet net(options);
    TempDir dir;
    for (std::size_t i = 0; i < 4; ++i) {
        net.start(i);
    }
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= 3; }, std::chrono::seconds(60)));

    // Validator 3 goes down; governance removes validator 2 with the votes of 0, 1 and 2. The
    // next committee {0, 1, 3} needs all three: the chain stands still until validator 3,
    // restarted in the old epoch, crosses into the new one.
    net.stop(3, SIGTERM);
    auto removed = node::Home(net.home(2)).loadKey("validator");
    ASSERT_TRUE(removed);
    auto [code, out] =
        cli(net, dir.path(),
            {"tx", "propose", "remove-validator", "--consensus-key", removed->publicKey().hex(),
             "--from", "validator-account", "--wait", "--home", net.home(0).string()});
    ASSERT_EQ(code, 0) << out;
    for (std::size_t i = 0; i < 3; ++i) {
        std::tie(code, out) = cli(net, dir.path(),
                                  {"tx", "vote", "--proposal", "0", "--from", "validator-account",
                                   "--wait", "--home", net.home(i).string()});
        ASSERT_EQ(code, 0) << out;
    }
    ASSERT_TRUE(waitFor([&] { return countMatches(net.log(0), "epoch change .*members=3") > 0; },
                        std::chrono::seconds(60)));
    const std::uint64_t switched = heightOf(net, 0);

    net.start(3);
    // Validator 3 hears the new epoch's messages, asks for the proof that ended its own epoch
    // (genesis is epoch 1), syncs across the reconfiguration block and signs in epoch 2.
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= switched + 5; }, std::chrono::seconds(90)))
        << readText(net.log(3));
    EXPECT_GT(countMatches(net.log(3), "epoch proof epoch=1 height="), 0U) << readText(net.log(3));
    EXPECT_GT(countMatches(net.log(3), "epoch change .*members=3 member=true"), 0U);
    EXPECT_GT(countMatches(net.log(3), "signed vote epoch=2"), 0U);
    ASSERT_TRUE(
        waitFor([&] { return heightOf(net, 3) >= switched + 5; }, std::chrono::seconds(30)));
    expectSameChain(net, {0, 1, 3}, switched + 5);

    // A full node that joins by state sync now is served the last certified state of the genesis
    // epoch, the latest its genesis can check; it crosses the epoch change by block sync, and no
    // peer is refused.
    constexpr std::size_t kJoining = 4;
    const std::uint64_t joinAt = heightOf(net, 0);
    net.start(kJoining, {"--state-sync"});
    ASSERT_TRUE(
        waitFor([&] { return heightOf(net, kJoining) >= joinAt; }, std::chrono::seconds(90)))
        << readText(net.log(kJoining));
    const std::string log = readText(net.log(kJoining));
    std::smatch fetched;
    ASSERT_TRUE(std::regex_search(
        log, fetched, std::regex(R"(state sync fetched height=(\d+) .* refused=(\d+) )")))
        << log;
    EXPECT_EQ(fetched[2].str(), "0") << log;
    const std::uint64_t base = std::stoull(fetched[1].str());
    EXPECT_LT(base, switched) << log;
    EXPECT_EQ(countMatches(net.log(kJoining), "state sync: .* refused"), 0U) << log;
    EXPECT_GT(countMatches(net.log(kJoining), "epoch change .*members=3 member=false"), 0U) << log;
    expectSameChain(net, {0, kJoining}, joinAt, base);
}

}  // namespace
}  // namespace gridledger::testing::reconfig_test
