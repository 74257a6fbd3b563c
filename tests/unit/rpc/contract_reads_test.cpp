// The RPC views of the system contracts over a real executed chain: receipts' events rendered
// generically by tx_get, the system receipt on block_get, and the contract read methods.

#include <optional>
#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <gridledger/contracts/tasks.h>
#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/openrpc.h>

#include "unit/contracts/chain_harness.h"
#include "unit/rpc/test_methods.h"

namespace gridledger::rpc::contract_reads_test {
namespace {

using contracts::testing::addressOf;
using contracts::testing::Chain;
using contracts::testing::kDps;
using contracts::testing::kGenesisMs;
using contracts::testing::petaflopInventory;
using contracts::testing::petaflops;
using contracts::testing::testKey;
using test::requestText;
namespace json = boost::json;

class ContractReads : public ::testing::Test {
  protected:
    void SetUp() override {
        auto genesis = contracts::testing::shortEpochGenesis(1, kDps);
        chain_ = std::make_unique<Chain>(genesis);
        const auto provider = testKey(50);
        chain_->run(kGenesisMs + 100, provider, petaflopInventory(100));
        chain_->pass(kGenesisMs + 200, codec::AdmitProvider{addressOf(provider)});
        for (std::uint64_t slot = 0; slot < 10; ++slot) {
            auto r =
                chain_->run(kGenesisMs + slot * 1'000 + 500, provider, petaflops(0, slot, 100));
            attestHash_ = r.txHash;
        }
        chain_->block(kGenesisMs + 10'500, {});  // settles epoch 0
        settledAt_ = chain_->height();
        ChainContext ctx;
        ctx.chainId = chain_->genesis().chainId;
        ctx.blocks = &chain_->blocks();
        ctx.tree = &chain_->tree();
        ASSERT_TRUE(addChainMethods(uncached_, ctx));
        MethodTable uncachedNode;
        ASSERT_TRUE(addNodeMethods(uncachedNode, ctx, Listener::kPublic));
        uncachedNode_.emplace(std::move(uncachedNode), ServerLimits{});
        ctx.blockAnswers = answers_;
        ASSERT_TRUE(addChainMethods(table_, ctx));
        MethodTable node;
        ASSERT_TRUE(addNodeMethods(node, ctx, Listener::kPublic));
        node_.emplace(std::move(node), ServerLimits{});
    }

    json::value call(const std::string& method, const json::value& params) {
        const auto* handler = table_.find(method);
        EXPECT_NE(handler, nullptr) << method;
        auto out = (*handler)(params);
        EXPECT_TRUE(out) << method << ": " << out.error().message;
        return out ? *out : json::value{};
    }

    std::unique_ptr<Chain> chain_;
    std::shared_ptr<BlockAnswers> answers_ = std::make_shared<BlockAnswers>();
    MethodTable table_;
    MethodTable uncached_;                    // the same methods with no kept block answers
    std::optional<Dispatcher> node_;          // a node's public listener, answers kept
    std::optional<Dispatcher> uncachedNode_;  // the same with no kept block answers
    Hash256 attestHash_;
    std::uint64_t settledAt_ = 0;
};

TEST_F(ContractReads, TxGetRendersAContractReceiptsEventsGenerically) {
    const auto tx = call("tx_get", json::array{json::string(attestHash_.hex())});
    const auto& event = tx.at("receipt").at("events").at(0);
    EXPECT_EQ(event.at("kind"), "attestation");
    EXPECT_EQ(event.at("attributes").at("gflops"), "100000000");
    EXPECT_EQ(event.at("attributes").at("slot"), "9");
}

TEST_F(ContractReads, ChainGetBlockShowsTheSystemReceiptOfASettlingBlock) {
    const auto block = call("block_get", json::array{json::string(std::to_string(settledAt_))});
    const auto& system = block.at("system_receipt");
    EXPECT_EQ(system.at("tx_hash").as_string(), contracts::systemReceiptHash(settledAt_).hex());
    bool settled = false;
    for (const auto& e : system.at("events").as_array()) {
        settled = settled || e.at("kind") == "epoch_settled";
    }
    EXPECT_TRUE(settled);
    const auto quiet = call("block_get", json::array{json::string(std::to_string(settledAt_ - 1))});
    EXPECT_FALSE(quiet.as_object().contains("system_receipt"));
}

TEST_F(ContractReads, ChainGetBlockAnswersAgainFromKeptAnswersExactlyAsFromTheStore) {
    int id = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (std::uint64_t height = 1; height <= settledAt_; ++height) {
            for (const bool full : {false, true}) {
                for (const char* method : {"block_get", "chain_getBlock"}) {
                    const std::string params = R"({"height":")" + std::to_string(height) +
                                               R"(","full_txs":)" + (full ? "true" : "false") + "}";
                    const std::string request = requestText(method, params, ++id);
                    const std::optional<std::string> answer = node_->handle(request);
                    ASSERT_TRUE(answer);
                    EXPECT_EQ(answer, uncachedNode_->handle(request)) << request;
                    EXPECT_TRUE(json::parse(*answer).as_object().contains("result")) << *answer;
                }
            }
        }
        // Every executed block is final: each height and form is kept once, read again after.
        EXPECT_EQ(answers_->size(), 2 * settledAt_);
    }
    const auto missing =
        (*table_.find("block_get"))(json::array{json::string(std::to_string(settledAt_ + 1))});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(answers_->size(), 2 * settledAt_);
}

