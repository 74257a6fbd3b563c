#include "cli_options.h"

#include <cstdlib>
#include <tuple>

#include <boost/asio/ip/address.hpp>

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

Result<Endpoint> resolveEndpoint(const std::string& rpcFlag, const Home& home,
                                 const std::string& tokenFileFlag) {
    Endpoint endpoint;
    std::optional<NodeConfig> config;
    if (home.initialised()) {
        if (auto loaded = home.loadConfig()) {
            config = std::move(*loaded);
        }
    }
    if (!rpcFlag.empty()) {
        GL_ASSIGN_OR_RETURN(parsed, parseEndpoint(rpcFlag));
        endpoint = std::move(parsed);
    } else if (config) {
        endpoint = Endpoint{config->rpcAddress, config->rpcPort, {}};
    }
    std::string tokenFile = tokenFileFlag;
    if (const char* envFile = std::getenv("GRIDLEDGER_RPC_TOKEN_FILE");
        tokenFile.empty() && envFile != nullptr) {
        tokenFile = envFile;
    }
    if (!tokenFile.empty()) {
        GL_ASSIGN_OR_RETURN(token, readRpcToken(tokenFile));
        endpoint.token = std::move(token);
    } else if (rpcFlag.empty() && config) {
        // The home's own node: its token, never sent to an endpoint named by --rpc.
        GL_ASSIGN_OR_RETURN(token, home.loadRpcToken(*config));
        endpoint.token = std::move(token);
    }
    return endpoint;
}

void addPassphraseOption(po::options_description& desc, std::string& passphraseFile) {
    desc.add_options()("passphrase-file", po::value(&passphraseFile),
                       "file holding the passphrase of encrypted keys (else "
                       "$GRIDLEDGER_KEY_PASSPHRASE, else a prompt)");
}

Passphrase cliPassphrase(const std::string& passphraseFile) {
    return Passphrase(PassphraseSource{
        .file = passphraseFile,
        .envVar = std::string(kPassphraseEnv),
        .prompt = true,
        .hint = "give --passphrase-file FILE or set " + std::string(kPassphraseEnv)});
}

Result<KeyProtection> cliProtection(bool encrypt, const std::string& passphraseFile) {
    if (!encrypt && passphraseFile.empty()) {
        return KeyProtection{};
    }
    auto passphrase = cliPassphrase(passphraseFile);
    GL_ASSIGN_OR_RETURN(text, passphrase.get("the new keys", true));
    return KeyProtection{.passphrase = text, .kdf = {}};
}

void addListenOptions(po::options_description& desc, ListenFlags& flags,
                      const std::string& portNote) {
    desc.add_options()("rpc-addr", po::value(&flags.rpcAddr),
                       "IP address the JSON-RPC listens on (default 127.0.0.1)")(
        "rpc-port", po::value(&flags.rpcPort), ("JSON-RPC port" + portNote).c_str())(
        "p2p-addr", po::value(&flags.p2pAddr),
        "IP address the P2P listener binds (default 127.0.0.1)")(
        "p2p-port", po::value(&flags.p2pPort), ("P2P port" + portNote).c_str())(
        "metrics-addr", po::value(&flags.metricsAddr),
        "IP address of the Prometheus metrics listener (default 127.0.0.1)")(
        "metrics-port", po::value(&flags.metricsPort), ("metrics port" + portNote).c_str())(
        "admin-port", po::value(&flags.adminPort),
        ("admin RPC port on 127.0.0.1, 0 disables" + portNote).c_str());
}

Status checkListenFlags(const ListenFlags& flags) {
    for (const auto& [name, address] :
         {std::pair{"--rpc-addr", &flags.rpcAddr}, std::pair{"--p2p-addr", &flags.p2pAddr},
          std::pair{"--metrics-addr", &flags.metricsAddr}}) {
        boost::system::error_code ec;
        boost::asio::ip::make_address(*address, ec);
        if (!address->empty() && ec) {
            return fail(ErrorCode::kInvalidArgument, std::string(name) +
                                                         " must be an IP address such as "
                                                         "127.0.0.1 or 0.0.0.0, not \"" +
                                                         *address + "\"");
        }
    }
    for (const auto& [name, port, lowest] :
         {std::tuple{"--rpc-port", flags.rpcPort, 1}, std::tuple{"--p2p-port", flags.p2pPort, 1},
          std::tuple{"--metrics-port", flags.metricsPort, 1},
          std::tuple{"--admin-port", flags.adminPort, 0}}) {
        if (port != -1 && (port < lowest || port > 65535)) {
            return fail(ErrorCode::kInvalidArgument, std::string(name) + " must be " +
                                                         std::to_string(lowest) + "..65535, not " +
                                                         std::to_string(port));
        }
    }
    return {};
}

int reportError(const std::string& command, const Error& error) {
    std::cerr << "gridledger " << command << ": " << error.message << "\n";
    return 1;
}

}  // namespace gridledger::node
