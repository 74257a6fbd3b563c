#include <iostream>

#include "cli_options.h"

namespace gridledger::node {
namespace po = boost::program_options;

namespace {

void printKey(const std::string& name, const PubKey& key, bool encrypted) {
    std::cout << name << (encrypted ? " (encrypted)" : "") << "\n  public key  " << key.hex()
              << "\n  address     " << crypto::addressOf(key).hex() << "\n";
}

/** `keys encrypt NAME`: the plain key file rewritten encrypted, in place. */
int encryptKey(const Home& home, const std::string& name, const std::string& passphraseFile) {
    // Refuse before asking for a passphrase twice to no purpose.
    auto encrypted = home.keyEncrypted(name);
    if (!encrypted) {
        return reportError("keys", encrypted.error());
    }
    if (*encrypted) {
        std::cerr << "gridledger keys: key '" << name << "' is encrypted already\n";
        return 1;
    }
    auto protection = cliProtection(true, passphraseFile);
    auto done = protection ? home.encryptKey(name, *protection)
                           : Status(std::unexpected(protection.error()));
    if (!done) {
        return reportError("keys", done.error());
    }
    std::cout << "encrypted " << home.keyFile(name).string() << "\n";
    return 0;
}

}  // namespace

int runKeys(const Args& args) {
    std::string homeFlag;
    std::string action;
    std::string name;
    std::string passphraseFile;
    bool encrypt = false;
    po::options_description desc(
        "gridledger keys new NAME [--encrypt] | show NAME | list | encrypt NAME (NAME 'node' for "
        "the node key)");
    desc.add_options()("action", po::value(&action)->required(), "new, show, list or encrypt")(
        "name", po::value(&name), "key name")(
        "encrypt", po::bool_switch(&encrypt),
        "new: write the key encrypted under a passphrase (docs/operations.md)");
    addPassphraseOption(desc, passphraseFile);
    po::positional_options_description positional;
    positional.add("action", 1).add("name", 1);
    int exitCode = 0;
    if (!parseOptions("keys", desc, positional, args, homeFlag, exitCode)) {
        return exitCode;
    }
    const Home home = Home::resolve(homeFlag);
    if (action == "list") {
        // Public keys only: an encrypted key file keeps its public key in the clear.
        for (const auto& keyName : home.keyNames()) {
            auto key = home.keyPublicKey(keyName);
            if (!key) {
                return reportError("keys", key.error());
            }
            const bool encrypted = home.keyEncrypted(keyName).value_or(false);
            std::cout << keyName << "  " << crypto::addressOf(*key).hex()
                      << (encrypted ? "  encrypted" : "") << "\n";
        }
        return 0;
    }
    if (name.empty() || (action != "new" && action != "show" && action != "encrypt")) {
        std::cerr << desc;
        return 2;
    }
    if (action == "encrypt") {
        return encryptKey(home, name, passphraseFile);
    }
    if (action == "new") {
        auto protection = cliProtection(encrypt, passphraseFile);
        auto key = protection ? home.createKey(name, *protection)
                              : Result<crypto::SecretKey>(std::unexpected(protection.error()));
        if (!key) {
            return reportError("keys", key.error());
        }
        printKey(name, key->publicKey(), protection->passphrase.has_value());
        return 0;
    }
    auto key = home.keyPublicKey(name);
    if (!key) {
        return reportError("keys", key.error());
    }
    printKey(name, *key, home.keyEncrypted(name).value_or(false));
    return 0;
}

}  // namespace gridledger::node