TEST_F(ContractReads, AKeptBlockAnswerIsServedAsItWasKeptToParamsTheMethodAccepts) {
    // What the node serves is the kept text itself, not an answer built again: a stand-in shows it.
    answers_->keep(1, false, R"({"kept":true})");
    const auto resultOf = [&](const std::string& params) {
        const std::optional<std::string> answer =
            node_->handle(requestText("block_get", params, 1));
        EXPECT_TRUE(answer);
        return answer ? json::parse(*answer) : json::value();
    };
    const json::value kept = json::parse(R"({"kept":true})");
    EXPECT_EQ(resultOf(R"(["1"])").at("result"), kept);
    EXPECT_EQ(resultOf(R"({"height":"1","full_txs":false})").at("result"), kept);
    EXPECT_EQ(json::parse(node_->handle(requestText("chain_getBlock", R"(["1"])", 2)).value())
                  .at("result"),
              kept);
    // The other form, a read by id, and params the method refuses are not answered from it.
    EXPECT_NE(resultOf(R"(["1",true])").at("result"), kept);
    const auto* block = uncached_.find("block_get");
    const auto first = (*block)(json::array{json::string("1")});
    ASSERT_TRUE(first);
    EXPECT_NE(
        resultOf(R"({"id":")" + test::textOf(first->at("header").at("id")) + R"("})").at("result"),
        kept);
    EXPECT_EQ(resultOf(R"({"height":"1","extra":1})").at("error").at("code"), kInvalidParams);
    EXPECT_EQ(resultOf(R"({"height":"1","full_txs":"yes"})").at("error").at("code"),
              kInvalidParams);
}

TEST_F(ContractReads, ReadMethodsShowValidatorsProposalsProvidersAndTokenomics) {
    const auto set = call("validator_getSet", json::array{});
    EXPECT_EQ(set.at("version"), "0");
    EXPECT_EQ(set.at("validators").as_array().size(), 1U);

    const auto proposal = call("proposal_get", json::array{json::string("0")});
    EXPECT_EQ(proposal.at("action"), "admit_provider");
    EXPECT_EQ(proposal.at("status"), "passed");
    EXPECT_EQ(proposal.at("yes").as_array().size(), 1U);

    const auto provider =
        call("provider_get", json::array{json::string(addressOf(testKey(50)).hex())});
    EXPECT_EQ(provider.at("status"), "admitted");
    EXPECT_EQ(provider.at("gfl_balance"), "100000000");
    EXPECT_EQ(provider.at("inventory").at("devices").at(0).at("model"), "pf1");

    const auto tokenomics = call("tokenomics_get", json::array{});
    EXPECT_EQ(tokenomics.at("gfl_supply"), "100000000");
    EXPECT_EQ(tokenomics.at("next_epoch"), "1");
    EXPECT_EQ(tokenomics.at("tokenomics").at("epoch_ms"), "10000");

    const auto epoch = call("epoch_get", json::array{json::string("0")});
    EXPECT_EQ(epoch.at("height").as_string(), std::to_string(settledAt_));
    EXPECT_EQ(epoch.at("gfl_minted"), "100000000");

    const auto* handler = table_.find("provider_get");
    auto missing = (*handler)(json::array{json::string(addressOf(testKey(99)).hex())});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::kProviderNotFound);
}

