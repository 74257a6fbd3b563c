// The operator's CLI: init and testnet set the listeners' addresses and ports (testnet with host
// names for containers), `config check` lists every fault of a home on a line of its own, and
// [log] format = json writes one JSON object per log line.

#include <chrono>
#include <csignal>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "home.h"
#include "rpc_client.h"
#include "support/node_process.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/testnet.h"

namespace gridledger::operator_cli_test {
namespace {
namespace fs = std::filesystem;

/** Runs the CLI with `args`; returns its exit code and output. */
std::pair<int, std::string> cli(const testing::TempDir& dir, const std::vector<std::string>& args) {
    const auto out = dir.path() / "cli.out";
    fs::remove(out);
    const int code = testing::runCommand(GRIDLEDGER_BIN, args, out);
    return {code, testing::readText(out)};
}

/** Rewrites the home's node.conf with `edit` applied to its text. */
void editConfig(const fs::path& home, const std::function<std::string(std::string)>& edit) {
    const auto path = home / "config" / "node.conf";
    const std::string text = edit(testing::readText(path));
    std::ofstream(path, std::ios::trunc) << text;
}

/** Waits (at most 30 s) until `endpoint` answers node_getStatus. */
bool answers(const node::Endpoint& endpoint) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        if (node::callRpc(endpoint, "node_getStatus", boost::json::array{})) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

std::size_t countLines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(OperatorCli, InitWithPortFlagsStartsBesideAnotherHomeAndServesRpcOnItsOwnPort) {
    testing::NodeProcess other;  // a home on ports of its own, running first
    other.start();

    testing::TempDir dir;
    const auto home = dir.path() / "second";
    const auto rpc = testing::freePort();
    const auto p2p = testing::freePort();
    const auto metrics = testing::freePort();
    const auto admin = testing::freePort();
    const auto [code, output] =
        cli(dir, {"init", "--home", home.string(), "--rpc-port", std::to_string(rpc), "--p2p-port",
                  std::to_string(p2p), "--metrics-port", std::to_string(metrics), "--admin-port",
                  std::to_string(admin)});
    ASSERT_EQ(code, 0) << output;
    EXPECT_NE(output.find("rpc 127.0.0.1:" + std::to_string(rpc)), std::string::npos) << output;
    auto config = node::Home(home).loadConfig();
    ASSERT_TRUE(config.has_value()) << config.error().message;
    EXPECT_EQ(config->rpcPort, rpc);
    EXPECT_EQ(config->p2pPort, p2p);
    EXPECT_EQ(config->metricsPort, metrics);
    EXPECT_EQ(config->rpcAdminPort, admin);

    const auto [checkCode, checkOutput] = cli(dir, {"config", "check", "--home", home.string()});
    EXPECT_EQ(checkCode, 0) << checkOutput;
    EXPECT_EQ(checkOutput, "OK " + home.string() + "\n");

    testing::Process node(GRIDLEDGER_BIN, {"start", "--home", home.string()}, dir.path() / "log");
    EXPECT_TRUE(answers(node::Endpoint{"127.0.0.1", rpc, {}}))
        << testing::readText(dir.path() / "log");
    EXPECT_TRUE(other.running()) << "the first home's node kept running beside the second";
    EXPECT_TRUE(other.call("node_getStatus", boost::json::array{}).has_value());
    node.stop(SIGTERM);
}

TEST(OperatorCli, InitWithOnlyAnRpcPortPutsTheAdminListenerOnTheNextPort) {
    testing::TempDir dir;
    const auto home = dir.path() / "h";
    const auto [code, output] = cli(dir, {"init", "--home", home.string(), "--rpc-port", "18545",
                                          "--rpc-addr", "0.0.0.0", "--metrics-addr", "::1"});
    ASSERT_EQ(code, 0) << output;
    auto config = node::Home(home).loadConfig();
    ASSERT_TRUE(config.has_value()) << config.error().message;
    EXPECT_EQ(config->rpcPort, 18545);
    EXPECT_EQ(config->rpcAdminPort, 18546);
    EXPECT_EQ(config->rpcAddress, "0.0.0.0");
    EXPECT_EQ(config->metricsAddress, "::1");
    EXPECT_EQ(config->p2pPort, 26656) << "a port not given keeps its default";
    EXPECT_EQ(config->metricsPort, 9464);
}

TEST(OperatorCli, InitRefusesBadListenFlagsWithAClearMessageAndWritesNoHome) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--rpc-port", "70000"}, "--rpc-port must be 1..65535, not 70000"},
        {{"--p2p-port", "0"}, "--p2p-port must be 1..65535, not 0"},
        {{"--rpc-addr", "example.org"}, "--rpc-addr must be an IP address"},
        {{"--rpc-port", "9000", "--metrics-port", "9000"}, "would both be 9000"},
        {{"--rpc-port", "65535"}, "give --admin-port"},
        {{"--rpc-port", "many"}, "the argument ('many') for option '--rpc-port' is invalid"},
    };
    for (const auto& [flags, message] : cases) {
        SCOPED_TRACE(message);
        testing::TempDir dir;
        const auto home = dir.path() / "h";
        std::vector<std::string> args{"init", "--home", home.string()};
        args.insert(args.end(), flags.begin(), flags.end());
        const auto [code, output] = cli(dir, args);
        EXPECT_EQ(code, 2) << output;
        EXPECT_NE(output.find(message), std::string::npos) << output;
        EXPECT_FALSE(fs::exists(home / "config" / "genesis.json"));
    }
}

