#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

/**
 * The integer arithmetic of GridLedger's tokenomics (docs/tokenomics.md):
 * the computational power index, the lower median of an epoch's slots, the GFL settlement of an
 * epoch (DPS payout, then rebalance), DPS halvings and reward-pool replenishment.
 *
 * Everything here is a pure function of its arguments: no clock, no floating point, no state.
 * Every multiplication and addition is checked; every division rounds down, except where a
 * function says how it hands out a remainder.
 *
 * Units:
 * - GFL amounts and FLOP/s are integer GFLOP/s. 1 GFL = 1 PFLOP/s = kGflUnit (10^6) GFLOP/s.
 * - DPS amounts are base units, 18 decimals: 1 DPS = kDpsUnit (10^18) base units.
 * - Ratios are basis points (bps, 10 000 = 1) or parts per million (ppm, 1 000 000 = 1).
 * - Times and durations are milliseconds (block timestamps), except the payment duration T,
 *   which is seconds.
 */
namespace gridledger::contracts {

/** GFLOP/s per GFL: 1 GFL = 1 PFLOP/s. */
inline constexpr std::uint64_t kGflUnit = 1'000'000;
/** DPS base units per DPS (18 decimals). */
inline constexpr std::uint64_t kDpsUnit = 1'000'000'000'000'000'000ULL;
/** One, in basis points. */
inline constexpr std::uint64_t kBps = 10'000;
/** One, in parts per million. */
inline constexpr std::uint64_t kPpm = 1'000'000;
/** One day in milliseconds. */
inline constexpr std::uint64_t kDayMs = 86'400'000;
/** Upper bound on slots per epoch, so that an epoch's slot values always fit in memory. */
inline constexpr std::uint64_t kMaxSlotsPerEpoch = 100'000;

/** floor(a × b / c) and the remainder (a × b) mod c, computed over 256 bits. */
struct MulDiv {
    u128 quotient = 0;
    u128 remainder = 0;

    bool operator==(const MulDiv&) const = default;
};

/**
 * floor(a × b / c) with an exact 256-bit intermediate product. Fails with kInvalidArgument if
 * c == 0 and kOverflow if the quotient does not fit in 128 bits.
 */
[[nodiscard]] Result<MulDiv> mulDiv(u128 a, u128 b, u128 c);

// ---------------------------------------------------------------------------------------------
// Computational power index (docs/tokenomics.md, paper §6)
// ---------------------------------------------------------------------------------------------

/** A performance factor (memory bandwidth, memory capacity, interconnect, …) and its scale. */
struct PerformanceFactor {
    std::string name;
    /** The value that counts as 1 (the best device of the reference set), in the factor's unit. */
    std::uint64_t referenceMax = 0;
};

/** The weight of one factor in a workload category. */
struct FactorWeight {
    std::string factor;
    std::uint32_t weightBps = 0;
};

/** A workload category (ML training, inference, rendering, …). */
struct WorkloadCategory {
    std::string name;
    /** The factors that matter for this workload; the weights sum to exactly 10 000 bps. */
    std::vector<FactorWeight> weights;
    /** C_i: DPS base units per PFLOP/s of corrected power per second. */
    u128 priceRate = 0;
};

/** The index's parameters (governance sets them; the paper gives no default values). */
struct PowerIndexParams {
    std::vector<PerformanceFactor> factors;
    std::vector<WorkloadCategory> categories;
    /** Bonus at a 100% renewable share, in bps of the corrected power; 0 turns the bonus off. */
    std::uint32_t greenMaxBonusBps = 0;

    /**
     * Checks: at least one factor and one category; names non-empty and unique; every reference
     * maximum > 0; every category weighs known factors, each at most once, weights summing to
     * exactly 10 000 bps; greenMaxBonusBps ≤ 10 000. Fails with kInvalidArgument naming the fault.
     */
    [[nodiscard]] Status validate() const;

