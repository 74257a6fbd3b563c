#include <gridledger/contracts/params.h>

#include "record.h"

namespace gridledger::contracts {
namespace {

// Format 2 appended the task parameters, format 3 the fees, format 4 the task deposit and cap,
// format 5 the matching scan per block, format 6 the provider stake, format 7 the reputation,
// format 8 the replicas and spot checks (and their two fees).
constexpr std::uint8_t kParamsFormat = 8;
constexpr std::string_view kFeePrefix = "fees.";
constexpr std::string_view kFactorPrefix = "index.factor.";
constexpr std::string_view kCategoryPrefix = "index.category.";
constexpr std::string_view kSlashShares = "stake.slash_shares";

Error badParameter(std::string_view name, std::string_view why) {
    return Error{ErrorCode::kInvalidProposal,
                 "parameter '" + std::string(name) + "': " + std::string(why)};
}

Result<std::uint64_t> u64Value(std::string_view name, std::string_view text) {
    auto value = parseU64(text);
    if (!value) {
        return std::unexpected(badParameter(name, "value is not a decimal u64"));
    }
    return *value;
}

Result<std::uint32_t> bpsValue(std::string_view name, std::string_view text) {
    GL_ASSIGN_OR_RETURN(value, u64Value(name, text));
    if (value > kBps) {
        return std::unexpected(badParameter(name, "value above 10000 bps"));
    }
    return static_cast<std::uint32_t>(value);
}

/** "factor=bps,factor=bps" → weights, in the order given. */
Result<std::vector<FactorWeight>> weightsValue(std::string_view name, std::string_view text) {
    std::vector<FactorWeight> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0) {
            return std::unexpected(badParameter(name, "weights are factor=bps,factor=bps"));
        }
        GL_ASSIGN_OR_RETURN(bps, bpsValue(name, item.substr(eq + 1)));
        out.push_back(FactorWeight{std::string(item.substr(0, eq)), bps});
    }
    return out;
}

std::string weightsText(const std::vector<FactorWeight>& weights) {
    std::string out;
    for (const auto& w : weights) {
        out += (out.empty() ? "" : ",") + w.factor + "=" + std::to_string(w.weightBps);
    }
    return out;
}

/** "burn=B,challenger=C,pool=P": all three, in this order; the sum is checked by validate(). */
Status setSlashShares(StakeParams& stake, std::string_view text) {
    const std::string_view name = kSlashShares;
    GL_ASSIGN_OR_RETURN(items, weightsValue(name, text));
    if (items.size() != 3 || items[0].factor != "burn" || items[1].factor != "challenger" ||
        items[2].factor != "pool") {
        return std::unexpected(badParameter(name, "shares are burn=bps,challenger=bps,pool=bps"));
    }
    stake.slashBurnBps = items[0].weightBps;
    stake.slashChallengerBps = items[1].weightBps;
    stake.slashPoolBps = items[2].weightBps;
    return {};
}

std::string slashSharesText(const StakeParams& stake) {
    return "burn=" + std::to_string(stake.slashBurnBps) +
           ",challenger=" + std::to_string(stake.slashChallengerBps) +
           ",pool=" + std::to_string(stake.slashPoolBps);
}

/** Applies one stake.* change; false when `name` is not a stake parameter. */
Result<bool> setStake(StakeParams& stake, std::string_view name, std::string_view value) {
    if (name == "stake.provider_bond") {
        auto v = parseU128(value);
        if (!v) {
            return std::unexpected(badParameter(name, "value is not a decimal u128"));
        }
        stake.providerBond = *v;
        return true;
    }
    if (name == "stake.slash_bps") {
        GL_ASSIGN_OR_RETURN(v, bpsValue(name, value));
        stake.slashBps = v;
        return true;
    }
    if (name == kSlashShares) {
        GL_TRY(setSlashShares(stake, value));
        return true;
    }
    if (name == "stake.unbonding_delay_ms") {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        stake.unbondingDelayMs = v;
        return true;
    }
    return false;
}