TEST(OperatorCli, TestnetWithHostnamesDialsPeersByNameAndListensOnEveryAddress) {
    testing::TempDir dir;
    const auto out = dir.path() / "net";
    const auto [code, output] = cli(
        dir, {"testnet", "--validators", "4", "--out", out.string(), "--hostnames",
              "validator-0,validator-1,validator-2,validator-3", "--port-offset", "0", "--p2p-port",
              "26656", "--rpc-port", "8545", "--metrics-port", "9464", "--admin-port", "8546"});
    ASSERT_EQ(code, 0) << output;
    EXPECT_NE(output.find("validator-3"), std::string::npos) << output;
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE("node" + std::to_string(i));
        auto config = node::Home(out / ("node" + std::to_string(i))).loadConfig();
        ASSERT_TRUE(config.has_value()) << config.error().message;
        EXPECT_EQ(config->p2pAddress, "0.0.0.0");
        EXPECT_EQ(config->rpcAddress, "0.0.0.0");
        EXPECT_EQ(config->metricsAddress, "0.0.0.0");
        EXPECT_EQ(config->rpcAdminAddress, "127.0.0.1");
        EXPECT_EQ(config->p2pPort, 26656);
        EXPECT_EQ(config->rpcPort, 8545);
        EXPECT_EQ(config->metricsPort, 9464);
        EXPECT_EQ(config->rpcAdminPort, 8546);
        EXPECT_EQ(config->rpcAllowedHosts,
                  std::vector<std::string>{"validator-" + std::to_string(i)});
        std::set<std::string> hosts;
        for (const auto& peer : config->persistentPeers) {
            EXPECT_EQ(peer.port, 26656);
            hosts.insert(peer.host);
        }
        std::set<std::string> expected;
        for (std::size_t j = 0; j < 4; ++j) {
            if (j != i) {
                expected.insert("validator-" + std::to_string(j));
            }
        }
        EXPECT_EQ(hosts, expected);
    }
}

TEST(OperatorCli, TestnetWithHostnamesCommitsWithEveryPeerDialedAtItsName) {
    // One machine stands in for four hosts: "localhost" is resolved by name, the others are
    // loopback addresses of their own; every node listens on 0.0.0.0 as in a container.
    testing::TestnetOptions options;
    options.hostnames = {"localhost", "127.0.0.2", "127.0.0.3", "127.0.0.4"};
    testing::Testnet net(options);
    for (std::size_t i = 0; i < 4; ++i) {
        auto config = node::Home(net.home(i)).loadConfig();
        ASSERT_TRUE(config.has_value()) << config.error().message;
        EXPECT_EQ(config->p2pAddress, "0.0.0.0");
    }
    auto second = node::Home(net.home(1)).loadConfig();
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->persistentPeers.front().host, "localhost");
    net.startAll();
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE("node" + std::to_string(i));
        std::uint64_t height = 0;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (height < 3 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            if (auto head = net.call(i, "chain_getHead", boost::json::array{})) {
                height = std::stoull(std::string(head->at("height").as_string()));
            }
        }
        EXPECT_GE(height, 3U) << "the network commits";
    }
}

