// The task read methods (docs/rpc.md, docs/tasks.md): registered, their lists empty on a chain
// without tasks, their refusals stable.

#include <gtest/gtest.h>

#include <gridledger/rpc/chain_methods.h>

#include "unit/contracts/chain_harness.h"

namespace gridledger::rpc::task_reads_test {
namespace {

using contracts::testing::Chain;
using contracts::testing::kDps;
namespace json = boost::json;

TEST(TaskReads, ListsAreEmptyAndAnUnknownTaskIsNotFound) {
    Chain chain(contracts::testing::shortEpochGenesis(1, kDps));
    MethodTable table;
    ChainContext ctx;
    ctx.chainId = chain.genesis().chainId;
    ctx.blocks = &chain.blocks();
    ctx.tree = &chain.tree();
    ASSERT_TRUE(addChainMethods(table, ctx));

    const auto* list = table.find("task_list");
    ASSERT_NE(list, nullptr);
    auto pending = (*list)(json::array{"state", "pending"});
    ASSERT_TRUE(pending) << pending.error().message;
    EXPECT_TRUE(pending->at("items").as_array().empty());
    auto mine = (*list)(json::array{"consumer", Address{}.hex()});
    ASSERT_TRUE(mine) << mine.error().message;
    EXPECT_TRUE(mine->at("items").as_array().empty());
    EXPECT_TRUE(mine->at("next_cursor").is_null());
    auto bogus = (*list)(json::array{"state", "sleeping"});
    ASSERT_FALSE(bogus);
    EXPECT_EQ(bogus.error().code, ErrorCode::kInvalidArgument);

    const auto* get = table.find("task_get");
    ASSERT_NE(get, nullptr);
    auto missing = (*get)(json::array{Hash256{}.hex()});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::kTaskNotFound);
}

}  // namespace
}  // namespace gridledger::rpc::task_reads_test
