#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>

/**
 * The system-contract payloads of a transaction besides the DPS transfer (docs/tokenomics.md,
 * docs/tokenomics.md, docs/tasks.md): governance proposals and votes, provider registration, PoCP
 * attestations and challenges, and the task lifecycle. Plain values; codec/tx.h encodes them,
 * ledger/tx_validation checks their shape and contracts/ executes them.
 */
namespace gridledger::codec {

/** Moves `amount` DPS base units from the sender to `to`. */
struct Transfer {
    Address to;
    u128 amount = 0;

    bool operator==(const Transfer&) const = default;
};

// ---- Governance (docs/tokenomics.md) ----

/**
 * Adds a validator: its consensus key bound to its transport node id, and the account its
 * governance transactions come from (a key of its own, not the consensus key).
 */
struct AddValidator {
    std::string name;
    PubKey consensusKey;
    NodeId nodeId;
    Address account;

    bool operator==(const AddValidator&) const = default;
};

struct RemoveValidator {
    PubKey consensusKey;

    bool operator==(const RemoveValidator&) const = default;
};

/** Admits a registered provider (it may then attest). */
struct AdmitProvider {
    Address provider;

    bool operator==(const AdmitProvider&) const = default;
};

/** Suspends an admitted provider (it may no longer attest). */
struct SuspendProvider {
    Address provider;

    bool operator==(const SuspendProvider&) const = default;
};

/** Admits a suspended provider again. */
struct ReinstateProvider {
    Address provider;

    bool operator==(const ReinstateProvider&) const = default;
};

struct GrantVerifier {
    Address account;

    bool operator==(const GrantVerifier&) const = default;
};

struct RevokeVerifier {
    Address account;

    bool operator==(const RevokeVerifier&) const = default;
};

/** Sets one governable parameter; names and value forms are listed in docs/tokenomics.md. */
struct SetParameter {
    std::string name;
    std::string value;

    bool operator==(const SetParameter&) const = default;
};

using ProposalAction = std::variant<AddValidator, RemoveValidator, AdmitProvider, SuspendProvider,
                                    ReinstateProvider, GrantVerifier, RevokeVerifier, SetParameter>;

/** A validator's governance proposal; it passes with votes of more than 2/3 of the validators. */
struct Propose {
    ProposalAction action;

    bool operator==(const Propose&) const = default;
};

/** A validator's vote on an open proposal. */
struct ProposalVote {
    std::uint64_t proposalId = 0;
    bool approve = false;

    bool operator==(const ProposalVote&) const = default;
};

// ---- Providers and PoCP (docs/tokenomics.md) ----

/** A named power-index factor value of a device, in the factor's unit. */
struct FactorValue {
    std::string name;
    std::uint64_t value = 0;

    bool operator==(const FactorValue&) const = default;
};

/** A device model of a provider's hardware inventory and how many of it the provider has. */
struct DeviceModel {
    std::string model;
    std::uint64_t count = 0;
    /** Vendor (or benchmarked) FLOP/s of one device, in GFLOP/s. */
    std::uint64_t peakGflops = 0;
    std::uint64_t memoryBandwidthGbps = 0;
    std::uint64_t memoryCapacityGb = 0;
    /** Feature flags such as "tensor_cores" or "rdma". */
    std::vector<std::string> features;
    /** Power draw of one device under load, in watts. */
    std::uint64_t powerWatts = 0;
    /** Further power-index factors by name (e.g. "interconnect_bandwidth"). */
    std::vector<FactorValue> factors;

    bool operator==(const DeviceModel&) const = default;
};

/** A `key = value` label a task's constraints can match (region, tier, …). */
struct Label {
    std::string key;
    std::string value;

    bool operator==(const Label&) const = default;
};

/** Registers the sender as a provider with its inventory; governance admits it later. */
struct RegisterProvider {
    std::vector<DeviceModel> devices;
    std::vector<Label> labels;
    /** The workload categories (power-index categories) it serves. */
    std::vector<std::string> categories;

    bool operator==(const RegisterProvider&) const = default;
};

/** `count` devices of the inventory model `model`. */
struct DeviceCount {
    std::string model;
    std::uint64_t count = 0;

    bool operator==(const DeviceCount&) const = default;
};

/** A PoCP attestation: the devices the sender allocates to the grid in one slot of an epoch. */
struct Attest {
    std::uint64_t epoch = 0;
    /** The slot within the epoch, 0 … S−1. */
    std::uint64_t slot = 0;
    std::string category;
    std::vector<DeviceCount> devices;
    /** Optional energy data: total power draw in watts (0 = not reported). */
    std::uint64_t powerWatts = 0;
    /** Optional energy data: renewable share of the supply, 0 … 10 000 bps. */
    std::uint32_t renewableShareBps = 0;
    /** Evidence hashes: benchmark runs, completed task ids. */
    std::vector<Hash256> evidence;

    bool operator==(const Attest&) const = default;
};

/** A verifier's challenge of one attestation; executed, it is upheld and zeroes the slot. */
struct Challenge {
    Address provider;
    std::uint64_t epoch = 0;
    std::uint64_t slot = 0;
    std::string reason;
    /** Evidence hash; zero when none. */
    Hash256 evidence;