/** The reputation parameter named `name` ("reputation.half_life_epochs", …), or nullptr. */
std::uint64_t* reputationField(ReputationParams& reputation, std::string_view name) {
    if (name == "reputation.half_life_epochs") {
        return &reputation.halfLifeEpochs;
    }
    if (name == "reputation.prior_jobs") {
        return &reputation.priorJobs;
    }
    if (name == "reputation.fault_weight") {
        return &reputation.faultWeight;
    }
    if (name == "reputation.slash_weight") {
        return &reputation.slashWeight;
    }
    return nullptr;
}

/** The task parameter named `name` ("tasks.claim_timeout_ms", …), or nullptr. */
std::uint64_t* taskField(TaskParams& tasks, std::string_view name) {
    if (name == "tasks.claim_timeout_ms") {
        return &tasks.claimTimeoutMs;
    }
    if (name == "tasks.assign_timeout_ms") {
        return &tasks.assignTimeoutMs;
    }
    if (name == "tasks.verify_window_ms") {
        return &tasks.verifyWindowMs;
    }
    if (name == "tasks.panic_after_slots") {
        return &tasks.panicAfterSlots;
    }
    if (name == "tasks.cancellation_fee_minutes") {
        return &tasks.cancellationFeeMinutes;
    }
    if (name == "tasks.creation_deposit") {
        return &tasks.creationDeposit;
    }
    if (name == "tasks.deposit_forfeit_bps") {
        return &tasks.depositForfeitBps;
    }
    if (name == "tasks.max_pending_per_consumer") {
        return &tasks.maxPendingPerConsumer;
    }
    if (name == "tasks.match_scan_per_block") {
        return &tasks.matchScanPerBlock;
    }
    if (name == "tasks.max_replicas") {
        return &tasks.maxReplicas;
    }
    if (name == "tasks.spot_check_window_ms") {
        return &tasks.spotCheckWindowMs;
    }
    if (name == "tasks.spot_check_verdict_ms") {
        return &tasks.spotCheckVerdictMs;
    }
    if (name == "tasks.spot_check_bond") {
        return &tasks.spotCheckBond;
    }
    return nullptr;
}

/** Splits "index.category.<name>.<field>" into name and field; false when it does not fit. */
bool splitNamed(std::string_view full, std::string_view prefix, std::string_view& name,
                std::string_view& field) {
    if (!full.starts_with(prefix)) {
        return false;
    }
    const std::string_view rest = full.substr(prefix.size());
    const auto dot = rest.rfind('.');
    if (dot == std::string_view::npos || dot == 0) {
        return false;
    }
    name = rest.substr(0, dot);
    field = rest.substr(dot + 1);
    return true;
}

PerformanceFactor* findFactor(PowerIndexParams& index, std::string_view name) {
    for (auto& f : index.factors) {
        if (f.name == name) {
            return &f;
        }
    }
    return nullptr;
}

WorkloadCategory* findCategory(PowerIndexParams& index, std::string_view name) {
    for (auto& c : index.categories) {
        if (c.name == name) {
            return &c;
        }
    }
    return nullptr;
}

