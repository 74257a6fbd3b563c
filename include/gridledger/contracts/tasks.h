#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>
#include <gridledger/contracts/task_lifecycle.h>
#include <gridledger/ledger/state_tree.h>

/**
 * Task records in state (docs/tasks.md "State"): one record per task with its
 * escrow, clock, exclusions and the history of every transition (height, timestamp, actor), and
 * indexes of one state key per entry listing tasks by consumer, by provider, by state and by the
 * due time of their next timeout.
 */
namespace gridledger::contracts {

/** One transition a task went through. `actor` is zero for the chain's own work. */
struct TaskHistoryEntry {
    TaskState from = TaskState::kPending;
    TaskState to = TaskState::kPending;
    TaskTrigger trigger = TaskTrigger::kAssign;
    std::uint64_t height = 0;
    std::uint64_t timestampMs = 0;
    Address actor;

    bool operator==(const TaskHistoryEntry&) const = default;
};

/** A task as stored. */
struct Task {
    Hash256 id;
    Address consumer;
    /** The assigned provider; zero while none. */
    Address provider;
    TaskState state = TaskState::kPending;
    std::string category;
    std::uint64_t minGflops = 0;
    /** Label constraints in their text form ("region == eu"). */
    std::vector<std::string> constraints;
    std::uint64_t maxMinutes = 0;
    u128 ratePerMinute = 0;
    /** DPS held for the task while it is hot; 0 once it ended. */
    u128 escrow = 0;
    /** The creation deposit held with the escrow while the task is hot; 0 once it ended. */
    u128 deposit = 0;
    std::uint64_t createdHeight = 0;
    /** Hash of the job description the consumer gave; zero when none. */
    Hash256 specHash;
    /** The submitted result's hash; zero until a result is submitted. */
    Hash256 resultHash;
    /** The duration the provider reported with its result or failure, ms. */
    std::uint64_t reportedMs = 0;
    TaskClock clock;
    /**
     * The block time its next timeout falls due (timeoutDueAt when it was last stored), under
     * which the due index lists it; 0 once it ended (a due time is never 0).
     */
    std::uint64_t dueMs = 0;
    /** Providers that refused it or let the claim time out, ascending. */
    std::vector<Address> excluded;
    std::vector<TaskHistoryEntry> history;
    /** The redundant task it is a replica of (docs/tasks.md "Redundant tasks"); zero when none. */
    Hash256 group;
    /**
     * A replica waiting in ResultSubmitted for its group: the block time its group's verdict
     * window ends once the results tied; 0 while the group waits for its other replicas.
     */
    std::uint64_t verdictDueMs = 0;
    /** What its ending charged the consumer (TaskBill::charged); 0 while hot. */
    u128 charged = 0;

