// Epoch settlement driven through real executed blocks (docs/tokenomics.md): the paper's example,
// settlement of several epochs after an idle stretch, the median with missing and challenged
// slots, and a pro-rata payout from a short pool. Every expected value is worked out by hand in
// the comments; none is computed by the code under test.

#include <gtest/gtest.h>

#include "chain_harness.h"

namespace gridledger::contracts::epoch_settlement_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::eventsOf;
using testing::kDps;
using testing::kGenesisMs;
using testing::petaflopInventory;
using testing::petaflops;
using testing::shortEpochGenesis;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;

/** The time inside `slot` of `epoch` (epochs of 10 slots of 1 s). */
constexpr std::uint64_t at(std::uint64_t epoch, std::uint64_t slot) {
    return kT0 + epoch * 10'000 + slot * 1'000 + 500;
}

TEST(EpochSettlement, PaperExampleHundredThenNinetyNinePflopsGiveHundredThenNinetyNineGfl) {
    Chain chain(shortEpochGenesis(1, kDps));  // a pool of 1 DPS
    const auto provider = testKey(50);
    const Address p = addressOf(provider);

    // Epoch 0: register 100 devices of 1 PFLOP/s, governance admits, then 100 PFLOP/s in each of
    // the 10 slots. A slot's value is 100 × 10^6 GFLOP/s (W = 1 in the flat category).
    EXPECT_TRUE(chain.run(kT0 + 100, provider, petaflopInventory(100)).success());
    chain.pass(kT0 + 200, codec::AdmitProvider{p});
    for (std::uint64_t slot = 0; slot < 10; ++slot) {
        const auto r = chain.run(at(0, slot), provider, petaflops(0, slot, 100));
        ASSERT_TRUE(r.success()) << reasonOf(r.code);
        EXPECT_EQ(attr(r.events.at(0), "gflops"), "100000000");
    }
    EXPECT_EQ(chain.tokenomics().nextEpoch, 0U);
    EXPECT_EQ(chain.gfl(p), 0U);

    // The first block of epoch 1 settles epoch 0 before its own transaction: the median is
    // 100 PFLOP/s, the balance before is 0 (nothing burned, nothing paid), so 100 GFL are minted.
    auto first = chain.block(at(1, 0), {chain.tx(provider, petaflops(1, 0, 99))});
    ASSERT_TRUE(first.systemReceipt);
    const auto& e0 = first.systemReceipt->events;
    EXPECT_TRUE(eventsOf(e0, "dps_paid").empty());
    ASSERT_EQ(eventsOf(e0, "gfl_minted").size(), 1U);
    EXPECT_EQ(attr(eventsOf(e0, "gfl_minted")[0], "amount"), "100000000");
    EXPECT_EQ(attr(eventsOf(e0, "provider_settled")[0], "median"), "100000000");
    ASSERT_EQ(eventsOf(e0, "epoch_settled").size(), 1U);
    EXPECT_EQ(attr(eventsOf(e0, "epoch_settled")[0], "gfl_supply"), "100000000");
    EXPECT_TRUE(first.receipts.at(0).success());  // the epoch-1 attestation after the settlement
    EXPECT_EQ(chain.gfl(p), 100 * kGflUnit);      // 100 GFL
    EXPECT_EQ(chain.tokenomics().gflSupply, 100 * kGflUnit);
    EXPECT_EQ(chain.tokenomics().nextEpoch, 1U);

    // Epoch 1: 99 PFLOP/s in every slot.
    for (std::uint64_t slot = 1; slot < 10; ++slot) {
        ASSERT_TRUE(chain.run(at(1, slot), provider, petaflops(1, slot, 99)).success());
    }

    // Settlement of epoch 1: payout burns floor(100 GFL × 2000 / 10000) = 20 GFL = 2·10^7 GFLOP/s
    // and owes 2·10^7 × 10^10 = 2·10^17 base units = 0.2 DPS (n = 0); rebalance from 80 GFL to
    // the median 99 GFL mints 19 GFL. Supply 99 GFL; the pool keeps 1 − 0.2 = 0.8 DPS, plus the
    // fees paid so far.
    auto second = chain.block(at(2, 0), {});
    ASSERT_TRUE(second.systemReceipt);
    const auto& e1 = second.systemReceipt->events;
    const auto burned = eventsOf(e1, "gfl_burned");
    ASSERT_EQ(burned.size(), 1U);
    EXPECT_EQ(attr(burned[0], "amount"), "20000000");
    EXPECT_EQ(attr(burned[0], "reason"), "payout");
    const auto paid = eventsOf(e1, "dps_paid");
    ASSERT_EQ(paid.size(), 1U);
    EXPECT_EQ(attr(paid[0], "owed"), "200000000000000000");
    EXPECT_EQ(attr(paid[0], "paid"), "200000000000000000");
    EXPECT_EQ(attr(paid[0], "shortfall"), "0");
    EXPECT_EQ(attr(eventsOf(e1, "gfl_minted").at(0), "amount"), "19000000");
    EXPECT_EQ(attr(eventsOf(e1, "epoch_settled").at(0), "gfl_supply"), "99000000");
    EXPECT_EQ(attr(eventsOf(e1, "epoch_settled").at(0), "reward_pool"),
              toDecimal(8 * kDps / 10 + chain.feesPaid()));

    EXPECT_EQ(chain.gfl(p), 99 * kGflUnit);  // 99 GFL
    EXPECT_EQ(chain.tokenomics().gflSupply, 99 * kGflUnit);
    EXPECT_EQ(chain.account(p).balance, 2 * kDps / 10 + chain.floatLeft(p));
    EXPECT_EQ(chain.tokenomics().emission.rewardPool, 8 * kDps / 10 + chain.feesPaid());

    const auto record = chain.epochRecord(1);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->boundaryMs, kT0 + 20'000);
    EXPECT_EQ(record->height, chain.height());
    EXPECT_EQ(record->supplyAfter, 99 * kGflUnit);
    EXPECT_EQ(record->payoutBurned, 20 * kGflUnit);
    EXPECT_EQ(record->minted, 19 * kGflUnit);
    EXPECT_EQ(record->paid, 2 * kDps / 10);

    // The system receipt is stored under the block's height and leads the results root.
    auto stored = chain.blocks().systemReceiptAt(chain.height());
    ASSERT_TRUE(stored && *stored);
    EXPECT_EQ(**stored, *second.systemReceipt);
    EXPECT_EQ(stored->value().txHash, systemReceiptHash(chain.height()));
    EXPECT_EQ(second.roots.resultsRoot, Executor::resultsRoot(second.systemReceipt, {}));
    EXPECT_NE(second.roots.resultsRoot, Executor::resultsRoot({}));
}