/** Applies one change in place; the caller validates the whole result. */
Status setOne(ChainParams& p, std::string_view name, std::string_view value) {
    auto& t = p.tokenomics;
    if (name == "tokenomics.epoch_ms" || name == "tokenomics.slot_ms") {
        return std::unexpected(badParameter(name, "fixed at genesis: it defines the epoch grid"));
    }
    if (name == "tokenomics.reward_share_bps") {
        GL_ASSIGN_OR_RETURN(v, bpsValue(name, value));
        t.rewardShareBps = v;
        return {};
    }
    if (name == "tokenomics.pool_share_bps") {
        GL_ASSIGN_OR_RETURN(v, bpsValue(name, value));
        t.poolShareBps = v;
        return {};
    }
    if (name == "tokenomics.reward_rate") {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        t.rewardRate = v;
        return {};
    }
    if (name == "tokenomics.halving_period_ms") {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        t.halvingPeriodMs = v;
        return {};
    }
    if (name == "tokenomics.halving_gfl_threshold") {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        t.halvingGflThreshold = v;
        return {};
    }
    if (name == "index.green_max_bonus_bps") {
        GL_ASSIGN_OR_RETURN(v, bpsValue(name, value));
        p.index.greenMaxBonusBps = v;
        return {};
    }
    if (name == "governance.proposal_ttl_ms") {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        p.governance.proposalTtlMs = v;
        return {};
    }
    if (auto* field = taskField(p.tasks, name); field != nullptr) {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        *field = v;
        return {};
    }
    GL_ASSIGN_OR_RETURN(stake, setStake(p.stake, name, value));
    if (stake) {
        return {};
    }
    if (auto* field = reputationField(p.reputation, name); field != nullptr) {
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        *field = v;
        return {};
    }
    if (name.starts_with(kFeePrefix)) {
        auto* fee = p.fees.named(name.substr(kFeePrefix.size()));
        if (fee == nullptr) {
            return std::unexpected(badParameter(name, "no such payload kind"));
        }
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        *fee = v;
        return {};
    }
    std::string_view item;
    std::string_view field;
    if (splitNamed(name, kFactorPrefix, item, field) && field == "reference_max") {
        auto* factor = findFactor(p.index, item);
        if (factor == nullptr) {
            return std::unexpected(badParameter(name, "no such factor"));
        }
        GL_ASSIGN_OR_RETURN(v, u64Value(name, value));
        factor->referenceMax = v;
        return {};
    }
    if (splitNamed(name, kCategoryPrefix, item, field)) {
        auto* category = findCategory(p.index, item);
        if (category == nullptr) {
            return std::unexpected(badParameter(name, "no such category"));
        }
        if (field == "price_rate") {
            auto v = parseU128(value);
            if (!v) {
                return std::unexpected(badParameter(name, "value is not a decimal u128"));
            }
            category->priceRate = *v;
            return {};
        }
        if (field == "weights") {
            GL_ASSIGN_OR_RETURN(weights, weightsValue(name, value));
            category->weights = std::move(weights);
            return {};
        }
    }
    return std::unexpected(badParameter(name, "unknown parameter"));
}

void writeIndex(detail::RecordWriter& w, const PowerIndexParams& index) {
    w.list(index.factors, [](detail::RecordWriter& out, const PerformanceFactor& f) {
        out.text(f.name).u64(f.referenceMax);
    });
    w.list(index.categories, [](detail::RecordWriter& out, const WorkloadCategory& c) {
        out.text(c.name);
        out.list(c.weights, [](detail::RecordWriter& o, const FactorWeight& fw) {
            o.text(fw.factor).u32(fw.weightBps);
        });
        out.u128v(c.priceRate);
    });
    w.u32(index.greenMaxBonusBps);
}

PowerIndexParams readIndex(detail::RecordReader& r) {
    PowerIndexParams index;
    index.factors = r.list<PerformanceFactor>([](detail::RecordReader& in) {
        PerformanceFactor f;
        f.name = in.text();
        f.referenceMax = in.u64();
        return f;
    });
    index.categories = r.list<WorkloadCategory>([](detail::RecordReader& in) {
        WorkloadCategory c;
        c.name = in.text();
        c.weights = in.list<FactorWeight>([](detail::RecordReader& i) {
            FactorWeight fw;
            fw.factor = i.text();
            fw.weightBps = i.u32();
            return fw;
        });
        c.priceRate = in.u128v();
        return c;
    });
    index.greenMaxBonusBps = r.u32();
    return index;
}

}  // namespace

std::uint64_t* FeeParams::named(std::string_view kind) {
    for (std::size_t i = 0; i < codec::kPayloadKindCount; ++i) {
        if (codec::kPayloadKinds[i] == kind) {
            return &byKind[i];
        }
    }
    return nullptr;
}

Status ChainParams::validate() const {
    for (std::size_t i = 0; i < codec::kPayloadKindCount; ++i) {
        if (fees.byKind[i] == 0) {
            return fail(ErrorCode::kInvalidArgument,
                        "fees." + std::string(codec::kPayloadKinds[i]) + " must be positive");
        }
    }
    GL_TRY(tokenomics.validate());
    GL_TRY(index.validate());
    if (governance.proposalTtlMs == 0) {
        return fail(ErrorCode::kInvalidArgument, "governance.proposal_ttl_ms must be positive");
    }
    if (stake.slashBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "stake.slash_bps above 10000");
    }
    if (std::uint64_t{stake.slashBurnBps} + stake.slashChallengerBps + stake.slashPoolBps != kBps) {
        return fail(ErrorCode::kInvalidArgument,
                    "stake.slash_shares must sum to exactly 10000 bps, not " +
                        std::to_string(std::uint64_t{stake.slashBurnBps} +
                                       stake.slashChallengerBps + stake.slashPoolBps));
    }
    if (stake.unbondingDelayMs < tokenomics.epochMs) {
        return fail(ErrorCode::kInvalidArgument,
                    "stake.unbonding_delay_ms must be at least one epoch (" +
                        std::to_string(tokenomics.epochMs) + " ms)");
    }
    GL_TRY(validateReputation(reputation));
    return tasks.validate();
}

