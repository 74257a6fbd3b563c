// Provider stake through real blocks (docs/tokenomics.md "Provider stake"): registration locks
// the bond, an upheld challenge slashes it (burned, to the challenger, to the pool), a provider
// below the bond or unbonding may neither attest nor take tasks, and an unbonding bond stays
// slashable until the block that releases it. Each refusal with its stable code.

#include <gtest/gtest.h>

#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::stake_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::eventsOf;
using testing::kDps;
using testing::kEpochMs;
using testing::kFeeFloat;
using testing::kGenesisMs;
using testing::petaflopInventory;
using testing::petaflops;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;
const crypto::SecretKey kP1 = testKey(20);        // genesis provider, 3 DPS at genesis
const crypto::SecretKey kNewcomer = testKey(21);  // registers in the tests, 2 DPS
const crypto::SecretKey kPoor = testKey(22);      // only the fee float
const crypto::SecretKey kVerifier = testKey(30);  // the challenger
const crypto::SecretKey kConsumer = testKey(40);  // creates tasks
const crypto::SecretKey kOutsider = testKey(41);  // no role at all
constexpr std::uint64_t kDelayMs = 2 * kEpochMs;  // unbonding delay

Genesis stakeGenesis() {
    Genesis g = testing::shortEpochGenesis(3, kDps);
    g.stake.providerBond = kDps;
    g.stake.slashBps = 1'000;
    g.stake.slashBurnBps = 5'000;
    g.stake.slashChallengerBps = 2'500;
    g.stake.slashPoolBps = 2'500;
    g.stake.unbondingDelayMs = kDelayMs;
    g.verifiers = {addressOf(kVerifier)};
    g.providers = {{addressOf(kP1), petaflopInventory(10)}};
    g.accounts.push_back({addressOf(kP1), 3 * kDps});
    g.accounts.push_back({addressOf(kNewcomer), 2 * kDps});
    g.accounts.push_back({addressOf(kConsumer), kDps});
    return g;
}

class Stake : public ::testing::Test {
  protected:
    Stake() : c(stakeGenesis()) {}

    Provider provider(const crypto::SecretKey& k) { return *c.provider(addressOf(k)); }
    u128 balance(const crypto::SecretKey& k) { return c.account(addressOf(k)).balance; }
    /** k's DPS without its fee float and the fees it paid. */
    u128 net(const crypto::SecretKey& k) { return balance(k) - c.floatLeft(addressOf(k)); }
    u128 pool() { return c.tokenomics().emission.rewardPool - c.feesPaid(); }
    StakeTotals totals() { return *readStakeTotals(c.tree(), c.height()); }

