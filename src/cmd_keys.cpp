#include <iostream>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;

namespace {

void printKey(const std::string& name, const crypto::SecretKey& key) {
    std::cout << name << "\n  public key  " << key.publicKey().hex() << "\n  address     "
              << crypto::addressOf(key.publicKey()).hex() << "\n";
}

}  // namespace

int runKeys(const Args& args) {
    std::string homeFlag;
    std::string action;
    std::string name;
    po::options_description desc("gridledger keys new NAME | show NAME | list");
    desc.add_options()("action", po::value(&action)->required(), "new, show or list")(
        "name", po::value(&name), "key name");
    po::positional_options_description positional;
    positional.add("action", 1).add("name", 1);
    int exitCode = 0;
    if (!parseOptions("keys", desc, positional, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    if (action == "list") {
        for (const auto& keyName : home.keyNames()) {
            auto key = home.loadKey(keyName);
            if (!key) {
                return reportError("keys", key.error());
            }
            std::cout << keyName << "  " << crypto::addressOf(key->publicKey()).hex() << "\n";
        }
        return 0;
    }
    if (name.empty() || (action != "new" && action != "show")) {
        std::cerr << desc;
        return 2;
    }
    auto key = action == "new" ? home.createKey(name) : home.loadKey(name);
    if (!key) {
        return reportError("keys", key.error());
    }
    printKey(name, *key);
    return 0;
}

}  // namespace gridledger::node
