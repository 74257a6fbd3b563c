// The node's Prometheus endpoint reports what the chain did, under the gridledger_ prefix.

#include <regex>
#include <thread>

#include <gtest/gtest.h>

#include "support/node_process.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger {
namespace {

/** The value of an unlabelled sample `name` in Prometheus text, or -1 when absent. */
double sample(const std::string& text, const std::string& name) {
    std::smatch match;
    if (std::regex_search(text, match, std::regex("\n" + name + " ([0-9.e+]+)\n"))) {
        return std::stod(match[1]);
    }
    return -1;
}

TEST(Metrics, ScrapeShowsTheExecutedHeightAndCommittedBlocks) {
    testing::NodeProcess node;
    node.start();
    std::string text;
    for (int i = 0; i < 100; ++i) {
        rpc::test::HttpTestClient client(node.metricsPort());
        const auto reply = client.get("/metrics");
        ASSERT_FALSE(reply.ec) << reply.ec.message();
        ASSERT_EQ(reply.status, 200U);
        text = reply.body;
        if (sample(text, "gridledger_executed_height") >= 3) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GE(sample(text, "gridledger_executed_height"), 3) << text;
    EXPECT_GE(sample(text, "gridledger_committed_blocks_total"), 3) << text;
    EXPECT_GE(sample(text, "gridledger_consensus_round"), 3) << text;
    EXPECT_EQ(sample(text, "gridledger_failed_txs_total"), 0) << text;
    EXPECT_NE(text.find("gridledger_block_execution_seconds_bucket"), std::string::npos);
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger
