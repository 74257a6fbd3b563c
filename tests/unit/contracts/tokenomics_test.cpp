// Every expected value below is worked out by hand in the comment next to it; none is computed
// by the code under test. Units: GFL amounts and FLOP/s in GFLOP/s (1 GFL = 10^6), DPS in base
// units (1 DPS = 10^18), times in ms (1 day = 86 400 000 ms).

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/contracts/tokenomics.h>

namespace gridledger::contracts::tokenomics_test {
namespace {

constexpr u128 kOneDps = u128{1'000'000'000'000'000'000ULL};
constexpr u128 kMilliDps = u128{1'000'000'000'000'000ULL};  // 0.001 DPS
constexpr std::uint64_t kOneGfl = 1'000'000;
constexpr std::uint64_t kDay = 86'400'000;
constexpr u128 kOne = 1;
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

Address addr(std::uint8_t first) {
    std::array<std::uint8_t, 20> bytes{};
    bytes[0] = first;
    return Address{bytes};
}

// A reference set whose best device has 4000 GB/s of memory bandwidth, 80 GB of memory and
// 900 GB/s of device interconnect.
PowerIndexParams indexParams() {
    PowerIndexParams params;
    params.factors = {
        {"mem_bandwidth_gbps", 4000}, {"mem_capacity_gb", 80}, {"interconnect_gbps", 900}};
    // C = 2.5 × 10^14 base units per PFLOP/s per second = 0.9 DPS per PFLOP/s-hour.
    params.categories = {
        {"ml-training",
         {{"mem_bandwidth_gbps", 5000}, {"mem_capacity_gb", 3000}, {"interconnect_gbps", 2000}},
         u128{250'000'000'000'000ULL}},
        {"inference", {{"mem_bandwidth_gbps", 6000}, {"mem_capacity_gb", 4000}}, u128{0}},
    };
    return params;
}

// A100 80 GB SXM: 312 TFLOP/s dense FP16 tensor, 2039 GB/s, 80 GB, NVLink 600 GB/s.
DeviceSpec a100() {
    return {312'000,
            {{"mem_bandwidth_gbps", 2039}, {"mem_capacity_gb", 80}, {"interconnect_gbps", 600}}};
}

// RTX 4090: 165.2 TFLOP/s dense FP16 tensor (FP32 accumulate), 1008 GB/s, 24 GB, PCIe 4.0 x16
// 32 GB/s.
DeviceSpec rtx4090() {
    return {165'200,
            {{"mem_bandwidth_gbps", 1008}, {"mem_capacity_gb", 24}, {"interconnect_gbps", 32}}};
}

std::vector<SlotSample> everySlot(std::uint64_t slots, std::uint64_t gflops) {
    std::vector<SlotSample> samples;
    for (std::uint64_t s = 0; s < slots; ++s) {
        samples.push_back({s, gflops, false});
    }
    return samples;
}

// ---------------------------------------------------------------------------------------------
// 256-bit mulDiv
// ---------------------------------------------------------------------------------------------

TEST(TokenomicsMulDiv, IsExactBeyond128Bits) {
    // 7 × 5 = 35 = 3 × 11 + 2.
    EXPECT_EQ(mulDiv(7, 5, 3), (MulDiv{11, 2}));
    // 2^100 × 2^100 / 2^90 = 2^110, no remainder.
    EXPECT_EQ(mulDiv(kOne << 100U, kOne << 100U, kOne << 90U), (MulDiv{kOne << 110U, 0}));
    // (2^127 + 1) × 3 = 2^128 + 2^127 + 3 (needs 129 bits); / 2 = 3·2^126 + 1, remainder 1.
    EXPECT_EQ(mulDiv((kOne << 127U) + 1, 3, 2), (MulDiv{3 * (kOne << 126U) + 1, 1}));
}

TEST(TokenomicsMulDiv, RejectsZeroDivisorAndQuotientOverflow) {
    EXPECT_EQ(mulDiv(1, 1, 0).error().code, ErrorCode::kInvalidArgument);
    // 2^127 × 4 / 2 = 2^128: one bit too many.
    EXPECT_EQ(mulDiv(kOne << 127U, 4, 2).error().code, ErrorCode::kOverflow);
}

// ---------------------------------------------------------------------------------------------
// Computational power index
// ---------------------------------------------------------------------------------------------

TEST(TokenomicsIndex, NormalisedFactorRoundsDownAndIsCappedAtOne) {
    EXPECT_EQ(normalisedFactorPpm(2039, 4000).value(), 509'750u);    // 0.50975 exactly
    EXPECT_EQ(normalisedFactorPpm(32, 900).value(), 35'555u);        // 0.0355555… → 35 555
    EXPECT_EQ(normalisedFactorPpm(600, 900).value(), 666'666u);      // 0.6666… → 666 666
    EXPECT_EQ(normalisedFactorPpm(5000, 4000).value(), 1'000'000u);  // min(1.25, 1)
    EXPECT_EQ(normalisedFactorPpm(0, 4000).value(), 0u);
    EXPECT_EQ(normalisedFactorPpm(1, 0).error().code, ErrorCode::kInvalidArgument);
}

TEST(TokenomicsIndex, A100AndRtx4090ForTrainingAndInference) {
    const auto params = indexParams();
    ASSERT_TRUE(params.validate());

    // A100, ml-training: P = 509 750 (2039/4000), 1 000 000 (80/80), 666 666 (600/900).
    // Σ w·P = 5000·509 750 + 3000·1 000 000 + 2000·666 666
    //       = 2 548 750 000 + 3 000 000 000 + 1 333 332 000 = 6 882 082 000 → /10^4 = 688 208.
    EXPECT_EQ(adjustmentRatioPpm(params, "ml-training", a100().factors).value(), 688'208u);
    // 312 000 × 688 208 / 10^6 = 214 720 896 000 / 10^6 = 214 720.896 → 214 720 GFLOP/s.
    EXPECT_EQ(deviceCorrectedGflops(params, "ml-training", a100()).value(), 214'720u);

    // RTX 4090, ml-training: P = 252 000 (1008/4000), 300 000 (24/80), 35 555 (32/900).
    // Σ w·P = 1 260 000 000 + 900 000 000 + 71 110 000 = 2 231 110 000 → 223 111.
    EXPECT_EQ(adjustmentRatioPpm(params, "ml-training", rtx4090().factors).value(), 223'111u);
    // 165 200 × 223 111 = 36 857 937 200 → /10^6 = 36 857.9372 → 36 857 GFLOP/s.
    EXPECT_EQ(deviceCorrectedGflops(params, "ml-training", rtx4090()).value(), 36'857u);

    // Inference weighs only bandwidth (60%) and capacity (40%):
    // A100: 6000·509 750 + 4000·1 000 000 = 7 058 500 000 → 705 850;
    // 312 000 × 0.705850 = 220 225.2 → 220 225.
    EXPECT_EQ(adjustmentRatioPpm(params, "inference", a100().factors).value(), 705'850u);
    EXPECT_EQ(deviceCorrectedGflops(params, "inference", a100()).value(), 220'225u);
    // 4090: 6000·252 000 + 4000·300 000 = 2 712 000 000 → 271 200;
    // 165 200 × 0.2712 = 44 802.24 → 44 802.
    EXPECT_EQ(adjustmentRatioPpm(params, "inference", rtx4090().factors).value(), 271'200u);
    EXPECT_EQ(deviceCorrectedGflops(params, "inference", rtx4090()).value(), 44'802u);
}

TEST(TokenomicsIndex, SlotValueSumsDevicesThenAppliesTheGreenMultiplier) {
    auto params = indexParams();
    const std::vector<DeviceAllocation> rack{{a100(), 8}, {rtx4090(), 2}};
    // 8 × 214 720 + 2 × 36 857 = 1 717 760 + 73 714 = 1 791 474; no bonus configured.
    EXPECT_EQ(slotValueGflops(params, "ml-training", rack).value(), 1'791'474u);
    EXPECT_EQ(slotValueGflops(params, "ml-training", rack, 10'000).value(), 1'791'474u);

    params.greenMaxBonusBps = 1'000;  // up to +10% at a fully renewable supply
    // 50% renewable: 10 000 + 1000 × 5000 / 10 000 = 10 500 bps.
    EXPECT_EQ(greenMultiplierBps(params, 5'000).value(), 10'500u);
    // 1 791 474 × 1.05 = 1 881 047.7 → 1 881 047.
    EXPECT_EQ(slotValueGflops(params, "ml-training", rack, 5'000).value(), 1'881'047u);
    // 33.33% renewable: 1000 × 3333 / 10 000 = 333.3 → 333, multiplier 10 333 bps;
    // one A100: 214 720 × 10 333 = 2 218 701 760 → /10^4 = 221 870.176 → 221 870.
    EXPECT_EQ(greenMultiplierBps(params, 3'333).value(), 10'333u);
    const std::vector<DeviceAllocation> one{{a100(), 1}};
    EXPECT_EQ(slotValueGflops(params, "ml-training", one, 3'333).value(), 221'870u);

    EXPECT_EQ(greenMultiplierBps(params, 10'001).error().code, ErrorCode::kInvalidArgument);
    // 2^63 A100s: 2^63 × 214 720 leaves 64 bits.
    const std::vector<DeviceAllocation> absurd{{a100(), std::uint64_t{1} << 63U}};
    EXPECT_EQ(slotValueGflops(params, "ml-training", absurd).error().code, ErrorCode::kOverflow);
}

TEST(TokenomicsIndex, PaymentIsPriceTimesCorrectedPowerTimesDuration) {
    // One A100 for an hour of ml-training: 0.214720 PFLOP/s × 3600 s × 2.5·10^14 per PFLOP/s·s
    // = 214 720 × 3600 = 772 992 000; × 2.5·10^14 = 1.93248·10^23; / 10^6 = 1.93248·10^17
    // = 0.193248 DPS (0.9 DPS per PFLOP/s-hour × 0.21472 PFLOP/s).
    EXPECT_EQ(payment(u128{250'000'000'000'000ULL}, 214'720, 3'600).value(),
              u128{193'248'000'000'000'000ULL});
    // Rounds down: 1 base unit per PFLOP/s·s, 1 GFLOP/s for 1 s = 10^-6 → 0.
    EXPECT_EQ(payment(1, 1, 1).value(), u128{0});
    // 2^127 × 2 overflows before the duration is applied.
    EXPECT_EQ(payment(kOne << 127U, 2, 1).error().code, ErrorCode::kOverflow);
    // 2^100 × 2^20 fits; × 2^40 / 10^6 ≈ 2^140: overflows.
    EXPECT_EQ(payment(kOne << 100U, std::uint64_t{1} << 20U, std::uint64_t{1} << 40U).error().code,
              ErrorCode::kOverflow);
}

TEST(TokenomicsIndex, ParamsValidationNamesTheFault) {
    EXPECT_EQ(PowerIndexParams{}.validate().error().code, ErrorCode::kInvalidArgument);

    auto sum9999 = indexParams();
    sum9999.categories[0].weights[2].weightBps = 1'999;  // 5000 + 3000 + 1999 = 9999
    EXPECT_EQ(sum9999.validate().error().code, ErrorCode::kInvalidArgument);

    auto unknown = indexParams();
    unknown.categories[1].weights[0].factor = "tensor_cores";
    EXPECT_EQ(unknown.validate().error().code, ErrorCode::kInvalidArgument);

    auto twice = indexParams();
    twice.categories[1].weights = {{"mem_capacity_gb", 5000}, {"mem_capacity_gb", 5000}};
    EXPECT_EQ(twice.validate().error().code, ErrorCode::kInvalidArgument);

    auto zeroMax = indexParams();
    zeroMax.factors[1].referenceMax = 0;
    EXPECT_EQ(zeroMax.validate().error().code, ErrorCode::kInvalidArgument);

    auto sameName = indexParams();
    sameName.categories[1].name = "ml-training";
    EXPECT_EQ(sameName.validate().error().code, ErrorCode::kInvalidArgument);

    auto green = indexParams();
    green.greenMaxBonusBps = 10'001;
    EXPECT_EQ(green.validate().error().code, ErrorCode::kInvalidArgument);

    const auto params = indexParams();
    EXPECT_EQ(adjustmentRatioPpm(params, "rendering", a100().factors).error().code,
              ErrorCode::kNotFound);
    auto partial = a100();
    partial.factors.erase("interconnect_gbps");
    EXPECT_EQ(deviceCorrectedGflops(params, "ml-training", partial).error().code,
              ErrorCode::kInvalidArgument);
    // …while inference does not weigh the interconnect: 705 850 as above.
    EXPECT_EQ(adjustmentRatioPpm(params, "inference", partial.factors).value(), 705'850u);
}

// ---------------------------------------------------------------------------------------------
// Parameters, epochs and slots
// ---------------------------------------------------------------------------------------------

TEST(TokenomicsParamsTest, DefaultsFollowThePaper) {
    const TokenomicsParams params;
    ASSERT_TRUE(params.validate());
    EXPECT_EQ(params.epochMs, 1'296'000'000u);           // 15 × 86 400 000
    EXPECT_EQ(params.slotMs, 3'600'000u);                // 1 hour
    EXPECT_EQ(params.slotsPerEpoch(), 360u);             // 15 × 24
    EXPECT_EQ(params.rewardShareBps, 2'000u);            // 20%
    EXPECT_EQ(params.halvingPeriodMs, 31'536'000'000u);  // 365 × 86 400 000
    // R: 100 GFL = 10^8 GFLOP/s is worth 1 DPS = 10^18, so 10^10 base units per GFLOP/s.
    EXPECT_EQ(params.rewardRate, 10'000'000'000u);
    EXPECT_EQ(params.halvingGflThreshold, 1'000'000'000'000u);  // 10^6 GFL
    EXPECT_EQ(params.poolShareBps, 1'000u);                     // 10%
}

TEST(TokenomicsParamsTest, ValidationRejectsBadValues) {
    const auto invalid = [](auto mutate) {
        TokenomicsParams params;
        mutate(params);
        const auto status = params.validate();
        return !status && status.error().code == ErrorCode::kInvalidArgument;
    };
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.slotMs = 0; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.epochMs = 0; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.slotMs = 7; }));  // 1 296 000 000 mod 7 = 4
    // 1 s slots: 1 296 000 slots per epoch, above the 100 000 limit.
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.slotMs = 1'000; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.rewardShareBps = 10'001; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.poolShareBps = 10'001; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.rewardRate = 0; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.halvingPeriodMs = 0; }));
    EXPECT_TRUE(invalid([](TokenomicsParams& p) { p.halvingGflThreshold = 0; }));
    EXPECT_FALSE(invalid([](TokenomicsParams& p) { p.rewardShareBps = 10'000; }));
}

TEST(TokenomicsParamsTest, EpochsAndSlotsAreHalfOpenIntervalsFromGenesis) {
    const TokenomicsParams params;
    const std::uint64_t genesis = 1'000;
    EXPECT_EQ(epochOf(params, genesis, 1'000).value(), 0u);
    EXPECT_EQ(slotOf(params, genesis, 1'000).value(), 0u);
    // One ms before the first boundary (1 000 + 1 296 000 000): still epoch 0, last slot 359.
    EXPECT_EQ(epochOf(params, genesis, 1'296'000'999).value(), 0u);
    EXPECT_EQ(slotOf(params, genesis, 1'296'000'999).value(), 359u);
    // The boundary itself opens epoch 1, slot 0.
    EXPECT_EQ(epochEndMs(params, genesis, 0).value(), 1'296'001'000u);
    EXPECT_EQ(epochOf(params, genesis, 1'296'001'000).value(), 1u);
    EXPECT_EQ(slotOf(params, genesis, 1'296'001'000).value(), 0u);
    // Two hours and 5 ms into epoch 1: slot 2.
    EXPECT_EQ(slotOf(params, genesis, 1'296'001'000 + 7'200'005).value(), 2u);
    EXPECT_EQ(epochOf(params, genesis, 999).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(epochEndMs(params, genesis, kU64Max).error().code, ErrorCode::kOverflow);
}

// ---------------------------------------------------------------------------------------------
// The lower median
// ---------------------------------------------------------------------------------------------

TEST(TokenomicsMedian, LowerMedianTakesTheSmallerMiddleValue) {
    const std::vector<std::uint64_t> odd{5, 1, 3};      // sorted 1 3 5 → 3
    const std::vector<std::uint64_t> even{4, 1, 3, 2};  // sorted 1 2 3 4 → 2, not 3 or 2.5
    const std::vector<std::uint64_t> single{7};
    EXPECT_EQ(lowerMedian(odd).value(), 3u);
    EXPECT_EQ(lowerMedian(even).value(), 2u);
    EXPECT_EQ(lowerMedian(single).value(), 7u);
    EXPECT_EQ(lowerMedian({}).error().code, ErrorCode::kInvalidArgument);
}

TEST(TokenomicsMedian, MissingAndChallengedSlotsCountAsZero) {
    // S = 6: slots 500, 400, missing, 300, 600, challenged 700 → 500 400 0 300 600 0;
    // sorted 0 0 300 400 500 600, index ⌊5/2⌋ = 2 → 300.
    const std::vector<SlotSample> six{
        {0, 500, false}, {1, 400, false}, {3, 300, false}, {4, 600, false}, {5, 700, true}};
    EXPECT_EQ(allocatedPower(6, six).value(), 300u);

    // S = 4: 300, challenged 100, missing, 200 → sorted 0 0 200 300, index 1 → 0.
    const std::vector<SlotSample> four{{0, 300, false}, {1, 100, true}, {3, 200, false}};
    EXPECT_EQ(allocatedPower(4, four).value(), 0u);

    // S = 5: 10, missing, 30, challenged 50, 40 → sorted 0 0 10 30 40, index 2 → 10.
    const std::vector<SlotSample> five{
        {0, 10, false}, {2, 30, false}, {3, 50, true}, {4, 40, false}};
    EXPECT_EQ(allocatedPower(5, five).value(), 10u);

    // S = 5 with one slot missing: 10 20 30 40 + 0 → sorted 0 10 20 30 40 → 20.
    const std::vector<SlotSample> fourOfFive{
        {0, 40, false}, {1, 30, false}, {2, 20, false}, {3, 10, false}};
    EXPECT_EQ(allocatedPower(5, fourOfFive).value(), 20u);

    // No attestation at all: 0.
    EXPECT_EQ(allocatedPower(3, {}).value(), 0u);
}

TEST(TokenomicsMedian, RejectsSamplesOutsideTheEpochOrForTheSameSlot) {
    const std::vector<SlotSample> outside{{4, 1, false}};
    EXPECT_EQ(allocatedPower(4, outside).error().code, ErrorCode::kInvalidArgument);
    const std::vector<SlotSample> twice{{1, 1, false}, {1, 2, true}};
    EXPECT_EQ(allocatedPower(4, twice).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(allocatedPower(0, {}).error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(allocatedPower(kMaxSlotsPerEpoch + 1, {}).error().code, ErrorCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Payout and settlement
// ---------------------------------------------------------------------------------------------

TEST(TokenomicsSettlement, PayoutRoundsDownAtEachStep) {
    const TokenomicsParams params;
    // 100 GFL: burn 20 GFL = 2·10^7, owed 2·10^7 × 10^10 = 2·10^17 = 0.2 DPS.
    EXPECT_EQ(quotePayout(params, 0, 100 * kOneGfl).value(),
              (PayoutQuote{20 * kOneGfl, u128{200'000'000'000'000'000ULL}}));
    // After 3 halvings: 2·10^17 / 8 = 2.5·10^16.
    EXPECT_EQ(quotePayout(params, 3, 100 * kOneGfl).value().owed, u128{25'000'000'000'000'000ULL});
    // 7 GFLOP/s: 20% = 1.4 → 1 burned; 1 × 10^10 owed.
    EXPECT_EQ(quotePayout(params, 0, 7).value(), (PayoutQuote{1, u128{10'000'000'000ULL}}));
    // 15 GFLOP/s at n = 33: burn 3, 3·10^10 / 2^33 = 3·10^10 / 8 589 934 592 = 3.49… → 3.
    EXPECT_EQ(quotePayout(params, 33, 15).value(), (PayoutQuote{3, 3}));
    // n = 128 and beyond: nothing owed, the GFL is still burned.
    EXPECT_EQ(quotePayout(params, 128, 100 * kOneGfl).value(), (PayoutQuote{20 * kOneGfl, 0}));
    EXPECT_EQ(quotePayout(params, 200, 100 * kOneGfl).value().owed, u128{0});
}

TEST(TokenomicsSettlement, OneProviderIsPaidWhatThePoolHoldsThenRebalancedDown) {
    const TokenomicsParams params;
    // 100 GFL held, 50 GFL allocated, n = 1, pool 0.05 DPS.
    // Burn 20 GFL; owed 0.2 DPS / 2 = 10^17; paid 5·10^16, shortfall 5·10^16;
    // 80 GFL left, rebalance burns 30 GFL down to 50 GFL.
    const auto settled = settleProvider(params, 1, {addr(1), 100 * kOneGfl, 50 * kOneGfl},
                                        u128{50'000'000'000'000'000ULL});
    ASSERT_TRUE(settled) << settled.error().message;
    EXPECT_EQ(settled->payoutBurned, 20 * kOneGfl);
    EXPECT_EQ(settled->owed, u128{100'000'000'000'000'000ULL});
    EXPECT_EQ(settled->paid, u128{50'000'000'000'000'000ULL});
    EXPECT_EQ(settled->shortfall, u128{50'000'000'000'000'000ULL});
    EXPECT_EQ(settled->minted, 0u);
    EXPECT_EQ(settled->rebalanceBurned, 30 * kOneGfl);
    EXPECT_EQ(settled->balanceAfter, 50 * kOneGfl);
}

TEST(TokenomicsSettlement, PaperExampleHundredThenNinetyNinePetaflops) {
    const TokenomicsParams params;
    const Address provider = addr(0x42);
    EmissionState state{0, 0, 0, 1'000 * kOneDps};

    // Epoch 0: 100 PFLOP/s = 10^8 GFLOP/s in all 360 slots → median 10^8.
    const auto epoch0 = allocatedPower(360, everySlot(360, 100 * kOneGfl));
    ASSERT_EQ(epoch0.value(), 100'000'000u);
    // Settled at 15 days: nothing held yet, so nothing burned or paid; mint 100 GFL.
    const auto first = settleEpoch(params, state, 15 * kDay, {{provider, 0, *epoch0}});
    ASSERT_TRUE(first) << first.error().message;
    ASSERT_EQ(first->providers.size(), 1u);
    EXPECT_EQ(first->providers[0].payoutBurned, 0u);
    EXPECT_EQ(first->providers[0].paid, u128{0});
    EXPECT_EQ(first->providers[0].minted, 100'000'000u);
    EXPECT_EQ(first->supplyAfter, 100'000'000u);  // 100 GFL
    EXPECT_FALSE(first->halved());
    EXPECT_EQ(first->after, (EmissionState{0, 0, 0, 1'000 * kOneDps}));
    state = first->after;

    // Epoch 1: 99 PFLOP/s throughout → median 99·10^6.
    const auto epoch1 = allocatedPower(360, everySlot(360, 99 * kOneGfl));
    ASSERT_EQ(epoch1.value(), 99'000'000u);
    // Settled at 30 days: (1) burn 20% of 100 GFL = 20 GFL, pay 20 GFL / 100 = 0.2 DPS;
    // (2) 80 GFL left, mint 19 GFL → 99 GFL.
    const auto second = settleEpoch(params, state, 30 * kDay,
                                    {{provider, first->providers[0].balanceAfter, *epoch1}});
    ASSERT_TRUE(second) << second.error().message;
    const auto& p = second->providers[0];
    EXPECT_EQ(p.balanceBefore, 100'000'000u);
    EXPECT_EQ(p.payoutBurned, 20'000'000u);
    EXPECT_EQ(p.owed, u128{200'000'000'000'000'000ULL});
    EXPECT_EQ(p.paid, u128{200'000'000'000'000'000ULL});
    EXPECT_EQ(p.shortfall, u128{0});
    EXPECT_EQ(p.minted, 19'000'000u);
    EXPECT_EQ(p.rebalanceBurned, 0u);
    EXPECT_EQ(p.balanceAfter, 99'000'000u);
    EXPECT_EQ(second->supplyAfter, 99'000'000u);  // 99 GFL
    // Pool 1000 − 0.2 = 999.8 DPS; 20 GFL converted since the last halving.
    EXPECT_EQ(second->after, (EmissionState{0, 0, 20'000'000, 999'800 * kMilliDps}));
}

TEST(TokenomicsSettlement, ProRataPayoutWhenThePoolRunsShort) {
    const TokenomicsParams params;
    // Owed: A 100 GFL → 20 GFL → 2·10^17; B 50 → 10 → 10^17; C 30 → 6 → 6·10^16.
    // Σ owed = 3.6·10^17 > pool 10^17. owed × pool / Σ:
    //   A 2·10^34 / 3.6·10^17 = 55 555 555 555 555 555.55…
    //   B 1·10^34 / 3.6·10^17 = 27 777 777 777 777 777.77…
    //   C 6·10^33 / 3.6·10^17 = 16 666 666 666 666 666.66…
    // Σ floors = 99 999 999 999 999 998; the 2 left go to the largest remainders: B (.77), C (.66).
    const EmissionState state{0, 0, 0, u128{100'000'000'000'000'000ULL}};
    const auto settled = settleEpoch(params, state, 15 * kDay,
                                     {{addr(3), 30 * kOneGfl, 30 * kOneGfl},
                                      {addr(1), 100 * kOneGfl, 100 * kOneGfl},
                                      {addr(2), 50 * kOneGfl, 50 * kOneGfl}});
    ASSERT_TRUE(settled) << settled.error().message;
    const auto& out = settled->providers;
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].provider, addr(1));
    EXPECT_EQ(out[1].provider, addr(2));
    EXPECT_EQ(out[2].provider, addr(3));
    EXPECT_EQ(out[0].paid, u128{55'555'555'555'555'555ULL});
    EXPECT_EQ(out[1].paid, u128{27'777'777'777'777'778ULL});
    EXPECT_EQ(out[2].paid, u128{16'666'666'666'666'667ULL});
    // Shortfalls: 2·10^17 − A, 10^17 − B, 6·10^16 − C.
    EXPECT_EQ(out[0].shortfall, u128{144'444'444'444'444'445ULL});
    EXPECT_EQ(out[1].shortfall, u128{72'222'222'222'222'222ULL});
    EXPECT_EQ(out[2].shortfall, u128{43'333'333'333'333'333ULL});
    EXPECT_EQ(settled->totalOwed, u128{360'000'000'000'000'000ULL});
    EXPECT_EQ(settled->totalPaid, u128{100'000'000'000'000'000ULL});  // the whole pool, no more
    EXPECT_EQ(settled->totalShortfall, u128{260'000'000'000'000'000ULL});
    EXPECT_EQ(settled->after.rewardPool, u128{0});
    // The GFL side does not depend on the pool: burned 36 GFL, minted 36 GFL back to 180 GFL.
    EXPECT_EQ(settled->totalPayoutBurned, 36 * kOneGfl);
    EXPECT_EQ(settled->totalMinted, 36 * kOneGfl);
    EXPECT_EQ(settled->supplyAfter, 180 * kOneGfl);
    EXPECT_EQ(settled->after.convertedGfl, 36 * kOneGfl);
}

TEST(TokenomicsSettlement, ProRataTieGoesToTheLowerAddress) {
    const TokenomicsParams params;
    // Each holds 5 GFLOP/s: burn 1 (20% of 5), owed 10^10 each, Σ 2·10^10; pool 10^10 + 1.
    // Each share = 10^10 × (10^10 + 1) / (2·10^10) = 5 000 000 000.5 → 5 000 000 000, equal
    // remainders; the one unit left goes to the lower address.
    const EmissionState state{0, 0, 0, u128{10'000'000'001ULL}};
    const auto settled = settleEpoch(params, state, 15 * kDay, {{addr(9), 5, 5}, {addr(8), 5, 5}});
    ASSERT_TRUE(settled) << settled.error().message;
    EXPECT_EQ(settled->providers[0].provider, addr(8));
    EXPECT_EQ(settled->providers[0].paid, u128{5'000'000'001ULL});
    EXPECT_EQ(settled->providers[1].paid, u128{5'000'000'000ULL});
    EXPECT_EQ(settled->after.rewardPool, u128{0});
}

TEST(TokenomicsSettlement, PoolHoldingExactlyTheOwedSumPaysInFull) {
    const TokenomicsParams params;
    // Σ owed = 2·10^17 + 10^17 = 3·10^17 = the pool.
    const EmissionState state{0, 0, 0, u128{300'000'000'000'000'000ULL}};
    const auto settled = settleEpoch(params, state, 15 * kDay,
                                     {{addr(1), 100 * kOneGfl, 0}, {addr(2), 50 * kOneGfl, 0}});
    ASSERT_TRUE(settled) << settled.error().message;
    EXPECT_EQ(settled->providers[0].paid, u128{200'000'000'000'000'000ULL});
    EXPECT_EQ(settled->providers[1].paid, u128{100'000'000'000'000'000ULL});
    EXPECT_EQ(settled->totalShortfall, u128{0});
    EXPECT_EQ(settled->after.rewardPool, u128{0});
    // Allocated 0: 80 and 40 GFL left are burned by the rebalance; supply 0.
    EXPECT_EQ(settled->totalRebalanceBurned, 120 * kOneGfl);
    EXPECT_EQ(settled->supplyAfter, 0u);
}

TEST(TokenomicsSettlement, RejectsDuplicatesEarlyBoundariesAndOverflow) {
    const TokenomicsParams params;
    const EmissionState state{0, 10 * kDay, 0, 1'000 * kOneDps};
    EXPECT_EQ(
        settleEpoch(params, state, 15 * kDay, {{addr(1), 0, 1}, {addr(1), 0, 2}}).error().code,
        ErrorCode::kInvalidArgument);
    EXPECT_EQ(settleEpoch(params, state, 9 * kDay, {}).error().code, ErrorCode::kInvalidArgument);
    // Converted counter at 2^64 − 2 plus 20 GFL burned leaves 64 bits.
    const EmissionState nearlyFull{0, 0, kU64Max - 1, 1'000 * kOneDps};
    EXPECT_EQ(
        settleEpoch(params, nearlyFull, 15 * kDay, {{addr(1), 100 * kOneGfl, 0}}).error().code,
        ErrorCode::kOverflow);
    // Σ allocated power 2 × 2^63 = 2^64 leaves 64 bits.
    const std::uint64_t half = std::uint64_t{1} << 63U;
    EXPECT_EQ(settleEpoch(params, state, 15 * kDay, {{addr(1), 0, half}, {addr(2), 0, half}})
                  .error()
                  .code,
              ErrorCode::kOverflow);
}

// ---------------------------------------------------------------------------------------------
// Halving and replenishment
// ---------------------------------------------------------------------------------------------

TEST(TokenomicsHalving, ByTimeAtTheFirstBoundaryAfterTheHalvingPeriod) {
    const TokenomicsParams params;  // 365-day period, 15-day epochs, threshold out of reach
    const std::vector<ProviderEpoch> grid{{addr(1), 100 * kOneGfl, 100 * kOneGfl}};
    const EmissionState start{0, 0, 0, 1'000 * kOneDps};

    // Boundary at 360 days (end of epoch 23): 360 < 365, no halving; owed 0.2 DPS at n = 0.
    const auto day360 = settleEpoch(params, start, 360 * kDay, grid);
    ASSERT_TRUE(day360) << day360.error().message;
    EXPECT_FALSE(day360->halved());
    EXPECT_EQ(day360->providers[0].paid, u128{200'000'000'000'000'000ULL});

    // Boundary at 375 days (end of epoch 24): 375 ≥ 365 → halving, after a payout at n = 0.
    const auto day375 = settleEpoch(params, day360->after, 375 * kDay, grid);
    ASSERT_TRUE(day375) << day375.error().message;
    EXPECT_TRUE(day375->halvedByPeriod);
    EXPECT_FALSE(day375->halvedByThreshold);
    EXPECT_EQ(day375->providers[0].paid, u128{200'000'000'000'000'000ULL});
    // n = 1, last halving = 375 days = 32 400 000 000 ms, counter reset;
    // pool 1000 − 0.2 − 0.2 = 999.6 DPS.
    EXPECT_EQ(day375->after, (EmissionState{1, 32'400'000'000, 0, 999'600 * kMilliDps}));

    // Next boundary (390 days): the halved rate, 0.1 DPS; no halving.
    const auto day390 = settleEpoch(params, day375->after, 390 * kDay, grid);
    ASSERT_TRUE(day390) << day390.error().message;
    EXPECT_FALSE(day390->halved());
    EXPECT_EQ(day390->providers[0].owed, u128{100'000'000'000'000'000ULL});

    // The next period counts from 375 days: 735 days is 360 after it (no), 750 is 375 (yes).
    const auto day735 = settleEpoch(params, day390->after, 735 * kDay, grid);
    ASSERT_TRUE(day735) << day735.error().message;
    EXPECT_FALSE(day735->halved());
    const auto day750 = settleEpoch(params, day735->after, 750 * kDay, grid);
    ASSERT_TRUE(day750) << day750.error().message;
    EXPECT_TRUE(day750->halvedByPeriod);
    EXPECT_EQ(day750->after.halvings, 2u);
    EXPECT_EQ(day750->after.lastHalvingMs, 64'800'000'000u);  // 750 × 86 400 000
}

TEST(TokenomicsHalving, ByThresholdAfterThePayout) {
    TokenomicsParams params;
    params.halvingGflThreshold = 60 * kOneGfl;
    const std::vector<ProviderEpoch> grid{{addr(1), 100 * kOneGfl, 100 * kOneGfl}};
    const EmissionState state{0, 0, 0, 1'000 * kOneDps};

    // Each settlement converts 20 GFL: 20, 40, then 60 ≥ 60 at the third (45 days).
    const auto s1 = settleEpoch(params, state, 15 * kDay, grid);
    const auto s2 = settleEpoch(params, s1.value().after, 30 * kDay, grid);
    ASSERT_TRUE(s2) << s2.error().message;
    EXPECT_FALSE(s1->halved());
    EXPECT_FALSE(s2->halved());
    EXPECT_EQ(s2->after.convertedGfl, 40 * kOneGfl);
    const auto s3 = settleEpoch(params, s2->after, 45 * kDay, grid);
    ASSERT_TRUE(s3) << s3.error().message;
    EXPECT_TRUE(s3->halvedByThreshold);
    EXPECT_FALSE(s3->halvedByPeriod);
    // The third payout was still at n = 0: 0.2 DPS.
    EXPECT_EQ(s3->providers[0].paid, u128{200'000'000'000'000'000ULL});
    // n = 1, last halving at 45 days = 3 888 000 000 ms, counter reset; pool 999.4 DPS.
    EXPECT_EQ(s3->after, (EmissionState{1, 3'888'000'000, 0, 999'400 * kMilliDps}));
    // The fourth pays at the halved rate: 0.1 DPS; counter 20 GFL again.
    const auto s4 = settleEpoch(params, s3->after, 60 * kDay, grid);
    ASSERT_TRUE(s4) << s4.error().message;
    EXPECT_EQ(s4->providers[0].paid, u128{100'000'000'000'000'000ULL});
    EXPECT_EQ(s4->after.convertedGfl, 20 * kOneGfl);
    EXPECT_FALSE(s4->halved());
}

TEST(TokenomicsHalving, ReplenishmentDelaysTheThresholdHalving) {
    TokenomicsParams params;
    params.halvingGflThreshold = 60 * kOneGfl;
    const std::vector<ProviderEpoch> grid{{addr(1), 100 * kOneGfl, 100 * kOneGfl}};
    const EmissionState start{0, 0, 0, 1'000 * kOneDps};

    const auto s1 = settleEpoch(params, start, 15 * kDay, grid);
    const auto s2 = settleEpoch(params, s1.value().after, 30 * kDay, grid);
    ASSERT_TRUE(s2) << s2.error().message;
    EXPECT_EQ(s2->after.convertedGfl, 40 * kOneGfl);

    // A task settles for 1 DPS: 10% = 0.1 DPS back to the pool, 0.9 DPS to its provider;
    // 0.1 DPS × 100 × 2^0 = 10 GFL off the counter: 40 → 30 GFL; pool 999.6 + 0.1 = 999.7 DPS.
    const auto refill = replenish(params, s2->after, kOneDps);
    ASSERT_TRUE(refill) << refill.error().message;
    EXPECT_EQ(refill->toPool, u128{100'000'000'000'000'000ULL});
    EXPECT_EQ(refill->toProvider, u128{900'000'000'000'000'000ULL});
    EXPECT_EQ(refill->convertedReduction, 10 * kOneGfl);
    EXPECT_EQ(refill->after, (EmissionState{0, 0, 30 * kOneGfl, 999'700 * kMilliDps}));

    // Third settlement: 30 + 20 = 50 < 60, no halving (without the refill it would halve here).
    const auto s3 = settleEpoch(params, refill->after, 45 * kDay, grid);
    ASSERT_TRUE(s3) << s3.error().message;
    EXPECT_FALSE(s3->halved());
    EXPECT_EQ(s3->after.convertedGfl, 50 * kOneGfl);
    const auto control = settleEpoch(params, s2->after, 45 * kDay, grid);
    ASSERT_TRUE(control) << control.error().message;
    EXPECT_TRUE(control->halvedByThreshold);

    // Fourth: 50 + 20 = 70 ≥ 60 → halving at 60 days; pool 999.7 − 0.2 − 0.2 = 999.3 DPS.
    const auto s4 = settleEpoch(params, s3->after, 60 * kDay, grid);
    ASSERT_TRUE(s4) << s4.error().message;
    EXPECT_TRUE(s4->halvedByThreshold);
    EXPECT_EQ(s4->after, (EmissionState{1, 60 * kDay, 0, 999'300 * kMilliDps}));
}

TEST(TokenomicsHalving, ReplenishmentConvertsAtTheHalvedRateAndFloorsAtZero) {
    const TokenomicsParams params;
    // n = 1: 0.1 DPS × 100 × 2 = 20 GFL; counter 50 → 30 GFL.
    const auto halved = replenish(params, {1, 0, 50 * kOneGfl, 0}, kOneDps);
    ASSERT_TRUE(halved) << halved.error().message;
    EXPECT_EQ(halved->convertedReduction, 20 * kOneGfl);
    EXPECT_EQ(halved->after.convertedGfl, 30 * kOneGfl);
    EXPECT_EQ(halved->after.rewardPool, u128{100'000'000'000'000'000ULL});

    // Counter 10 GFL, 20 GFL worth replenished: floored at 0.
    const auto floored = replenish(params, {1, 0, 10 * kOneGfl, 0}, kOneDps);
    ASSERT_TRUE(floored) << floored.error().message;
    EXPECT_EQ(floored->convertedReduction, 10 * kOneGfl);
    EXPECT_EQ(floored->after.convertedGfl, 0u);

    // 15 base units: 10% = 1.5 → 1 to the pool, 14 to the provider; 1 / 10^10 → 0 GFLOP/s.
    const auto tiny = replenish(params, {0, 0, 10 * kOneGfl, 0}, 15);
    ASSERT_TRUE(tiny) << tiny.error().message;
    EXPECT_EQ(tiny->toPool, u128{1});
    EXPECT_EQ(tiny->toProvider, u128{14});
    EXPECT_EQ(tiny->convertedReduction, 0u);

    // n = 200: any non-zero DPS is worth more than any counter; 0 DPS is worth nothing.
    EXPECT_EQ(gflEquivalent(params, 200, 1, 12'345), 12'345u);
    EXPECT_EQ(gflEquivalent(params, 200, 0, 12'345), 0u);
    // 1 DPS at n = 2: 10^18 × 4 / 10^10 = 4·10^8 GFLOP/s = 400 GFL.
    EXPECT_EQ(gflEquivalent(params, 2, kOneDps, kU64Max), 400 * kOneGfl);

    // A full pool cannot take more.
    const u128 full = ~u128{0};
    EXPECT_EQ(replenish(params, {0, 0, 0, full}, 10).error().code, ErrorCode::kOverflow);
}

}  // namespace
}  // namespace gridledger::contracts::tokenomics_test