PowerIndexParams defaultPowerIndex() {
    PowerIndexParams index;
    index.factors = {
        {"memory_bandwidth", 4000}, {"memory_capacity", 80}, {"feature.tensor_cores", 1}};
    // C in DPS base units per PFLOP/s per second: 2.5·10^14 is 0.9 DPS per PFLOP/s-hour.
    index.categories = {
        {"ml_training",
         {{"memory_bandwidth", 5000}, {"memory_capacity", 3000}, {"feature.tensor_cores", 2000}},
         250'000'000'000'000},
        {"inference",
         {{"memory_bandwidth", 6000}, {"memory_capacity", 2000}, {"feature.tensor_cores", 2000}},
         125'000'000'000'000},
        {"hpc", {{"memory_bandwidth", 7000}, {"memory_capacity", 3000}}, 250'000'000'000'000},
    };
    return index;
}

Hash256 paramsKey() {
    return detail::stateKey("gridledger/state/params");
}

Bytes encodeParams(const ChainParams& p) {
    detail::RecordWriter w(kParamsFormat);
    w.u64(p.genesisTimeMs);
    const auto& t = p.tokenomics;
    w.u64(t.epochMs).u64(t.slotMs).u32(t.rewardShareBps).u64(t.rewardRate);
    w.u64(t.halvingPeriodMs).u64(t.halvingGflThreshold).u32(t.poolShareBps);
    writeIndex(w, p.index);
    w.u64(p.governance.proposalTtlMs);
    const auto& k = p.tasks;
    w.u64(k.claimTimeoutMs).u64(k.assignTimeoutMs).u64(k.verifyWindowMs);
    w.u64(k.panicAfterSlots).u64(k.cancellationFeeMinutes);
    for (const auto fee : p.fees.byKind) {
        w.u64(fee);
    }
    w.u64(k.creationDeposit).u64(k.depositForfeitBps).u64(k.maxPendingPerConsumer);
    w.u64(k.matchScanPerBlock);
    const auto& s = p.stake;
    w.u128v(s.providerBond).u32(s.slashBps).u32(s.slashBurnBps).u32(s.slashChallengerBps);
    w.u32(s.slashPoolBps).u64(s.unbondingDelayMs);
    const auto& q = p.reputation;
    w.u64(q.halfLifeEpochs).u64(q.priorJobs).u64(q.faultWeight).u64(q.slashWeight);
    w.u64(k.maxReplicas).u64(k.spotCheckWindowMs).u64(k.spotCheckVerdictMs).u64(k.spotCheckBond);
    return w.take();
}

Result<ChainParams> decodeParams(ByteView bytes) {
    detail::RecordReader r(bytes, "chain parameters");
    r.format(kParamsFormat);
    ChainParams p;
    p.genesisTimeMs = r.u64();
    auto& t = p.tokenomics;
    t.epochMs = r.u64();
    t.slotMs = r.u64();
    t.rewardShareBps = r.u32();
    t.rewardRate = r.u64();
    t.halvingPeriodMs = r.u64();
    t.halvingGflThreshold = r.u64();
    t.poolShareBps = r.u32();
    p.index = readIndex(r);
    p.governance.proposalTtlMs = r.u64();
    auto& k = p.tasks;
    k.claimTimeoutMs = r.u64();
    k.assignTimeoutMs = r.u64();
    k.verifyWindowMs = r.u64();
    k.panicAfterSlots = r.u64();
    k.cancellationFeeMinutes = r.u64();
    for (auto& fee : p.fees.byKind) {
        fee = r.u64();
    }
    k.creationDeposit = r.u64();
    k.depositForfeitBps = r.u64();
    k.maxPendingPerConsumer = r.u64();
    k.matchScanPerBlock = r.u64();
    auto& s = p.stake;
    s.providerBond = r.u128v();
    s.slashBps = r.u32();
    s.slashBurnBps = r.u32();
    s.slashChallengerBps = r.u32();
    s.slashPoolBps = r.u32();
    s.unbondingDelayMs = r.u64();
    auto& q = p.reputation;
    q.halfLifeEpochs = r.u64();
    q.priorJobs = r.u64();
    q.faultWeight = r.u64();
    q.slashWeight = r.u64();
    k.maxReplicas = r.u64();
    k.spotCheckWindowMs = r.u64();
    k.spotCheckVerdictMs = r.u64();
    k.spotCheckBond = r.u64();
    GL_TRY(r.finish());
    return p;
}

