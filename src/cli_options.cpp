#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;

std::optional<po::variables_map> parseOptions(const std::string& command,
                                              po::options_description& desc,
                                              const po::positional_options_description& positional,
                                              const Args& args, std::string& homeFlag,
                                              int& exitCode) {
    desc.add_options()("help,h", "show this help")("home", po::value(&homeFlag),
                                                   "node home directory");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
        if (vm.count("help") != 0) {
            std::cout << desc;
            exitCode = 0;
            return std::nullopt;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "gridledger " << command << ": " << e.what() << "\n" << desc;
        exitCode = 2;
        return std::nullopt;
    }
    return vm;
}

Result<Endpoint> resolveEndpoint(const std::string& rpcFlag, const Home& home) {
    if (!rpcFlag.empty()) {
        return parseEndpoint(rpcFlag);
    }
    if (home.initialised()) {
        if (auto config = home.loadConfig()) {
            return Endpoint{config->rpcAddress, config->rpcPort};
        }
    }
    return Endpoint{};
}

int reportError(const std::string& command, const Error& error) {
    std::cerr << "gridledger " << command << ": " << error.message << "\n";
    return 1;
}

}  // namespace gridledger::node
