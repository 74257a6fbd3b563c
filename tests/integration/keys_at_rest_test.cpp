// Keys at rest through the real CLI: a home made with `init --encrypt` starts with the passphrase
// from node.conf and signs blocks; a wrong or missing passphrase stops `start` with a clear
// message; a dev home with plain keys warns at start (docs/operations.md, "Key files").

#include <chrono>
#include <csignal>
#include <fstream>
#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/node_process.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gridledger::keys_at_rest_test {
namespace {
namespace fs = std::filesystem;

void writeText(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
}

/** node.conf of `home` with its [keys] passphrase_file set to `file`. */
void setPassphraseFile(const fs::path& home, const fs::path& file) {
    const auto config = home / "config" / "node.conf";
    const std::string text = testing::readText(config);
    std::ofstream(config, std::ios::trunc) << std::regex_replace(
        text, std::regex("passphrase_file =[^\n]*"), "passphrase_file = " + file.string());
}

std::uint64_t headHeight(const testing::NodeProcess& node) {
    const auto head = node.call("chain_getHead", boost::json::array{});
    if (!head || !head->is_object() || !head->as_object().contains("height")) {
        return 0;
    }
    const auto& height = head->as_object().at("height");
    return height.is_string() ? std::stoull(std::string(height.as_string()))
                              : height.to_number<std::uint64_t>();
}

/** An encrypted home made by `init --encrypt --passphrase-file`, and its passphrase file. */
class EncryptedHome : public ::testing::Test {
  protected:
    void SetUp() override {
        writeText(passFile_, "correct horse battery staple\n");
        const int code = testing::runCommand(GRIDLEDGER_BIN,
                                             {"init", "--home", home_.string(), "--encrypt",
                                              "--passphrase-file", passFile_.string()},
                                             dir_.path() / "init.out");
        ASSERT_EQ(code, 0) << testing::readText(dir_.path() / "init.out");
    }

    /** Runs `start` on a copy of the home to its end (it must fail); returns code and output. */
    std::pair<int, std::string> startFails(const std::string& shellRedirect = "") {
        const auto out = dir_.path() / "start.out";
        fs::remove(out);
        const int code = testing::runCommand(
            "/bin/sh",
            {"-c", std::string("exec \"$0\" start --home \"$1\" ") + shellRedirect, GRIDLEDGER_BIN,
             home_.string()},
            out);
        return {code, testing::readText(out)};
    }

    testing::TempDir dir_;
    fs::path home_ = dir_.path() / "home";
    fs::path passFile_ = dir_.path() / "pass";
};

TEST_F(EncryptedHome, StartsWithThePassphraseFileOfNodeConfAndCommitsBlocks) {
    EXPECT_NE(testing::readText(home_ / "config" / "node.conf")
                  .find("passphrase_file = " + fs::absolute(passFile_).string()),
              std::string::npos);
    for (const char* name : {"validator", "node", "dev"}) {
        EXPECT_TRUE(testing::readText(home_ / "keys" / (std::string(name) + ".key"))
                        .starts_with("{\"version\":1,"))
            << name;
    }
    testing::NodeProcess node(home_);
    node.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (headHeight(node) < 1 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GE(headHeight(node), 1U);
    const std::string log = testing::readText(node.log());
    EXPECT_EQ(log.find("keys are stored unencrypted"), std::string::npos) << log;

    // The encrypted dev account signs a transfer given the passphrase, and not without it.
    const auto [listCode, listOut] = node.cli({"keys", "list"});
    EXPECT_EQ(listCode, 0);
    EXPECT_TRUE(std::regex_search(listOut, std::regex("dev  0x[0-9a-f]{40}  encrypted")))
        << listOut;
    const auto [txCode, txOut] = node.cli({"tx", "transfer", "--from", "dev", "--to",
                                           "0x00000000000000000000000000000000000000aa", "--amount",
                                           "5", "--wait", "--passphrase-file", passFile_.string()});
    EXPECT_EQ(txCode, 0) << txOut;
    EXPECT_NE(txOut.find("\"success\":true"), std::string::npos) << txOut;
    const fs::path wrong = dir_.path() / "wrong";
    writeText(wrong, "not it\n");
    const auto [badCode, badOut] = node.cli({"tx", "transfer", "--from", "dev", "--to",
                                             "0x00000000000000000000000000000000000000aa",
                                             "--amount", "5", "--passphrase-file", wrong.string()});
    EXPECT_EQ(badCode, 1);
    EXPECT_NE(badOut.find("wrong passphrase for key 'dev'"), std::string::npos) << badOut;
    node.stop(SIGTERM);
}

TEST_F(EncryptedHome, AWrongPassphraseStopsStartWithAClearMessage) {
    const fs::path wrong = dir_.path() / "wrong";
    writeText(wrong, "not the passphrase\n");
    setPassphraseFile(home_, wrong);
    const auto [code, out] = startFails();
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("gridledger start: wrong passphrase for key 'validator'"), std::string::npos)
        << out;
}

TEST_F(EncryptedHome, NoPassphraseSourceAndNoTerminalIsAClearError) {
    setPassphraseFile(home_, "");
    const auto [code, out] = startFails("< /dev/null");
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("no passphrase given for key 'validator': set passphrase_file "
                       "or passphrase_env in [keys]"),
              std::string::npos)
        << out;
}

TEST_F(EncryptedHome, AKeyFileOthersMayReadIsRefused) {
    const auto validator = home_ / "keys" / "validator.key";
    fs::permissions(validator, fs::perms(0644));
    const auto [code, out] = startFails();
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find("run: chmod 600 " + validator.string()), std::string::npos) << out;
}

TEST(PlainKeys, TheDevChainWarnsAtEveryStartThatItsKeysArePlain) {
    testing::NodeProcess node;
    for (int start = 0; start < 2; ++start) {
        node.start();
        node.stop(SIGTERM);
    }
    const std::string log = testing::readText(node.log());
    const std::string warning =
        "keys are stored unencrypted: validator, node (dev chain only; see docs/operations.md)";
    const auto first = log.find(warning);
    ASSERT_NE(first, std::string::npos) << log;
    EXPECT_NE(log.find(warning, first + 1), std::string::npos) << log;

    // Converting both keys silences it, and the node starts with the passphrase.
    testing::TempDir dir;
    const auto pass = dir.path() / "pass";
    writeText(pass, "pw\n");
    for (const char* name : {"validator", "node"}) {
        const auto [code, out] =
            node.cli({"keys", "encrypt", name, "--passphrase-file", pass.string()});
        EXPECT_EQ(code, 0) << out;
    }
    setPassphraseFile(node.home(), pass);
    fs::remove(node.log());
    node.start();
    node.stop(SIGTERM);
    EXPECT_EQ(testing::readText(node.log()).find("keys are stored unencrypted"), std::string::npos);
}

}  // namespace
}  // namespace gridledger::keys_at_rest_test
