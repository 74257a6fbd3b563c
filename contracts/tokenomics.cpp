#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <gridledger/contracts/tokenomics.h>

namespace gridledger::contracts {
namespace {

constexpr u128 kLow64 = (u128{1} << 64U) - 1;

/** Turns an empty checked-arithmetic result into kOverflow naming `what`. */
template <typename T>
Result<T> checked(std::optional<T> value, std::string_view what) {
    if (!value) {
        return fail(ErrorCode::kOverflow, std::string(what) + " overflows");
    }
    return *value;
}

/** Narrows a u128 to 64 bits, or kOverflow naming `what`. */
Result<std::uint64_t> toU64(u128 value, std::string_view what) {
    if (value > kLow64) {
        return fail(ErrorCode::kOverflow, std::string(what) + " exceeds 64 bits");
    }
    return static_cast<std::uint64_t>(value);
}

/** floor(a × b / c) for a result known to fit in 64 bits. */
Result<std::uint64_t> mulDiv64(std::uint64_t a, std::uint64_t b, std::uint64_t c,
                               std::string_view what) {
    GL_ASSIGN_OR_RETURN(q, mulDiv(a, b, c));
    return toU64(q.quotient, what);
}

/** x / 2^n, rounded down; 0 once n reaches 128. */
u128 shiftDown(u128 x, std::uint32_t n) {
    return n >= 128 ? u128{0} : x >> n;
}

const WorkloadCategory* findCategory(const PowerIndexParams& params, std::string_view name) {
    for (const auto& category : params.categories) {
        if (category.name == name) {
            return &category;
        }
    }
    return nullptr;
}

const PerformanceFactor* findFactor(const PowerIndexParams& params, std::string_view name) {
    for (const auto& factor : params.factors) {
        if (factor.name == name) {
            return &factor;
        }
    }
    return nullptr;
}

Status validateCategory(const PowerIndexParams& params, const WorkloadCategory& category) {
    const std::string where = "workload category '" + category.name + "'";
    if (category.weights.empty()) {
        return fail(ErrorCode::kInvalidArgument, where + " weighs no factor");
    }
    std::set<std::string_view> seen;
    std::uint64_t sum = 0;
    for (const auto& weight : category.weights) {
        if (findFactor(params, weight.factor) == nullptr) {
            return fail(ErrorCode::kInvalidArgument,
                        where + " weighs unknown factor '" + weight.factor + "'");
        }
        if (!seen.insert(weight.factor).second) {
            return fail(ErrorCode::kInvalidArgument,
                        where + " weighs factor '" + weight.factor + "' twice");
        }
        sum += weight.weightBps;  // at most 2^32 per factor: no u64 overflow for any real list
    }
    if (sum != kBps) {
        return fail(ErrorCode::kInvalidArgument,
                    where + " weights sum to " + std::to_string(sum) + " bps, not 10000");
    }
    return {};
}

/** floor(a × b / c) over 256 bits, requiring a quotient below 2^128 (checked by the caller). */
MulDiv divide256(u128 hi, u128 lo, u128 c) {
    // Shift-subtract long division; the running remainder stays below c, and a carry out of bit
    // 127 means the true remainder exceeds 2^128 > c, so subtracting c (mod 2^128) is exact.
    u128 quotient = 0;
    u128 remainder = hi;
    for (int bit = 127; bit >= 0; --bit) {
        const bool carry = (remainder >> 127U) != 0;
        remainder = (remainder << 1U) | ((lo >> static_cast<unsigned>(bit)) & 1U);
        quotient <<= 1U;
        if (carry || remainder >= c) {
            remainder -= c;
            quotient |= 1U;
        }
    }
    return MulDiv{quotient, remainder};
}

}  // namespace

Result<MulDiv> mulDiv(u128 a, u128 b, u128 c) {
    if (c == 0) {
        return fail(ErrorCode::kInvalidArgument, "division by zero");
    }
    // a × b = hi · 2^128 + lo, from four 64 × 64-bit partial products.
    const u128 a0 = a & kLow64;
    const u128 a1 = a >> 64U;
    const u128 b0 = b & kLow64;
    const u128 b1 = b >> 64U;
    const u128 p00 = a0 * b0;
    const u128 p01 = a0 * b1;
    const u128 p10 = a1 * b0;
    const u128 p11 = a1 * b1;
    const u128 mid = (p00 >> 64U) + (p01 & kLow64) + (p10 & kLow64);
    const u128 lo = (p00 & kLow64) | (mid << 64U);
    const u128 hi = p11 + (p01 >> 64U) + (p10 >> 64U) + (mid >> 64U);
    if (hi >= c) {
        return fail(ErrorCode::kOverflow, "a * b / c exceeds 128 bits");
    }
    if (hi == 0) {
        return MulDiv{lo / c, lo % c};
    }
    return divide256(hi, lo, c);
}

// ---------------------------------------------------------------------------------------------
// Computational power index
// ---------------------------------------------------------------------------------------------

Status PowerIndexParams::validate() const {
    if (factors.empty()) {
        return fail(ErrorCode::kInvalidArgument, "the power index has no performance factor");
    }
    if (categories.empty()) {
        return fail(ErrorCode::kInvalidArgument, "the power index has no workload category");
    }
    std::set<std::string_view> factorNames;
    for (const auto& factor : factors) {
        if (factor.name.empty()) {
            return fail(ErrorCode::kInvalidArgument, "a performance factor has no name");
        }
        if (!factorNames.insert(factor.name).second) {
            return fail(ErrorCode::kInvalidArgument,
                        "performance factor '" + factor.name + "' is declared twice");
        }
        if (factor.referenceMax == 0) {
            return fail(ErrorCode::kInvalidArgument,
                        "performance factor '" + factor.name + "' has reference maximum 0");
        }
    }
    std::set<std::string_view> categoryNames;
    for (const auto& category : categories) {
        if (category.name.empty()) {
            return fail(ErrorCode::kInvalidArgument, "a workload category has no name");
        }
        if (!categoryNames.insert(category.name).second) {
            return fail(ErrorCode::kInvalidArgument,
                        "workload category '" + category.name + "' is declared twice");
        }
        GL_TRY(validateCategory(*this, category));
    }
    if (greenMaxBonusBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "green bonus above 10000 bps");
    }
    return {};
}

