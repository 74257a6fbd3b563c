#include <cstdlib>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli_options.h"
#include "genesis_builder.h"

namespace gridledger::node {
namespace po = boost::program_options;

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
    NodeConfig nodeConfig;
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
              << (protection->passphrase ? "encrypted" : "plain (dev chain only)") << "\n";
    return 0;
}

}  // namespace gridledger::node