    /** The category named `name`, or nullptr when the index has none of that name. */
    [[nodiscard]] const WorkloadCategory* category(std::string_view name) const;
};

/** A device's measured value for each factor, by factor name, in the factor's unit. */
using FactorValues = std::map<std::string, std::uint64_t, std::less<>>;

/** A device model of a provider's inventory. */
struct DeviceSpec {
    /** FLOPS_raw: the vendor (or benchmarked) FLOP/s of one device, in GFLOP/s. */
    std::uint64_t rawGflops = 0;
    FactorValues factors;
};

/** `count` devices of one model allocated in a slot. */
struct DeviceAllocation {
    DeviceSpec device;
    std::uint64_t count = 0;
};

/**
 * P_k = min(value / referenceMax, 1) in ppm, rounded down. Requires referenceMax > 0
 * (kInvalidArgument otherwise).
 */
[[nodiscard]] Result<std::uint64_t> normalisedFactorPpm(std::uint64_t value,
                                                        std::uint64_t referenceMax);

/**
 * W_i = Σ_k weight_k × P_k for `category`, in ppm, rounded down once after the sum. Never above
 * 1 000 000. Requires validated params; fails with kNotFound for an unknown category and
 * kInvalidArgument when the device lacks a factor the category weighs.
 */
[[nodiscard]] Result<std::uint64_t> adjustmentRatioPpm(const PowerIndexParams& params,
                                                       std::string_view category,
                                                       const FactorValues& values);

/** FLOPS_corrected = floor(rawGflops × ratioPpm / 10^6). Requires ratioPpm ≤ 10^6. */
[[nodiscard]] Result<std::uint64_t> correctedGflops(std::uint64_t rawGflops,
                                                    std::uint64_t ratioPpm);

/**
 * The green multiplier in bps: 10 000 + floor(greenMaxBonusBps × renewableShareBps / 10 000).
 * Requires renewableShareBps ≤ 10 000 (kInvalidArgument otherwise).
 */
[[nodiscard]] Result<std::uint64_t> greenMultiplierBps(const PowerIndexParams& params,
                                                       std::uint32_t renewableShareBps);

/**
 * One device's corrected GFLOP/s in `category`: correctedGflops(rawGflops, W_i(device)).
 * Errors as adjustmentRatioPpm.
 */
[[nodiscard]] Result<std::uint64_t> deviceCorrectedGflops(const PowerIndexParams& params,
                                                          std::string_view category,
                                                          const DeviceSpec& device);

/**
 * A slot's value: Σ count × deviceCorrectedGflops over the allocations, then × the green
 * multiplier of `renewableShareBps` (10 000 bps without energy data), rounded down once.
 * kOverflow if the sum leaves 64 bits; other errors as adjustmentRatioPpm / greenMultiplierBps.
 */
[[nodiscard]] Result<std::uint64_t> slotValueGflops(const PowerIndexParams& params,
                                                    std::string_view category,
                                                    std::span<const DeviceAllocation> allocations,
                                                    std::uint32_t renewableShareBps = 0);

/**
 * Payment_i = C_i × FLOPS_corrected × T = floor(priceRate × correctedGflops × seconds / 10^6)
 * DPS base units (priceRate per PFLOP/s per second). kOverflow if it leaves 128 bits.
 */
[[nodiscard]] Result<u128> payment(u128 priceRate, std::uint64_t correctedGflops,
                                   std::uint64_t seconds);

// ---------------------------------------------------------------------------------------------
// Parameters, epochs and slots (docs/tokenomics.md)
// ---------------------------------------------------------------------------------------------

/** Tokenomics parameters, with the paper's defaults where it gives one (docs/tokenomics.md). */
struct TokenomicsParams {
    /** D: epoch length (paper: GFL is rebalanced every 15 days). */
    std::uint64_t epochMs = 15 * kDayMs;
    /** Attestation slot length; must divide epochMs. */
    std::uint64_t slotMs = 3'600'000;
    /** Share of a provider's GFL burned for the DPS payout (paper: 20%). */
    std::uint32_t rewardShareBps = 2'000;
    /** R: DPS base units paid per GFLOP/s of GFL burned before any halving (1 DPS per 100 GFL). */
    std::uint64_t rewardRate = 10'000'000'000ULL;
    /** Halving after this long since the last halving (paper: every year). */
    std::uint64_t halvingPeriodMs = 365 * kDayMs;
    /** …or once this much GFL (GFLOP/s) has been converted since the last halving (1 000 000 GFL).
     */
    std::uint64_t halvingGflThreshold = 1'000'000 * kGflUnit;
    /** Share of every settled task payment that flows back into the reward pool (10%). */
    std::uint32_t poolShareBps = 1'000;

    /** S = epochMs / slotMs. */
    [[nodiscard]] std::uint64_t slotsPerEpoch() const { return epochMs / slotMs; }

