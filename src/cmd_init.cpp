#include <chrono>
#include <iostream>

#include <boost/json.hpp>
#include <boost/program_options.hpp>

#include <gridledger/contracts/genesis.h>

#include "commands.h"
#include "embedded_genesis.h"
#include "home.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace json = boost::json;

namespace {

/** The dev account's genesis balance: one billion DPS (18 decimals). */
const u128 kDevBalance = u128{1000000000} * u128{1000000000000000000ULL};

Result<std::string> devGenesis(const crypto::SecretKey& validator, const crypto::NodeKey& node,
                               const crypto::SecretKey& dev, const std::string& chainId) {
    auto parsed = json::parse(devGenesisTemplate());
    auto& root = parsed.as_object();
    if (!chainId.empty()) {
        root["chain_id"] = chainId;
    }
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    root["genesis_time_ms"] = std::to_string(now.count());
    root["validators"] = json::array{json::object{{"name", "validator"},
                                                  {"consensus_key", validator.publicKey().hex()},
                                                  {"node_id", node.nodeId().hex()}}};
    root["accounts"] =
        json::array{json::object{{"address", crypto::addressOf(dev.publicKey()).hex()},
                                 {"balance", toDecimal(kDevBalance)}}};
    // Round-trip through the parser so that init never writes a genesis the node would refuse.
    GL_ASSIGN_OR_RETURN(genesis, contracts::parseGenesis(json::serialize(parsed)));
    return contracts::genesisToJson(genesis);
}

}  // namespace

int runInit(const Args& args) {
    std::string homeFlag;
    std::string chainId;
    po::options_description desc("gridledger init");
    desc.add_options()("help,h", "show this help")("home", po::value(&homeFlag),
                                                   "node home directory")(
        "chain-id", po::value(&chainId), "chain id of the dev genesis (default gridledger-dev)");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(desc).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "gridledger init: " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help") != 0) {
        std::cout << desc;
        return 0;
    }
    const Home home = Home::resolve(homeFlag);
    if (home.initialised()) {
        std::cerr << "gridledger init: " << home.root().string() << " is already initialised\n";
        return 1;
    }
    auto validator = home.createKey("validator");
    auto node = validator ? home.createNodeKey() : std::unexpected(validator.error());
    auto dev = node ? home.createKey("dev") : std::unexpected(node.error());
    auto genesis =
        dev ? devGenesis(*validator, *node, *dev, chainId) : std::unexpected(dev.error());
    auto written = genesis ? writeFile(home.genesisFile(), *genesis,
                                       std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_write |
                                           std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read)
                           : std::unexpected(genesis.error());
    auto config = written ? home.writeDefaultConfig() : written;
    if (!config) {
        std::cerr << "gridledger init: " << config.error().message << "\n";
        return 1;
    }
    std::cout << "initialised " << home.root().string() << "\n"
              << "  validator key  " << validator->publicKey().hex() << "\n"
              << "  node id        " << node->nodeId().hex() << "\n"
              << "  dev account    " << crypto::addressOf(dev->publicKey()).hex()
              << " (key 'dev', funded in genesis)\n";
    return 0;
}

}  // namespace gridledger::node
