// The README's walk-through as a test: a started node, `gridledger keys new`, `tx transfer --wait`
// and `query account`, each a real process of the CLI.

#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "support/node_process.h"

namespace gridledger::cli_test {
namespace {

TEST(Cli, TransferFromTheDevAccountCommitsAndQueryShowsTheBalance) {
    testing::NodeProcess node;
    node.start();

    const auto [newCode, newOut] = node.cli({"keys", "new", "alice"});
    ASSERT_EQ(newCode, 0) << newOut;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(newOut, match, std::regex("address +(0x[0-9a-f]{40})")))
        << newOut;
    const std::string alice = match[1];

    const auto [txCode, txOut] = node.cli(
        {"tx", "transfer", "--from", "dev", "--to", alice, "--amount", "1234567", "--wait"});
    ASSERT_EQ(txCode, 0) << txOut;
    EXPECT_NE(txOut.find("\"status\":\"committed\""), std::string::npos) << txOut;
    EXPECT_NE(txOut.find("\"success\":true"), std::string::npos) << txOut;

    const auto [queryCode, queryOut] = node.cli({"query", "account", "alice"});
    ASSERT_EQ(queryCode, 0) << queryOut;
    EXPECT_NE(queryOut.find("\"balance\":\"1234567\""), std::string::npos) << queryOut;

    const auto [listCode, listOut] = node.cli({"keys", "list"});
    EXPECT_EQ(listCode, 0);
    EXPECT_NE(listOut.find("alice  " + alice), std::string::npos) << listOut;

    // Errors are reported, not crashed on: an unknown key and a malformed address.
    EXPECT_EQ(
        node.cli({"tx", "transfer", "--from", "nobody", "--to", alice, "--amount", "1"}).first, 1);
    EXPECT_EQ(node.cli({"tx", "transfer", "--from", "dev", "--to", "0x12", "--amount", "1"}).first,
              1);
    EXPECT_EQ(node.cli({"frobnicate"}).first, 2);
    node.stop(SIGTERM);
}

TEST(Cli, TheConsensusKeySignsNoTransactionsAndTheAccountKeyGoverns) {
    testing::NodeProcess node;
    node.start();
    const std::string verifier = "0x00000000000000000000000000000000000000ee";
    const auto [refusedCode, refusedOut] =
        node.cli({"tx", "propose", "grant-verifier", "--account", verifier, "--from", "validator"});
    EXPECT_EQ(refusedCode, 1);
    EXPECT_NE(refusedOut.find("'validator' is this home's consensus key, which signs no "
                              "transactions; use the validator's account key "
                              "('validator-account')"),
              std::string::npos)
        << refusedOut;
    const auto [proposeCode, proposeOut] =
        node.cli({"tx", "propose", "grant-verifier", "--account", verifier, "--from",
                  "validator-account", "--wait"});
    ASSERT_EQ(proposeCode, 0) << proposeOut;
    const auto [voteCode, voteOut] =
        node.cli({"tx", "vote", "--proposal", "0", "--from", "validator-account", "--wait"});
    ASSERT_EQ(voteCode, 0) << voteOut;
    EXPECT_NE(voteOut.find("proposal_passed"), std::string::npos) << voteOut;
    node.stop(SIGTERM);
}

TEST(Cli, InitRefusesAnInitialisedHomeAndStartRefusesAnEmptyOne) {
    testing::NodeProcess node;
    EXPECT_EQ(node.cli({"init"}).first, 1);
    testing::TempDir empty;
    const auto out = empty.path() / "out";
    EXPECT_EQ(
        testing::runCommand(node.bin(), {"start", "--home", (empty.path() / "h").string()}, out),
        1);
}

TEST(Cli, KeyFilesAreOwnerOnly) {
    testing::NodeProcess node;
    for (const char* name : {"validator", "validator-account", "node", "dev"}) {
        const auto perms =
            std::filesystem::status(node.home() / "keys" / (std::string(name) + ".key"))
                .permissions();
        EXPECT_EQ(perms & std::filesystem::perms::all,
                  std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
            << name;
    }
}

}  // namespace
}  // namespace gridledger::cli_test