    /**
     * Checks: epochMs > 0, slotMs > 0, slotMs divides epochMs, S ≤ kMaxSlotsPerEpoch, both bps
     * shares ≤ 10 000, rewardRate > 0, halvingPeriodMs > 0, halvingGflThreshold > 0. Fails with
     * kInvalidArgument naming the fault.
     */
    [[nodiscard]] Status validate() const;
};

/** The epoch k with genesisMs + k·D ≤ timeMs < genesisMs + (k+1)·D; kInvalidArgument before
 * genesis. */
[[nodiscard]] Result<std::uint64_t> epochOf(const TokenomicsParams& params, std::uint64_t genesisMs,
                                            std::uint64_t timeMs);

/** The boundary that ends epoch k: genesisMs + (k+1)·D. kOverflow past 2^64 ms. */
[[nodiscard]] Result<std::uint64_t> epochEndMs(const TokenomicsParams& params,
                                               std::uint64_t genesisMs, std::uint64_t epoch);

/** The slot (0 … S−1) of timeMs within its epoch; kInvalidArgument before genesis. */
[[nodiscard]] Result<std::uint64_t> slotOf(const TokenomicsParams& params, std::uint64_t genesisMs,
                                           std::uint64_t timeMs);

// ---------------------------------------------------------------------------------------------
// The median over an epoch's slots
// ---------------------------------------------------------------------------------------------

/** A provider's attested value for one slot of the epoch. */
struct SlotSample {
    std::uint64_t slot = 0;
    /** The slot value in corrected GFLOP/s (slotValueGflops). */
    std::uint64_t gflops = 0;
    /** An upheld challenge zeroes the slot. */
    bool challenged = false;
};

/**
 * The lower median: the element at index ⌊(n−1)/2⌋ of the values sorted ascending (for an even
 * n the smaller of the two middle values). kInvalidArgument if `values` is empty.
 */
[[nodiscard]] Result<std::uint64_t> lowerMedian(std::span<const std::uint64_t> values);

/**
 * A provider's allocated power for an epoch of `slots` slots: the lower median of the S slot
 * values, where a slot with no sample or a challenged sample counts as 0. kInvalidArgument if
 * slots is 0 or above kMaxSlotsPerEpoch, a sample's slot is ≥ slots, or two samples share a slot.
 */
[[nodiscard]] Result<std::uint64_t> allocatedPower(std::uint64_t slots,
                                                   std::span<const SlotSample> samples);

// ---------------------------------------------------------------------------------------------
// Settlement, halving and the reward pool (docs/tokenomics.md)
// ---------------------------------------------------------------------------------------------

/** The emission state carried from one settlement to the next. */
struct EmissionState {
    /** n: halvings so far. */
    std::uint32_t halvings = 0;
    /** The boundary time of the last halving (genesis time before the first). */
    std::uint64_t lastHalvingMs = 0;
    /** GFL converted to DPS since the last halving, net of replenishment, in GFLOP/s. */
    std::uint64_t convertedGfl = 0;
    /** DPS base units left in the reward pool. */
    u128 rewardPool = 0;

    bool operator==(const EmissionState&) const = default;
};

/** Step (1) of a provider's settlement before the pool is consulted. */
struct PayoutQuote {
    /** floor(balance × rewardShareBps / 10 000) GFLOP/s burned. */
    std::uint64_t burned = 0;
    /** floor(burned × R / 2^n) DPS base units owed for it. */
    u128 owed = 0;

    bool operator==(const PayoutQuote&) const = default;
};

/** What a settlement did to one provider. */
struct ProviderSettlement {
    Address provider;
    std::uint64_t balanceBefore = 0;
    /** GFL burned by the payout (step 1). */
    std::uint64_t payoutBurned = 0;
    /** DPS owed for the burned GFL at the current rate. */
    u128 owed = 0;
    /** DPS paid from the pool (≤ owed). */
    u128 paid = 0;
    /** owed − paid: recorded, not carried forward. */
    u128 shortfall = 0;
    /** GFL minted by the rebalance (step 2). */
    std::uint64_t minted = 0;
    /** GFL burned by the rebalance (step 2). */
    std::uint64_t rebalanceBurned = 0;
    /** The allocated power (median); the balance after settlement. */
    std::uint64_t balanceAfter = 0;

