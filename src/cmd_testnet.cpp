// `gridledger testnet`: the homes of an N-validator network on one machine, sharing one genesis,
// and of full nodes that follow it (each with validator keys of its own, for governance to add).

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>

#include <boost/asio/ip/address.hpp>
#include <boost/program_options.hpp>

#include "cli_options.h"
#include "genesis_builder.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kMaxValidators = 64;
/**
 * Node i's ports: P2P on basePort + kPortsPerNode * i, RPC on the next, metrics on the one after,
 * then the admin RPC listener (on 127.0.0.1 whatever the host).
 */
constexpr std::int64_t kPortsPerNode = 4;
constexpr std::int64_t kDefaultBasePort = 26650;

/** What the command line asked for, checked by checkArguments(). */
struct TestnetPlan {
    std::int64_t validators = 0;
    std::int64_t fullNodes = 0;
    fs::path out;
    std::string host = "127.0.0.1";
    std::int64_t basePort = kDefaultBasePort;
    /** Every home's keys: plain, or encrypted under one passphrase. */
    KeyProtection keys;
    /** Written into every node.conf as [keys] passphrase_file / passphrase_env. */
    std::string passphraseFile;
    std::string passphraseEnv;
    DevGenesisOptions genesis{.chainId = "gridledger-testnet",
                              .roundTimeoutMs = std::nullopt,
                              .emptyBlockIntervalMs = std::nullopt,
                              .leaderReputationWindow = std::nullopt};
};

std::uint16_t portOf(const TestnetPlan& plan, std::size_t node, std::int64_t offset) {
    return static_cast<std::uint16_t>(plan.basePort +
                                      kPortsPerNode * static_cast<std::int64_t>(node) + offset);
}

std::string homeName(std::size_t index) {
    return "node" + std::to_string(index);
}

/** The flags' values: counts, ports and host in range. */
Status checkArguments(const TestnetPlan& plan) {
    if (plan.validators < 1 || plan.validators > kMaxValidators) {
        return fail(ErrorCode::kInvalidArgument,
                    "--validators must be 1.." + std::to_string(kMaxValidators));
    }
    if (plan.fullNodes < 0 || plan.fullNodes > kMaxValidators) {
        return fail(ErrorCode::kInvalidArgument,
                    "--full-nodes must be 0.." + std::to_string(kMaxValidators));
    }
    const std::int64_t nodes = plan.validators + plan.fullNodes;
    const std::int64_t lastPort = plan.basePort + kPortsPerNode * nodes - 1;
    if (plan.basePort < 1 || lastPort > 65535) {
        return fail(ErrorCode::kInvalidArgument, "--base-port must leave room for " +
                                                     std::to_string(kPortsPerNode * nodes) +
                                                     " consecutive ports below 65536");
    }
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(plan.host, ec);
    if (ec || address.is_unspecified()) {
        return fail(ErrorCode::kInvalidArgument,
                    "--host must be an IP address the nodes can reach each other on");
    }
    return {};
}

/**
 * Node `index`'s config: its ports on the plan's host, every other node a persistent peer, and
 * the full nodes allowed (validators are allowed by the validator set).
 */
NodeConfig nodeConfig(const TestnetPlan& plan, std::size_t index,
                      const std::vector<contracts::GenesisValidator>& nodes) {
    NodeConfig config;
    config.p2pAddress = plan.host;
    config.p2pPort = portOf(plan, index, 0);
    config.rpcAddress = plan.host;
    config.rpcPort = portOf(plan, index, 1);
    config.metricsAddress = plan.host;
    config.metricsPort = portOf(plan, index, 2);
    config.keyPassphraseFile = plan.passphraseFile;
    config.keyPassphraseEnv = plan.passphraseEnv;
    config.rpcAdminPort = portOf(plan, index, 3);
    for (std::size_t peer = 0; peer < nodes.size(); ++peer) {
        if (peer != index) {
            config.persistentPeers.push_back(
                codec::PeerAddress{nodes[peer].nodeId, plan.host, portOf(plan, peer, 0)});
        }
        if (peer >= static_cast<std::size_t>(plan.validators)) {
            config.allowedNodes.push_back(nodes[peer].nodeId);
        }
    }
    return config;
}

