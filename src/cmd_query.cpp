#include <iostream>

#include <boost/json.hpp>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace json = boost::json;

int runQuery(const Args& args) {
    std::string homeFlag;
    std::string what;
    std::string target;
    std::string rpc;
    std::string tokenFile;
    po::options_description desc("gridledger query account ADDRESS|KEY");
    desc.add_options()("what", po::value(&what)->required(), "account")(
        "target", po::value(&target)->required(), "address, or the name of a key in the home")(
        "rpc", po::value(&rpc), "node RPC endpoint host:port")(
        "rpc-token-file", po::value(&tokenFile), "file holding the node's RPC bearer token");
    po::positional_options_description positional;
    positional.add("what", 1).add("target", 1);
    int exitCode = 0;
    if (!parseOptions("query", desc, positional, args, homeFlag, exitCode)) {
        return exitCode;
    }
    if (what != "account") {
        std::cerr << desc;
        return 2;
    }
    const Home home = Home::resolve(homeFlag);
    if (!target.starts_with("0x")) {
        // The public key only: an encrypted key file shows it without the passphrase.
        auto key = home.keyPublicKey(target);
        if (!key) {
            return reportError("query", key.error());
        }
        target = crypto::addressOf(*key).hex();
    }
    auto endpoint = resolveEndpoint(rpc, home, tokenFile);
    auto account = endpoint ? callRpc(*endpoint, "account_get", json::array{json::string(target)})
                            : std::unexpected(endpoint.error());
    if (!account) {
        return reportError("query", account.error());
    }
    std::cout << json::serialize(*account) << "\n";
    return 0;
}

}  // namespace gridledger::node
