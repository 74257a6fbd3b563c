#pragma once

// Private to contracts/: the steps the task payloads and the chain's task work share. Each one
// fires a trigger on a task, counts it on the provider's record and returns its receipt events.

#include <vector>

#include <gridledger/codec/receipt.h>
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

}  // namespace gridledger::contracts::detail
