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

int reportError(const std::string& command, const Error& error) {
    std::cerr << "gridledger " << command << ": " << error.message << "\n";
    return 1;
}

}  // namespace gridledger::node
