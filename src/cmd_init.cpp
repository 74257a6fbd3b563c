#include <iostream>

#include <boost/program_options.hpp>

#include "commands.h"
#include "genesis_builder.h"
#include "home.h"

namespace gridledger::node {
namespace po = boost::program_options;

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
    DevGenesisOptions options;
    options.chainId = chainId;
    auto validator = createValidatorKeys(home, "validator");
    auto dev = validator ? home.createKey("dev") : std::unexpected(validator.error());
    auto genesis = dev ? buildDevGenesis({*validator}, crypto::addressOf(dev->publicKey()), options)
                       : std::unexpected(dev.error());
    auto written = genesis ? writeGenesis(home, *genesis) : std::unexpected(genesis.error());
    auto config = written ? home.writeDefaultConfig() : written;
    if (!config) {
        std::cerr << "gridledger init: " << config.error().message << "\n";
        return 1;
    }
    std::cout << "initialised " << home.root().string() << "\n"
              << "  validator key  " << validator->consensusKey.hex() << "\n"
              << "  node id        " << validator->nodeId.hex() << "\n"
              << "  dev account    " << crypto::addressOf(dev->publicKey()).hex()
              << " (key 'dev', funded in genesis)\n";
    return 0;
}

}  // namespace gridledger::node