    bool operator==(const Challenge&) const = default;
};

/**
 * The sender, a provider, asks for its bond back (docs/tokenomics.md "Provider stake"): it stops
 * attesting and taking tasks at once, and the bond returns after the unbonding delay.
 */
struct ProviderUnbond {
    bool operator==(const ProviderUnbond&) const = default;
};

// ---- Tasks (docs/tasks.md) ----

/** A consumer's new task: the index price of `maxMinutes` at `minGflops` is escrowed. */
struct TaskCreate {
    std::string category;
    /** Corrected GFLOP/s the task needs of its provider. */
    std::uint64_t minGflops = 0;
    /** Label constraints "key op value" (ops == != < <= > >= in). */
    std::vector<std::string> constraints;
    std::uint64_t maxMinutes = 0;
    /** Hash of the job description (image, model, dataset, output references); zero when none. */
    Hash256 specHash;
    /**
     * How many providers run it, their results compared (docs/tasks.md "Redundant tasks"); 0 and
     * 1 mean one.
     */
    std::uint32_t replicas = 0;

    bool operator==(const TaskCreate&) const = default;
};

/** The assigned provider starts the task (Assigned → Running). */
struct TaskStart {
    Hash256 taskId;

    bool operator==(const TaskStart&) const = default;
};

/** The assigned provider refuses the task (Assigned → Pending, the provider excluded). */
struct TaskRefuse {
    Hash256 taskId;

    bool operator==(const TaskRefuse&) const = default;
};

/** The consumer escrows `extraMinutes` more at the task's rate, lengthening its maximum. */
struct TaskTopUp {
    Hash256 taskId;
    std::uint64_t extraMinutes = 0;

    bool operator==(const TaskTopUp&) const = default;
};

/** The assigned provider's result (Running → ResultSubmitted). */
struct TaskSubmitResult {
    Hash256 taskId;
    Hash256 resultHash;
    std::string outputUri;
    std::uint32_t exitCode = 0;
    /** The run's duration as the provider reports it, ms. */
    std::uint64_t durationMs = 0;

    bool operator==(const TaskSubmitResult&) const = default;
};

/**
 * The consumer's or a verifier's verdict on a submitted result; on a redundant task whose results
 * tied, a verifier's verdict on the group, naming the result it upholds.
 */
struct TaskVerify {
    Hash256 taskId;
    bool accept = false;
    std::string reason;
    /** A tied group's upheld result; zero otherwise. */
    Hash256 resultHash;

    bool operator==(const TaskVerify&) const = default;
};

/** The assigned provider reports that the run failed (Running → Failed). */
struct TaskReportFailure {
    Hash256 taskId;
    std::uint32_t exitCode = 0;
    std::string error;
    /** How long it ran as the provider reports it, ms. */
    std::uint64_t durationMs = 0;

    bool operator==(const TaskReportFailure&) const = default;
};

/** The consumer cancels a task that is Pending, Assigned or Running. */
struct TaskCancel {
    Hash256 taskId;

    bool operator==(const TaskCancel&) const = default;
};

/** A verifier spot-checks a settled result, locking the spot-check bond. */
struct TaskSpotCheck {
    Hash256 taskId;
    std::string reason;
    /** Evidence hash; zero when none. */
    Hash256 evidence;

    bool operator==(const TaskSpotCheck&) const = default;
};

/** Another verifier decides an open spot check: upheld slashes the provider. */
struct TaskSpotCheckVerdict {
    Hash256 taskId;
    bool upheld = false;
    std::string reason;

    bool operator==(const TaskSpotCheckVerdict&) const = default;
};

/** What a transaction does; one alternative per system-contract action. */
using Payload =
    std::variant<Transfer, Propose, ProposalVote, RegisterProvider, Attest, Challenge, TaskCreate,
                 TaskStart, TaskRefuse, TaskTopUp, TaskSubmitResult, TaskVerify, TaskReportFailure,
                 TaskCancel, ProviderUnbond, TaskSpotCheck, TaskSpotCheckVerdict>;

/** Number of payload kinds (alternatives of Payload). */
inline constexpr std::size_t kPayloadKindCount = std::variant_size_v<Payload>;

/** The stable snake_case names of the payload kinds, in the order of Payload's alternatives. */
inline constexpr std::array<std::string_view, kPayloadKindCount> kPayloadKinds = {
    "transfer",
    "propose",
    "vote",
    "register_provider",
    "attest",
    "challenge",
    "task_create",
    "task_start",
    "task_refuse",
    "task_top_up",
    "task_submit_result",
    "task_verify",
    "task_report_failure",
    "task_cancel",
    "provider_unbond",
    "task_spot_check",
    "task_spot_check_verdict"};

/** The stable snake_case name of a payload kind ("transfer", "propose", "task_create", …). */
[[nodiscard]] std::string_view payloadKind(const Payload& payload);

/** The stable snake_case name of a proposal action ("add_validator", …). */
[[nodiscard]] std::string_view actionKind(const ProposalAction& action);

}  // namespace gridledger::codec