Result<std::uint64_t> normalisedFactorPpm(std::uint64_t value, std::uint64_t referenceMax) {
    if (referenceMax == 0) {
        return fail(ErrorCode::kInvalidArgument, "reference maximum is 0");
    }
    if (value >= referenceMax) {
        return kPpm;
    }
    // value < referenceMax, so the quotient is below 10^6.
    return mulDiv64(value, kPpm, referenceMax, "normalised factor");
}

Result<std::uint64_t> adjustmentRatioPpm(const PowerIndexParams& params, std::string_view category,
                                         const FactorValues& values) {
    const WorkloadCategory* found = findCategory(params, category);
    if (found == nullptr) {
        return fail(ErrorCode::kNotFound,
                    "unknown workload category '" + std::string(category) + "'");
    }
    // Σ weight (bps) × P (ppm) ≤ 10^4 × 10^6 per unit of weight sum: fits easily in 64 bits.
    std::uint64_t sum = 0;
    for (const auto& weight : found->weights) {
        const PerformanceFactor* factor = findFactor(params, weight.factor);
        const auto value = values.find(weight.factor);
        if (factor == nullptr || value == values.end()) {
            return fail(ErrorCode::kInvalidArgument,
                        "device has no value for factor '" + weight.factor + "'");
        }
        GL_ASSIGN_OR_RETURN(p, normalisedFactorPpm(value->second, factor->referenceMax));
        GL_ASSIGN_OR_RETURN(term, checked(checkedMul(p, std::uint64_t{weight.weightBps}), "W_i"));
        GL_ASSIGN_OR_RETURN(next, checked(checkedAdd(sum, term), "W_i"));
        sum = next;
    }
    return std::min(sum / kBps, kPpm);
}

Result<std::uint64_t> correctedGflops(std::uint64_t rawGflops, std::uint64_t ratioPpm) {
    if (ratioPpm > kPpm) {
        return fail(ErrorCode::kInvalidArgument, "adjustment ratio above 1");
    }
    return mulDiv64(rawGflops, ratioPpm, kPpm, "corrected FLOP/s");
}

Result<std::uint64_t> greenMultiplierBps(const PowerIndexParams& params,
                                         std::uint32_t renewableShareBps) {
    if (renewableShareBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "renewable share above 10000 bps");
    }
    return kBps + std::uint64_t{params.greenMaxBonusBps} * renewableShareBps / kBps;
}

Result<std::uint64_t> deviceCorrectedGflops(const PowerIndexParams& params,
                                            std::string_view category, const DeviceSpec& device) {
    GL_ASSIGN_OR_RETURN(ratio, adjustmentRatioPpm(params, category, device.factors));
    return correctedGflops(device.rawGflops, ratio);
}