    /** kP1 attests slot `slot` of epoch 0 at kT0 + slot s + 100 ms. */
    codec::Receipt attest(std::uint64_t slot) {
        return c.run(kT0 + slot * 1'000 + 100, kP1, petaflops(0, slot, 10));
    }

    Chain c;
};

TEST_F(Stake, GenesisLocksTheBondOfItsProvidersFromTheirGenesisBalance) {
    EXPECT_TRUE(provider(kP1).bond == kDps);
    EXPECT_EQ(provider(kP1).bondState, BondState::kBonded);
    EXPECT_TRUE(balance(kP1) == 2 * kDps + kFeeFloat);
    EXPECT_TRUE(totals().bonded == kDps);
}

TEST_F(Stake, RegistrationLocksTheBondAndSaysSo) {
    const auto r = c.run(kT0 + 100, kNewcomer, petaflopInventory(5));
    ASSERT_TRUE(r.success()) << reasonOf(r.code);
    const auto locked = eventsOf(r.events, "bond_locked");
    ASSERT_EQ(locked.size(), 1U);
    EXPECT_EQ(attr(locked[0], "amount"), toDecimal(kDps));
    EXPECT_TRUE(provider(kNewcomer).bond == kDps);
    EXPECT_TRUE(net(kNewcomer) == kDps);  // 2 DPS − the bond
    EXPECT_TRUE(totals().bonded == 2 * kDps);
}

TEST_F(Stake, RegistrationThatCannotCoverTheBondIsRefusedAndCostsOnlyTheFee) {
    const auto r = c.run(kT0 + 100, kPoor, petaflopInventory(5));
    EXPECT_EQ(r.code, ErrorCode::kInsufficientBalance);
    EXPECT_FALSE(c.provider(addressOf(kPoor)));
    EXPECT_TRUE(balance(kPoor) == c.floatLeft(addressOf(kPoor)));
    EXPECT_TRUE(totals().bonded == kDps);
}

TEST_F(Stake, AnUpheldChallengeSlashesTenPercentSplitBurnChallengerPool) {
    ASSERT_TRUE(attest(0).success());
    const u128 verifierBefore = net(kVerifier);
    const u128 poolBefore = pool();
    const auto r = c.run(kT0 + 500, kVerifier, codec::Challenge{addressOf(kP1), 0, 0, "", {}});
    ASSERT_TRUE(r.success()) << reasonOf(r.code);
    const auto slashed = eventsOf(r.events, "provider_slashed");
    ASSERT_EQ(slashed.size(), 1U);
    // 10% of 1 DPS = 0.1 DPS: 0.05 burned, 0.025 to the challenger, 0.025 to the pool.
    EXPECT_EQ(attr(slashed[0], "slashed"), toDecimal(kDps / 10));
    EXPECT_EQ(attr(slashed[0], "burned"), toDecimal(kDps / 20));
    EXPECT_EQ(attr(slashed[0], "to_challenger"), toDecimal(kDps / 40));
    EXPECT_EQ(attr(slashed[0], "to_pool"), toDecimal(kDps / 40));
    EXPECT_TRUE(net(kVerifier) == verifierBefore + kDps / 40);
    EXPECT_TRUE(pool() == poolBefore + kDps / 40);
    EXPECT_TRUE(provider(kP1).bond == kDps - kDps / 10);
    EXPECT_TRUE(provider(kP1).slashed == kDps / 10);
    EXPECT_TRUE(totals().bonded == kDps - kDps / 10);
    EXPECT_TRUE(totals().burned == kDps / 20);
}

TEST(StakeSplit, ThePoolTakesTheRoundingRemainderAndTheSplitAddsUp) {
    StakeParams stake;  // 10%, 5000/2500/2500
    const auto split = splitSlash(stake, 12'345);
    ASSERT_TRUE(split);
    EXPECT_TRUE(split->slashed == 1'234);
    EXPECT_TRUE(split->burned == 617);
    EXPECT_TRUE(split->toChallenger == 308);
    EXPECT_TRUE(split->toPool == 309);
    for (const u128 bond : {u128{0}, u128{1}, u128{9'999}, kDps + 7, ~u128{0}}) {
        const auto s = splitSlash(stake, bond);
        ASSERT_TRUE(s);
        EXPECT_TRUE(s->burned + s->toChallenger + s->toPool == s->slashed);
        EXPECT_TRUE(s->slashed <= bond);
    }
}

TEST_F(Stake, BelowTheBondAProviderMayNeitherAttestNorBeMatched) {
    ASSERT_TRUE(attest(0).success());
    ASSERT_TRUE(
        c.run(kT0 + 500, kVerifier, codec::Challenge{addressOf(kP1), 0, 0, "", {}}).success());
    const auto refused = attest(1);
    EXPECT_EQ(refused.code, ErrorCode::kBondTooLow);
    EXPECT_EQ(reasonOf(refused.code), "bond_too_low");
    // Governance raising the bond refuses a provider that held the old one, too.
    Chain other(stakeGenesis());
    other.pass(kT0 + 100, codec::SetParameter{"stake.provider_bond", toDecimal(2 * kDps)});
    EXPECT_EQ(other.run(kT0 + 1'100, kP1, petaflops(0, 1, 10)).code, ErrorCode::kBondTooLow);
}

TEST_F(Stake, MatchingSkipsAProviderBelowTheBond) {
    // kP1 attested slot 1 and then governance raised the bond above it: only its bond keeps it
    // from the task (the next test has the same task assigned when the bond is kept).
    ASSERT_TRUE(attest(1).success());
    c.pass(kT0 + 1'150, codec::SetParameter{"stake.provider_bond", toDecimal(2 * kDps)});
    const auto created =
        c.run(kT0 + 1'200, kConsumer, codec::TaskCreate{"flat", 1'000'000, {}, 1, {}});
    ASSERT_TRUE(created.success()) << reasonOf(created.code);
    const Hash256 id = *Hash256::fromHex(created.events.at(0).attributes.at(0).second);
    c.block(kT0 + 1'300, {});
    EXPECT_EQ((*readTask(c.tree(), c.height(), id))->state, TaskState::kPending);
}

TEST_F(Stake, AnAssignedProviderThatUnbondsMayNotStartTheTask) {
    ASSERT_TRUE(attest(1).success());
    const auto created =
        c.run(kT0 + 1'200, kConsumer, codec::TaskCreate{"flat", 1'000'000, {}, 1, {}});
    ASSERT_TRUE(created.success()) << reasonOf(created.code);
    const Hash256 id = *Hash256::fromHex(created.events.at(0).attributes.at(0).second);
    c.block(kT0 + 1'300, {});
    ASSERT_EQ((*readTask(c.tree(), c.height(), id))->state, TaskState::kAssigned);
    ASSERT_TRUE(c.run(kT0 + 1'400, kP1, codec::ProviderUnbond{}).success());
    const auto start = c.run(kT0 + 1'500, kP1, codec::TaskStart{id});
    EXPECT_EQ(start.code, ErrorCode::kProviderUnbonding);
    EXPECT_EQ(reasonOf(start.code), "provider_unbonding");
}

TEST_F(Stake, UnbondingStopsAttestingAtOnceAndReleasesTheBondAfterTheDelay) {
    const auto r = c.run(kT0 + 100, kP1, codec::ProviderUnbond{});
    ASSERT_TRUE(r.success()) << reasonOf(r.code);
    ASSERT_EQ(r.events.at(0).kind, "unbond_requested");
    EXPECT_EQ(attr(r.events[0], "release_ms"), std::to_string(kT0 + 100 + kDelayMs));
    EXPECT_EQ(provider(kP1).bondState, BondState::kUnbonding);
    EXPECT_EQ(attest(1).code, ErrorCode::kProviderUnbonding);
    EXPECT_EQ(c.run(kT0 + 1'200, kP1, codec::ProviderUnbond{}).code, ErrorCode::kProviderUnbonding);
    const u128 before = balance(kP1);
    // One millisecond early: nothing.
    auto early = c.block(kT0 + 100 + kDelayMs - 1, {});
    EXPECT_FALSE(early.systemReceipt &&
                 !eventsOf(early.systemReceipt->events, "bond_released").empty());
    EXPECT_TRUE(provider(kP1).bond == kDps);
    auto due = c.block(kT0 + 100 + kDelayMs, {});
    ASSERT_TRUE(due.systemReceipt);
    const auto released = eventsOf(due.systemReceipt->events, "bond_released");
    ASSERT_EQ(released.size(), 1U);
    EXPECT_EQ(attr(released[0], "amount"), toDecimal(kDps));
    EXPECT_TRUE(balance(kP1) == before + kDps);
    EXPECT_TRUE(provider(kP1).bond == 0);
    EXPECT_EQ(provider(kP1).bondState, BondState::kReleased);
    EXPECT_TRUE(totals().bonded == 0);
    EXPECT_TRUE(loadUnbonding(StateLayer(c.tree(), c.height()))->empty());
    // Released is final: still no attesting, no second unbond.
    EXPECT_EQ(c.run(kT0 + 100 + kDelayMs + 1'000, kP1, codec::ProviderUnbond{}).code,
              ErrorCode::kProviderUnbonding);
}

TEST_F(Stake, AnUnbondingBondStaysSlashableAndOnlyTheRestIsReleased) {
    ASSERT_TRUE(attest(0).success());
    ASSERT_TRUE(c.run(kT0 + 200, kP1, codec::ProviderUnbond{}).success());
    ASSERT_TRUE(
        c.run(kT0 + 500, kVerifier, codec::Challenge{addressOf(kP1), 0, 0, "", {}}).success());
    EXPECT_TRUE(provider(kP1).bond == kDps - kDps / 10);
    const u128 before = balance(kP1);
    auto due = c.block(kT0 + 200 + kDelayMs, {});
    ASSERT_TRUE(due.systemReceipt);
    const auto released = eventsOf(due.systemReceipt->events, "bond_released");
    ASSERT_EQ(released.size(), 1U);
    EXPECT_EQ(attr(released[0], "amount"), toDecimal(kDps - kDps / 10));
    EXPECT_TRUE(balance(kP1) == before + kDps - kDps / 10);
}

TEST_F(Stake, UnbondBySomeoneWhoIsNotAProviderIsRefused) {
    const auto r = c.run(kT0 + 100, kOutsider, codec::ProviderUnbond{});
    EXPECT_EQ(r.code, ErrorCode::kProviderNotFound);
    EXPECT_TRUE(loadUnbonding(StateLayer(c.tree(), c.height()))->empty());
}

TEST(StakeDisabled, ABondOfZeroLocksNothingAndKeepsProvidersAttesting) {
    Genesis g = testing::shortEpochGenesis(3, 0);
    ASSERT_TRUE(g.stake.providerBond == 0);
    Chain c(g);
    const auto r = c.run(kT0 + 100, kNewcomer, petaflopInventory(5));
    ASSERT_TRUE(r.success());
    EXPECT_TRUE(eventsOf(r.events, "bond_locked").empty());
    EXPECT_TRUE(c.provider(addressOf(kNewcomer))->bond == 0);
    c.pass(kT0 + 200, codec::AdmitProvider{addressOf(kNewcomer)});
    EXPECT_TRUE(c.run(kT0 + 300, kNewcomer, petaflops(0, 0, 5)).success());
}

TEST(StakeParameters, SharesMustSumToTenThousandAtGenesisAndInGovernance) {
    Genesis g = stakeGenesis();
    g.stake.slashPoolBps = 2'000;
    const auto parsed = parseGenesis(genesisToJson(g));
    ASSERT_FALSE(parsed);
    EXPECT_NE(parsed.error().message.find("slash_shares"), std::string::npos);

    const ChainParams p = stakeGenesis().chainParams();
    const auto bad =
        withParameter(p, {"stake.slash_shares", "burn=5000,challenger=2500,pool=2000"});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, ErrorCode::kInvalidProposal);
    EXPECT_FALSE(withParameter(p, {"stake.slash_shares", "pool=2500,burn=5000,challenger=2500"}));
    EXPECT_FALSE(withParameter(p, {"stake.slash_bps", "10001"}));
    EXPECT_FALSE(withParameter(p, {"stake.unbonding_delay_ms", std::to_string(kEpochMs - 1)}));
    EXPECT_FALSE(withParameter(p, {"stake.provider_bond", "-1"}));
    const auto good = withParameter(p, {"stake.slash_shares", "burn=0,challenger=4000,pool=6000"});
    ASSERT_TRUE(good);
    EXPECT_EQ(good->stake.slashChallengerBps, 4'000U);
    EXPECT_EQ(parameterValue(*good, "stake.slash_shares"), "burn=0,challenger=4000,pool=6000");
    EXPECT_EQ(parameterValue(*good, "stake.provider_bond"), toDecimal(kDps));
    // And the parameters survive the state encoding.
    const auto decoded = decodeParams(encodeParams(*good));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->stake, good->stake);
}

TEST(StakeParameters, AGenesisProviderWhoseBalanceCannotCoverTheBondIsAConfigError) {
    Genesis g = stakeGenesis();
    g.stake.providerBond = 4 * kDps;  // kP1 holds 3 DPS + the float
    const auto parsed = parseGenesis(genesisToJson(g));
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.error().code, ErrorCode::kConfig);
    // The stake section round-trips through genesis JSON.
    const auto ok = parseGenesis(genesisToJson(stakeGenesis()));
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->stake, stakeGenesis().stake);
}

}  // namespace
}  // namespace gridledger::contracts::stake_test
