#include <algorithm>

#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/stake.h>

#include "provider_records.h"

namespace gridledger::contracts {
namespace {

/** The epoch of the block's timestamp; kWrongEpoch for a block before genesis. */
Result<std::uint64_t> currentEpoch(const ChainParams& params, const BlockContext& block) {
    auto epoch = epochOf(params.tokenomics, params.genesisTimeMs, block.timestampMs);
    if (!epoch) {
        return fail(ErrorCode::kWrongEpoch, "the block's time is before genesis");
    }
    return *epoch;
}

Status checkAdmitted(const std::optional<Provider>& provider, const Address& sender) {
    if (!provider) {
        return fail(ErrorCode::kProviderNotAdmitted,
                    sender.hex() + " is not a registered provider");
    }
    if (provider->status == ProviderStatus::kRegistered) {
        return fail(ErrorCode::kProviderNotAdmitted,
                    sender.hex() + " is registered but not admitted by governance");
    }
    if (provider->status == ProviderStatus::kSuspended) {
        return fail(ErrorCode::kProviderSuspended, sender.hex() + " is suspended");
    }
    return {};
}

/** Where the attested slot stands against the block's epoch and slot. */
Status checkSlot(const ChainParams& params, const BlockContext& block, const codec::Attest& a) {
    GL_ASSIGN_OR_RETURN(epoch, currentEpoch(params, block));
    if (a.epoch != epoch) {
        return fail(ErrorCode::kWrongEpoch, "attestation for epoch " + std::to_string(a.epoch) +
                                                " in epoch " + std::to_string(epoch));
    }
    if (a.slot >= params.tokenomics.slotsPerEpoch()) {
        return fail(ErrorCode::kInvalidArgument,
                    "slot " + std::to_string(a.slot) + " is beyond the epoch's " +
                        std::to_string(params.tokenomics.slotsPerEpoch()) + " slots");
    }
    GL_ASSIGN_OR_RETURN(slot, slotOf(params.tokenomics, params.genesisTimeMs, block.timestampMs));
    if (a.slot > slot) {
        return fail(ErrorCode::kFutureSlot, "slot " + std::to_string(a.slot) +
                                                " has not begun; the block is in slot " +
                                                std::to_string(slot));
    }
    return {};
}

/** The claimed devices as index allocations; kBeyondInventory for anything not registered. */
Result<std::vector<DeviceAllocation>> allocations(const PowerIndexParams& index,
                                                  const Provider& provider,
                                                  const codec::Attest& a) {
    std::vector<DeviceAllocation> out;
    const auto& devices = provider.inventory.devices;
    for (const auto& claimed : a.devices) {
        const auto it = std::find_if(devices.begin(), devices.end(),
                                     [&](const auto& d) { return d.model == claimed.model; });
        if (it == devices.end()) {
            return fail(ErrorCode::kBeyondInventory,
                        "device '" + claimed.model + "' is not in the inventory");
        }
        if (claimed.count > it->count) {
            return fail(ErrorCode::kBeyondInventory, std::to_string(claimed.count) + " × '" +
                                                         claimed.model + "' but only " +
                                                         std::to_string(it->count) + " registered");
        }
        GL_ASSIGN_OR_RETURN(spec, deviceSpec(index, *it));
        out.push_back(DeviceAllocation{spec, claimed.count});
    }
    return out;
}

Status checkCategory(const PowerIndexParams& index, const Provider& provider,
                     const std::string& category) {
    const auto& served = provider.inventory.categories;
    if (index.category(category) == nullptr ||
        !std::binary_search(served.begin(), served.end(), category)) {
        return fail(ErrorCode::kUnknownCategory,
                    "workload category '" + category + "' is not one the provider serves");
    }
    return {};
}

}  // namespace

Result<std::vector<SlotSample>> loadSlotSamples(const StateLayer& state, const Address& provider,
                                                std::uint64_t epoch) {
    GL_ASSIGN_OR_RETURN(value, state.get(detail::slotsKey(provider, epoch)));
    if (!value) {
        return std::vector<SlotSample>{};
    }
    return detail::decodeSlotSamples(*value);
}

Result<std::optional<Attestation>> readAttestation(const ledger::StateTree& tree,
                                                   std::uint64_t version, const Address& provider,
                                                   std::uint64_t epoch, std::uint64_t slot) {
    GL_ASSIGN_OR_RETURN(value, tree.get(detail::attestationKey(provider, epoch, slot), version));
    if (!value) {
        return std::optional<Attestation>();
    }
    GL_ASSIGN_OR_RETURN(attestation, detail::decodeAttestation(*value));
    return std::optional<Attestation>(std::move(attestation));
}

Result<std::vector<codec::Event>> executeAttest(StateLayer& state, const BlockContext& block,
                                                const Address& sender, const codec::Attest& a) {
    GL_ASSIGN_OR_RETURN(provider, loadProvider(state, sender));
    GL_TRY(checkAdmitted(provider, sender));
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    GL_TRY(checkBond(params, *provider));
    GL_TRY(checkSlot(params, block, a));
    GL_ASSIGN_OR_RETURN(samples, loadSlotSamples(state, sender, a.epoch));
    const auto at =
        std::lower_bound(samples.begin(), samples.end(), a.slot,
                         [](const SlotSample& s, std::uint64_t slot) { return s.slot < slot; });
    if (at != samples.end() && at->slot == a.slot) {
        return fail(ErrorCode::kSlotAlreadyAttested, "slot " + std::to_string(a.slot) +
                                                         " of epoch " + std::to_string(a.epoch) +
                                                         " is already attested");
    }
    GL_TRY(checkCategory(params.index, *provider, a.category));
    GL_ASSIGN_OR_RETURN(allocated, allocations(params.index, *provider, a));
    GL_ASSIGN_OR_RETURN(gflops,
                        slotValueGflops(params.index, a.category, allocated, a.renewableShareBps));
    if (gflops > kMaxSlotGflops) {
        return fail(ErrorCode::kOverflow, "slot value above the largest allowed");
    }
    samples.insert(at, SlotSample{a.slot, gflops, false});
    state.put(detail::slotsKey(sender, a.epoch), detail::encodeSlotSamples(samples));
    Attestation record;
    record.provider = sender;
    record.epoch = a.epoch;
    record.slot = a.slot;
    record.height = block.height;
    record.timestampMs = block.timestampMs;
    record.claim = a;
    record.gflops = gflops;
    state.put(detail::attestationKey(sender, a.epoch, a.slot), detail::encodeAttestation(record));
    return std::vector<codec::Event>{codec::Event{"attestation",
                                                  {{"provider", sender.hex()},
                                                   {"epoch", std::to_string(a.epoch)},
                                                   {"slot", std::to_string(a.slot)},
                                                   {"category", a.category},
                                                   {"gflops", std::to_string(gflops)}}}};
}

Result<std::vector<codec::Event>> executeChallenge(StateLayer& state, const BlockContext& block,
                                                   const Address& sender,
                                                   const codec::Challenge& c) {
    GL_ASSIGN_OR_RETURN(verifiers, loadVerifiers(state));
    if (!detail::containsSorted(verifiers, sender)) {
        return fail(ErrorCode::kNotVerifier, sender.hex() + " does not hold the verifier role");
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    GL_ASSIGN_OR_RETURN(epoch, currentEpoch(params, block));
    if (c.epoch != epoch) {
        return fail(ErrorCode::kWrongEpoch, "a challenge of epoch " + std::to_string(c.epoch) +
                                                " in epoch " + std::to_string(epoch));
    }
    const Hash256 key = detail::attestationKey(c.provider, c.epoch, c.slot);
    GL_ASSIGN_OR_RETURN(value, state.get(key));
    if (!value) {
        return fail(ErrorCode::kAttestationNotFound, "no attestation of " + c.provider.hex() +
                                                         " for slot " + std::to_string(c.slot) +
                                                         " of epoch " + std::to_string(c.epoch));
    }
    GL_ASSIGN_OR_RETURN(record, detail::decodeAttestation(*value));
    if (record.challenged) {
        return fail(ErrorCode::kAlreadyChallenged, "the attestation was already challenged");
    }
    record.challenged = true;
    record.challenger = sender;
    record.challengeReason = c.reason;
    record.challengeEvidence = c.evidence;
    record.challengeHeight = block.height;
    state.put(key, detail::encodeAttestation(record));
    GL_ASSIGN_OR_RETURN(samples, loadSlotSamples(state, c.provider, c.epoch));
    for (auto& sample : samples) {
        if (sample.slot == c.slot) {
            sample.challenged = true;
        }
    }
    state.put(detail::slotsKey(c.provider, c.epoch), detail::encodeSlotSamples(samples));
    GL_ASSIGN_OR_RETURN(
        slash, slashBond(state, params, block, c.provider,
                         SlashPayees{.challenger = sender, .refundTo = {}, .refundCap = 0}));
    return std::vector<codec::Event>{codec::Event{"attestation_challenged",
                                                  {{"provider", c.provider.hex()},
                                                   {"epoch", std::to_string(c.epoch)},
                                                   {"slot", std::to_string(c.slot)},
                                                   {"verifier", sender.hex()},
                                                   {"zeroed_gflops", std::to_string(record.gflops)},
                                                   {"reason", c.reason},
                                                   {"evidence", c.evidence.hex()}}},
                                     std::move(slash)};
}

}  // namespace gridledger::contracts