TEST(OperatorCli, TestnetGivesNodeIEachBasePortPlusOffsetTimesI) {
    testing::TempDir dir;
    const auto out = dir.path() / "net";
    const auto [code, output] =
        cli(dir, {"testnet", "--validators", "3", "--out", out.string(), "--p2p-port", "40000",
                  "--rpc-port", "41000", "--metrics-port", "42000", "--admin-port", "43000",
                  "--port-offset", "10"});
    ASSERT_EQ(code, 0) << output;
    for (std::size_t i = 0; i < 3; ++i) {
        auto config = node::Home(out / ("node" + std::to_string(i))).loadConfig();
        ASSERT_TRUE(config.has_value()) << config.error().message;
        const auto step = static_cast<int>(10 * i);
        EXPECT_EQ(config->p2pPort, 40000 + step);
        EXPECT_EQ(config->rpcPort, 41000 + step);
        EXPECT_EQ(config->metricsPort, 42000 + step);
        EXPECT_EQ(config->rpcAdminPort, 43000 + step);
        EXPECT_EQ(config->p2pAddress, "127.0.0.1");
        for (const auto& peer : config->persistentPeers) {
            EXPECT_EQ(peer.host, "127.0.0.1");
        }
    }
}

TEST(OperatorCli, TestnetRefusesHostnamesAndPortsThatCannotWork) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--hostnames", "a,b,c"}, "--hostnames must name 4 hosts, one per node, not 3"},
        {{"--hostnames", "a,b,a,c"}, "--hostnames names a twice"},
        {{"--hostnames", "a,b,c,d", "--host", "10.0.0.1"}, "give --host or --hostnames"},
        {{"--port-offset", "0"}, "would share port"},
        {{"--hostnames", "a,b,c,d", "--port-offset", "0", "--rpc-port", "26650"},
         "would share port 26650"},
        {{"--p2p-port", "65530"}, "must keep every port in 1..65535"},
    };
    for (const auto& [flags, message] : cases) {
        SCOPED_TRACE(message);
        testing::TempDir dir;
        std::vector<std::string> args{"testnet", "--validators", "4", "--out",
                                      (dir.path() / "net").string()};
        args.insert(args.end(), flags.begin(), flags.end());
        const auto [code, output] = cli(dir, args);
        EXPECT_EQ(code, 2) << output;
        EXPECT_NE(output.find(message), std::string::npos) << output;
        EXPECT_FALSE(fs::exists(dir.path() / "net"));
    }
}