const WorkloadCategory* PowerIndexParams::category(std::string_view name) const {
    const auto it = std::find_if(categories.begin(), categories.end(),
                                 [&](const WorkloadCategory& c) { return c.name == name; });
    return it == categories.end() ? nullptr : &*it;
}

Result<std::uint64_t> slotValueGflops(const PowerIndexParams& params, std::string_view category,
                                      std::span<const DeviceAllocation> allocations,
                                      std::uint32_t renewableShareBps) {
    std::uint64_t sum = 0;
    for (const auto& allocation : allocations) {
        GL_ASSIGN_OR_RETURN(each, deviceCorrectedGflops(params, category, allocation.device));
        GL_ASSIGN_OR_RETURN(all, checked(checkedMul(each, allocation.count), "slot value"));
        GL_ASSIGN_OR_RETURN(next, checked(checkedAdd(sum, all), "slot value"));
        sum = next;
    }
    GL_ASSIGN_OR_RETURN(multiplier, greenMultiplierBps(params, renewableShareBps));
    return mulDiv64(sum, multiplier, kBps, "green slot value");
}

Result<u128> payment(u128 priceRate, std::uint64_t correctedGflops, std::uint64_t seconds) {
    GL_ASSIGN_OR_RETURN(power, checked(checkedMul(priceRate, u128{correctedGflops}), "payment"));
    GL_ASSIGN_OR_RETURN(scaled, mulDiv(power, seconds, kGflUnit));
    return scaled.quotient;
}

// ---------------------------------------------------------------------------------------------
// Parameters, epochs and slots
// ---------------------------------------------------------------------------------------------

Status TokenomicsParams::validate() const {
    if (epochMs == 0 || slotMs == 0) {
        return fail(ErrorCode::kInvalidArgument, "epoch and slot lengths must be positive");
    }
    if (epochMs % slotMs != 0) {
        return fail(ErrorCode::kInvalidArgument, "the slot length " + std::to_string(slotMs) +
                                                     " ms does not divide the epoch length " +
                                                     std::to_string(epochMs) + " ms");
    }
    if (slotsPerEpoch() > kMaxSlotsPerEpoch) {
        return fail(ErrorCode::kInvalidArgument, std::to_string(slotsPerEpoch()) +
                                                     " slots per epoch exceed the limit " +
                                                     std::to_string(kMaxSlotsPerEpoch));
    }
    if (rewardShareBps > kBps || poolShareBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "a share above 10000 bps");
    }
    if (rewardRate == 0) {
        return fail(ErrorCode::kInvalidArgument, "the reward rate R is 0");
    }
    if (halvingPeriodMs == 0 || halvingGflThreshold == 0) {
        return fail(ErrorCode::kInvalidArgument,
                    "the halving period and threshold must be positive");
    }
    return {};
}

Result<std::uint64_t> epochOf(const TokenomicsParams& params, std::uint64_t genesisMs,
                              std::uint64_t timeMs) {
    if (timeMs < genesisMs || params.epochMs == 0) {
        return fail(ErrorCode::kInvalidArgument, "time before genesis or zero epoch length");
    }
    return (timeMs - genesisMs) / params.epochMs;
}

Result<std::uint64_t> epochEndMs(const TokenomicsParams& params, std::uint64_t genesisMs,
                                 std::uint64_t epoch) {
    GL_ASSIGN_OR_RETURN(count, checked(checkedAdd(epoch, std::uint64_t{1}), "epoch end"));
    GL_ASSIGN_OR_RETURN(span, checked(checkedMul(count, params.epochMs), "epoch end"));
    return checked(checkedAdd(genesisMs, span), "epoch end");
}

Result<std::uint64_t> slotOf(const TokenomicsParams& params, std::uint64_t genesisMs,
                             std::uint64_t timeMs) {
    if (timeMs < genesisMs || params.epochMs == 0 || params.slotMs == 0) {
        return fail(ErrorCode::kInvalidArgument, "time before genesis or zero epoch/slot length");
    }
    return (timeMs - genesisMs) % params.epochMs / params.slotMs;
}

// ---------------------------------------------------------------------------------------------
// The median over an epoch's slots
// ---------------------------------------------------------------------------------------------

Result<std::uint64_t> lowerMedian(std::span<const std::uint64_t> values) {
    if (values.empty()) {
        return fail(ErrorCode::kInvalidArgument, "median of no values");
    }
    std::vector<std::uint64_t> sorted(values.begin(), values.end());
    const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>((sorted.size() - 1) / 2);
    std::nth_element(sorted.begin(), middle, sorted.end());
    return *middle;
}

