#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/contracts/tokenomics.h>

/**
 * The rules of the task lifecycle (docs/tasks.md) as pure functions: the state
 * machine and its transition table, the billing and refund of each transition, label constraints,
 * deterministic matching and the timeouts the chain applies by itself. No state, no clock (times
 * are block timestamps passed in), no floating point; every sum and product is checked.
 *
 * Units: DPS in base units, times in ms, durations billed in whole minutes (rounded down).
 */
namespace gridledger::contracts {

/** Where a task stands. The numbers are stored and never renumbered. */
enum class TaskState : std::uint8_t {
    kPending = 0,
    kAssigned = 1,
    kRunning = 2,
    kResultSubmitted = 3,
    kSettled = 4,
    kRejected = 5,
    kFailed = 6,
    kCancelled = 7,
    kOutOfCredits = 8,
    kPanicked = 9,
    kExpired = 10,
};

/** How many task states there are (kExpired + 1). */
inline constexpr std::uint8_t kTaskStateCount = 11;

/** "pending", "assigned", "running", "result_submitted", "settled", … Never changes. */
[[nodiscard]] std::string_view taskStateName(TaskState state);

/** Pending, Assigned, Running and ResultSubmitted: the states in which escrow is held. */
[[nodiscard]] bool isHot(TaskState state);

/** What moves a task. Each trigger leads to exactly one state (targetOf). */
enum class TaskTrigger : std::uint8_t {
    kAssign = 0,          // matching at execution: Pending → Assigned
    kStart = 1,           // provider: Assigned → Running
    kRefuse = 2,          // provider: Assigned → Pending, excluding it
    kClaimTimeout = 3,    // system: Assigned → Pending, excluding the provider
    kAssignTimeout = 4,   // system: Pending → Expired
    kSubmitResult = 5,    // provider: Running → ResultSubmitted
    kReportFailure = 6,   // provider: Running → Failed
    kOutOfCredits = 7,    // system: Running → OutOfCredits
    kPanic = 8,           // system: Running → Panicked
    kAccept = 9,          // consumer or verifier: ResultSubmitted → Settled
    kVerifyTimeout = 10,  // system: ResultSubmitted → Settled
    kReject = 11,         // consumer or verifier: ResultSubmitted → Rejected
    kCancel = 12,         // consumer: Pending, Assigned or Running → Cancelled
};

/** "assign", "start", "refuse", "claim_timeout", … Never changes. */
[[nodiscard]] std::string_view triggerName(TaskTrigger trigger);

/** The state a trigger leads to. */
[[nodiscard]] TaskState targetOf(TaskTrigger trigger);

/** Who may fire a trigger. */
enum class TaskActor : std::uint8_t {
    kConsumer = 0,
    kProvider = 1,  // the assigned provider
    kConsumerOrVerifier = 2,
    kSystem = 3,  // the chain itself: matching and timeouts
};

/** One row of the transition table. */
struct TaskTransition {
    TaskState from = TaskState::kPending;
    TaskTrigger trigger = TaskTrigger::kAssign;
    TaskState to = TaskState::kPending;
    TaskActor actor = TaskActor::kSystem;

    bool operator==(const TaskTransition&) const = default;
};

/** The whole transition table, in a fixed order. Anything not in it is refused. */
[[nodiscard]] std::span<const TaskTransition> taskTransitionTable();

/**
 * The row for `trigger` fired in `from`. kInvalidTaskTransition naming both states
 * ("task cannot go from running to pending (refuse)") when the table has none.
 */
[[nodiscard]] Result<TaskTransition> checkTrigger(TaskState from, TaskTrigger trigger);

/** Ok when some row leads from `from` to `to`; otherwise kInvalidTaskTransition naming both. */
[[nodiscard]] Status checkTransition(TaskState from, TaskState to);

/**
 * Top-up (more escrow, longer maximum duration) is not a transition: it is allowed in the hot
 * states only. kInvalidTaskTransition naming the state otherwise.
 */
[[nodiscard]] Status checkTopUp(TaskState state);

// ---- Parameters ----

/** The task parameters (docs/tasks.md); genesis defaults. */
struct TaskParams {
    /** An assigned task not started within this goes back to Pending (10 minutes). */
    std::uint64_t claimTimeoutMs = 600'000;
    /** A task still Pending this long after creation expires (1 day). */
    std::uint64_t assignTimeoutMs = kDayMs;
    /** A result without a verdict this long after submission is accepted (1 day). */
    std::uint64_t verifyWindowMs = kDayMs;
    /** A Running task whose provider has not attested for this many slots panics. */
    std::uint64_t panicAfterSlots = 2;
    /** Minutes billed on top of the elapsed ones when the consumer cancels a Running task. */
    std::uint64_t cancellationFeeMinutes = 5;
    /**
     * DPS base units a consumer locks with each task besides its escrow (0.001 DPS), returned
     * when the task ends but for depositForfeitBps of it after an expiry or a cancel while
     * Pending (forfeitedDeposit).
     */
    std::uint64_t creationDeposit = 1'000'000'000'000'000;
    /** The share of the deposit an expiry or a cancel while Pending sends to the reward pool. */
    std::uint64_t depositForfeitBps = 5'000;
    /** The most tasks one consumer may hold in state Pending when it creates another. */
    std::uint64_t maxPendingPerConsumer = 100;
    /**
     * The most Pending tasks matching looks at in one block, resuming each block where the last
     * one stopped (docs/tasks.md "Matching").
     */
    std::uint64_t matchScanPerBlock = 256;
    /**
     * The most providers a redundant task may ask for (docs/tasks.md "Redundant tasks"); 1 turns
     * redundancy off. At most ledger::kMaxTaskReplicas.
     */
    std::uint64_t maxReplicas = 5;
    /** How long after its settlement a result may be spot-checked (7 days). */
    std::uint64_t spotCheckWindowMs = 7 * kDayMs;
    /** How long an open spot check waits for a verdict before it lapses as rejected (1 day). */
    std::uint64_t spotCheckVerdictMs = kDayMs;
    /** DPS base units a verifier locks with a spot check (0.01 DPS). */
    std::uint64_t spotCheckBond = 10'000'000'000'000'000;