TEST(OperatorCli, ConfigCheckListsEveryFaultOfABrokenHomeOnALineOfItsOwn) {
    testing::TempDir dir;
    const auto home = dir.path() / "h";
    const auto rpc = testing::freePort();
    ASSERT_EQ(cli(dir, {"init", "--home", home.string(), "--rpc-port", std::to_string(rpc),
                        "--p2p-port", std::to_string(testing::freePort()), "--metrics-port",
                        std::to_string(testing::freePort()), "--admin-port",
                        std::to_string(testing::freePort())})
                  .first,
              0);
    // Another process holds the P2P port.
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor holder(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    const auto taken = holder.local_endpoint().port();
    editConfig(home, [&](std::string text) {
        text = std::regex_replace(text, std::regex("\\[p2p\\]\naddress = 127.0.0.1\nport = \\d+"),
                                  "[p2p]\naddress = 127.0.0.1\nport = " + std::to_string(taken));
        text = std::regex_replace(text, std::regex("max_batch = 100"), "max_batch = lots");
        text = std::regex_replace(text, std::regex("\\[mempool\\]\n"), "[mempool]\nmax_tx = 5\n");
        text = std::regex_replace(text, std::regex("explorer_dir =\n"),
                                  "explorer_dir = no-such-explorer\n");
        return std::regex_replace(text, std::regex("format = text"), "format = yaml");
    });
    fs::permissions(home / "keys" / "validator.key", fs::perms::group_read | fs::perms::others_read,
                    fs::perm_options::add);
    std::ofstream(home / "config" / "genesis.json", std::ios::trunc) << "{\"chain_id\": ";

    const auto [code, output] = cli(dir, {"config", "check", "--home", home.string()});
    EXPECT_EQ(code, 1) << output;
    const std::vector<std::string> expected{
        "unknown key mempool.max_tx",
        "rpc.max_batch = \"lots\" is not a valid value",
        "log.format must be text or json, not \"yaml\"",
        "genesis.json: ",
        "validator.key is accessible by group or others (mode 0644); run: chmod 600",
        "p2p.port: cannot listen on 127.0.0.1:" + std::to_string(taken),
        "rpc.explorer_dir: " + (home / "no-such-explorer").string() + " is not a directory",
    };
    for (const auto& line : expected) {
        EXPECT_NE(output.find(line), std::string::npos) << "missing: " << line << "\n" << output;
    }
    EXPECT_EQ(countLines(output), expected.size() + 1) << "one line per fault, then the count:\n"
                                                       << output;
    EXPECT_NE(output.find("7 faults in " + home.string()), std::string::npos) << output;
    EXPECT_EQ(output.find("OK"), std::string::npos) << output;

    // The node itself refuses the home too: the check finds what start would.
    const auto [startCode, startOutput] = cli(dir, {"start", "--home", home.string()});
    EXPECT_NE(startCode, 0) << startOutput;
}

TEST(OperatorCli, ConfigCheckNamesAMissingKeyFileAndAHomeThatDoesNotExist) {
    testing::TempDir dir;
    const auto home = dir.path() / "h";
    ASSERT_EQ(cli(dir, {"init", "--home", home.string(), "--rpc-port",
                        std::to_string(testing::freePort()), "--p2p-port",
                        std::to_string(testing::freePort()), "--metrics-port",
                        std::to_string(testing::freePort()), "--admin-port",
                        std::to_string(testing::freePort())})
                  .first,
              0);
    fs::remove(home / "keys" / "node.key");
    const auto [code, output] = cli(dir, {"config", "check", "--home", home.string()});
    EXPECT_EQ(code, 1) << output;
    EXPECT_NE(output.find("node.key: missing"), std::string::npos) << output;
    EXPECT_EQ(countLines(output), 2U) << output;

    const auto [noneCode, noneOutput] =
        cli(dir, {"config", "check", "--home", (dir.path() / "absent").string()});
    EXPECT_EQ(noneCode, 1) << noneOutput;
    EXPECT_NE(noneOutput.find("no such home directory"), std::string::npos) << noneOutput;
}

TEST(OperatorCli, ANodeWhoseRpcPortIsTakenExitsNamingThePortAndStartsOnceGivenAFreeOne) {
    testing::NodeProcess node;
    const auto taken = node.port();
    boost::asio::io_context io;
    const boost::asio::ip::tcp::acceptor holder(
        io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), taken));
    node.start();  // the first process exits; the harness moves the node to new ports
    EXPECT_NE(node.port(), taken);
    EXPECT_NE(testing::readText(node.log())
                  .find("rpc: cannot listen on 127.0.0.1:" + std::to_string(taken) +
                        ": Address already in use"),
              std::string::npos)
        << testing::readText(node.log());
    EXPECT_TRUE(node.call("node_getStatus", boost::json::array{}));
    node.stop(SIGTERM);
}

TEST(OperatorCli, JsonLogFormatWritesEveryLineAsOneJsonObjectWithItsFields) {
    testing::NodeProcess node;
    editConfig(node.home(), [](const std::string& text) {
        return std::regex_replace(text, std::regex("format = text"), "format = json");
    });
    std::ofstream(node.log(), std::ios::trunc).close();  // init's output: the node's log follows
    node.start();
    node.stop(SIGTERM);
    const std::string log = testing::readText(node.log());
    std::istringstream lines(log);
    std::size_t count = 0;
    bool sawRpcListening = false;
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) {
            continue;
        }
        ++count;
        boost::system::error_code ec;
        const auto value = boost::json::parse(line, ec);
        ASSERT_FALSE(ec) << "not JSON: " << line;
        ASSERT_TRUE(value.is_object()) << line;
        const auto& object = value.as_object();
        for (const char* key : {"time", "level", "component", "message"}) {
            ASSERT_TRUE(object.contains(key) && object.at(key).is_string()) << key << ": " << line;
        }
        ASSERT_TRUE(object.contains("fields") && object.at("fields").is_object()) << line;
        EXPECT_TRUE(std::regex_match(std::string(object.at("time").as_string()),
                                     std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
            << line;
        if (object.at("message").as_string() == "rpc listening") {
            sawRpcListening = true;
            EXPECT_EQ(object.at("component").as_string(), "node");
            EXPECT_EQ(object.at("level").as_string(), "info");
            EXPECT_EQ(object.at("fields").as_object().at("address").as_string(),
                      "127.0.0.1:" + std::to_string(node.port()));
        }
    }
    EXPECT_GT(count, 2U) << log;
    EXPECT_TRUE(sawRpcListening) << log;
}

}  // namespace
}  // namespace gridledger::operator_cli_test