Result<std::uint64_t> allocatedPower(std::uint64_t slots, std::span<const SlotSample> samples) {
    if (slots == 0 || slots > kMaxSlotsPerEpoch) {
        return fail(ErrorCode::kInvalidArgument,
                    "an epoch of " + std::to_string(slots) + " slots is out of range");
    }
    std::vector<std::uint64_t> values(slots, 0);
    std::vector<bool> seen(slots, false);
    for (const auto& sample : samples) {
        if (sample.slot >= slots) {
            return fail(ErrorCode::kInvalidArgument, "slot " + std::to_string(sample.slot) +
                                                         " outside an epoch of " +
                                                         std::to_string(slots) + " slots");
        }
        if (seen[sample.slot]) {
            return fail(ErrorCode::kInvalidArgument,
                        "two samples for slot " + std::to_string(sample.slot));
        }
        seen[sample.slot] = true;
        values[sample.slot] = sample.challenged ? 0 : sample.gflops;
    }
    return lowerMedian(values);
}

// ---------------------------------------------------------------------------------------------
// Settlement, halving and the reward pool
// ---------------------------------------------------------------------------------------------

namespace {

/** Step (2): mints or burns so that the balance after the payout equals the allocated power. */
void rebalance(ProviderSettlement& out, std::uint64_t allocatedPower) {
    const std::uint64_t held = out.balanceBefore - out.payoutBurned;
    if (allocatedPower >= held) {
        out.minted = allocatedPower - held;
    } else {
        out.rebalanceBurned = held - allocatedPower;
    }
    out.balanceAfter = allocatedPower;
}

/**
 * Pays `pool` (< Σ owed = totalOwed) pro rata: floor(owed × pool / totalOwed) each, then one base
 * unit each to the `pool − Σ floors` largest remainders, ties to the earlier (lower) address.
 */
Status payProRata(std::vector<ProviderSettlement>& out, u128 pool, u128 totalOwed) {
    std::vector<std::pair<u128, std::size_t>> remainders;  // (remainder, index)
    u128 paidSoFar = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        GL_ASSIGN_OR_RETURN(share, mulDiv(out[i].owed, pool, totalOwed));
        out[i].paid = share.quotient;
        paidSoFar += share.quotient;  // Σ floors ≤ pool: no overflow
        if (share.remainder != 0) {
            remainders.emplace_back(share.remainder, i);
        }
    }
    // Σ remainders = (pool − Σ floors) × totalOwed and each remainder < totalOwed, so the leftover
    // is smaller than the number of non-zero remainders, and floor + 1 never exceeds owed.
    const u128 leftover = pool - paidSoFar;
    std::sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    for (std::size_t k = 0; u128{k} < leftover; ++k) {
        out[remainders[k].second].paid += 1;
    }
    return {};
}

}  // namespace

Result<PayoutQuote> quotePayout(const TokenomicsParams& params, std::uint32_t halvings,
                                std::uint64_t gflBalance) {
    if (params.rewardShareBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "reward share above 10000 bps");
    }
    GL_ASSIGN_OR_RETURN(burned, mulDiv64(gflBalance, params.rewardShareBps, kBps, "payout burn"));
    // burned < 2^64 and R < 2^64: the product fits in 128 bits.
    const u128 owed = shiftDown(u128{burned} * params.rewardRate, halvings);
    return PayoutQuote{burned, owed};
}

Result<ProviderSettlement> settleProvider(const TokenomicsParams& params, std::uint32_t halvings,
                                          const ProviderEpoch& provider, u128 poolAvailable) {
    GL_ASSIGN_OR_RETURN(quote, quotePayout(params, halvings, provider.gflBalance));
    ProviderSettlement out;
    out.provider = provider.provider;
    out.balanceBefore = provider.gflBalance;
    out.payoutBurned = quote.burned;
    out.owed = quote.owed;
    out.paid = std::min(quote.owed, poolAvailable);
    out.shortfall = quote.owed - out.paid;
    rebalance(out, provider.allocatedPower);
    return out;
}

