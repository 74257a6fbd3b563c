#include <algorithm>

#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/stake.h>

#include "provider_records.h"

namespace gridledger::contracts {
namespace {

constexpr std::string_view kFeaturePrefix = "feature.";

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) {
        out += (out.empty() ? "" : ",") + item;
    }
    return out;
}

/** The inventory in its canonical order: devices by model, labels by key, names sorted. */
codec::RegisterProvider canonical(codec::RegisterProvider reg) {
    std::sort(reg.devices.begin(), reg.devices.end(),
              [](const auto& a, const auto& b) { return a.model < b.model; });
    for (auto& device : reg.devices) {
        std::sort(device.features.begin(), device.features.end());
        std::sort(device.factors.begin(), device.factors.end(),
                  [](const auto& a, const auto& b) { return a.name < b.name; });
    }
    std::sort(reg.labels.begin(), reg.labels.end(),
              [](const auto& a, const auto& b) { return a.key < b.key; });
    std::sort(reg.categories.begin(), reg.categories.end());
    return reg;
}

}  // namespace

std::string_view statusName(ProviderStatus status) {
    switch (status) {
        case ProviderStatus::kRegistered:
            return "registered";
        case ProviderStatus::kAdmitted:
            return "admitted";
        case ProviderStatus::kSuspended:
            return "suspended";
    }
    return "unknown";
}

std::string_view bondStateName(BondState state) {
    switch (state) {
        case BondState::kBonded:
            return "bonded";
        case BondState::kUnbonding:
            return "unbonding";
        case BondState::kReleased:
            return "released";
    }
    return "unknown";
}

Result<std::optional<Provider>> loadProvider(const StateLayer& state, const Address& address) {
    GL_ASSIGN_OR_RETURN(value, state.get(detail::providerKey(address)));
    if (!value) {
        return std::optional<Provider>();
    }
    GL_ASSIGN_OR_RETURN(provider, detail::decodeProvider(*value));
    return std::optional<Provider>(std::move(provider));
}

void storeProvider(StateLayer& state, const Provider& provider) {
    state.put(detail::providerKey(provider.address), detail::encodeProvider(provider));
}

Result<std::optional<Provider>> readProvider(const ledger::StateTree& tree, std::uint64_t version,
                                             const Address& address) {
    GL_ASSIGN_OR_RETURN(value, tree.get(detail::providerKey(address), version));
    if (!value) {
        return std::optional<Provider>();
    }
    GL_ASSIGN_OR_RETURN(provider, detail::decodeProvider(*value));
    return std::optional<Provider>(std::move(provider));
}

std::uint64_t reputationEpoch(const ChainParams& params, std::uint64_t nowMs) {
    return epochOf(params.tokenomics, params.genesisTimeMs, nowMs).value_or(0);
}

ProviderScore providerScore(const ChainParams& params, const Provider& provider,
                            std::uint64_t nowMs) {
    ProviderScore out;
    out.decayed =
        decayReputation(provider.reputation, params.reputation, reputationEpoch(params, nowMs));
    out.score = reputationScore(out.decayed, params.reputation);
    return out;
}

Result<std::vector<Address>> loadProviderIndex(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(members, detail::providerIndex().members(state));
    std::vector<Address> out;
    out.reserve(members.size());
    for (const auto& member : members) {
        const auto address = Address::fromBytes(member);
        if (!address) {
            return fail(ErrorCode::kCorrupt, "provider index holds a malformed address");
        }
        out.push_back(*address);
    }
    return out;
}

Result<std::vector<Address>> readProviderIndex(const ledger::StateTree& tree,
                                               std::uint64_t version) {
    return loadProviderIndex(StateLayer(tree, version));
}

Result<std::vector<Address>> loadSettledIndex(const StateLayer& state) {
    return detail::loadAddresses(state, detail::settledIndexKey(), "settled provider index");
}

Result<std::vector<Address>> loadVerifiers(const StateLayer& state) {
    return detail::loadAddresses(state, detail::verifiersKey(), "verifier index");
}

Result<std::vector<Address>> readVerifiers(const ledger::StateTree& tree, std::uint64_t version) {
    return detail::readAddresses(tree, version, detail::verifiersKey(), "verifier index");
}

void storeVerifiers(StateLayer& state, const std::vector<Address>& verifiers) {
    state.put(detail::verifiersKey(), detail::encodeAddresses(verifiers));
}

Result<DeviceSpec> deviceSpec(const PowerIndexParams& index, const codec::DeviceModel& device) {
    DeviceSpec spec;
    spec.rawGflops = device.peakGflops;
    spec.factors["memory_bandwidth"] = device.memoryBandwidthGbps;
    spec.factors["memory_capacity"] = device.memoryCapacityGb;
    for (const auto& factor : index.factors) {
        if (factor.name.starts_with(kFeaturePrefix)) {
            const std::string flag = factor.name.substr(kFeaturePrefix.size());
            const bool has = std::find(device.features.begin(), device.features.end(), flag) !=
                             device.features.end();
            spec.factors[factor.name] = has ? 1 : 0;
        }
    }
    for (const auto& named : device.factors) {
        if (spec.factors.contains(named.name) || named.name.starts_with(kFeaturePrefix)) {
            return fail(ErrorCode::kInvalidInventory,
                        "device factor '" + named.name + "' shadows a standard factor");
        }
        spec.factors[named.name] = named.value;
    }
    return spec;
}

