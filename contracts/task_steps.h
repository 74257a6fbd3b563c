#pragma once

// Private to contracts/: the steps the task payloads and the chain's task work share. Each one
// fires a trigger on a task, counts it on the provider's record and returns its receipt events.

#include <vector>

#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/task_groups.h>
#include <gridledger/contracts/tasks.h>

namespace gridledger::contracts::detail {

/**
 * Fires a trigger that keeps the task hot (transitionTask), counts it on the provider's jobs and
 * returns the `task_transition` event. `actor` is zero for the chain.
 */
[[nodiscard]] Result<codec::Event> moveTask(StateLayer& state, Task& task, TaskTrigger trigger,
                                            const BlockContext& block, const Address& actor,
                                            const Address& assignee = Address{});

/**
 * Fires a trigger that ends the task (endTask: bill, pool share, refund), counts the outcome on
 * the provider's jobs when it had one and returns the `task_transition` event with the bill.
 */
[[nodiscard]] Result<codec::Event> finishTask(StateLayer& state, Task& task, TaskTrigger trigger,
                                              const BlockContext& block, const Address& actor,
                                              const TaskUsage& usage);

/** Block time since the task started running (0 if time went back); meaningless before it ran. */
[[nodiscard]] std::uint64_t elapsedSinceStart(const Task& task, std::uint64_t nowMs);

/** The run from start to the submitted result, for the verdict's bill. */
[[nodiscard]] TaskUsage resultUsage(const Task& task);

// ---- Redundant tasks (contracts/task_groups.cpp) ----

/**
 * After a step of a replica: when no replica of its group is left pending, assigned or running,
 * decides the open group (a majority result, a tie that waits for a verifier, or no result at
 * all) and appends the events. Nothing for a single task or a group already decided.
 */
[[nodiscard]] Status settleGroupIfDone(StateLayer& state, const Task& task,
                                       const BlockContext& block,
                                       std::vector<codec::Event>& events);

/**
 * A verifier's verdict on a tied group: the replicas that submitted `upheld` settle, the other
 * results are rejected and their providers slashed, as are the providers of missing results (no
 * challenger: the verifier gains nothing by its verdict). A zero `upheld` rejects every result.
 */
[[nodiscard]] Status decideTiedGroup(StateLayer& state, TaskGroup& group, const Hash256& upheld,
                                     const Address& verifier, const BlockContext& block,
                                     std::vector<codec::Event>& events);

/** The verdict window of `task`'s tied group has passed: every submitted result settles. */
[[nodiscard]] Status lapseGroup(StateLayer& state, const Task& task, const BlockContext& block,
                                std::vector<codec::Event>& events);

/** The providers holding the other replicas of `task`'s group (none for a single task). */
[[nodiscard]] Result<std::vector<Address>> siblingProviders(const StateLayer& state,
                                                            const Task& task);

}  // namespace gridledger::contracts::detail