/**
 * Writes the homes: each its own validator and node keys, then one genesis with the validators
 * (the first plan.validators nodes) and the dev account, the same dev key in every home, and
 * each home's node.conf. `nodes` gets every node's keys, validators first.
 */
Result<Address> writeHomes(const TestnetPlan& plan, std::vector<Home>& homes,
                           std::vector<contracts::GenesisValidator>& nodes) {
    const auto count = static_cast<std::size_t>(plan.validators + plan.fullNodes);
    for (std::size_t i = 0; i < count; ++i) {
        homes.emplace_back(plan.out / homeName(i));
        GL_ASSIGN_OR_RETURN(keys, createValidatorKeys(homes.back(), homeName(i), plan.keys));
        nodes.push_back(keys);
    }
    const auto dev = crypto::SecretKey::generate();
    const Address devAddress = crypto::addressOf(dev.publicKey());
    const std::vector<contracts::GenesisValidator> validators(
        nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(plan.validators));
    GL_ASSIGN_OR_RETURN(genesis, buildDevGenesis(validators, devAddress, plan.genesis));
    for (std::size_t i = 0; i < homes.size(); ++i) {
        GL_TRY(homes[i].writeKey("dev", dev, plan.keys));
        GL_TRY(writeGenesis(homes[i], genesis));
        GL_TRY(homes[i].writeConfig(nodeConfig(plan, i, nodes)));
    }
    return devAddress;
}

/**
 * Creates the output directory and writes the homes into it. On failure removes what it wrote
 * (the homes, and the directory if it made it) so that the command can be run again.
 */
Result<Address> writeTestnet(const TestnetPlan& plan,
                             std::vector<contracts::GenesisValidator>& nodes) {
    std::error_code ec;
    if (fs::exists(plan.out, ec) &&
        (!fs::is_directory(plan.out, ec) || !fs::is_empty(plan.out, ec))) {
        return fail(ErrorCode::kInvalidArgument,
                    plan.out.string() + " exists and is not an empty directory");
    }
    const bool madeOut = fs::create_directories(plan.out, ec);
    if (ec) {
        return fail(ErrorCode::kIo, "cannot create " + plan.out.string() + ": " + ec.message());
    }
    std::vector<Home> homes;
    auto dev = writeHomes(plan, homes, nodes);
    if (!dev) {
        for (const auto& home : homes) {
            fs::remove_all(home.root(), ec);
        }
        if (madeOut) {
            fs::remove(plan.out, ec);
        }
    }
    return dev;
}

void printSummary(const TestnetPlan& plan, const std::vector<contracts::GenesisValidator>& nodes,
                  const Address& dev) {
    std::cout << "wrote a " << plan.validators << "-validator testnet";
    if (plan.fullNodes > 0) {
        std::cout << " with " << plan.fullNodes << " full node" << (plan.fullNodes > 1 ? "s" : "");
    }
    std::cout << " to " << plan.out.string() << " (chain " << plan.genesis.chainId << ", host "
              << plan.host << ")\n"
              << "  home     role       p2p    rpc    metrics  node id\n";
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const bool validator = i < static_cast<std::size_t>(plan.validators);
        std::cout << "  " << std::left << std::setw(7) << homeName(i) << "  " << std::setw(9)
                  << (validator ? "validator" : "full node") << "  " << std::setw(5)
                  << portOf(plan, i, 0) << "  " << std::setw(5) << portOf(plan, i, 1) << "  "
                  << std::setw(7) << portOf(plan, i, 2) << "  " << nodes[i].nodeId.hex() << "\n";
    }
    std::cout << "dev account " << dev.hex() << " (key 'dev' in every home, funded in genesis)\n"
              << "start node i with: gridledger start --home " << (plan.out / "node<i>").string()
              << "\n";
}

}  // namespace

