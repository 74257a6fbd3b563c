// The system-contract sections of genesis JSON: tokenomics, power_index, governance, tasks,
// fees, stake, verifiers and providers (docs/tokenomics.md "Genesis").

#include <set>

#include <gridledger/contracts/providers.h>
#include <gridledger/ledger/tx_validation.h>

#include "genesis_json.h"

namespace gridledger::contracts {
namespace json = boost::json;

namespace detail {
namespace {

/** A u64 string member that may be absent (then `out` keeps its default). */
Status optionalU64(const json::object& obj, std::string_view key, std::string_view path,
                   std::uint64_t& out) {
    if (optionalMember(obj, key) == nullptr) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(value, getU64(obj, key, path));
    out = value;
    return {};
}

Status optionalU32(const json::object& obj, std::string_view key, std::string_view path,
                   std::uint32_t& out) {
    if (optionalMember(obj, key) == nullptr) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(value, getU32(obj, key, path));
    out = value;
    return {};
}

/** A list of strings that may be absent. */
Result<std::vector<std::string>> stringList(const json::object& obj, std::string_view key,
                                            std::string_view path, bool required) {
    std::vector<std::string> out;
    if (!required && optionalMember(obj, key) == nullptr) {
        return out;
    }
    GL_ASSIGN_OR_RETURN(list, getArray(obj, key, path));
    for (const auto& item : *list) {
        if (!item.is_string()) {
            return std::unexpected(
                badField(std::string(path) + std::string(key), "entries must be strings"));
        }
        out.emplace_back(item.as_string());
    }
    return out;
}

/** Calls `each(object, path)` for every entry of an array member that may be absent. */
template <typename Each>
Status objectList(const json::object& obj, std::string_view key, std::string_view path,
                  bool required, Each each) {
    if (!required && optionalMember(obj, key) == nullptr) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(list, getArray(obj, key, path));
    const std::string itemPath = std::string(path) + std::string(key) + "[].";
    for (const auto& item : *list) {
        if (!item.is_object()) {
            return std::unexpected(
                badField(std::string(path) + std::string(key), "entries must be objects"));
        }
        GL_TRY(each(item.as_object(), itemPath));
    }
    return {};
}

Status parseTokenomics(const json::object& obj, Genesis& out) {
    constexpr std::string_view kPath = "tokenomics.";
    auto& t = out.tokenomics;
    GL_TRY(optionalU64(obj, "epoch_ms", kPath, t.epochMs));
    GL_TRY(optionalU64(obj, "slot_ms", kPath, t.slotMs));
    GL_TRY(optionalU32(obj, "reward_share_bps", kPath, t.rewardShareBps));
    GL_TRY(optionalU64(obj, "reward_rate", kPath, t.rewardRate));
    GL_TRY(optionalU64(obj, "halving_period_ms", kPath, t.halvingPeriodMs));
    GL_TRY(optionalU64(obj, "halving_gfl_threshold", kPath, t.halvingGflThreshold));
    GL_TRY(optionalU32(obj, "pool_share_bps", kPath, t.poolShareBps));
    if (optionalMember(obj, "reward_pool") != nullptr) {
        GL_ASSIGN_OR_RETURN(pool, getU128(obj, "reward_pool", kPath));
        out.rewardPool = pool;
    }
    return {};
}

Status parseCategory(const json::object& c, const std::string& at, PowerIndexParams& index) {
    WorkloadCategory category;
    GL_ASSIGN_OR_RETURN(name, getString(c, "name", at));
    GL_ASSIGN_OR_RETURN(rate, getU128(c, "price_rate", at));
    category.name = name;
    category.priceRate = rate;
    const auto weight = [&category](const json::object& w, const std::string& wat) -> Status {
        GL_ASSIGN_OR_RETURN(factor, getString(w, "factor", wat));
        GL_ASSIGN_OR_RETURN(bps, getU32(w, "weight_bps", wat));
        category.weights.push_back(FactorWeight{factor, bps});
        return {};
    };
    GL_TRY(objectList(c, "weights", at, true, weight));
    index.categories.push_back(std::move(category));
    return {};
}

Status parsePowerIndex(const json::object& obj, Genesis& out) {
    constexpr std::string_view kPath = "power_index.";
    PowerIndexParams index;
    GL_TRY(optionalU32(obj, "green_max_bonus_bps", kPath, index.greenMaxBonusBps));
    const auto factor = [&index](const json::object& f, const std::string& at) -> Status {
        GL_ASSIGN_OR_RETURN(name, getString(f, "name", at));
        GL_ASSIGN_OR_RETURN(referenceMax, getU64(f, "reference_max", at));
        index.factors.push_back(PerformanceFactor{name, referenceMax});
        return {};
    };
    GL_TRY(objectList(obj, "factors", kPath, true, factor));
    const auto category = [&index](const json::object& c, const std::string& at) {
        return parseCategory(c, at, index);
    };
    GL_TRY(objectList(obj, "categories", kPath, true, category));
    out.powerIndex = std::move(index);
    return {};
}

Status parseProviders(const json::object& root, Genesis& out) {
    std::set<Address> seen;
    const auto provider = [&](const json::object& p, const std::string& at) -> Status {
        GL_ASSIGN_OR_RETURN(address, getFixed<Address>(p, "address", at));
        GL_ASSIGN_OR_RETURN(inventory, inventoryFromJson(p, at));
        if (!seen.insert(address).second) {
            return std::unexpected(badField("providers", "duplicate address"));
        }
        out.providers.push_back(GenesisProvider{address, std::move(inventory)});
        return {};
    };
    return objectList(root, "providers", "", false, provider);
}

/** Cross-field checks once every section is read. */
/** "reputation": every field optional (docs/tokenomics.md "Provider reputation"). */
Status parseReputation(const json::object& obj, ReputationParams& reputation) {
    constexpr std::string_view kPath = "reputation.";
    GL_TRY(optionalU64(obj, "half_life_epochs", kPath, reputation.halfLifeEpochs));
    GL_TRY(optionalU64(obj, "prior_jobs", kPath, reputation.priorJobs));
    GL_TRY(optionalU64(obj, "fault_weight", kPath, reputation.faultWeight));
    return optionalU64(obj, "slash_weight", kPath, reputation.slashWeight);
}

/** "stake": every field optional (docs/tokenomics.md "Provider stake"). */
Status parseStake(const json::object& obj, StakeParams& stake) {
    constexpr std::string_view kPath = "stake.";
    if (optionalMember(obj, "provider_bond") != nullptr) {
        GL_ASSIGN_OR_RETURN(bond, getU128(obj, "provider_bond", kPath));
        stake.providerBond = bond;
    }
    GL_TRY(optionalU32(obj, "slash_bps", kPath, stake.slashBps));
    GL_TRY(optionalU32(obj, "slash_burn_bps", kPath, stake.slashBurnBps));
    GL_TRY(optionalU32(obj, "slash_challenger_bps", kPath, stake.slashChallengerBps));
    GL_TRY(optionalU32(obj, "slash_pool_bps", kPath, stake.slashPoolBps));
    GL_TRY(optionalU64(obj, "unbonding_delay_ms", kPath, stake.unbondingDelayMs));
    return {};
}

/** Each genesis provider's genesis balance (Σ of its entries) covers the bond genesis locks. */
Status checkGenesisBonds(const Genesis& g) {
    for (const auto& provider : g.providers) {
        u128 balance = 0;
        for (const auto& account : g.accounts) {
            if (account.address == provider.address) {
                balance += account.balance;  // Σ of all balances fits: checked before
            }
        }
        if (balance < g.stake.providerBond) {
            return std::unexpected(badField("providers[" + provider.address.hex() + "]",
                                            "genesis balance below stake.provider_bond"));
        }
    }
    return {};
}

Status checkGenesis(const Genesis& g) {
    if (auto valid = g.chainParams().validate(); !valid) {
        return std::unexpected(badField("parameters", valid.error().message));
    }
    u128 total = g.rewardPool;
    for (const auto& account : g.accounts) {
        const auto sum = checkedAdd(total, account.balance);
        if (!sum) {
            return std::unexpected(badField("accounts", "balances and pool exceed 128 bits"));
        }
        total = *sum;
    }
    for (const auto& provider : g.providers) {
        auto shape =
            ledger::checkPayloadShape(codec::Payload{provider.inventory}, provider.address);
        if (shape) {
            shape = checkInventory(g.powerIndex, provider.inventory);
        }
        if (!shape) {
            return std::unexpected(
                badField("providers[" + provider.address.hex() + "]", shape.error().message));
        }
    }
    return checkGenesisBonds(g);
}

json::object deviceJson(const codec::DeviceModel& d) {
    json::array features;
    for (const auto& f : d.features) {
        features.push_back(json::string(f));
    }
    json::array factors;
    for (const auto& f : d.factors) {
        factors.push_back(json::object{{"name", f.name}, {"value", std::to_string(f.value)}});
    }
    return json::object{{"model", d.model},
                        {"count", std::to_string(d.count)},
                        {"peak_gflops", std::to_string(d.peakGflops)},
                        {"memory_bandwidth_gbps", std::to_string(d.memoryBandwidthGbps)},
                        {"memory_capacity_gb", std::to_string(d.memoryCapacityGb)},
                        {"features", std::move(features)},
                        {"power_watts", std::to_string(d.powerWatts)},
                        {"factors", std::move(factors)}};
}

Result<codec::DeviceModel> deviceFromJson(const json::object& d, const std::string& at) {
    codec::DeviceModel device;
    GL_ASSIGN_OR_RETURN(model, getString(d, "model", at));
    GL_ASSIGN_OR_RETURN(count, getU64(d, "count", at));
    GL_ASSIGN_OR_RETURN(peak, getU64(d, "peak_gflops", at));
    device.model = model;
    device.count = count;
    device.peakGflops = peak;
    GL_TRY(optionalU64(d, "memory_bandwidth_gbps", at, device.memoryBandwidthGbps));
    GL_TRY(optionalU64(d, "memory_capacity_gb", at, device.memoryCapacityGb));
    GL_TRY(optionalU64(d, "power_watts", at, device.powerWatts));
    GL_ASSIGN_OR_RETURN(features, stringList(d, "features", at, false));
    device.features = std::move(features);
    const auto factor = [&device](const json::object& f, const std::string& fat) -> Status {
        GL_ASSIGN_OR_RETURN(name, getString(f, "name", fat));
        GL_ASSIGN_OR_RETURN(value, getU64(f, "value", fat));
        device.factors.push_back(codec::FactorValue{name, value});
        return {};
    };
    GL_TRY(objectList(d, "factors", at, false, factor));
    return device;
}

}  // namespace

Result<codec::RegisterProvider> inventoryFromJson(const json::object& obj, std::string_view path) {
    codec::RegisterProvider out;
    const auto device = [&out](const json::object& d, const std::string& at) -> Status {
        GL_ASSIGN_OR_RETURN(parsed, deviceFromJson(d, at));
        out.devices.push_back(std::move(parsed));
        return {};
    };
    GL_TRY(objectList(obj, "devices", path, true, device));
    const auto label = [&out](const json::object& l, const std::string& at) -> Status {
        GL_ASSIGN_OR_RETURN(key, getString(l, "key", at));
        GL_ASSIGN_OR_RETURN(value, getString(l, "value", at));
        out.labels.push_back(codec::Label{key, value});
        return {};
    };
    GL_TRY(objectList(obj, "labels", path, false, label));
    GL_ASSIGN_OR_RETURN(categories, stringList(obj, "categories", path, true));
    out.categories = std::move(categories);
    return out;
}

json::object inventoryJson(const codec::RegisterProvider& inventory) {
    json::array devices;
    for (const auto& d : inventory.devices) {
        devices.push_back(deviceJson(d));
    }
    json::array labels;
    for (const auto& l : inventory.labels) {
        labels.push_back(json::object{{"key", l.key}, {"value", l.value}});
    }
    json::array categories;
    for (const auto& c : inventory.categories) {
        categories.push_back(json::string(c));
    }
    return json::object{{"devices", std::move(devices)},
                        {"labels", std::move(labels)},
                        {"categories", std::move(categories)}};
}

/** "fees": {"<payload kind>": "<DPS base units>", ...}; kinds left out keep their default. */
Status parseFees(const json::object& obj, FeeParams& fees) {
    for (const auto& [kind, value] : obj) {
        auto* fee = fees.named(kind);
        if (fee == nullptr) {
            return std::unexpected(badField("fees." + std::string(kind), "no such payload kind"));
        }
        GL_TRY(optionalU64(obj, kind, "fees.", *fee));
    }
    return {};
}

Status parseContractSections(const json::object& root, Genesis& out) {
    if (optionalMember(root, "tokenomics") != nullptr) {
        GL_ASSIGN_OR_RETURN(tokenomics, getObject(root, "tokenomics"));
        GL_TRY(parseTokenomics(*tokenomics, out));
    }
    if (optionalMember(root, "power_index") != nullptr) {
        GL_ASSIGN_OR_RETURN(index, getObject(root, "power_index"));
        GL_TRY(parsePowerIndex(*index, out));
    }
    if (optionalMember(root, "governance") != nullptr) {
        GL_ASSIGN_OR_RETURN(governance, getObject(root, "governance"));
        GL_TRY(optionalU64(*governance, "proposal_ttl_ms", "governance.",
                           out.governance.proposalTtlMs));
    }
    if (optionalMember(root, "tasks") != nullptr) {
        GL_ASSIGN_OR_RETURN(tasks, getObject(root, "tasks"));
        auto& k = out.tasks;
        GL_TRY(optionalU64(*tasks, "claim_timeout_ms", "tasks.", k.claimTimeoutMs));
        GL_TRY(optionalU64(*tasks, "assign_timeout_ms", "tasks.", k.assignTimeoutMs));
        GL_TRY(optionalU64(*tasks, "verify_window_ms", "tasks.", k.verifyWindowMs));
        GL_TRY(optionalU64(*tasks, "panic_after_slots", "tasks.", k.panicAfterSlots));
        GL_TRY(optionalU64(*tasks, "cancellation_fee_minutes", "tasks.", k.cancellationFeeMinutes));
        GL_TRY(optionalU64(*tasks, "creation_deposit", "tasks.", k.creationDeposit));
        GL_TRY(optionalU64(*tasks, "deposit_forfeit_bps", "tasks.", k.depositForfeitBps));
        GL_TRY(optionalU64(*tasks, "max_pending_per_consumer", "tasks.", k.maxPendingPerConsumer));
        GL_TRY(optionalU64(*tasks, "match_scan_per_block", "tasks.", k.matchScanPerBlock));
        GL_TRY(optionalU64(*tasks, "max_replicas", "tasks.", k.maxReplicas));
        GL_TRY(optionalU64(*tasks, "spot_check_window_ms", "tasks.", k.spotCheckWindowMs));
        GL_TRY(optionalU64(*tasks, "spot_check_verdict_ms", "tasks.", k.spotCheckVerdictMs));
        GL_TRY(optionalU64(*tasks, "spot_check_bond", "tasks.", k.spotCheckBond));
    }
    if (optionalMember(root, "fees") != nullptr) {
        GL_ASSIGN_OR_RETURN(fees, getObject(root, "fees"));
        GL_TRY(parseFees(*fees, out.fees));
    }
    if (optionalMember(root, "stake") != nullptr) {
        GL_ASSIGN_OR_RETURN(stake, getObject(root, "stake"));
        GL_TRY(parseStake(*stake, out.stake));
    }
    if (optionalMember(root, "reputation") != nullptr) {
        GL_ASSIGN_OR_RETURN(reputation, getObject(root, "reputation"));
        GL_TRY(parseReputation(*reputation, out.reputation));
    }
    if (optionalMember(root, "verifiers") != nullptr) {
        GL_ASSIGN_OR_RETURN(verifiers, getArray(root, "verifiers"));
        std::set<Address> seen;
        for (const auto& item : *verifiers) {
            GL_ASSIGN_OR_RETURN(address, fixedFromJson<Address>(item, "verifiers[]"));
            if (!seen.insert(address).second) {
                return std::unexpected(badField("verifiers", "duplicate address"));
            }
            out.verifiers.push_back(address);
        }
    }
    GL_TRY(parseProviders(root, out));
    return checkGenesis(out);
}

void renderContractSections(const Genesis& g, json::object& root) {
    const auto& t = g.tokenomics;
    root["tokenomics"] =
        json::object{{"epoch_ms", std::to_string(t.epochMs)},
                     {"slot_ms", std::to_string(t.slotMs)},
                     {"reward_share_bps", t.rewardShareBps},
                     {"reward_rate", std::to_string(t.rewardRate)},
                     {"halving_period_ms", std::to_string(t.halvingPeriodMs)},
                     {"halving_gfl_threshold", std::to_string(t.halvingGflThreshold)},
                     {"pool_share_bps", t.poolShareBps},
                     {"reward_pool", toDecimal(g.rewardPool)}};
    json::array factors;
    for (const auto& f : g.powerIndex.factors) {
        factors.push_back(
            json::object{{"name", f.name}, {"reference_max", std::to_string(f.referenceMax)}});
    }
    json::array categories;
    for (const auto& c : g.powerIndex.categories) {
        json::array weights;
        for (const auto& w : c.weights) {
            weights.push_back(json::object{{"factor", w.factor}, {"weight_bps", w.weightBps}});
        }
        categories.push_back(json::object{{"name", c.name},
                                          {"price_rate", toDecimal(c.priceRate)},
                                          {"weights", std::move(weights)}});
    }
    root["power_index"] = json::object{{"green_max_bonus_bps", g.powerIndex.greenMaxBonusBps},
                                       {"factors", std::move(factors)},
                                       {"categories", std::move(categories)}};
    root["governance"] =
        json::object{{"proposal_ttl_ms", std::to_string(g.governance.proposalTtlMs)}};
    root["tasks"] =
        json::object{{"claim_timeout_ms", std::to_string(g.tasks.claimTimeoutMs)},
                     {"assign_timeout_ms", std::to_string(g.tasks.assignTimeoutMs)},
                     {"verify_window_ms", std::to_string(g.tasks.verifyWindowMs)},
                     {"panic_after_slots", std::to_string(g.tasks.panicAfterSlots)},
                     {"cancellation_fee_minutes", std::to_string(g.tasks.cancellationFeeMinutes)},
                     {"creation_deposit", std::to_string(g.tasks.creationDeposit)},
                     {"deposit_forfeit_bps", std::to_string(g.tasks.depositForfeitBps)},
                     {"max_pending_per_consumer", std::to_string(g.tasks.maxPendingPerConsumer)},
                     {"match_scan_per_block", std::to_string(g.tasks.matchScanPerBlock)},
                     {"max_replicas", std::to_string(g.tasks.maxReplicas)},
                     {"spot_check_window_ms", std::to_string(g.tasks.spotCheckWindowMs)},
                     {"spot_check_verdict_ms", std::to_string(g.tasks.spotCheckVerdictMs)},
                     {"spot_check_bond", std::to_string(g.tasks.spotCheckBond)}};
    json::object fees;
    for (std::size_t i = 0; i < codec::kPayloadKindCount; ++i) {
        fees[codec::kPayloadKinds[i]] = std::to_string(g.fees.byKind[i]);
    }
    root["fees"] = std::move(fees);
    const auto& k = g.stake;
    root["stake"] = json::object{{"provider_bond", toDecimal(k.providerBond)},
                                 {"slash_bps", k.slashBps},
                                 {"slash_burn_bps", k.slashBurnBps},
                                 {"slash_challenger_bps", k.slashChallengerBps},
                                 {"slash_pool_bps", k.slashPoolBps},
                                 {"unbonding_delay_ms", std::to_string(k.unbondingDelayMs)}};
    const auto& q = g.reputation;
    root["reputation"] = json::object{{"half_life_epochs", std::to_string(q.halfLifeEpochs)},
                                      {"prior_jobs", std::to_string(q.priorJobs)},
                                      {"fault_weight", std::to_string(q.faultWeight)},
                                      {"slash_weight", std::to_string(q.slashWeight)}};
    json::array verifiers;
    for (const auto& v : g.verifiers) {
        verifiers.push_back(json::string(v.hex()));
    }
    root["verifiers"] = std::move(verifiers);
    json::array providers;
    for (const auto& p : g.providers) {
        json::object entry{{"address", p.address.hex()}};
        for (auto& [key, value] : inventoryJson(p.inventory)) {
            entry[key] = value;
        }
        providers.push_back(std::move(entry));
    }
    root["providers"] = std::move(providers);
}

}  // namespace detail

Result<codec::RegisterProvider> parseInventoryJson(std::string_view text) {
    boost::system::error_code ec;
    const json::value root = json::parse(text, ec);
    if (ec || !root.is_object()) {
        return fail(ErrorCode::kConfig, "the inventory is not a JSON object");
    }
    return detail::inventoryFromJson(root.as_object(), "inventory.");
}

std::string inventoryToJson(const codec::RegisterProvider& inventory) {
    return json::serialize(detail::inventoryJson(inventory));
}

}  // namespace gridledger::contracts