Status checkInventory(const PowerIndexParams& index, const codec::RegisterProvider& reg) {
    for (const auto& category : reg.categories) {
        if (index.category(category) == nullptr) {
            return fail(ErrorCode::kUnknownCategory,
                        "workload category '" + category + "' is not in the power index");
        }
        std::vector<DeviceAllocation> all;
        for (const auto& device : reg.devices) {
            GL_ASSIGN_OR_RETURN(spec, deviceSpec(index, device));
            all.push_back(DeviceAllocation{spec, device.count});
        }
        // The whole inventory at the largest green bonus bounds every attestation it can make.
        auto value = slotValueGflops(index, category, all, static_cast<std::uint32_t>(kBps));
        if (!value || *value > kMaxSlotGflops) {
            return fail(ErrorCode::kInvalidInventory,
                        value ? "the inventory exceeds the largest slot value"
                              : "the inventory cannot be valued in '" + category +
                                    "': " + value.error().message);
        }
    }
    return {};
}

Result<std::vector<codec::Event>> addProvider(StateLayer& state, const BlockContext& block,
                                              const Address& address,
                                              const codec::RegisterProvider& reg,
                                              ProviderStatus status) {
    GL_ASSIGN_OR_RETURN(existing, loadProvider(state, address));
    if (existing) {
        return fail(ErrorCode::kProviderExists, "provider " + address.hex() + " is registered");
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    GL_TRY(checkInventory(params.index, reg));
    Provider provider{address, status, block.height, block.height, canonical(reg), ProviderJobs{}};
    GL_ASSIGN_OR_RETURN(bondEvents, lockBond(state, params, provider));
    storeProvider(state, provider);
    detail::providerIndex().add(state, address.view());
    if (status != ProviderStatus::kRegistered) {
        GL_ASSIGN_OR_RETURN(settled, loadSettledIndex(state));
        detail::insertSorted(settled, address);
        state.put(detail::settledIndexKey(), detail::encodeAddresses(settled));
    }
    std::uint64_t devices = 0;
    for (const auto& device : reg.devices) {
        devices = checkedAdd(devices, device.count).value_or(UINT64_MAX);
    }
    std::vector<codec::Event> events{
        codec::Event{"provider_registered",
                     {{"provider", address.hex()},
                      {"status", std::string(statusName(status))},
                      {"models", std::to_string(reg.devices.size())},
                      {"devices", std::to_string(devices)},
                      {"categories", joined(provider.inventory.categories)}}}};
    events.insert(events.end(), bondEvents.begin(), bondEvents.end());
    return events;
}

Result<std::vector<codec::Event>> executeRegisterProvider(StateLayer& state,
                                                          const BlockContext& block,
                                                          const Address& sender,
                                                          const codec::RegisterProvider& reg) {
    return addProvider(state, block, sender, reg, ProviderStatus::kRegistered);
}

Result<codec::Event> changeProviderStatus(StateLayer& state, const BlockContext& block,
                                          const Address& address, ProviderStatus from,
                                          ProviderStatus to) {
    GL_ASSIGN_OR_RETURN(provider, loadProvider(state, address));
    if (!provider) {
        return fail(ErrorCode::kProviderNotFound, "no provider " + address.hex());
    }
    if (provider->status != from) {
        return fail(ErrorCode::kInvalidProposal, "provider " + address.hex() + " is " +
                                                     std::string(statusName(provider->status)) +
                                                     ", not " + std::string(statusName(from)));
    }
    provider->status = to;
    provider->statusHeight = block.height;
    storeProvider(state, *provider);
    if (to == ProviderStatus::kAdmitted) {
        GL_ASSIGN_OR_RETURN(settled, loadSettledIndex(state));
        if (detail::insertSorted(settled, address)) {
            state.put(detail::settledIndexKey(), detail::encodeAddresses(settled));
        }
    }
    const std::string kind = to == ProviderStatus::kSuspended     ? "provider_suspended"
                             : from == ProviderStatus::kSuspended ? "provider_reinstated"
                                                                  : "provider_admitted";
    return codec::Event{kind, {{"provider", address.hex()}}};
}

Result<codec::Event> setVerifier(StateLayer& state, const Address& account, bool granted) {
    GL_ASSIGN_OR_RETURN(verifiers, loadVerifiers(state));
    const bool changed = granted ? detail::insertSorted(verifiers, account)
                                 : detail::eraseSorted(verifiers, account);
    if (!changed) {
        return fail(ErrorCode::kInvalidProposal,
                    account.hex() + (granted ? " is already a verifier" : " is not a verifier"));
    }
    storeVerifiers(state, verifiers);
    return codec::Event{granted ? "verifier_granted" : "verifier_revoked",
                        {{"account", account.hex()}}};
}

}  // namespace gridledger::contracts