    bool operator==(const Task&) const = default;
};

/** SHA-256("gridledger/task-id" ‖ consumer ‖ nonce): the id of the task a consumer's tx creates. */
[[nodiscard]] Hash256 taskIdOf(const Address& consumer, std::uint64_t nonce);

/** SHA-256("gridledger/task-replica" ‖ group ‖ index as u32 BE): replica `index` of a group. */
[[nodiscard]] Hash256 replicaIdOf(const Hash256& group, std::uint32_t index);

/**
 * The block time `task`'s next timeout falls due (timeoutDueAt), but for a replica in
 * ResultSubmitted: its verdictDueMs, none while that is 0 (its group decides, docs/tasks.md).
 */
[[nodiscard]] std::optional<std::uint64_t> taskDueAt(const Task& task, const TaskParams& params,
                                                     std::uint64_t slotMs);

/**
 * The timeout due on `task` at block time `nowMs` (dueTimeout), but for a replica in
 * ResultSubmitted: kVerifyTimeout once its verdictDueMs is set and reached.
 */
[[nodiscard]] std::optional<TaskTrigger> taskDueTimeout(const Task& task, const TaskParams& params,
                                                        std::uint64_t slotMs, std::uint64_t nowMs);

[[nodiscard]] Bytes encodeTask(const Task& task);
[[nodiscard]] Result<Task> decodeTask(ByteView bytes);

[[nodiscard]] Result<std::optional<Task>> loadTask(const StateLayer& state, const Hash256& id);
[[nodiscard]] Result<std::optional<Task>> readTask(const ledger::StateTree& tree,
                                                   std::uint64_t version, const Hash256& id);

/**
 * Stores `task` as it is, its state lists untouched, for changes that are not transitions (a
 * top-up, a newer attestation): files it anew in the due index when its due time moved.
 */
[[nodiscard]] Status storeTask(StateLayer& state, Task& task);

/**
 * Stores a new task (state Pending, created at `block`), lists it under its consumer, its state
 * and its due time and counts it among the consumer's pending tasks. kInvalidTask if the id is
 * taken.
 */
[[nodiscard]] Status insertTask(StateLayer& state, Task task, const BlockContext& block);

/**
 * Whether `actor` may fire `transition` on `task`: the consumer for kConsumer, the assigned
 * provider for kProvider, the consumer or a verifier for kConsumerOrVerifier; kSystem rows are
 * the chain's own and refused to every transaction. kNotTaskParty otherwise.
 */
[[nodiscard]] Status checkParty(const Task& task, const TaskTransition& transition,
                                const Address& actor, bool actorIsVerifier);

/**
 * Fires `trigger` on `task` in `block` and stores it: kInvalidTaskTransition (both states named)
 * when the table has no such row, and then nothing is written. Moves the task between the state
 * lists, files it under its new due time (out of the due index once it ended) and keeps the
 * consumer's count of pending tasks; on kAssign sets the provider to `assignee`
 * and lists the task under it (a provider's list keeps every task it was ever assigned); on kRefuse
 * and kClaimTimeout excludes the provider and clears it; updates the clock; appends the history
 * entry (actor zero for the chain). Billing is the caller's: this moves no DPS.
 */
[[nodiscard]] Result<TaskTransition> transitionTask(StateLayer& state, Task& task,
                                                    TaskTrigger trigger, const BlockContext& block,
                                                    const Address& actor,
                                                    const Address& assignee = Address{});

/**
 * Creates a task: moves `task.escrow` + `task.deposit` from the consumer's account into it
 * (kInsufficientBalance when the consumer holds less, kOverflow beyond 128 bits) and inserts it
 * (insertTask). Σ accounts + pool + escrow + deposit is kept.
 */
[[nodiscard]] Status escrowTask(StateLayer& state, Task task, const BlockContext& block);

/**
 * Ends a hot task with a trigger that leads to a terminal state and pays its escrow out: the
 * bill of billedMinutes at the task's rate (billTask), pool_share of it to the reward pool
 * (replenish, stored in the tokenomics state), the rest to the provider's account, the remainder
 * back to the consumer; then its deposit: forfeitedDeposit to the reward pool, the rest back to
 * the consumer. The task keeps escrow 0 and deposit 0. kInvalidTaskTransition when the table has
 * no such row; kInvalidArgument when the row does not end the task; kOverflow when the pool or a
 * balance would leave 128 bits. Σ accounts + pool + escrow + deposit is kept.
 */
[[nodiscard]] Result<TaskBill> endTask(StateLayer& state, Task& task, TaskTrigger trigger,
                                       const BlockContext& block, const Address& actor,
                                       const TaskUsage& usage);

/**
 * The hot tasks whose next timeout falls due at or before `nowMs`, by due time then id: the due
 * index (docs/tasks.md "Timeouts") read from its start to `nowMs`.
 */
[[nodiscard]] Result<std::vector<Hash256>> loadDueTasks(const StateLayer& state,
                                                        std::uint64_t nowMs);

/**
 * Up to `limit` Pending task ids, ascending, after `after` (from the first when nullopt): one page
 * of matching's scan (docs/tasks.md "Matching").
 */
[[nodiscard]] Result<std::vector<Hash256>> loadPendingAfter(const StateLayer& state,
                                                            const std::optional<Hash256>& after,
                                                            std::size_t limit);
/** Up to `limit` Pending task ids, ascending, from the first up to `last` (included). */
[[nodiscard]] Result<std::vector<Hash256>> loadPendingUpTo(const StateLayer& state,
                                                           const Hash256& last, std::size_t limit);

/**
 * The Pending task matching looked at last, where the next block's scan resumes after; nullopt
 * when the last scan took in every Pending task, and the next starts from the first.
 */
[[nodiscard]] Result<std::optional<Hash256>> loadMatchCursor(const StateLayer& state);
void storeMatchCursor(StateLayer& state, const std::optional<Hash256>& cursor);

/** How many of `consumer`'s tasks are in state Pending. */
[[nodiscard]] Result<std::uint64_t> loadPendingCount(const StateLayer& state,
                                                     const Address& consumer);

/** Task ids of a consumer, of a provider, or in a state, ascending. */
[[nodiscard]] Result<std::vector<Hash256>> loadTasksByConsumer(const StateLayer& state,
                                                               const Address& consumer);
[[nodiscard]] Result<std::vector<Hash256>> loadTasksByProvider(const StateLayer& state,
                                                               const Address& provider);
[[nodiscard]] Result<std::vector<Hash256>> loadTasksByState(const StateLayer& state,
                                                            TaskState taskState);
[[nodiscard]] Result<std::vector<Hash256>> readTasksByConsumer(const ledger::StateTree& tree,
                                                               std::uint64_t version,
                                                               const Address& consumer);
[[nodiscard]] Result<std::vector<Hash256>> readTasksByProvider(const ledger::StateTree& tree,
                                                               std::uint64_t version,
                                                               const Address& provider);
[[nodiscard]] Result<std::vector<Hash256>> readTasksByState(const ledger::StateTree& tree,
                                                            std::uint64_t version,
                                                            TaskState taskState);

}  // namespace gridledger::contracts
