// `gridledger testnet`: the homes of an N-validator network on one machine, sharing one genesis,
// and of full nodes that follow it (each with validator keys of its own, for governance to add).

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

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
 * Node i's ports by default: P2P on basePort + kPortsPerNode * i, RPC on the next, metrics on the
 * one after, then the admin RPC listener (on 127.0.0.1 whatever the host).
 */
constexpr std::int64_t kPortsPerNode = 4;
/** The listeners of a node, in the order of their ports from --base-port. */
enum class Listener : std::uint8_t { kP2p = 0, kRpc = 1, kMetrics = 2, kAdmin = 3 };
constexpr std::int64_t kDefaultBasePort = 26650;

/** What the command line asked for, checked by checkArguments(). */
struct TestnetPlan {
    std::int64_t validators = 0;
    std::int64_t fullNodes = 0;
    fs::path out;
    std::string host = "127.0.0.1";
    /** One per node: the name its peers dial it at (a container's host name); empty: host. */
    std::vector<std::string> hostnames;
    std::int64_t basePort = kDefaultBasePort;
    /** Per-listener base ports and listen addresses, overriding basePort and host. */
    ListenFlags listen;
    /** Node i's port of a listener: that listener's base + portOffset * i. */
    std::int64_t portOffset = kPortsPerNode;
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

std::int64_t basePortOf(const TestnetPlan& plan, Listener listener) {
    const std::int64_t given = listener == Listener::kP2p       ? plan.listen.p2pPort
                               : listener == Listener::kRpc     ? plan.listen.rpcPort
                               : listener == Listener::kMetrics ? plan.listen.metricsPort
                                                                : plan.listen.adminPort;
    return given != -1 ? given : plan.basePort + static_cast<std::int64_t>(listener);
}

/** Node `node`'s port of `listener`; may be out of range before checkArguments. */
std::int64_t rawPortOf(const TestnetPlan& plan, std::size_t node, Listener listener) {
    return basePortOf(plan, listener) + plan.portOffset * static_cast<std::int64_t>(node);
}

std::uint16_t portOf(const TestnetPlan& plan, std::size_t node, Listener listener) {
    return static_cast<std::uint16_t>(rawPortOf(plan, node, listener));
}

/** The address node `node`'s peers dial it at. */
const std::string& hostOf(const TestnetPlan& plan, std::size_t node) {
    return plan.hostnames.empty() ? plan.host : plan.hostnames[node];
}

/** The address a listener binds: its flag, else the host, else (with host names) any. */
std::string listenAddressOf(const TestnetPlan& plan, const std::string& flag) {
    if (!flag.empty()) {
        return flag;
    }
    return plan.hostnames.empty() ? plan.host : "0.0.0.0";
}

/**
 * The ports in range, and no two listeners on one port where they share a machine: every node's
 * when all run on the host, each node's own when each has a host name of its own.
 */
Status checkPorts(const TestnetPlan& plan, std::int64_t nodes) {
    std::set<std::int64_t> taken;
    for (std::int64_t node = 0; node < nodes; ++node) {
        if (!plan.hostnames.empty()) {
            taken.clear();
        }
        for (const Listener listener :
             {Listener::kP2p, Listener::kRpc, Listener::kMetrics, Listener::kAdmin}) {
            const std::int64_t port = rawPortOf(plan, static_cast<std::size_t>(node), listener);
            if (port < 1 || port > 65535) {
                return fail(ErrorCode::kInvalidArgument,
                            "node" + std::to_string(node) + " would listen on port " +
                                std::to_string(port) +
                                ": the base ports and --port-offset must keep every port in "
                                "1..65535");
            }
            if (!taken.insert(port).second) {
                return fail(ErrorCode::kInvalidArgument,
                            "node" + std::to_string(node) + " would share port " +
                                std::to_string(port) +
                                " with another listener on its host: choose base ports and a "
                                "--port-offset that keep them apart");
            }
        }
    }
    return {};
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
    if (plan.portOffset < 0 || plan.portOffset > 65535) {
        return fail(ErrorCode::kInvalidArgument, "--port-offset must be 0..65535");
    }
    GL_TRY(checkListenFlags(plan.listen));
    GL_TRY(checkPorts(plan, nodes));
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(plan.host, ec);
    if (ec || address.is_unspecified()) {
        return fail(ErrorCode::kInvalidArgument,
                    "--host must be an IP address the nodes can reach each other on");
    }
    if (plan.hostnames.empty()) {
        return {};
    }
    if (static_cast<std::int64_t>(plan.hostnames.size()) != nodes) {
        return fail(ErrorCode::kInvalidArgument, "--hostnames must name " + std::to_string(nodes) +
                                                     " hosts, one per node, not " +
                                                     std::to_string(plan.hostnames.size()));
    }
    std::set<std::string> seen;
    for (const auto& name : plan.hostnames) {
        if (!codec::isValidHost(name)) {
            return fail(ErrorCode::kInvalidArgument,
                        "--hostnames: \"" + name + "\" is not a host name or IP address");
        }
        if (!seen.insert(name).second) {
            return fail(ErrorCode::kInvalidArgument, "--hostnames names " + name + " twice");
        }
    }
    return {};
}

/**
 * Node `index`'s config: its listeners and ports, every other node a persistent peer at its host
 * (name), and the full nodes allowed (validators are allowed by the validator set). With host
 * names, the node's JSON-RPC also accepts requests addressed to its own name.
 */
NodeConfig nodeConfig(const TestnetPlan& plan, std::size_t index,
                      const std::vector<contracts::GenesisValidator>& nodes) {
    NodeConfig config;
    config.p2pAddress = listenAddressOf(plan, plan.listen.p2pAddr);
    config.p2pPort = portOf(plan, index, Listener::kP2p);
    config.rpcAddress = listenAddressOf(plan, plan.listen.rpcAddr);
    config.rpcPort = portOf(plan, index, Listener::kRpc);
    config.metricsAddress = listenAddressOf(plan, plan.listen.metricsAddr);
    config.metricsPort = portOf(plan, index, Listener::kMetrics);
    config.keyPassphraseFile = plan.passphraseFile;
    config.keyPassphraseEnv = plan.passphraseEnv;
    config.rpcAdminPort = portOf(plan, index, Listener::kAdmin);
    if (!plan.hostnames.empty()) {
        config.rpcAllowedHosts.push_back(plan.hostnames[index]);
    }
    for (std::size_t peer = 0; peer < nodes.size(); ++peer) {
        if (peer != index) {
            config.persistentPeers.push_back(codec::PeerAddress{
                nodes[peer].nodeId, hostOf(plan, peer), portOf(plan, peer, Listener::kP2p)});
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
    std::cout << " to " << plan.out.string() << " (chain " << plan.genesis.chainId << ")\n"
              << "  home     role       host             p2p    rpc    metrics  node id\n";
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const bool validator = i < static_cast<std::size_t>(plan.validators);
        std::cout << "  " << std::left << std::setw(7) << homeName(i) << "  " << std::setw(9)
                  << (validator ? "validator" : "full node") << "  " << std::setw(15)
                  << hostOf(plan, i) << "  " << std::setw(5) << portOf(plan, i, Listener::kP2p)
                  << "  " << std::setw(5) << portOf(plan, i, Listener::kRpc) << "  " << std::setw(7)
                  << portOf(plan, i, Listener::kMetrics) << "  " << nodes[i].nodeId.hex() << "\n";
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
    std::string hostnames;
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
        "hostnames", po::value(&hostnames),
        "comma-separated host names, one per node (e.g. container names): peers dial node i at "
        "the i-th; the nodes listen on 0.0.0.0 unless an address flag says otherwise")(
        "base-port", po::value(&plan.basePort)->default_value(plan.basePort),
        "node i uses this + 4i (P2P), + 4i+1 (RPC), + 4i+2 (metrics), + 4i+3 (admin RPC)")(
        "port-offset", po::value(&plan.portOffset)->default_value(plan.portOffset),
        "node i's port of each listener is that listener's base + offset * i; 0 with "
        "--hostnames gives every node the same ports")(
        "round-timeout-ms", po::value<std::int64_t>(),
        "consensus round timeout in genesis (default from genesis/dev.json)")(
        "empty-block-interval-ms", po::value<std::int64_t>(),
        "empty-block interval in genesis, below the round timeout (default from genesis/dev.json)")(
        "leader-reputation-window", po::value<std::int64_t>(),
        "leader reputation window in blocks in genesis, 0 (off) to 10000 (default 20)")(
        "encrypt", po::bool_switch(&encrypt),
        "encrypt every home's keys under one passphrase (docs/operations.md)");
    addPassphraseOption(desc, passphraseFile);
    addListenOptions(desc, plan.listen,
                     ": node i's is this + port-offset * i (overrides --base-port)");
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
    if (vm.count("hostnames") != 0) {
        if (!vm["host"].defaulted()) {
            std::cerr << "gridledger testnet: give --host or --hostnames, not both\n";
            return 2;
        }
        std::stringstream list(hostnames);
        for (std::string name; std::getline(list, name, ',');) {
            plan.hostnames.push_back(name);
        }
    }
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
