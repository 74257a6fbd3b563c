// The old method names (docs/rpc.md, "Method names"): each answers exactly as its method, on a
// real executed chain, for good params and for bad ones, and the public listener keeps the old
// name of an admin method to itself as it does the new one.

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <gridledger/ledger/mempool.h>
#include <gridledger/rpc/openrpc.h>

#include "unit/contracts/chain_harness.h"

namespace gridledger::rpc::method_aliases_test {
namespace {

using contracts::testing::addressOf;
using contracts::testing::Chain;
using contracts::testing::kDps;
using contracts::testing::kGenesisMs;
using contracts::testing::petaflopInventory;
using contracts::testing::petaflops;
using contracts::testing::testKey;
namespace json = boost::json;

class MethodAliases : public ::testing::Test {
  protected:
    void SetUp() override {
        chain_ = std::make_unique<Chain>(contracts::testing::shortEpochGenesis(1, kDps));
        const auto provider = testKey(50);
        provider_ = addressOf(provider).hex();
        chain_->run(kGenesisMs + 100, provider, petaflopInventory(100));
        chain_->pass(kGenesisMs + 200, codec::AdmitProvider{addressOf(provider)});
        for (std::uint64_t slot = 0; slot < 10; ++slot) {
            chain_->run(kGenesisMs + slot * 1'000 + 500, provider, petaflops(0, slot, 100));
        }
        chain_->block(kGenesisMs + 10'500, {});  // settles epoch 0
        ledger::MempoolOptions pool;
        pool.chainId = chain_->genesis().chainId;
        mempool_ = std::make_unique<ledger::Mempool>(
            std::move(pool), [](const Address&) { return Result<ledger::AccountView>(); });
        ChainContext ctx;
        ctx.chainId = chain_->genesis().chainId;
        ctx.mempool = mempool_.get();
        ctx.blocks = &chain_->blocks();
        ctx.tree = &chain_->tree();
        ctx.status = [] {
            NodeStatus status;
            status.version = "0.1.0";
            status.round = 7;
            status.peers = 1;
            return status;
        };
        ctx.peers = [] {
            PeerView peer;
            peer.outbound = true;
            peer.address = "127.0.0.1:26656";
            return std::vector<PeerView>{peer};
        };
        ASSERT_TRUE(addNodeMethods(table_, ctx));
    }

    /** The params each method is called with: one good call and one the method refuses. */
    std::map<std::string, std::pair<json::value, json::value>> calls() const {
        const json::value none = json::array{};
        const json::value extra = json::array{"extra"};
        const json::value page = json::object{{"limit", 1}};
        return {
            {"node_getStatus", {none, extra}},
            {"node_getPeers", {none, extra}},
            {"block_get", {json::array{"2"}, json::array{"999999"}}},
            {"block_getRaw", {json::object{{"from", "1"}, {"count", 2}}, json::array{"1", 0}}},
            {"block_list", {page, json::object{{"limit", 0}}}},
            {"proposal_get", {json::array{"0"}, json::array{"99"}}},
            {"proposal_list", {page, json::object{{"cursor", "0x00"}}}},
            {"epoch_get", {json::array{"0"}, json::array{"99"}}},
            {"epoch_list", {page, json::object{{"height", "999999"}}}},
            {"task_list",
             {json::object{{"by", "provider"}, {"key", provider_}},
              json::object{{"by", "colour"}, {"key", "red"}}}},
            {"provider_list", {page, json::object{{"status", "asleep"}}}},
            {"attestation_list", {json::array{provider_, "0"}, json::array{provider_}}},
        };
    }

    Result<json::value> call(std::string_view method, const json::value& params) const {
        const Handler* handler = table_.find(method);
        EXPECT_NE(handler, nullptr) << method;
        return handler == nullptr ? fail(ErrorCode::kNotFound, "no method") : (*handler)(params);
    }

    std::unique_ptr<Chain> chain_;
    std::unique_ptr<ledger::Mempool> mempool_;  // empty: node_getStatus shows its size
    std::string provider_;
    MethodTable table_;
};

TEST_F(MethodAliases, EveryOldNameAnswersExactlyAsItsMethodForGoodAndBadParams) {
    const auto byMethod = calls();
    ASSERT_EQ(byMethod.size(), methodAliases().size());
    for (const MethodAlias& alias : methodAliases()) {
        const auto it = byMethod.find(std::string(alias.name));
        ASSERT_NE(it, byMethod.end()) << "no calls for " << alias.name;
        const auto& [good, bad] = it->second;

        const auto expected = call(alias.name, good);
        const auto answered = call(alias.alias, good);
        ASSERT_TRUE(expected) << alias.name << ": " << expected.error().message;
        ASSERT_TRUE(answered) << alias.alias << ": " << answered.error().message;
        EXPECT_EQ(*answered, *expected) << alias.alias << " differs from " << alias.name;

        const auto refused = call(alias.name, bad);
        const auto refusedToo = call(alias.alias, bad);
        ASSERT_FALSE(refused) << alias.name << " accepted " << json::serialize(bad);
        ASSERT_FALSE(refusedToo) << alias.alias << " accepted " << json::serialize(bad);
        EXPECT_EQ(refusedToo.error().code, refused.error().code) << alias.alias;
        EXPECT_EQ(refusedToo.error().message, refused.error().message) << alias.alias;
    }
}

TEST(MethodAliasTable, OldNamesAreNeitherMethodsNorRepeatedAndEachNamesAServedMethod) {
    MethodTable table;
    ASSERT_TRUE(addNodeMethods(table, ChainContext{}));
    const auto listed = openRpcMethodNames();
    ASSERT_TRUE(listed) << listed.error().message;
    std::set<std::string_view> seen;
    for (const MethodAlias& alias : methodAliases()) {
        EXPECT_TRUE(seen.insert(alias.alias).second) << alias.alias << " is listed twice";
        EXPECT_EQ(std::count(listed->begin(), listed->end(), alias.alias), 0) << alias.alias;
        EXPECT_EQ(std::count(listed->begin(), listed->end(), alias.name), 1) << alias.name;
        EXPECT_NE(table.find(alias.alias), nullptr) << alias.alias;
    }
}

TEST(MethodAliasTable, ThePublicListenerRefusesTheOldNameOfAnAdminMethodLikeTheNewOne) {
    MethodTable publicTable;
    ASSERT_TRUE(addNodeMethods(publicTable, ChainContext{}, Listener::kPublic));
    EXPECT_EQ(publicTable.find("node_getPeers"), nullptr);
    EXPECT_EQ(publicTable.find("node_peers"), nullptr);
    EXPECT_NE(publicTable.find("node_getStatus"), nullptr);
    EXPECT_NE(publicTable.find("node_status"), nullptr);
    const auto adminOnly = withAliases(adminMethodNames());
    EXPECT_EQ(adminOnly, (std::vector<std::string>{"node_getPeers", "node_peers"}));
}

TEST(MethodAliasTable, WithAliasesAddsTheOldNamesOfTheGivenNamesOnly) {
    EXPECT_EQ(withAliases({"tx_get"}), std::vector<std::string>{"tx_get"});
    EXPECT_EQ(withAliases({"task_list", "block_get"}),
              (std::vector<std::string>{"task_list", "block_get", "chain_getBlock", "tasks_list"}));
}

}  // namespace
}  // namespace gridledger::rpc::method_aliases_test
