#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/codec/payloads.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/reputation.h>
#include <gridledger/contracts/state.h>
#include <gridledger/contracts/tokenomics.h>
#include <gridledger/ledger/state_tree.h>

/**
 * Providers, verifiers and PoCP attestations (docs/tokenomics.md "State layout"):
 * registration with a hardware inventory, the admission status governance sets, one attestation
 * per provider per slot valued by the power index, and verifiers' challenges.
 */
namespace gridledger::contracts {

/** Where a provider stands; only kAdmitted providers may attest. */
enum class ProviderStatus : std::uint8_t {
    kRegistered = 0,  // waiting for governance to admit it
    kAdmitted = 1,
    kSuspended = 2,
};

/** "registered", "admitted" or "suspended". */
[[nodiscard]] std::string_view statusName(ProviderStatus status);

/**
 * A provider's task record (docs/tasks.md "Reputation"): how many tasks it was
 * assigned and how each ended for it. Counted by the task contract, never by a transaction.
 */
struct ProviderJobs {
    std::uint64_t assigned = 0;
    std::uint64_t started = 0;
    std::uint64_t refused = 0;
    std::uint64_t claimTimeouts = 0;
    std::uint64_t settled = 0;
    std::uint64_t rejected = 0;
    std::uint64_t failed = 0;
    std::uint64_t outOfCredits = 0;
    std::uint64_t panicked = 0;
    std::uint64_t cancelled = 0;

    bool operator==(const ProviderJobs&) const = default;
};

/**
 * Where a provider's bond stands (docs/tokenomics.md "Provider stake"): locked, waiting out the
 * unbonding delay (still slashable), or paid back.
 */
enum class BondState : std::uint8_t {
    kBonded = 0,
    kUnbonding = 1,
    kReleased = 2,
};

/** "bonded", "unbonding" or "released". */
[[nodiscard]] std::string_view bondStateName(BondState state);

/** A registered provider. The inventory is kept sorted (devices by model, labels by key). */
struct Provider {
    Address address;
    ProviderStatus status = ProviderStatus::kRegistered;
    std::uint64_t registeredHeight = 0;
    /** Height of the last status change (registration, admission, suspension, reinstatement). */
    std::uint64_t statusHeight = 0;
    codec::RegisterProvider inventory;
    ProviderJobs jobs;
    /** DPS base units locked as its bond (docs/tokenomics.md "Provider stake"). */
    u128 bond = 0;
    BondState bondState = BondState::kBonded;
    /** While unbonding: the block time from which the bond is paid back. */
    std::uint64_t unbondReleaseMs = 0;
    /** DPS base units slashed from its bond so far. */
    u128 slashed = 0;
    /**
     * Its decayed good jobs and fault points as of the epoch of their last change
     * (docs/tokenomics.md "Provider reputation"); providerScore brings them to a later epoch.
     */
    Reputation reputation{};

    bool operator==(const Provider&) const = default;
};

/** One stored attestation and, once challenged, the challenge that zeroed it. */
struct Attestation {
    Address provider;
    std::uint64_t epoch = 0;
    std::uint64_t slot = 0;
    std::uint64_t height = 0;
    std::uint64_t timestampMs = 0;
    codec::Attest claim;
    /** The slot value: corrected GFLOP/s by the power index at the time of the attestation. */
    std::uint64_t gflops = 0;
    bool challenged = false;
    Address challenger;
    std::string challengeReason;
    Hash256 challengeEvidence;
    std::uint64_t challengeHeight = 0;