Result<EpochSettlement> settleEpoch(const TokenomicsParams& params, const EmissionState& before,
                                    std::uint64_t boundaryMs,
                                    std::vector<ProviderEpoch> providers) {
    if (boundaryMs < before.lastHalvingMs) {
        return fail(ErrorCode::kInvalidArgument, "epoch boundary before the last halving");
    }
    std::sort(providers.begin(), providers.end(),
              [](const auto& a, const auto& b) { return a.provider < b.provider; });
    EpochSettlement out;
    out.providers.reserve(providers.size());
    for (std::size_t i = 0; i < providers.size(); ++i) {
        if (i > 0 && providers[i].provider == providers[i - 1].provider) {
            return fail(ErrorCode::kInvalidArgument,
                        "provider " + providers[i].provider.hex() + " is listed twice");
        }
        // Step (1): quote at the current n; the pool is consulted below for all at once.
        GL_ASSIGN_OR_RETURN(settled,
                            settleProvider(params, before.halvings, providers[i], ~u128{0}));
        GL_ASSIGN_OR_RETURN(owed, checked(checkedAdd(out.totalOwed, settled.owed), "total owed"));
        out.totalOwed = owed;
        out.providers.push_back(settled);
    }
    if (out.totalOwed > before.rewardPool) {
        GL_TRY(payProRata(out.providers, before.rewardPool, out.totalOwed));
    }
    for (auto& p : out.providers) {
        p.shortfall = p.owed - p.paid;
        out.totalPaid += p.paid;  // ≤ totalOwed
        out.totalShortfall += p.shortfall;
        GL_ASSIGN_OR_RETURN(
            burned, checked(checkedAdd(out.totalPayoutBurned, p.payoutBurned), "total burned"));
        GL_ASSIGN_OR_RETURN(minted, checked(checkedAdd(out.totalMinted, p.minted), "total minted"));
        GL_ASSIGN_OR_RETURN(reburned,
                            checked(checkedAdd(out.totalRebalanceBurned, p.rebalanceBurned),
                                    "total rebalance burn"));
        GL_ASSIGN_OR_RETURN(supply,
                            checked(checkedAdd(out.supplyAfter, p.balanceAfter), "GFL supply"));
        out.totalPayoutBurned = burned;
        out.totalMinted = minted;
        out.totalRebalanceBurned = reburned;
        out.supplyAfter = supply;
    }

    // Step (4), after the payout: count the conversion, then check both halving rules.
    out.after = before;
    out.after.rewardPool = before.rewardPool - out.totalPaid;
    GL_ASSIGN_OR_RETURN(converted, checked(checkedAdd(before.convertedGfl, out.totalPayoutBurned),
                                           "converted GFL"));
    out.after.convertedGfl = converted;
    out.halvedByPeriod = boundaryMs - before.lastHalvingMs >= params.halvingPeriodMs;
    out.halvedByThreshold = converted >= params.halvingGflThreshold;
    if (out.halved()) {
        if (before.halvings == std::numeric_limits<std::uint32_t>::max()) {
            return fail(ErrorCode::kOverflow, "halving count overflows");
        }
        out.after.halvings = before.halvings + 1;
        out.after.lastHalvingMs = boundaryMs;
        out.after.convertedGfl = 0;
    }
    return out;
}

std::uint64_t gflEquivalent(const TokenomicsParams& params, std::uint32_t halvings, u128 dps,
                            std::uint64_t cap) {
    if (dps == 0) {
        return 0;
    }
    // With R < 2^64, any dps × 2^n of 2^128 or more is worth over 2^64 GFLOP/s: above every cap.
    if (params.rewardRate == 0 || halvings >= 128 || dps > (~u128{0} >> halvings)) {
        return cap;
    }
    const u128 equivalent = (dps << halvings) / params.rewardRate;
    return equivalent >= u128{cap} ? cap : static_cast<std::uint64_t>(equivalent);
}

Result<Replenishment> replenish(const TokenomicsParams& params, const EmissionState& before,
                                u128 taskPayment) {
    if (params.poolShareBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "pool share above 10000 bps");
    }
    GL_ASSIGN_OR_RETURN(share, mulDiv(taskPayment, params.poolShareBps, kBps));
    Replenishment out;
    out.toPool = share.quotient;
    out.toProvider = taskPayment - out.toPool;
    out.convertedReduction =
        gflEquivalent(params, before.halvings, out.toPool, before.convertedGfl);
    out.after = before;
    out.after.convertedGfl = before.convertedGfl - out.convertedReduction;
    GL_ASSIGN_OR_RETURN(pool, checked(checkedAdd(before.rewardPool, out.toPool), "reward pool"));
    out.after.rewardPool = pool;
    return out;
}

}  // namespace gridledger::contracts
