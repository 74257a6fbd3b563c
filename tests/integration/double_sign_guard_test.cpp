// The start-up guard of a real node: when the chain holds votes of the validator's key that its
// safety data does not account for (safety data restored from an old backup, or another
// instance signing with the same key), the node refuses to start instead of signing again.

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/base/amount.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "consensus_store.h"
#include "support/node_process.h"

namespace gridledger::double_sign_guard_test {
namespace {

/** Replaces the node's persisted safety data (the node must be stopped); returns the old. */
consensus::SafetyData swapSafetyData(const testing::NodeProcess& node,
                                     const consensus::SafetyData& data) {
    auto store = storage::KvStore::open(node.home() / "data" / "chain", ledger::columnNames());
    EXPECT_TRUE(store) << store.error().message;
    const ledger::BlockStore blocks(**store);
    node::ConsensusStore consensus(**store, blocks);
    auto stored = consensus.load();
    EXPECT_TRUE(stored && stored->safety);
    EXPECT_TRUE(consensus.saveSafety(data));
    return *stored->safety;
}

std::uint64_t headHeight(const testing::NodeProcess& node) {
    auto head = node.call("chain_getHead", boost::json::array{});
    return head ? *parseU64(head->at("height").as_string()) : 0;
}

/** Waits (bounded) until the chain is higher than `height`. */
bool growsPast(const testing::NodeProcess& node, std::uint64_t height) {
    for (int i = 0; i < 100; ++i) {
        if (headHeight(node) > height) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

std::string readLog(const testing::NodeProcess& node) {
    std::ifstream in(node.log());
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(DoubleSignGuard, ANodeWhoseChainHoldsVotesItDidNotRecordRefusesToStart) {
    testing::NodeProcess node;
    node.start();
    ASSERT_TRUE(growsPast(node, 4));
    node.stop(SIGTERM);

    const auto recorded = swapSafetyData(node, consensus::SafetyData{1, 0, 0});
    EXPECT_EQ(
        testing::runCommand(node.bin(), {"start", "--home", node.home().string()}, node.log()), 1);
    EXPECT_NE(readLog(node).find("refusing to sign"), std::string::npos) << readLog(node);

    // With its own safety data back, the same node starts and the chain keeps growing.
    (void)swapSafetyData(node, recorded);
    node.start();
    EXPECT_TRUE(growsPast(node, headHeight(node)));
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger::double_sign_guard_test
