#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

namespace {

constexpr const char* kUsage = R"(usage: gridledger <command> [options]

commands:
  init                 create a node home with keys, config and the dev genesis
  keys new|show|list|encrypt
                       manage the keys in the home (encrypt: a plain key file in place)
  start                run the node
  testnet              write the homes of an N-validator network (on one machine, or
                       on hosts named by --hostnames, e.g. containers)
  config check         validate a home: node.conf keys and values, genesis, key files,
                       free ports; one line per fault, exit code 1 if any
  tx <payload>         sign and submit a transaction: transfer, propose, vote,
                       register-provider, provider-unbond, attest, challenge (gridledger tx
                       for the list)
  query account        show an account's balance and nonce
  replay               rebuild the state from genesis, checking every certificate and root
  verify-proof         check a state_getProof proof offline against a trusted state root
  export epochs|tasks  write the settled epochs or the tasks as csv or json (--format)
  snapshot export|verify|fetch|import FILE
                       write the state of a certified height as proven chunks (from a
                       stopped node's data), check such a file against the genesis, fetch
                       one from the peers, or start a new home's ledger from it (start
                       --state-sync does the last two at once)
  version              print the version

Every command takes --help; all but testnet take --home DIR (default $GRIDLEDGER_HOME, else
~/.gridledger).
)";

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> all(argv + 1, argv + argc);
    if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
        std::cout << kUsage;
        return all.empty() ? 2 : 0;
    }
    const std::string& command = all[0];
    const std::vector<std::string> args(all.begin() + 1, all.end());
    using namespace gridledger::node;
    if (command == "init") {
        return runInit(args);
    }
    if (command == "keys") {
        return runKeys(args);
    }
    if (command == "start") {
        return runStart(args);
    }
    if (command == "testnet") {
        return runTestnet(args);
    }
    if (command == "tx") {
        return runTx(args);
    }
    if (command == "query") {
        return runQuery(args);
    }
    if (command == "replay") {
        return runReplay(args);
    }
    if (command == "verify-proof") {
        return runVerifyProof(args);
    }
    if (command == "export") {
        return runExport(args);
    }
    if (command == "snapshot") {
        return runSnapshot(args);
    }
    if (command == "config") {
        return runConfig(args);
    }
    if (command == "version") {
        std::cout << "gridledger " << GRIDLEDGER_VERSION << "\n";
        return 0;
    }
    std::cerr << "gridledger: unknown command '" << command << "'\n\n" << kUsage;
    return 2;
}