int runTestnet(const Args& args) {
    TestnetPlan plan;
    std::string out;
    std::string passphraseFile;
    bool encrypt = false;
    po::options_description desc("gridledger testnet --validators N --out DIR");
    desc.add_options()("help,h", "show this help")(
        "validators", po::value(&plan.validators)->required(), "number of validators, 1..64")(
        "full-nodes", po::value(&plan.fullNodes)->default_value(0),
        "number of full nodes after the validators, 0..64: not in genesis, allowed by every "
        "node, each with validator keys for governance to add")(
        "out", po::value(&out)->required(),
        "directory for the homes node0..node<N+F-1>; must be absent or empty")(
        "chain-id", po::value(&plan.genesis.chainId)->default_value(plan.genesis.chainId),
        "chain id of the genesis")("host", po::value(&plan.host)->default_value(plan.host),
                                   "IP address every node listens on and dials its peers at")(
        "base-port", po::value(&plan.basePort)->default_value(plan.basePort),
        "node i uses this + 3i (P2P), + 3i+1 (RPC), + 3i+2 (metrics)")(
        "round-timeout-ms", po::value<std::int64_t>(),
        "consensus round timeout in genesis (default from genesis/dev.json)")(
        "empty-block-interval-ms", po::value<std::int64_t>(),
        "empty-block interval in genesis, below the round timeout (default from genesis/dev.json)")(
        "leader-reputation-window", po::value<std::int64_t>(),
        "leader reputation window in blocks in genesis, 0 (off) to 10000 (default 20)")(
        "encrypt", po::bool_switch(&encrypt),
        "encrypt every home's keys under one passphrase (docs/operations.md)");
    addPassphraseOption(desc, passphraseFile);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(desc).run(), vm);
        if (vm.count("help") != 0) {
            std::cout << desc;
            return 0;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "gridledger testnet: " << e.what() << "\n" << desc;
        return 2;
    }
    for (const auto& [name, target] :
         {std::pair{"round-timeout-ms", &plan.genesis.roundTimeoutMs},
          std::pair{"empty-block-interval-ms", &plan.genesis.emptyBlockIntervalMs}}) {
        if (vm.count(name) != 0) {
            const auto value = vm[name].as<std::int64_t>();
            if (value <= 0) {
                std::cerr << "gridledger testnet: --" << name << " must be positive\n";
                return 2;
            }
            *target = static_cast<std::uint64_t>(value);
        }
    }
    if (vm.count("leader-reputation-window") != 0) {
        const auto window = vm["leader-reputation-window"].as<std::int64_t>();
        if (window < 0 || window > contracts::kMaxLeaderReputationWindow) {
            std::cerr << "gridledger testnet: --leader-reputation-window must be 0..10000\n";
            return 2;
        }
        plan.genesis.leaderReputationWindow = static_cast<std::uint32_t>(window);
    }
    plan.out = out;
    if (auto checked = checkArguments(plan); !checked) {
        std::cerr << "gridledger testnet: " << checked.error().message << "\n";
        return 2;
    }
    auto protection = cliProtection(encrypt, passphraseFile);
    if (!protection) {
        std::cerr << "gridledger testnet: " << protection.error().message << "\n";
        return 1;
    }
    plan.keys = *protection;
    if (!passphraseFile.empty()) {
        plan.passphraseFile = fs::absolute(passphraseFile).string();
    } else if (plan.keys.passphrase &&
               std::getenv(std::string(kPassphraseEnv).c_str()) != nullptr) {
        plan.passphraseEnv = std::string(kPassphraseEnv);
    }
    std::vector<contracts::GenesisValidator> nodes;
    const auto dev = writeTestnet(plan, nodes);
    if (!dev) {
        std::cerr << "gridledger testnet: " << dev.error().message << "\n";
        return 1;
    }
    printSummary(plan, nodes, *dev);
    return 0;
}

}  // namespace gridledger::node
