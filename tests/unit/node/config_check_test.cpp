// checkConfigText: every fault of a node.conf named on its own, and the values of the lines that
// parse kept.

#include <gtest/gtest.h>

#include "home.h"

namespace gridledger::node::config_check_test {
namespace {

bool hasFault(const ConfigCheck& check, const std::string& text) {
    for (const auto& fault : check.faults) {
        if (fault.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

TEST(ConfigCheck, ASoundFileHasNoFaultAndItsValues) {
    const auto check = checkConfigText("[rpc]\nport = 18545\n[log]\nformat = json\n");
    EXPECT_TRUE(check.faults.empty());
    EXPECT_EQ(check.config.rpcPort, 18545);
    EXPECT_EQ(check.config.logFormat, "json");
    EXPECT_EQ(check.config.p2pPort, 26656) << "a key not given keeps its default";
}

TEST(ConfigCheck, NamesEachUnknownKeyAndIllTypedValueWithItsLineAndKeepsTheRest) {
    const auto check = checkConfigText(
        "# comment\n[rpc]\nprot = 1\nport = 70000\nmax_batch = 10\n[mempool]\njournal = maybe\n"
        "[nosuch]\nkey = 1\nnot a pair\n[broken\n");
    EXPECT_TRUE(hasFault(check, "node.conf line 3: unknown key rpc.prot"));
    EXPECT_TRUE(hasFault(check, "node.conf line 4: rpc.port = \"70000\" is not a valid value"));
    EXPECT_TRUE(hasFault(check, "node.conf line 7: mempool.journal = \"maybe\""));
    EXPECT_TRUE(hasFault(check, "node.conf line 9: unknown key nosuch.key"));
    EXPECT_TRUE(hasFault(check, "node.conf line 10: \"not a pair\" is not key = value"));
    EXPECT_TRUE(hasFault(check, "node.conf line 11: malformed section header"));
    EXPECT_EQ(check.faults.size(), 6U);
    EXPECT_EQ(check.config.rpcMaxBatch, 10U) << "a good line among bad ones still counts";
}

TEST(ConfigCheck, NamesValuesThatParseButCannotServe) {
    const auto check = checkConfigText(
        "[rpc]\naddress = localhost\nadmin_address = 10.0.0.1\nnice = 20\n"
        "notify_interval_ms = 10001\n[p2p]\nport = 0\n"
        "persistent_peers = nobody\nsync_batch_blocks = 0\n[log]\nlevel = loud\nformat = yaml\n");
    EXPECT_TRUE(hasFault(check, "rpc.address must be an IP address"));
    EXPECT_TRUE(hasFault(check, "rpc.admin_address must be a loopback address"));
    EXPECT_TRUE(hasFault(check, "rpc.nice must be 0..19, not 20"));
    EXPECT_TRUE(hasFault(check, "rpc.notify_interval_ms must be 0..10000, not 10001"));
    EXPECT_TRUE(hasFault(check, "p2p.port must be 1..65535, not 0"));
    EXPECT_TRUE(hasFault(check, "p2p.persistent_peers: peer 'nobody' is not node_id@host:port"));
    EXPECT_TRUE(hasFault(check, "p2p.sync_batch_blocks must be 1..1024"));
    EXPECT_TRUE(hasFault(check, "log.level must be one of"));
    EXPECT_TRUE(hasFault(check, "log.format must be text or json, not \"yaml\""));
    EXPECT_EQ(check.faults.size(), 9U);
}

TEST(ConfigCheck, AKeyGivenTwiceIsAFault) {
    const auto check = checkConfigText("[rpc]\nport = 1\nport = 2\n");
    ASSERT_EQ(check.faults.size(), 1U);
    EXPECT_NE(check.faults[0].find("rpc.port"), std::string::npos) << check.faults[0];
}

}  // namespace
}  // namespace gridledger::node::config_check_test