Result<ChainParams> loadParams(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(value, state.get(paramsKey()));
    if (!value) {
        return fail(ErrorCode::kCorrupt, "the state holds no chain parameters");
    }
    return decodeParams(*value);
}

void storeParams(StateLayer& state, const ChainParams& params) {
    state.put(paramsKey(), encodeParams(params));
}

Result<ChainParams> readParams(const ledger::StateTree& tree, std::uint64_t version) {
    GL_ASSIGN_OR_RETURN(value, tree.get(paramsKey(), version));
    if (!value) {
        return fail(ErrorCode::kNotFound, "no chain parameters at this height");
    }
    return decodeParams(*value);
}

Result<ChainParams> withParameter(const ChainParams& params, const codec::SetParameter& change) {
    ChainParams out = params;
    GL_TRY(setOne(out, change.name, change.value));
    if (auto valid = out.validate(); !valid) {
        return std::unexpected(badParameter(change.name, valid.error().message));
    }
    return out;
}

std::string parameterValue(const ChainParams& params, std::string_view name) {
    const auto& t = params.tokenomics;
    if (name == "tokenomics.epoch_ms") {
        return std::to_string(t.epochMs);
    }
    if (name == "tokenomics.slot_ms") {
        return std::to_string(t.slotMs);
    }
    if (name == "tokenomics.reward_share_bps") {
        return std::to_string(t.rewardShareBps);
    }
    if (name == "tokenomics.pool_share_bps") {
        return std::to_string(t.poolShareBps);
    }
    if (name == "tokenomics.reward_rate") {
        return std::to_string(t.rewardRate);
    }
    if (name == "tokenomics.halving_period_ms") {
        return std::to_string(t.halvingPeriodMs);
    }
    if (name == "tokenomics.halving_gfl_threshold") {
        return std::to_string(t.halvingGflThreshold);
    }
    if (name == "index.green_max_bonus_bps") {
        return std::to_string(params.index.greenMaxBonusBps);
    }
    if (name == "governance.proposal_ttl_ms") {
        return std::to_string(params.governance.proposalTtlMs);
    }
    auto tasks = params.tasks;
    if (const auto* field = taskField(tasks, name); field != nullptr) {
        return std::to_string(*field);
    }
    if (name == "stake.provider_bond") {
        return toDecimal(params.stake.providerBond);
    }
    if (name == "stake.slash_bps") {
        return std::to_string(params.stake.slashBps);
    }
    if (name == kSlashShares) {
        return slashSharesText(params.stake);
    }
    if (name == "stake.unbonding_delay_ms") {
        return std::to_string(params.stake.unbondingDelayMs);
    }
    auto reputation = params.reputation;
    if (const auto* field = reputationField(reputation, name); field != nullptr) {
        return std::to_string(*field);
    }
    if (name.starts_with(kFeePrefix)) {
        auto fees = params.fees;
        const auto* fee = fees.named(name.substr(kFeePrefix.size()));
        return fee == nullptr ? "" : std::to_string(*fee);
    }
    auto copy = params.index;
    std::string_view item;
    std::string_view field;
    if (splitNamed(name, kFactorPrefix, item, field) && field == "reference_max") {
        const auto* factor = findFactor(copy, item);
        return factor == nullptr ? "" : std::to_string(factor->referenceMax);
    }
    if (splitNamed(name, kCategoryPrefix, item, field)) {
        const auto* category = findCategory(copy, item);
        if (category != nullptr && field == "price_rate") {
            return toDecimal(category->priceRate);
        }
        if (category != nullptr && field == "weights") {
            return weightsText(category->weights);
        }
    }
    return "";
}

}  // namespace gridledger::contracts