    bool operator==(const ProviderSettlement&) const = default;
};

/** A provider entering an epoch settlement. */
struct ProviderEpoch {
    Address provider;
    /** GFL held through the epoch, in GFLOP/s. */
    std::uint64_t gflBalance = 0;
    /** Its allocated power for the epoch (allocatedPower), in GFLOP/s. */
    std::uint64_t allocatedPower = 0;
};

/** The outcome of settling one epoch for every provider. */
struct EpochSettlement {
    /** One entry per provider, in ascending address order. */
    std::vector<ProviderSettlement> providers;
    std::uint64_t totalPayoutBurned = 0;
    std::uint64_t totalMinted = 0;
    std::uint64_t totalRebalanceBurned = 0;
    /** Σ allocated power: the GFL supply after the settlement. */
    std::uint64_t supplyAfter = 0;
    u128 totalOwed = 0;
    u128 totalPaid = 0;
    u128 totalShortfall = 0;
    /** Whether a halving happened at this settlement, and which rule(s) triggered it. */
    bool halvedByPeriod = false;
    bool halvedByThreshold = false;
    /** The emission state after the payout, the halving check and the pool debit. */
    EmissionState after;

    [[nodiscard]] bool halved() const { return halvedByPeriod || halvedByThreshold; }
};

/** Step (1) for a balance: the GFL burned and the DPS owed at n halvings. */
[[nodiscard]] Result<PayoutQuote> quotePayout(const TokenomicsParams& params,
                                              std::uint32_t halvings, std::uint64_t gflBalance);

/**
 * Settles one provider alone (docs/tokenomics.md): (1) burns its reward share and is paid
 * min(owed, poolAvailable), the rest being its shortfall; (2) mints or burns GFL so that its
 * balance equals `allocatedPower`. Requires validated params.
 */
[[nodiscard]] Result<ProviderSettlement> settleProvider(const TokenomicsParams& params,
                                                        std::uint32_t halvings,
                                                        const ProviderEpoch& provider,
                                                        u128 poolAvailable);

/**
 * Settles an epoch ending at `boundaryMs` for every provider (any order in; output in ascending
 * address order; a duplicate address is kInvalidArgument). The caller passes every provider
 * holding GFL or with a non-zero allocated power. Steps:
 * 1. quote every provider's payout at the current n;
 * 2. pay from the pool: in full if Σ owed ≤ pool, otherwise pro rata, each provider receiving
 *    floor(owed × pool / Σ owed) and the leftover base units going one each to the largest
 *    remainders (ties to the lower address), so exactly the whole pool is paid out;
 * 3. rebalance every provider to its allocated power;
 * 4. add the burned GFL to the converted counter, then halve (n + 1, counter reset, last halving
 *    = boundaryMs) if boundaryMs − lastHalvingMs ≥ halvingPeriodMs or the counter ≥ threshold.
 * Nothing is returned on error (kOverflow, kInvalidArgument if boundaryMs < lastHalvingMs).
 */
[[nodiscard]] Result<EpochSettlement> settleEpoch(const TokenomicsParams& params,
                                                  const EmissionState& before,
                                                  std::uint64_t boundaryMs,
                                                  std::vector<ProviderEpoch> providers);

/**
 * The GFL equivalent of `dps` base units at n halvings: floor(dps × 2^n / R) GFLOP/s (that is,
 * DPS × 100 × 2^n GFL at the default R), capped at `cap`.
 */
[[nodiscard]] std::uint64_t gflEquivalent(const TokenomicsParams& params, std::uint32_t halvings,
                                          u128 dps, std::uint64_t cap);

/** Where a settled task payment went. */
struct Replenishment {
    /** floor(taskPayment × poolShareBps / 10 000): back into the reward pool. */
    u128 toPool = 0;
    /** taskPayment − toPool: to the provider. */
    u128 toProvider = 0;
    /** GFLOP/s taken off the converted counter: min(counter, gflEquivalent(toPool)). */
    std::uint64_t convertedReduction = 0;
    EmissionState after;
};

/**
 * Replenishes the pool from one settled task payment (docs/tokenomics.md). kOverflow if the pool
 * would leave 128 bits.
 */
[[nodiscard]] Result<Replenishment> replenish(const TokenomicsParams& params,
                                              const EmissionState& before, u128 taskPayment);

}  // namespace gridledger::contracts
