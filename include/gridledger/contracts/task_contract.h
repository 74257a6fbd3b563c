#pragma once

#include <cstdint>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>

/**
 * The task contract (docs/tasks.md): the eight task payloads executed by the
 * ledger, and the chain's own task work before each block's transactions (timeouts, then
 * matching). Every change of a task returns receipt events; every transition is stored in the
 * task's history with its height, timestamp and actor; Σ accounts + reward pool + Σ escrow of
 * hot tasks never changes.
 *
 * Each execute* function requires the payload's shape to be checked (ledger::checkPayloadShape)
 * and writes nothing when it fails. Refusals common to the payloads that name a task:
 * kTaskNotFound (119) for an unknown id, kInvalidTaskTransition (120) when the task's state has
 * no such row (both states named), kNotTaskParty (121) for a sender that is not the party of the
 * row.
 */
namespace gridledger::contracts {

/**
 * Creates a task with id taskIdOf(sender, nonce), escrows the index price of its maximum
 * duration and locks tasks.creation_deposit with it: kUnknownCategory for a category the power
 * index lacks, kInvalidTask for a label constraint that does not parse or a rate of 0, kOverflow
 * for an escrow beyond 128 bits, kTooManyPendingTasks when the sender already holds
 * tasks.max_pending_per_consumer tasks in state Pending, kInsufficientBalance when the sender
 * holds less than the escrow and the deposit. Event `task_created`.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskCreate(StateLayer& state,
                                                                  const BlockContext& block,
                                                                  const Address& sender,
                                                                  std::uint64_t nonce,
                                                                  const codec::TaskCreate& create);

/**
 * The assigned provider starts the task (Assigned → Running). Event `task_transition`. Refused
 * with kProviderUnbonding or kBondTooLow when the provider's stake no longer allows it to take
 * tasks (docs/tokenomics.md "Provider stake").
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskStart(StateLayer& state,
                                                                 const BlockContext& block,
                                                                 const Address& sender,
                                                                 const codec::TaskStart& start);

/** The assigned provider refuses (Assigned → Pending, the provider excluded from the task). */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskRefuse(StateLayer& state,
                                                                  const BlockContext& block,
                                                                  const Address& sender,
                                                                  const codec::TaskRefuse& refuse);

/**
 * The consumer adds `extraMinutes` at the task's rate to its escrow and maximum duration, in a
 * hot state only (kInvalidTaskTransition otherwise); kInsufficientBalance, kOverflow. Event
 * `task_topped_up`.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskTopUp(StateLayer& state,
                                                                 const BlockContext& block,
                                                                 const Address& sender,
                                                                 const codec::TaskTopUp& topUp);

/** The assigned provider's result (Running → ResultSubmitted); moves no DPS. */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskSubmitResult(
    StateLayer& state, const BlockContext& block, const Address& sender,
    const codec::TaskSubmitResult& result);

/**
 * The consumer's or a verifier's verdict: accept → Settled, billed min(reported, run) minutes
 * (the run from start to the result), reject → Rejected, refunded in full.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskVerify(StateLayer& state,
                                                                  const BlockContext& block,
                                                                  const Address& sender,
                                                                  const codec::TaskVerify& verify);

/** The assigned provider's failure report (Running → Failed), billed min(reported, elapsed). */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskReportFailure(
    StateLayer& state, const BlockContext& block, const Address& sender,
    const codec::TaskReportFailure& failure);

/**
 * The consumer cancels: from Pending or Assigned a full refund, from Running the elapsed minutes
 * plus cancellation_fee_minutes are billed.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskCancel(StateLayer& state,
                                                                  const BlockContext& block,
                                                                  const Address& sender,
                                                                  const codec::TaskCancel& cancel);

/**
 * The chain's task work at `block`, before its transactions (docs/tasks.md "Timeouts",
 * "Matching", "Spot checks"): first every due timeout, visiting the tasks the due index lists up to
 * the block's time, by due time then id, until none is left (a Running task first learns its
 * provider's latest attestation; a task that is not due after all is filed under its later due
 * time; a replica's step may decide its group), then the spot checks whose verdict window ended;
 * then, when some provider is online, every Pending task, in ascending id order, is matched against
 * the providers read from state, each assignment lowering the chosen provider's unassigned
 * capacity. Returns the events for the block's system receipt. Fails only on storage errors or a
 * broken invariant, which the executor treats as fatal for the block.
 */
[[nodiscard]] Result<std::vector<codec::Event>> runTaskSystemWork(StateLayer& state,
                                                                  const BlockContext& block);

}  // namespace gridledger::contracts
