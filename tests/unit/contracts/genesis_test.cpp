// Genesis JSON with the system-contract sections: defaults for absent fields, round trips through
// parseGenesis / genesisToJson, refusals, and what commitGenesis writes to state.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "chain_harness.h"

namespace gridledger::contracts::genesis_test {
namespace {

using testing::addressOf;
using testing::kDps;
using testing::petaflopInventory;
using testing::testKey;

/** A genesis as older files have it: no tokenomics, index, governance, roles or providers. */
std::string minimalJson() {
    return R"({"chain_id":"c","genesis_time_ms":"1000","consensus":{"round_timeout_ms":"1000",
        "empty_block_interval_ms":"500","max_clock_drift_ms":"2000","committee_max":31,
        "max_block_txs":5000,"max_block_bytes":"4194304","max_validity_blocks":"100000"},
        "validators":[{"name":"v0","consensus_key":")" +
           testKey(1).publicKey().hex() +
           R"(","node_id":"0x0101010101010101010101010101010101010101"}],
        "accounts":[]})";
}

std::string withSection(const std::string& json, const std::string& section) {
    std::string out = json;
    out.insert(out.rfind('}'), "," + section);
    return out;
}

TEST(GenesisJson, AbsentSectionsTakeThePapersDefaults) {
    auto g = parseGenesis(minimalJson());
    ASSERT_TRUE(g) << g.error().message;
    // 15 days, 1 hour, 20%, R = 10^10 base units per GFLOP/s, 365 days, 10^6 GFL, 10%.
    EXPECT_EQ(g->tokenomics.epochMs, 1'296'000'000U);
    EXPECT_EQ(g->tokenomics.slotMs, 3'600'000U);
    EXPECT_EQ(g->tokenomics.rewardShareBps, 2'000U);
    EXPECT_EQ(g->tokenomics.rewardRate, 10'000'000'000U);
    EXPECT_EQ(g->tokenomics.halvingPeriodMs, 31'536'000'000U);
    EXPECT_EQ(g->tokenomics.halvingGflThreshold, 1'000'000'000'000U);
    EXPECT_EQ(g->tokenomics.poolShareBps, 1'000U);
    EXPECT_TRUE(g->rewardPool == 0);
    EXPECT_EQ(g->governance.proposalTtlMs, 604'800'000U);  // 7 days
    EXPECT_EQ(g->consensus.blockTimeMs, 0U);               // the proposer's clock
    EXPECT_EQ(g->consensus.leaderReputationWindow, 20U);   // leader reputation on
    ASSERT_EQ(g->powerIndex.categories.size(), 3U);
    EXPECT_EQ(g->powerIndex.categories[0].name, "ml_training");
    EXPECT_TRUE(g->verifiers.empty());
    EXPECT_TRUE(g->providers.empty());
}

TEST(GenesisJson, AValidatorsAccountIsItsOwnOrElseTheConsensusKeysAddress) {
    // Older files: no account, so the consensus key's address.
    auto old = parseGenesis(minimalJson());
    ASSERT_TRUE(old) << old.error().message;
    EXPECT_EQ(old->validators.at(0).account, addressOf(testKey(1)));

    const std::string separate = addressOf(testKey(2)).hex();
    std::string json = minimalJson();
    json.insert(json.find(R"("node_id")"), R"("account":")" + separate + R"(",)");
    auto g = parseGenesis(json);
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->validators.at(0).account.hex(), separate);
    // Written back with the account, and the executor's set votes from it.
    EXPECT_NE(genesisToJson(*g).find(R"("account":")" + separate), std::string::npos);
    testing::Chain chain(*g);
    EXPECT_TRUE(chain.validators().contains(addressOf(testKey(2))));
    EXPECT_FALSE(chain.validators().contains(addressOf(testKey(1))));
}

TEST(GenesisJson, TwoValidatorsWithOneAccountAreRefused) {
    const std::string account = addressOf(testKey(3)).hex();
    const std::string v =
        R"({"name":"NAME","consensus_key":"KEY","node_id":"NODE","account":")" + account + R"("})";
    std::string json = minimalJson();
    const auto begin = json.find(R"("validators":[)") + 14;
    const auto end = json.find(']', begin);
    std::string two;
    for (int i = 1; i <= 2; ++i) {
        std::string entry = v;
        entry.replace(entry.find("NAME"), 4, "v" + std::to_string(i));
        entry.replace(entry.find("KEY"), 3,
                      testKey(static_cast<std::uint8_t>(i)).publicKey().hex());
        entry.replace(entry.find("NODE"), 4, "0x0" + std::to_string(i) + std::string(38, '0'));
        two += (i > 1 ? "," : "") + entry;
    }
    json.replace(begin, end - begin, two);
    const auto g = parseGenesis(json);
    ASSERT_FALSE(g);
    EXPECT_NE(g.error().message.find("duplicate account"), std::string::npos) << g.error().message;
}

TEST(GenesisJson, AbsentFieldsOfAPresentSectionKeepTheirDefaults) {
    auto g = parseGenesis(withSection(
        minimalJson(),
        R"("tokenomics":{"epoch_ms":"10000","slot_ms":"1000","reward_pool":"5000000000000000000"})"));
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->tokenomics.epochMs, 10'000U);
    EXPECT_EQ(g->tokenomics.slotMs, 1'000U);
    EXPECT_EQ(g->tokenomics.rewardShareBps, 2'000U);
    EXPECT_TRUE(g->rewardPool == 5 * kDps);
}

TEST(GenesisJson, EverySectionRoundTrips) {
    auto g = parseGenesis(minimalJson());
    ASSERT_TRUE(g);
    g->tokenomics.epochMs = 20'000;
    g->tokenomics.slotMs = 2'000;
    g->tokenomics.rewardShareBps = 1'500;
    g->tokenomics.halvingGflThreshold = 7;
    g->rewardPool = 3 * kDps + 1;
    g->powerIndex = testing::flatIndex();
    g->powerIndex.greenMaxBonusBps = 500;
    g->governance.proposalTtlMs = 42;
    g->consensus.blockTimeMs = 1'000;
    g->consensus.leaderReputationWindow = 0;
    g->verifiers = {addressOf(testKey(30)), addressOf(testKey(31))};
    auto inventory = petaflopInventory(3);
    inventory.devices[0].features = {"rdma", "tensor_cores"};
    inventory.devices[0].factors = {{"interconnect_bandwidth", 600}};
    inventory.devices[0].powerWatts = 700;
    g->providers = {GenesisProvider{addressOf(testKey(20)), inventory}};
    g->accounts = {GenesisAccount{addressOf(testKey(40)), 9 * kDps}};

    const std::string text = genesisToJson(*g);
    auto back = parseGenesis(text);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(genesisToJson(*back), text);
    EXPECT_EQ(back->tokenomics.epochMs, 20'000U);
    EXPECT_EQ(back->tokenomics.rewardShareBps, 1'500U);
    EXPECT_TRUE(back->rewardPool == 3 * kDps + 1);
    EXPECT_EQ(back->powerIndex.greenMaxBonusBps, 500U);
    EXPECT_EQ(back->powerIndex.categories.size(), 2U);
    EXPECT_EQ(back->governance.proposalTtlMs, 42U);
    EXPECT_EQ(back->consensus.blockTimeMs, 1'000U);
    EXPECT_NE(text.find(R"("block_time_ms":"1000")"), std::string::npos);
    EXPECT_EQ(back->consensus.leaderReputationWindow, 0U);
    EXPECT_EQ(back->verifiers, g->verifiers);
    ASSERT_EQ(back->providers.size(), 1U);
    EXPECT_EQ(back->providers[0].inventory, inventory);
}

TEST(GenesisJson, ALeaderReputationWindowAboveTheLimitIsRefused) {
    std::string json = minimalJson();
    const std::string field = R"("max_validity_blocks":"100000")";
    json.replace(json.find(field), field.size(), field + R"(,"leader_reputation_window":10001)");
    auto refused = parseGenesis(json);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("leader_reputation_window"), std::string::npos);
    json.replace(json.find("10001"), 5, "10000");
    auto accepted = parseGenesis(json);
    ASSERT_TRUE(accepted) << accepted.error().message;
    EXPECT_EQ(accepted->consensus.leaderReputationWindow, 10'000U);
}

TEST(GenesisJson, TheDevTemplateParsesOnceItHasAValidator) {
    // This file is tests/unit/contracts/genesis_test.cpp; the template is genesis/dev.json.
    const auto root =
        std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
    std::ifstream in(root / "genesis" / "dev.json");
    ASSERT_TRUE(in);
    std::stringstream text;
    text << in.rdbuf();
    std::string json = text.str();
    const std::string empty = "\"validators\": []";
    const auto at = json.find(empty);
    ASSERT_NE(at, std::string::npos);
    json.replace(at, empty.size(),
                 "\"validators\": [{\"name\":\"v0\",\"consensus_key\":\"" +
                     testKey(1).publicKey().hex() +
                     "\",\"node_id\":\"0x0101010101010101010101010101010101010101\"}]");
    auto g = parseGenesis(json);
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->tokenomics.epochMs, 1'296'000'000U);
    EXPECT_TRUE(g->rewardPool == 1'000'000 * kDps);
    EXPECT_EQ(genesisToJson(*parseGenesis(genesisToJson(*g))), genesisToJson(*g));
    // The template spells out the same parameters as the code's defaults.
    Genesis defaults = *g;
    defaults.tokenomics = TokenomicsParams{};
    defaults.powerIndex = defaultPowerIndex();
    defaults.governance = GovernanceParams{};
    defaults.stake = StakeParams{};
    defaults.reputation = ReputationParams{};
    EXPECT_EQ(genesisToJson(defaults), genesisToJson(*g));
}

TEST(GenesisJson, BadContractSectionsAreRefusedNamingTheField) {
    const std::vector<std::pair<std::string, std::string>> cases{
        {R"("tokenomics":{"slot_ms":"7"})", "slot"},  // 7 ms does not divide 15 days
        {R"("tokenomics":{"reward_share_bps":10001})", "share"},
        {R"("tokenomics":{"epoch_ms":10000})", "tokenomics.epoch_ms"},  // a number, not a string
        {R"("power_index":{"factors":[]})", "categories"},
        {R"("governance":{"proposal_ttl_ms":"0"})", "proposal_ttl_ms"},
        {R"("stake":{"slash_pool_bps":2000})", "slash_shares"},
        {R"("stake":{"slash_bps":10001})", "slash_bps"},
        {R"("stake":{"unbonding_delay_ms":"1000"})", "unbonding_delay_ms"},
        {R"("stake":{"provider_bond":"x"})", "provider_bond"},
        {R"("reputation":{"prior_jobs":"0"})", "reputation.prior_jobs"},
        {R"("reputation":{"fault_weight":"1000001"})", "reputation.fault_weight"},
        {R"("reputation":{"half_life_epochs":"x"})", "half_life_epochs"},
        {R"("verifiers":["0x12"])", "verifiers"},
        {R"("providers":[{"address":"0x0000000000000000000000000000000000000001","devices":[],"categories":["ml_training"]}])",
         "device"},
        {R"("providers":[{"address":"0x0000000000000000000000000000000000000001","devices":[{"model":"a","count":"1","peak_gflops":"1"}],"categories":["quantum"]}])",
         "quantum"},
    };
    for (const auto& [section, mentions] : cases) {
        SCOPED_TRACE(section);
        auto g = parseGenesis(withSection(minimalJson(), section));
        ASSERT_FALSE(g);
        EXPECT_EQ(g.error().code, ErrorCode::kConfig);
        EXPECT_NE(g.error().message.find(mentions), std::string::npos) << g.error().message;
    }
}

TEST(GenesisJson, BalancesAndPoolBeyond128BitsAreRefused) {
    auto g = parseGenesis(minimalJson());
    ASSERT_TRUE(g);
    g->accounts = {GenesisAccount{addressOf(testKey(40)), ~u128{0}}};
    g->rewardPool = 1;
    auto back = parseGenesis(genesisToJson(*g));
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().code, ErrorCode::kConfig);
}

TEST(GenesisState, CommitGenesisWritesParametersRolesPoolAndAdmittedProviders) {
    auto genesis = testing::shortEpochGenesis(2, 7 * kDps);
    genesis.verifiers = {addressOf(testKey(30))};
    genesis.providers = {GenesisProvider{addressOf(testKey(20)), petaflopInventory(5)}};
    testing::Chain chain(genesis);
    EXPECT_EQ(chain.params().tokenomics.epochMs, testing::kEpochMs);
    EXPECT_EQ(chain.params().genesisTimeMs, testing::kGenesisMs);
    const auto set = chain.validators();
    EXPECT_EQ(set.version, 0U);
    EXPECT_EQ(set.validators.size(), 2U);
    const auto t = chain.tokenomics();
    EXPECT_TRUE(t.emission.rewardPool == 7 * kDps);
    EXPECT_EQ(t.emission.lastHalvingMs, testing::kGenesisMs);
    EXPECT_EQ(t.nextEpoch, 0U);
    EXPECT_EQ(chain.readVerifiers(), std::vector<Address>{addressOf(testKey(30))});
    const auto provider = chain.provider(addressOf(testKey(20)));
    ASSERT_TRUE(provider);
    EXPECT_EQ(provider->status, ProviderStatus::kAdmitted);
    EXPECT_EQ(*readProviderIndex(chain.tree(), 0), std::vector<Address>{addressOf(testKey(20))});
}

}  // namespace
}  // namespace gridledger::contracts::genesis_test
