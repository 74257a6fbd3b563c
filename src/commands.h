#pragma once

// The subcommands of the gridledger program. Each takes the arguments after its name and returns
// the process exit code.

#include <string>
#include <vector>

namespace gridledger::node {

using Args = std::vector<std::string>;

int runInit(const Args& args);
int runKeys(const Args& args);
int runStart(const Args& args);
int runTestnet(const Args& args);
int runTx(const Args& args);
int runQuery(const Args& args);
int runReplay(const Args& args);
int runVerifyProof(const Args& args);
int runExport(const Args& args);
int runConfig(const Args& args);
int runSnapshot(const Args& args);

}  // namespace gridledger::node
