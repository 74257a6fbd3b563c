// `gridledger config check`: every fault of a home that would stop its node from starting, or
// expose its keys, one line each: node.conf's keys and values, the genesis, the key files, and
// the ports the node would listen on.

#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <sys/stat.h>

#include <gridledger/contracts/genesis.h>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

/**
 * The faults of config/node.conf; `config` gets the settings of its lines that parse (the ports
 * and files to check further), unless the file cannot be read.
 */
std::vector<std::string> configFaults(const Home& home, std::optional<NodeConfig>& config) {
    auto text = readFile(home.configFile());
    if (!text) {
        return {home.configFile().string() + ": cannot read the file"};
    }
    auto check = checkConfigText(*text);
    config = std::move(check.config);
    return std::move(check.faults);
}

std::vector<std::string> genesisFaults(const Home& home) {
    auto text = readFile(home.genesisFile());
    if (!text) {
        return {home.genesisFile().string() + ": cannot read the file"};
    }
    if (auto genesis = contracts::parseGenesis(*text); !genesis) {
        return {home.genesisFile().string() + ": " + genesis.error().message};
    }
    return {};
}

/**
 * The key files: keys/ closed to group and others, the validator and node keys present, and
 * every key file a regular file only its owner can read, plain or encrypted, that parses (an
 * encrypted one is not decrypted: no passphrase is asked).
 */
std::vector<std::string> keyFaults(const Home& home) {
    std::vector<std::string> faults;
    const fs::path dir = home.root() / "keys";
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return {dir.string() + ": no keys directory"};
    }
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777U));
        faults.push_back(dir.string() + " is accessible by group or others (mode " + mode +
                         "); run: chmod 700 " + dir.string());
    }
    std::set<std::string> names{std::string(kConsensusKeyName), "node"};
    for (const auto& name : home.keyNames()) {
        names.insert(name);
    }
    for (const auto& name : names) {
        const fs::path path = home.keyFile(name);
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(path, ec))) {
            faults.push_back(path.string() + ": missing (the node needs it to start)");
            continue;
        }
        auto text = readSecretFile(path);
        if (!text) {
            faults.push_back(text.error().message);
            continue;
        }
        if (auto info = inspectKeyFile(*text, name); !info) {
            faults.push_back(path.string() + ": " + info.error().message);
        }
    }
    return faults;
}

/**
 * The files node.conf names: the passphrase file and the RPC token file readable, the explorer
 * directory present.
 */
std::vector<std::string> namedFileFaults(const Home& home, const NodeConfig& config) {
    std::vector<std::string> faults;
    if (!config.keyPassphraseFile.empty()) {
        const fs::path path = home.root() / config.keyPassphraseFile;
        if (!readFile(path)) {
            faults.push_back("keys.passphrase_file: cannot read " + path.string());
        }
    }
    if (auto token = home.loadRpcToken(config); !token) {
        faults.push_back("rpc.auth_token_file: " + token.error().message);
    }
    if (const fs::path dir = home.explorerDir(config); !dir.empty() && !fs::is_directory(dir)) {
        faults.push_back("rpc.explorer_dir: " + dir.string() +
                         " is not a directory (build it with make explorer)");
    }
    return faults;
}

/** Whether a TCP listener can bind address:port now; the error when it cannot. */
std::optional<std::string> bindError(const std::string& address, std::uint16_t port) {
    namespace net = boost::asio;
    net::io_context io;
    net::ip::tcp::acceptor acceptor(io);
    boost::system::error_code ec;
    const auto ip = net::ip::make_address(address, ec);
    if (ec) {
        return std::nullopt;  // reported with node.conf's faults
    }
    const net::ip::tcp::endpoint endpoint(ip, port);
    if (acceptor.open(endpoint.protocol(), ec) ||
        acceptor.set_option(net::socket_base::reuse_address(true), ec) ||
        acceptor.bind(endpoint, ec)) {
        return ec.message();
    }
    return std::nullopt;
}

/** Every listener's port distinct and free to bind on its address. */
std::vector<std::string> portFaults(const NodeConfig& config) {
    struct Listener {
        std::string key;
        std::string address;
        std::uint16_t port;
    };
    std::vector<Listener> listeners{{"rpc.port", config.rpcAddress, config.rpcPort},
                                    {"p2p.port", config.p2pAddress, config.p2pPort},
                                    {"metrics.port", config.metricsAddress, config.metricsPort}};
    if (config.rpcAdminPort != 0) {
        listeners.push_back({"rpc.admin_port", config.rpcAdminAddress, config.rpcAdminPort});
    }
    std::vector<std::string> faults;
    for (std::size_t i = 0; i < listeners.size(); ++i) {
        bool shared = false;
        for (std::size_t j = 0; j < i; ++j) {
            if (listeners[j].port == listeners[i].port) {
                faults.push_back(listeners[j].key + " and " + listeners[i].key + " are both " +
                                 std::to_string(listeners[i].port));
                shared = true;
            }
        }
        if (shared) {
            continue;
        }
        if (auto error = bindError(listeners[i].address, listeners[i].port)) {
            faults.push_back(listeners[i].key + ": cannot listen on " + listeners[i].address + ":" +
                             std::to_string(listeners[i].port) + " (" + *error +
                             "); another process holds the port, or the address is not this "
                             "machine's");
        }
    }
    return faults;
}

int runConfigCheck(const Args& args) {
    std::string homeFlag;
    po::options_description desc("gridledger config check");
    int exitCode = 0;
    if (!parseOptions("config check", desc, {}, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    if (!fs::is_directory(home.root())) {
        std::cout << home.root().string() << ": no such home directory\n";
        return 1;
    }
    std::optional<NodeConfig> config;
    std::vector<std::string> faults = configFaults(home, config);
    for (auto* more : {&genesisFaults, &keyFaults}) {
        for (auto& fault : more(home)) {
            faults.push_back(std::move(fault));
        }
    }
    if (config) {
        for (auto& fault : namedFileFaults(home, *config)) {
            faults.push_back(std::move(fault));
        }
        for (auto& fault : portFaults(*config)) {
            faults.push_back(std::move(fault));
        }
    }
    for (const auto& fault : faults) {
        std::cout << fault << "\n";
    }
    if (!faults.empty()) {
        std::cout << faults.size() << (faults.size() == 1 ? " fault" : " faults") << " in "
                  << home.root().string() << "\n";
        return 1;
    }
    std::cout << "OK " << home.root().string() << "\n";
    return 0;
}

}  // namespace

int runConfig(const Args& args) {
    if (!args.empty() && args[0] == "check") {
        return runConfigCheck(Args(args.begin() + 1, args.end()));
    }
    std::cerr << "usage: gridledger config check [--home DIR]\n"
              << "  check: validate the home (node.conf keys and values, genesis, key files, "
                 "free ports);\n"
              << "         prints each fault on a line and exits 1, else prints OK\n";
    return args.empty() || args[0] == "--help" || args[0] == "-h" ? 0 : 2;
}

}  // namespace gridledger::node