    bool operator==(const TaskParams&) const = default;

    /**
     * kInvalidArgument when a timeout, panicAfterSlots, maxPendingPerConsumer,
     * matchScanPerBlock, maxReplicas or a spot-check window is 0, maxReplicas is above
     * ledger::kMaxTaskReplicas, or depositForfeitBps is above 10 000.
     */
    [[nodiscard]] Status validate() const;
};

// ---- Billing ----

/** Milliseconds in one billed minute. */
inline constexpr std::uint64_t kMinuteMs = 60'000;

/** Bills the whole escrow (OutOfCredits). */
inline constexpr std::uint64_t kBillAll = ~std::uint64_t{0};

/**
 * The index rate of a task per minute: payment(priceRate, correctedGflops, 60 s), DPS base units.
 * kOverflow if it leaves 128 bits.
 */
[[nodiscard]] Result<u128> taskRatePerMinute(u128 priceRate, std::uint64_t correctedGflops);

/** The escrow for `minutes` at `ratePerMinute`; kOverflow if it leaves 128 bits. */
[[nodiscard]] Result<u128> taskEscrow(u128 ratePerMinute, std::uint64_t minutes);

/** What the clock and the provider said about a task's run, for billing. */
struct TaskUsage {
    /** The duration the provider reported with its result or failure, ms. */
    std::uint64_t reportedMs = 0;
    /** Block time since the task started Running, ms (0 if it never ran). */
    std::uint64_t elapsedMs = 0;
};

/**
 * The minutes a transition bills (kBillAll for the whole escrow):
 * Settled (accept or verify timeout) and Failed: min(reported, elapsed) minutes;
 * Cancelled from Running: elapsed minutes + cancellationFeeMinutes (saturating);
 * OutOfCredits: kBillAll; every other transition: 0.
 */
[[nodiscard]] std::uint64_t billedMinutes(const TaskTransition& transition, const TaskUsage& usage,
                                          const TaskParams& params);

/** How a task's escrow was split when it ended. toPool + toProvider + refund == escrow. */
struct TaskBill {
    std::uint64_t minutes = 0;
    /** min(minutes × rate, escrow). */
    u128 charged = 0;
    /** floor(charged × poolShareBps / 10 000), back to the reward pool (replenish). */
    u128 toPool = 0;
    u128 toProvider = 0;
    /** escrow − charged, back to the consumer. */
    u128 refund = 0;
    /** The emission state after replenishment (unchanged when nothing was charged). */
    EmissionState emission;
    /**
     * Set by endTask, not by billTask: the task's creation deposit back to the consumer, and the
     * part of it forfeited to the reward pool (already in `emission`'s pool). They sum to the
     * deposit.
     */
    u128 depositRefund = 0;
    u128 depositForfeit = 0;

    bool operator==(const TaskBill&) const = default;
};

/**
 * The part of a task's creation `deposit` forfeited to the reward pool when `transition` ends the
 * task: floor(deposit × forfeitBps / 10 000) for an assign timeout (Expired) and for a cancel
 * while Pending, 0 for every other transition. Requires forfeitBps <= 10 000.
 */
[[nodiscard]] u128 forfeitedDeposit(const TaskTransition& transition, u128 deposit,
                                    std::uint64_t forfeitBps);

/**
 * Bills `minutes` at `ratePerMinute`, never above `escrow` (a product beyond 128 bits is above
 * it), replenishes the pool with pool_share of the charge and refunds the rest of the escrow.
 * kOverflow if the pool would leave 128 bits.
 */
[[nodiscard]] Result<TaskBill> billTask(const TokenomicsParams& params, const EmissionState& before,
                                        u128 escrow, u128 ratePerMinute, std::uint64_t minutes);

// ---- Label constraints and matching ----

enum class LabelOp : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn };

/** `key op value`; for kIn, `value` is a comma-separated list. */
struct LabelConstraint {
    std::string key;
    LabelOp op = LabelOp::kEq;
    std::string value;

    bool operator==(const LabelConstraint&) const = default;
};

/**
 * Parses "key op value" with single spaces around op, op one of == != < <= > >= in.
 * kInvalidTask for anything else, an empty key or value, or an ordering op whose value is not
 * a decimal u64.
 */
[[nodiscard]] Result<LabelConstraint> parseLabelConstraint(std::string_view text);

/**
 * Whether `labels` satisfy `c`. A missing key satisfies no constraint (not even !=). Ordering ops
 * compare decimal u64 values; a label that is not one fails them. `in` matches any list item.
 */
[[nodiscard]] bool satisfies(std::span<const codec::Label> labels, const LabelConstraint& c);

/** A provider as matching sees it. */
struct MatchCandidate {
    Address provider;
    /** Admitted and not suspended. */
    bool admitted = false;
    /** Attested in the current or the previous slot. */
    bool online = false;
    std::vector<codec::Label> labels;
    std::vector<std::string> categories;
    /** Corrected GFLOP/s it attested minus what its assigned and running tasks hold. */
    std::uint64_t unassignedGflops = 0;
    /** Its reputation score in the block's epoch, 0…10 000 (docs/tokenomics.md). */
    std::uint32_t score = 0;
};

/** What a task asks of its provider. */
struct MatchRequest {
    Hash256 taskId;
    std::string category;
    std::uint64_t minGflops = 0;
    std::vector<LabelConstraint> constraints;
    /** Providers that refused the task or let the claim time out. */
    std::vector<Address> excluded;
};

/**
 * The provider the task is assigned to: among the candidates that are admitted, online, not
 * excluded, serve the category, satisfy every constraint and have unassignedGflops ≥ minGflops
 * (the eligible ones), those with the highest score; of these, sorted by address, the one at
 * index (first 8 bytes of SHA-256("gridledger/task-match" ‖ taskId), big-endian) mod count.
 * nullopt when none fits. The answer does not depend on the order of `candidates`.
 */
[[nodiscard]] std::optional<Address> matchProvider(const MatchRequest& request,
                                                   std::span<const MatchCandidate> candidates);

// ---- Timeouts ----

/** The block times a task's timeouts are measured from. */
struct TaskClock {
    TaskState state = TaskState::kPending;
    /** When it was created or last went back to Pending. */
    std::uint64_t pendingSinceMs = 0;
    /** When it was created (assign_timeout counts from here). */
    std::uint64_t createdMs = 0;
    std::uint64_t assignedMs = 0;
    std::uint64_t startedMs = 0;
    std::uint64_t submittedMs = 0;
    /** The minutes the escrow pays for at the task's rate (escrow / rate). */
    std::uint64_t escrowMinutes = 0;
    /** Start time of the first slot after the provider's last attestation (or of its start). */
    std::uint64_t unattestedSinceMs = 0;

    bool operator==(const TaskClock&) const = default;
};

/**
 * The timeout due at block time `nowMs`, if any: Pending → assign timeout at createdMs +
 * assignTimeoutMs; Assigned → claim timeout at assignedMs + claimTimeoutMs; ResultSubmitted →
 * verify timeout at submittedMs + verifyWindowMs; Running → whichever of out-of-credits (at
 * startedMs + escrowMinutes minutes) and panic (at unattestedSinceMs + panicAfterSlots slots)
 * comes first, panic on a tie. Saturating sums.
 */
[[nodiscard]] std::optional<TaskTrigger> dueTimeout(const TaskClock& clock,
                                                    const TaskParams& params, std::uint64_t slotMs,
                                                    std::uint64_t nowMs);

/**
 * The first block time at which dueTimeout(clock, params, slotMs, ·) names a trigger: the due
 * time above for Pending, Assigned and ResultSubmitted, the earlier of panic and out-of-credits
 * for Running; nullopt in the terminal states. Saturating sums.
 */
[[nodiscard]] std::optional<std::uint64_t> timeoutDueAt(const TaskClock& clock,
                                                        const TaskParams& params,
                                                        std::uint64_t slotMs);

}  // namespace gridledger::contracts
