#include <cstdint>
#include <cstdlib>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli_options.h"
#include "genesis_builder.h"

namespace gridledger::node {
namespace po = boost::program_options;

namespace {

/**
 * Sets the listeners given on the command line. Without --admin-port, a --rpc-port moves the
 * admin listener to the port after it, so that a second home on the machine needs only its three
 * ports. Fails when two listeners would share a port.
 */
Status applyListenFlags(const ListenFlags& listen, NodeConfig& config) {
    if (!listen.rpcAddr.empty()) {
        config.rpcAddress = listen.rpcAddr;
    }
    if (!listen.p2pAddr.empty()) {
        config.p2pAddress = listen.p2pAddr;
    }
    if (!listen.metricsAddr.empty()) {
        config.metricsAddress = listen.metricsAddr;
    }
    if (listen.rpcPort != -1) {
        config.rpcPort = static_cast<std::uint16_t>(listen.rpcPort);
        if (listen.adminPort == -1) {
            if (listen.rpcPort == 65535) {
                return fail(ErrorCode::kInvalidArgument,
                            "--rpc-port 65535 leaves no port for the admin RPC: give --admin-port");
            }
            config.rpcAdminPort = static_cast<std::uint16_t>(listen.rpcPort + 1);
        }
    }
    if (listen.p2pPort != -1) {
        config.p2pPort = static_cast<std::uint16_t>(listen.p2pPort);
    }
    if (listen.metricsPort != -1) {
        config.metricsPort = static_cast<std::uint16_t>(listen.metricsPort);
    }
    if (listen.adminPort != -1) {
        config.rpcAdminPort = static_cast<std::uint16_t>(listen.adminPort);
    }
    const std::vector<std::pair<std::string, std::uint16_t>> ports{
        {"--rpc-port", config.rpcPort},
        {"--p2p-port", config.p2pPort},
        {"--metrics-port", config.metricsPort},
        {"--admin-port", config.rpcAdminPort}};
    for (std::size_t i = 0; i < ports.size(); ++i) {
        for (std::size_t j = i + 1; j < ports.size(); ++j) {
            if (ports[i].second != 0 && ports[i].second == ports[j].second) {
                return fail(ErrorCode::kInvalidArgument, ports[i].first + " and " + ports[j].first +
                                                             " would both be " +
                                                             std::to_string(ports[i].second));
            }
        }
    }
    return {};
}

}  // namespace

int runInit(const Args& args) {
    std::string homeFlag;
    std::string chainId;
    std::string passphraseFile;
    bool encrypt = false;
    po::options_description desc("gridledger init");
    desc.add_options()("help,h", "show this help")("home", po::value(&homeFlag),
                                                   "node home directory")(
        "chain-id", po::value(&chainId), "chain id of the dev genesis (default gridledger-dev)")(
        "encrypt", po::bool_switch(&encrypt),
        "encrypt the keys under a passphrase (docs/operations.md); without it the keys are plain, "
        "for a dev chain");
    addPassphraseOption(desc, passphraseFile);
    ListenFlags listen;
    addListenOptions(desc, listen,
                     " (defaults: RPC 8545, P2P 26656, metrics 9464, admin the RPC port + 1)");
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
    if (auto checked = checkListenFlags(listen); !checked) {
        std::cerr << "gridledger init: " << checked.error().message << "\n";
        return 2;
    }
    NodeConfig nodeConfig;
    if (auto applied = applyListenFlags(listen, nodeConfig); !applied) {
        std::cerr << "gridledger init: " << applied.error().message << "\n";
        return 2;
    }
    const Home home = Home::resolve(homeFlag);
    if (home.initialised()) {
        std::cerr << "gridledger init: " << home.root().string() << " is already initialised\n";
        return 1;
    }
    DevGenesisOptions options;
    options.chainId = chainId;
    auto protection = cliProtection(encrypt, passphraseFile);
    if (!protection) {
        return reportError("init", protection.error());
    }
    auto validator = createValidatorKeys(home, "validator", *protection);
    auto dev = validator ? home.createKey("dev", *protection) : std::unexpected(validator.error());
    auto genesis = dev ? buildDevGenesis({*validator}, crypto::addressOf(dev->publicKey()), options)
                       : std::unexpected(dev.error());
    auto written = genesis ? writeGenesis(home, *genesis) : std::unexpected(genesis.error());
    if (!passphraseFile.empty()) {
        // The node reads the passphrase where init did, unless the operator changes node.conf.
        nodeConfig.keyPassphraseFile = std::filesystem::absolute(passphraseFile).string();
    } else if (protection->passphrase &&
               std::getenv(std::string(kPassphraseEnv).c_str()) != nullptr) {
        nodeConfig.keyPassphraseEnv = std::string(kPassphraseEnv);
    }
    auto config = written ? home.writeConfig(nodeConfig) : written;
    if (!config) {
        std::cerr << "gridledger init: " << config.error().message << "\n";
        return 1;
    }
    std::cout << "initialised " << home.root().string() << "\n"
              << "  validator key  " << validator->consensusKey.hex() << "\n"
              << "  node id        " << validator->nodeId.hex() << "\n"
              << "  account        " << validator->account.hex()
              << " (key 'validator-account': proposals and votes)\n"
              << "  dev account    " << crypto::addressOf(dev->publicKey()).hex()
              << " (key 'dev', funded in genesis)\n"
              << "  keys           "
              << (protection->passphrase ? "encrypted" : "plain (dev chain only)") << "\n"
              << "  listens on     rpc " << nodeConfig.rpcAddress << ":" << nodeConfig.rpcPort
              << ", p2p " << nodeConfig.p2pAddress << ":" << nodeConfig.p2pPort << ", metrics "
              << nodeConfig.metricsAddress << ":" << nodeConfig.metricsPort
              << ", admin 127.0.0.1:" << nodeConfig.rpcAdminPort << "\n";
    return 0;
}

}  // namespace gridledger::node
