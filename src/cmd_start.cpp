#include <iostream>

#include "cli_options.h"
#include "node.h"

namespace gridledger::node {
namespace po = boost::program_options;

int runStart(const Args& args) {
    std::string homeFlag;
    po::options_description desc("gridledger start");
    int exitCode = 0;
    if (!parseOptions("start", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    if (!home.initialised()) {
        std::cerr << "gridledger start: " << home.root().string()
                  << " has no genesis; run 'gridledger init' first\n";
        return 1;
    }
    auto node = Node::start(home);
    if (!node) {
        return reportError("start", node.error());
    }
    if (auto stopped = (*node)->runUntilSignalled(); !stopped) {
        return reportError("start", stopped.error());
    }
    return 0;
}

}  // namespace gridledger::node