TEST_F(ContractReads, TokenomicsGetShowsTheFeeOfEveryPayloadKindInForce) {
    const auto before = call("tokenomics_get", json::array{}).at("fees").as_object();
    EXPECT_EQ(before.size(), codec::kPayloadKindCount);
    const std::string transferFee(before.at("transfer").as_string());
    // Governance raises one fee; the others stay, and the earlier height still shows the old one.
    const std::uint64_t height = chain_->height();
    chain_->pass(kGenesisMs + 11'000, codec::SetParameter{"fees.task_create", "123456789"});
    const auto after = call("tokenomics_get", json::array{}).at("fees").as_object();
    EXPECT_EQ(after.at("task_create"), "123456789");
    EXPECT_EQ(after.at("transfer").as_string(), transferFee);
    const auto old = call("tokenomics_get", json::array{json::string(std::to_string(height))});
    EXPECT_EQ(old.at("fees").at("task_create"), before.at("task_create"));
    EXPECT_NE(before.at("task_create"), "123456789");
}

TEST_F(ContractReads, ListsOfProposalsEpochsAndBlocksPageToTheEnd) {
    const auto proposals = call("proposal_list", json::object{});
    ASSERT_EQ(proposals.at("items").as_array().size(), 1U);
    EXPECT_EQ(proposals.at("items").at(0), call("proposal_get", json::array{"0"}));
    EXPECT_TRUE(proposals.at("next_cursor").is_null());
    // Before the proposal's block: none.
    const auto before = call("proposal_list", json::object{{"height", "1"}});
    EXPECT_TRUE(before.at("items").as_array().empty());

    const auto epochs = call("epoch_list", json::object{{"limit", 1}});
    ASSERT_EQ(epochs.at("items").as_array().size(), 1U);
    EXPECT_EQ(epochs.at("items").at(0), call("epoch_get", json::array{"0"}));
    EXPECT_TRUE(epochs.at("next_cursor").is_null()) << "one epoch settled, none follows";

    // Every block 1..head, three at a time, each once, in order, all pinned to one height.
    const std::uint64_t head = chain_->height();
    json::object params{{"limit", 3}};
    std::vector<std::uint64_t> heights;
    std::size_t pages = 0;
    while (true) {
        const auto page = call("block_list", params);
        ++pages;
        EXPECT_EQ(page.at("height").as_string(), std::to_string(head));
        for (const auto& item : page.at("items").as_array()) {
            heights.push_back(std::stoull(std::string(item.at("height").as_string())));
            EXPECT_EQ(item.at("header").at("height"), item.at("height"));
        }
        if (page.at("next_cursor").is_null() || pages > 100) {
            break;
        }
        params["cursor"] = page.at("next_cursor");
    }
    ASSERT_EQ(heights.size(), head);
    for (std::uint64_t i = 0; i < head; ++i) {
        EXPECT_EQ(heights[i], i + 1);
    }
    EXPECT_EQ(pages, (head + 2) / 3);

    const auto range = call("block_list", json::object{{"from", "2"}, {"to", "3"}});
    ASSERT_EQ(range.at("items").as_array().size(), 2U);
    EXPECT_EQ(range.at("items").at(1).at("height"), "3");
    EXPECT_TRUE(range.at("next_cursor").is_null());
}

TEST_F(ContractReads, AttestationsListPagesAProvidersSlotsOfAnEpoch) {
    const std::string provider = addressOf(testKey(50)).hex();
    json::object params{{"provider", provider}, {"epoch", "0"}, {"limit", 4}};
    std::vector<std::string> slots;
    std::size_t pages = 0;
    while (true) {
        const auto page = call("attestation_list", params);
        ++pages;
        for (const auto& item : page.at("items").as_array()) {
            slots.emplace_back(item.at("slot").as_string());
            EXPECT_EQ(item.at("provider").as_string(), provider);
            EXPECT_EQ(item.at("gflops"), "100000000");
            EXPECT_EQ(item.at("challenged"), false);
        }
        if (page.at("next_cursor").is_null() || pages > 10) {
            break;
        }
        params["cursor"] = page.at("next_cursor");
    }
    EXPECT_EQ(pages, 3U);  // 4 + 4 + 2 of the 10 slots
    EXPECT_EQ(slots, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
    // Another epoch, and the same epoch before the first attestation: none.
    const auto later = call("attestation_list", json::array{provider, "1"});
    EXPECT_TRUE(later.at("items").as_array().empty());
    const auto before = call("attestation_list", json::array{provider, "0", "1"});
    EXPECT_TRUE(before.at("items").as_array().empty());
}

}  // namespace
}  // namespace gridledger::rpc::contract_reads_test

