// `gridledger export epochs|tasks|providers` against a real node: the formats of empty reports and
// the refusals. The epoch rows themselves are checked by epoch_run_test.cpp.

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "support/node_process.h"

namespace gridledger::export_test {
namespace {

/** Runs `gridledger export ARGS` and returns its exit code and output (stdout and stderr). */
std::pair<int, std::string> exportCli(const testing::NodeProcess& node,
                                      std::vector<std::string> args) {
    args.insert(args.begin(), "export");
    return node.cli(std::move(args));
}

TEST(Export, EmptyReportsAreAHeaderOrAnEmptyArrayAndBadArgumentsAreRefused) {
    testing::NodeProcess node;
    node.start();

    // The dev chain has no task and settles its first 15-day epoch long after this test.
    EXPECT_EQ(exportCli(node, {"tasks", "--format", "csv"}),
              (std::pair<int, std::string>{
                  0,
                  "id,height,consumer,provider,state,category,min_gflops,constraints,"
                  "max_minutes,rate_per_minute,escrow,deposit,created_height,spec_hash,"
                  "result_hash,reported_ms,charged,group,verdict_due_ms,excluded,history,"
                  "spot_check\n"}));
    EXPECT_EQ(exportCli(node, {"tasks", "--format", "json"}),
              (std::pair<int, std::string>{0, "[]\n"}));
    EXPECT_EQ(exportCli(node, {"tasks"}).second.substr(0, 11), "id,height,c");  // csv by default
    // No genesis provider on the dev chain: the providers' header (reputation included) alone.
    EXPECT_EQ(exportCli(node, {"providers", "--format", "csv"}),
              (std::pair<int, std::string>{
                  0,
                  "address,height,status,registered_height,status_height,gfl_balance,bond,"
                  "bond_state,unbond_release_ms,slashed,score,good,faults,reputation_epoch,jobs,"
                  "inventory\n"}));
    EXPECT_EQ(exportCli(node, {"providers", "--format", "json"}),
              (std::pair<int, std::string>{0, "[]\n"}));
    EXPECT_EQ(exportCli(node, {"epochs", "--format", "json"}),
              (std::pair<int, std::string>{0, "[]\n"}));
    EXPECT_EQ(exportCli(node, {"epochs", "--format", "csv"}),
              (std::pair<int, std::string>{
                  0,
                  "epoch,boundary_ms,height,state_root,providers,gfl_supply,gfl_payout_burned,"
                  "gfl_minted,gfl_rebalance_burned,dps_owed,dps_paid,dps_shortfall,halvings,"
                  "halved_by_period,halved_by_threshold,reward_pool,converted_gfl,medians,"
                  "provider_dps_paid\n"}));

    // A usage error exits 2; a node that cannot be reached exits 1 with a message.
    EXPECT_EQ(exportCli(node, {"blocks"}).first, 2);
    EXPECT_EQ(exportCli(node, {"epochs", "--format", "xml"}).first, 2);
    EXPECT_EQ(exportCli(node, {}).first, 2);
    const auto [code, text] =
        exportCli(node, {"epochs", "--rpc", "127.0.0.1:" + std::to_string(testing::freePort())});
    EXPECT_EQ(code, 1);
    EXPECT_NE(text.find("gridledger export: "), std::string::npos) << text;
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger::export_test