    bool operator==(const Attestation&) const = default;
};

/** The block a transaction executes in. */
struct BlockContext {
    std::uint64_t height = 0;
    std::uint64_t timestampMs = 0;
};

/** Upper bound on one slot value (10^9 PFLOP/s), so Σ over providers never nears 2^64. */
inline constexpr std::uint64_t kMaxSlotGflops = 1'000'000'000'000'000ULL;

[[nodiscard]] Result<std::optional<Provider>> loadProvider(const StateLayer& state,
                                                           const Address& address);
void storeProvider(StateLayer& state, const Provider& provider);
[[nodiscard]] Result<std::optional<Provider>> readProvider(const ledger::StateTree& tree,
                                                           std::uint64_t version,
                                                           const Address& address);

/**
 * The provider's reputation counters brought to the epoch of block time `nowMs` and its score
 * there (docs/tokenomics.md "Provider reputation"); a time before genesis counts as epoch 0.
 */
struct ProviderScore {
    Reputation decayed;
    std::uint32_t score = 0;
};
[[nodiscard]] ProviderScore providerScore(const ChainParams& params, const Provider& provider,
                                          std::uint64_t nowMs);

/** The tokenomics epoch of block time `nowMs`, 0 before genesis. */
[[nodiscard]] std::uint64_t reputationEpoch(const ChainParams& params, std::uint64_t nowMs);

/** Every registered provider, ascending. */
[[nodiscard]] Result<std::vector<Address>> loadProviderIndex(const StateLayer& state);
[[nodiscard]] Result<std::vector<Address>> readProviderIndex(const ledger::StateTree& tree,
                                                             std::uint64_t version);
/** Every provider ever admitted (the ones an epoch settlement looks at), ascending. */
[[nodiscard]] Result<std::vector<Address>> loadSettledIndex(const StateLayer& state);

/** Every account holding the verifier role, ascending. */
[[nodiscard]] Result<std::vector<Address>> loadVerifiers(const StateLayer& state);
[[nodiscard]] Result<std::vector<Address>> readVerifiers(const ledger::StateTree& tree,
                                                         std::uint64_t version);
void storeVerifiers(StateLayer& state, const std::vector<Address>& verifiers);

/** The attested slots of `provider` in `epoch`, ascending by slot. */
[[nodiscard]] Result<std::vector<SlotSample>> loadSlotSamples(const StateLayer& state,
                                                              const Address& provider,
                                                              std::uint64_t epoch);
[[nodiscard]] Result<std::optional<Attestation>> readAttestation(const ledger::StateTree& tree,
                                                                 std::uint64_t version,
                                                                 const Address& provider,
                                                                 std::uint64_t epoch,
                                                                 std::uint64_t slot);

/**
 * The power-index factor values of a device: memory_bandwidth (GB/s), memory_capacity (GB),
 * `feature.<flag>` = 1 for each of its flags and 0 for every other `feature.` factor the index
 * knows, then its named factors. kInvalidInventory if a named factor shadows one of these.
 */
[[nodiscard]] Result<DeviceSpec> deviceSpec(const PowerIndexParams& index,
                                            const codec::DeviceModel& device);

/**
 * Checks that every device of `reg` can be valued by `index` in every category it serves:
 * kUnknownCategory for a category the index lacks, kInvalidInventory when a device lacks a factor
 * or the whole inventory at the largest green bonus exceeds kMaxSlotGflops.
 */
[[nodiscard]] Status checkInventory(const PowerIndexParams& index,
                                    const codec::RegisterProvider& reg);

/**
 * Adds a provider with status `status` (genesis admits its providers directly). Requires the
 * inventory's shape to be checked (ledger::checkPayloadShape). Locks the chain's provider bond
 * from the provider's account (docs/tokenomics.md "Provider stake"). kProviderExists if
 * registered; kUnknownCategory for a category the index lacks; kInvalidInventory when a device
 * cannot be valued in one of the categories it serves or its full inventory exceeds
 * kMaxSlotGflops; kInsufficientBalance when the account cannot cover the bond.
 */
[[nodiscard]] Result<std::vector<codec::Event>> addProvider(StateLayer& state,
                                                            const BlockContext& block,
                                                            const Address& address,
                                                            const codec::RegisterProvider& reg,
                                                            ProviderStatus status);

/** Executes register_provider: addProvider with status kRegistered. */
[[nodiscard]] Result<std::vector<codec::Event>> executeRegisterProvider(
    StateLayer& state, const BlockContext& block, const Address& sender,
    const codec::RegisterProvider& reg);

/**
 * Moves a provider from `from` to `to` (governance: admit, suspend, reinstate). kProviderNotFound
 * if unregistered, kInvalidProposal if its status is not `from`.
 */
[[nodiscard]] Result<codec::Event> changeProviderStatus(StateLayer& state,
                                                        const BlockContext& block,
                                                        const Address& address, ProviderStatus from,
                                                        ProviderStatus to);

/**
 * Executes an attestation by `sender` in `block` (docs/tokenomics.md). Refusals, in this order:
 * kProviderNotAdmitted (never registered, or registered and not yet admitted), kProviderSuspended,
 * kProviderUnbonding (asked to unbond), kBondTooLow (bond below the chain's provider bond),
 * kWrongEpoch (not the epoch of the block's timestamp, or a block before genesis), kInvalidArgument
 * (slot ≥ S), kFutureSlot (a later slot than the block's), kSlotAlreadyAttested, kUnknownCategory
 * (not served or not in the index), kBeyondInventory (a model not in the inventory, or more devices
 * than registered), kOverflow (value beyond kMaxSlotGflops).
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeAttest(StateLayer& state,
                                                              const BlockContext& block,
                                                              const Address& sender,
                                                              const codec::Attest& attest);

/**
 * Executes a verifier's challenge: it is upheld at once, zeroes the slot, is recorded on the
 * attestation and slashes the provider's bond (slashBond, docs/tokenomics.md). Refusals:
 * kNotVerifier, kWrongEpoch (the attestation's epoch is not the block's), kAttestationNotFound,
 * kAlreadyChallenged.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeChallenge(StateLayer& state,
                                                                 const BlockContext& block,
                                                                 const Address& sender,
                                                                 const codec::Challenge& challenge);

/** Grants (true) or revokes (false) the verifier role; kInvalidProposal if it is already so. */
[[nodiscard]] Result<codec::Event> setVerifier(StateLayer& state, const Address& account,
                                               bool granted);

}  // namespace gridledger::contracts