namespace gridledger::rpc::contract_reads_test {
namespace {

TEST(StakeReads, ProviderGetAndTokenomicsGetShowTheBondItsSlashAndItsUnbonding) {
    auto genesis = contracts::testing::shortEpochGenesis(1, kDps);
    genesis.stake.providerBond = kDps;
    genesis.stake.unbondingDelayMs = 20'000;
    const auto provider = testKey(50);
    const auto verifier = testKey(51);
    genesis.accounts.push_back({addressOf(provider), 2 * kDps});
    genesis.providers = {{addressOf(provider), petaflopInventory(10)}};
    genesis.verifiers = {addressOf(verifier)};
    Chain chain(genesis);
    ASSERT_TRUE(chain.run(kGenesisMs + 100, provider, petaflops(0, 0, 10)).success());
    ASSERT_TRUE(
        chain.run(kGenesisMs + 200, verifier, codec::Challenge{addressOf(provider), 0, 0, "", {}})
            .success());
    ASSERT_TRUE(chain.run(kGenesisMs + 300, provider, codec::ProviderUnbond{}).success());
    ChainContext ctx;
    ctx.chainId = chain.genesis().chainId;
    ctx.blocks = &chain.blocks();
    ctx.tree = &chain.tree();
    MethodTable table;
    ASSERT_TRUE(addChainMethods(table, ctx));
    const auto read = [&](const std::string& method, const json::value& params) {
        auto out = (*table.find(method))(params);
        EXPECT_TRUE(out) << method;
        return out ? *out : json::value{};
    };
    const auto p = read("provider_get", json::array{json::string(addressOf(provider).hex())});
    // 10% of 1 DPS slashed; 0.9 DPS left, released at the request's time + 20 s.
    EXPECT_EQ(p.at("bond"), "900000000000000000");
    EXPECT_EQ(p.at("slashed"), "100000000000000000");
    EXPECT_EQ(p.at("bond_state"), "unbonding");
    EXPECT_EQ(p.at("unbond_release_ms").as_string(), std::to_string(kGenesisMs + 300 + 20'000));
    const auto stake = read("tokenomics_get", json::array{}).at("stake");
    EXPECT_EQ(stake.at("provider_bond"), "1000000000000000000");
    EXPECT_EQ(stake.at("bonded"), "900000000000000000");
    EXPECT_EQ(stake.at("burned"), "50000000000000000");
    EXPECT_EQ(stake.at("slash_bps").to_number<std::uint32_t>(), 1'000U);
    EXPECT_EQ(stake.at("unbonding_delay_ms"), "20000");
}

}  // namespace
}  // namespace gridledger::rpc::contract_reads_test

namespace gridledger::rpc::contract_reads_test {
namespace {

/** A decimal-string field of a JSON answer as a number. */
std::uint64_t u64Of(const json::value& object, std::string_view key) {
    return std::stoull(std::string(object.at(key).as_string()));
}

TEST(ReputationReads, ProviderGetShowsTheDocumentedScoreOfItsRawCountersAtEachHeight) {
    // H = 2, P = 4, F = 4, W = 16 (docs/tokenomics.md "Provider reputation").
    auto genesis = contracts::testing::shortEpochGenesis(1, kDps);
    genesis.reputation = contracts::ReputationParams{2, 4, 4, 16};
    genesis.stake.providerBond = kDps;
    const auto provider = testKey(50);
    const auto verifier = testKey(51);
    const auto consumer = testKey(52);
    genesis.accounts.push_back({addressOf(provider), 2 * kDps});
    genesis.accounts.push_back({addressOf(consumer), 2 * kDps});
    genesis.providers = {{addressOf(provider), petaflopInventory(10)}};
    genesis.verifiers = {addressOf(verifier)};
    Chain chain(genesis);
    const auto G = kGenesisMs;
    const auto newTask = [&](std::uint64_t t) {
        const auto r = chain.run(t, consumer, codec::TaskCreate{"flat", 1'000'000, {}, 10, {}});
        EXPECT_TRUE(r.success());
        return *Hash256::fromHex(r.events.at(0).attributes.at(0).second);
    };
    // Epoch 0: one task refused, one settled, then an upheld challenge.
    ASSERT_TRUE(chain.run(G + 100, provider, petaflops(0, 0, 10)).success());
    const Hash256 refused = newTask(G + 200);
    chain.block(G + 300, {});  // matched
    ASSERT_TRUE(chain.run(G + 400, provider, codec::TaskRefuse{refused}).success());
    ASSERT_TRUE(chain.run(G + 500, consumer, codec::TaskCancel{refused}).success());
    const Hash256 settled = newTask(G + 600);
    chain.block(G + 700, {});  // matched
    ASSERT_TRUE(chain.run(G + 800, provider, codec::TaskStart{settled}).success());
    ASSERT_TRUE(
        chain
            .run(G + 900, provider,
                 codec::TaskSubmitResult{
                     settled, Hash256::fromHex("0x" + std::string(64, 'a')).value(), "", 0, 100})
            .success());
    ASSERT_TRUE(chain.run(G + 1'000, consumer, codec::TaskVerify{settled, true, "", {}}).success());
    ASSERT_TRUE(chain.run(G + 1'100, verifier, codec::Challenge{addressOf(provider), 0, 0, "", {}})
                    .success());
    const std::uint64_t epoch0 = chain.height();
    chain.block(G + 2 * contracts::testing::kEpochMs + 100, {});
    const std::uint64_t epoch2 = chain.height();
    chain.block(G + 4 * contracts::testing::kEpochMs + 100, {});
    const std::uint64_t epoch4 = chain.height();

    ChainContext ctx;
    ctx.chainId = chain.genesis().chainId;
    ctx.blocks = &chain.blocks();
    ctx.tree = &chain.tree();
    MethodTable table;
    ASSERT_TRUE(addChainMethods(table, ctx));
    const auto read = [&](const std::string& method, const json::value& params) {
        auto out = (*table.find(method))(params);
        EXPECT_TRUE(out) << method;
        return out ? *out : json::value{};
    };
    const std::string address = addressOf(provider).hex();
    const std::uint64_t slashes = 1;  // the one upheld challenge above
    for (const auto& [height, epoch] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
             {epoch0, 0}, {epoch2, 2}, {epoch4, 4}}) {
        SCOPED_TRACE(epoch);
        const auto p = read("provider_get", json::array{json::string(address),
                                                        json::string(std::to_string(height))});
        // The formula, by hand, from the raw job counters the answer shows.
        const auto& jobs = p.at("jobs");
        const std::uint64_t good0 = u64Of(jobs, "settled");
        const std::uint64_t faults0 =
            4 * (u64Of(jobs, "refused") + u64Of(jobs, "claim_timeouts") + u64Of(jobs, "rejected") +
                 u64Of(jobs, "failed") + u64Of(jobs, "panicked")) +
            16 * slashes;
        ASSERT_EQ(good0, 1U);
        ASSERT_EQ(faults0, 20U);
        const std::uint64_t halvings = epoch / 2;  // every event was in epoch 0
        const std::uint64_t good = good0 >> halvings;
        const std::uint64_t faults = faults0 >> halvings;
        const auto& reputation = p.at("reputation");
        EXPECT_EQ(u64Of(reputation, "good"), good);
        EXPECT_EQ(u64Of(reputation, "faults"), faults);
        EXPECT_EQ(u64Of(reputation, "epoch"), epoch);
        EXPECT_EQ(u64Of(reputation, "score"), 10'000 * (good + 4) / (good + 4 + faults));
        // provider_list (and so `gridledger export providers`) shows the same reputation.
        const auto list = read("provider_list", json::object{{"height", std::to_string(height)}});
        EXPECT_EQ(list.at("items").at(0).at("reputation"), reputation);
    }
    // 2 000 at epoch 0, 2 857 at epoch 2, 4 444 at epoch 4: the bad history fades.
    const auto head = read("provider_get", json::array{json::string(address)});
    EXPECT_EQ(head.at("reputation").at("score"), "4444");
    const auto params = read("tokenomics_get", json::array{}).at("reputation");
    EXPECT_EQ(params.at("half_life_epochs"), "2");
    EXPECT_EQ(params.at("prior_jobs"), "4");
    EXPECT_EQ(params.at("fault_weight"), "4");
    EXPECT_EQ(params.at("slash_weight"), "16");
}

TEST(CheckedResultReads, TaskGetGroupAndTaskGetShowAGroupItsReplicasAndASpotCheck) {
    auto genesis = contracts::testing::shortEpochGenesis(1, kDps);
    const auto p1 = testKey(50);
    const auto p2 = testKey(53);
    const auto v1 = testKey(51);
    const auto v2 = testKey(54);
    const auto consumer = testKey(52);
    genesis.accounts.push_back({addressOf(consumer), 2 * kDps});
    genesis.accounts.push_back({addressOf(v1), kDps});
    genesis.providers = {{addressOf(p1), petaflopInventory(10)},
                         {addressOf(p2), petaflopInventory(10)}};
    genesis.verifiers = {addressOf(v1), addressOf(v2)};
    std::sort(genesis.verifiers.begin(), genesis.verifiers.end());
    Chain chain(genesis);
    const auto G = kGenesisMs;
    const Hash256 good = *Hash256::fromHex("0x" + std::string(64, 'a'));
    ASSERT_TRUE(chain.run(G + 100, p1, petaflops(0, 0, 10)).success());
    ASSERT_TRUE(chain.run(G + 110, p2, petaflops(0, 0, 10)).success());
    const auto created =
        chain.run(G + 200, consumer, codec::TaskCreate{"flat", 1'000'000, {}, 10, {}, 2});
    ASSERT_TRUE(created.success());
    const Hash256 group = *Hash256::fromHex(created.events.back().attributes.at(0).second);
    chain.block(G + 300, {});  // both replicas matched, one to each provider
    for (std::uint32_t i = 0; i < 2; ++i) {
        const Hash256 id = contracts::replicaIdOf(group, i);
        const auto task = *contracts::readTask(chain.tree(), chain.height(), id);
        const auto& provider = task->provider == addressOf(p1) ? p1 : p2;
        ASSERT_TRUE(chain.run(G + 400 + i, provider, codec::TaskStart{id}).success());
        ASSERT_TRUE(chain.run(G + 500 + i, provider, codec::TaskSubmitResult{id, good, "", 0, 100})
                        .success());
    }
    const Hash256 first = contracts::replicaIdOf(group, 0);
    ASSERT_TRUE(
        chain.run(G + 600, v1, codec::TaskSpotCheck{first, "rerun differs", Hash256{}}).success());

    ChainContext ctx;
    ctx.chainId = chain.genesis().chainId;
    ctx.blocks = &chain.blocks();
    ctx.tree = &chain.tree();
    MethodTable table;
    ASSERT_TRUE(addChainMethods(table, ctx));
    const auto read = [&](const std::string& method, const Hash256& id) {
        auto out = (*table.find(method))(json::array{json::string(id.hex())});
        EXPECT_TRUE(out) << method;
        return out ? *out : json::value{};
    };
    const auto g = read("task_getGroup", group).as_object();
    EXPECT_EQ(g.at("state"), "resolved");
    EXPECT_EQ(g.at("outcome"), "majority");
    EXPECT_EQ(g.at("result_hash"), json::value(good.hex()));
    EXPECT_EQ(g.at("decided_by"), "system");
    EXPECT_EQ(g.at("consumer"), json::value(addressOf(consumer).hex()));
    ASSERT_EQ(g.at("replicas").as_array().size(), 2U);
    for (std::uint32_t i = 0; i < 2; ++i) {
        const auto& r = g.at("replicas").as_array()[i].as_object();
        EXPECT_EQ(r.at("id"), json::value(contracts::replicaIdOf(group, i).hex()));
        EXPECT_EQ(r.at("state"), "settled");
        EXPECT_EQ(r.at("result_hash"), json::value(good.hex()));
    }
    const auto t = read("task_get", first).as_object();
    EXPECT_EQ(t.at("group"), json::value(group.hex()));
    EXPECT_EQ(t.at("state"), "settled");
    EXPECT_EQ(t.at("verdict_due_ms"), "0");
    const auto& check = t.at("spot_check").as_object();
    EXPECT_EQ(check.at("state"), "open");
    EXPECT_EQ(check.at("challenger"), json::value(addressOf(v1).hex()));
    EXPECT_EQ(check.at("reason"), "rerun differs");
    EXPECT_EQ(check.at("decided_by"), "");
    EXPECT_TRUE(read("task_get", contracts::replicaIdOf(group, 1)).at("spot_check").is_null());
    // The group's id is no task: task_get says where to look.
    const auto missing = (*table.find("task_get"))(json::array{json::string(group.hex())});
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("task_getGroup"), std::string::npos);
}
}  // namespace
}  // namespace gridledger::rpc::contract_reads_test