TEST(EpochSettlement, AnIdleChainSettlesEachEndedEpochOnceInOrderAsOfItsBoundary) {
    auto genesis = shortEpochGenesis(1, 10 * kDps);
    genesis.tokenomics.halvingPeriodMs = 20'000;  // two epochs
    const auto provider = testKey(50);
    const Address p = addressOf(provider);
    genesis.providers.push_back(GenesisProvider{p, petaflopInventory(100)});
    Chain chain(genesis);

    for (std::uint64_t slot = 0; slot < 10; ++slot) {
        ASSERT_TRUE(chain.run(at(0, slot), provider, petaflops(0, slot, 100)).success());
    }
    // Nothing happens until a block at 35 s, in epoch 3. That block settles epochs 0, 1 and 2:
    // - epoch 0 (boundary kT0+10 s): mint 100 GFL;
    // - epoch 1 (boundary kT0+20 s): burn 20 GFL for 0.2 DPS, then the median is 0 (no attestation
    //   in epoch 1): burn the remaining 80 GFL. 20 s since genesis ≥ the 20 s period: halving,
    //   n = 1, at kT0+20 s;
    // - epoch 2 (boundary kT0+30 s): nobody holds GFL or attested: no provider; 10 s since the last
    //   halving: none.
    auto idle = chain.block(kT0 + 35'000, {});
    ASSERT_TRUE(idle.systemReceipt);
    const auto settled = eventsOf(idle.systemReceipt->events, "epoch_settled");
    ASSERT_EQ(settled.size(), 3U);
    EXPECT_EQ(attr(settled[0], "epoch"), "0");
    EXPECT_EQ(attr(settled[0], "boundary_ms"), std::to_string(kT0 + 10'000));
    EXPECT_EQ(attr(settled[0], "gfl_supply"), "100000000");
    EXPECT_EQ(attr(settled[1], "epoch"), "1");
    EXPECT_EQ(attr(settled[1], "boundary_ms"), std::to_string(kT0 + 20'000));
    EXPECT_EQ(attr(settled[1], "gfl_supply"), "0");
    EXPECT_EQ(attr(settled[1], "gfl_payout_burned"), "20000000");
    EXPECT_EQ(attr(settled[1], "gfl_rebalance_burned"), "80000000");
    EXPECT_EQ(attr(settled[1], "halvings"), "1");
    EXPECT_EQ(attr(settled[2], "epoch"), "2");
    EXPECT_EQ(attr(settled[2], "providers"), "0");
    EXPECT_EQ(attr(settled[2], "halvings"), "1");

    const auto halvings = eventsOf(idle.systemReceipt->events, "halving");
    ASSERT_EQ(halvings.size(), 1U);
    EXPECT_EQ(attr(halvings[0], "epoch"), "1");
    EXPECT_EQ(attr(halvings[0], "at_ms"), std::to_string(kT0 + 20'000));
    EXPECT_EQ(attr(halvings[0], "by_period"), "true");
    EXPECT_EQ(attr(halvings[0], "by_threshold"), "false");

    const auto t = chain.tokenomics();
    EXPECT_EQ(t.nextEpoch, 3U);
    EXPECT_EQ(t.gflSupply, 0U);
    EXPECT_EQ(t.emission.halvings, 1U);
    EXPECT_EQ(t.emission.lastHalvingMs, kT0 + 20'000);
    EXPECT_EQ(t.emission.rewardPool, 10 * kDps - 2 * kDps / 10 + chain.feesPaid());
    EXPECT_EQ(chain.account(p).balance, 2 * kDps / 10 + chain.floatLeft(p));

    // Exactly once: a later block in the same epoch settles nothing.
    EXPECT_FALSE(chain.block(kT0 + 36'000, {}).systemReceipt);
    auto none = chain.blocks().systemReceiptAt(chain.height());
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
}

TEST(EpochSettlement, MissingAndChallengedSlotsCountAsZeroInTheLowerMedian) {
    auto genesis = shortEpochGenesis(1, kDps);
    const auto provider = testKey(50);
    const auto verifier = testKey(60);
    const Address p = addressOf(provider);
    genesis.providers.push_back(GenesisProvider{p, petaflopInventory(100)});
    genesis.verifiers.push_back(addressOf(verifier));
    Chain chain(genesis);

    // Slots 0…6 attest 10, 20, …, 70 PFLOP/s; slots 7, 8, 9 are missing.
    for (std::uint64_t slot = 0; slot < 6; ++slot) {
        ASSERT_TRUE(
            chain.run(at(0, slot), provider, petaflops(0, slot, 10 * (slot + 1))).success());
    }
    // Slot 6 (70 PFLOP/s) is attested and challenged by the verifier in the same block.
    codec::Challenge challenge{p, 0, 6, "benchmark hash does not match", Hash256{}};
    auto b = chain.block(at(0, 6),
                         {chain.tx(provider, petaflops(0, 6, 70)), chain.tx(verifier, challenge)});
    ASSERT_TRUE(b.receipts.at(0).success());
    ASSERT_TRUE(b.receipts.at(1).success()) << reasonOf(b.receipts.at(1).code);
    EXPECT_EQ(attr(b.receipts[1].events.at(0), "zeroed_gflops"), "70000000");
    const auto record = readAttestation(chain.tree(), chain.height(), p, 0, 6);
    ASSERT_TRUE(record && *record);
    EXPECT_TRUE((*record)->challenged);
    EXPECT_EQ((*record)->challenger, addressOf(verifier));

    // Slot values 10 20 30 40 50 60 0 0 0 0 sorted: 0 0 0 0 10 20 30 40 50 60; the lower median is
    // the element at ⌊(10−1)/2⌋ = 4: 10 PFLOP/s. (Unchallenged it would have been 20.)
    auto settled = chain.block(at(1, 0), {});
    ASSERT_TRUE(settled.systemReceipt);
    EXPECT_EQ(attr(eventsOf(settled.systemReceipt->events, "provider_settled").at(0), "median"),
              "10000000");
    EXPECT_EQ(chain.gfl(p), 10 * kGflUnit);
}

TEST(EpochSettlement, AShortPoolPaysProRataByLargestRemainderAndRecordsTheShortfall) {
    // A pool of 0.1 DPS = 10^17 base units once the 20 attestations of epoch 0 paid their fees
    // of 1 base unit each.
    auto genesis = shortEpochGenesis(1, kDps / 10 - 20);
    const auto a = testKey(50);
    const auto b = testKey(51);
    genesis.providers.push_back(GenesisProvider{addressOf(a), petaflopInventory(100)});
    genesis.providers.push_back(GenesisProvider{addressOf(b), petaflopInventory(100)});
    Chain chain(genesis);
    // Epoch 0: A 100 PFLOP/s, B 50 PFLOP/s in every slot → 100 GFL and 50 GFL.
    for (std::uint64_t slot = 0; slot < 10; ++slot) {
        auto done = chain.block(at(0, slot), {chain.tx(a, petaflops(0, slot, 100)),
                                              chain.tx(b, petaflops(0, slot, 50))});
        ASSERT_TRUE(done.receipts[0].success() && done.receipts[1].success());
    }
    ASSERT_EQ(chain.feesPaid(), 20U);
    chain.block(at(1, 0), {});
    ASSERT_EQ(chain.gfl(addressOf(a)), 100 * kGflUnit);
    ASSERT_EQ(chain.gfl(addressOf(b)), 50 * kGflUnit);

    // End of epoch 1: A owes 20 GFL → 2·10^17, B 10 GFL → 10^17; Σ 3·10^17 > pool 10^17.
    // A: 2·10^17 × 10^17 / (3·10^17) = 66 666 666 666 666 666 rem 2·10^17;
    // B: 10^17 × 10^17 / (3·10^17) = 33 333 333 333 333 333 rem 10^17;
    // Σ floors = 99 999 999 999 999 999, one base unit left: to the larger remainder, A.
    auto done = chain.block(at(2, 0), {});
    ASSERT_TRUE(done.systemReceipt);
    const auto paid = eventsOf(done.systemReceipt->events, "dps_paid");
    ASSERT_EQ(paid.size(), 2U);
    const bool aFirst = addressOf(a) < addressOf(b);  // events come in ascending address order
    const auto& pa = paid[aFirst ? 0 : 1];
    const auto& pb = paid[aFirst ? 1 : 0];
    EXPECT_EQ(attr(pa, "paid"), "66666666666666667");
    EXPECT_EQ(attr(pa, "shortfall"), "133333333333333333");
    EXPECT_EQ(attr(pb, "paid"), "33333333333333333");
    EXPECT_EQ(attr(pb, "shortfall"), "66666666666666667");
    EXPECT_EQ(chain.account(addressOf(a)).balance,
              u128{66666666666666667ULL} + chain.floatLeft(addressOf(a)));
    EXPECT_EQ(chain.account(addressOf(b)).balance,
              u128{33333333333333333ULL} + chain.floatLeft(addressOf(b)));
    EXPECT_EQ(chain.tokenomics().emission.rewardPool, 0U);
    const auto record = chain.epochRecord(1);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->shortfall, u128{200000000000000000ULL});
}

TEST(EpochSettlement, AThresholdHalvingHalvesTheNextPayoutRate) {
    auto genesis = shortEpochGenesis(1, kDps);
    genesis.tokenomics.halvingGflThreshold = 20 * kGflUnit;  // 20 GFL converted
    const auto provider = testKey(50);
    const Address p = addressOf(provider);
    genesis.providers.push_back(GenesisProvider{p, petaflopInventory(100)});
    Chain chain(genesis);
    // 100 PFLOP/s through epochs 0, 1 and 2.
    for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
        for (std::uint64_t slot = 0; slot < 10; ++slot) {
            ASSERT_TRUE(
                chain.run(at(epoch, slot), provider, petaflops(epoch, slot, 100)).success());
        }
    }
    // The settlements of epochs 0, 1 and 2 ran in the first blocks of epochs 1, 2 and 3; read
    // them back from their system receipts.
    auto receiptAt = [&](std::uint64_t epoch) {
        const auto record = chain.epochRecord(epoch);
        EXPECT_TRUE(record);
        return **chain.blocks().systemReceiptAt(record->height);
    };
    chain.block(at(3, 0), {});
    // Epoch 1: burn 20 GFL, owed 2·10^7 × 10^10 = 2·10^17 at n = 0; the converted counter reaches
    // the 20 GFL threshold (the 365-day period is far): halving by threshold, n = 1.
    const auto e1 = receiptAt(1).events;
    EXPECT_EQ(attr(eventsOf(e1, "dps_paid").at(0), "owed"), "200000000000000000");
    ASSERT_EQ(eventsOf(e1, "halving").size(), 1U);
    EXPECT_EQ(attr(eventsOf(e1, "halving")[0], "by_threshold"), "true");
    EXPECT_EQ(attr(eventsOf(e1, "halving")[0], "by_period"), "false");
    // Epoch 2: the same 20 GFL burned now pays 2·10^17 / 2^1 = 10^17 (0.1 DPS), and halves again.
    const auto e2 = receiptAt(2).events;
    EXPECT_EQ(attr(eventsOf(e2, "dps_paid").at(0), "owed"), "100000000000000000");
    EXPECT_EQ(attr(eventsOf(e2, "halving").at(0), "halvings"), "2");
    EXPECT_EQ(chain.account(p).balance, 3 * kDps / 10 + chain.floatLeft(p));
    EXPECT_EQ(chain.tokenomics().emission.rewardPool, 7 * kDps / 10 + chain.feesPaid());
}

TEST(EpochSettlement, ASettlementThatCannotCompleteLeavesAnEventAndTheChainGoesOn) {
    auto genesis = shortEpochGenesis(1, kDps);
    const auto provider = testKey(50);
    const Address p = addressOf(provider);
    genesis.providers.push_back(GenesisProvider{p, petaflopInventory(100)});
    Chain chain(genesis);
    for (std::uint64_t slot = 0; slot < 10; ++slot) {
        ASSERT_TRUE(chain.run(at(0, slot), provider, petaflops(0, slot, 100)).success());
    }
    // A GFL supply that no longer matches the balances: epoch 0's settlement breaks its own
    // conservation check, as a sum beyond 64 bits would break its arithmetic. Both used to make
    // execution fail, and every node stop at this block on every restart.
    StateLayer state(chain.tree(), chain.height());
    auto tokenomics = *loadTokenomics(state);
    tokenomics.gflSupply = 7;
    storeTokenomics(state, tokenomics);
    codec::BlockHeader header;
    header.height = chain.height() + 1;
    header.timestampMs = at(1, 0);
    const Bytes next = chain.tx(provider, petaflops(1, 0, 100));
    auto done = chain.executor().execute(state, codec::makeBlock(header, {next}), nullptr);
    ASSERT_TRUE(done) << done.error().message;
    ASSERT_TRUE(done->systemReceipt);
    const auto failed = eventsOf(done->systemReceipt->events, "epoch_settlement_failed");
    ASSERT_EQ(failed.size(), 1U);
    EXPECT_EQ(attr(failed[0], "epoch"), "0");
    EXPECT_EQ(attr(failed[0], "reason"), "internal");
    EXPECT_TRUE(eventsOf(done->systemReceipt->events, "gfl_minted").empty())
        << "a failed settlement leaves none of its own events";
    // Nothing of the failed settlement stayed; the epoch counts as passed, and the block's
    // transaction ran after it.
    const auto after = *loadTokenomics(state);
    EXPECT_EQ(after.nextEpoch, 1U);
    EXPECT_EQ(after.gflSupply, 7U);
    EXPECT_EQ(*loadGfl(state, p), 0U);
    EXPECT_TRUE(done->receipts.at(0).success());
}

TEST(EpochSettlement, ADpsTransferNeverMovesGfl) {
    auto genesis = shortEpochGenesis(1, kDps);
    const auto provider = testKey(50);
    const Address p = addressOf(provider);
    genesis.providers.push_back(GenesisProvider{p, petaflopInventory(100)});
    genesis.accounts.push_back(GenesisAccount{p, kDps});
    Chain chain(genesis);
    for (std::uint64_t slot = 0; slot < 10; ++slot) {
        ASSERT_TRUE(chain.run(at(0, slot), provider, petaflops(0, slot, 100)).success());
    }
    chain.block(at(1, 0), {});
    ASSERT_EQ(chain.gfl(p), 100 * kGflUnit);
    // The only transfer payload moves DPS; GFL has none (docs/tokenomics.md).
    const Address other = addressOf(testKey(70));
    ASSERT_TRUE(chain.run(at(1, 1), provider, codec::Transfer{other, kDps / 2}).success());
    EXPECT_EQ(chain.gfl(p), 100 * kGflUnit);
    EXPECT_EQ(chain.gfl(other), 0U);
    EXPECT_EQ(chain.account(other).balance, kDps / 2);
}

}  // namespace
}  // namespace gridledger::contracts::epoch_settlement_test
