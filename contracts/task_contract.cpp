#include <algorithm>
#include <string>

#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/task_contract.h>

#include "task_steps.h"

namespace gridledger::contracts {
namespace detail {
namespace {

std::string actorText(const Address& actor) {
    return actor.isZero() ? std::string("system") : actor.hex();
}

codec::Event transitionEvent(const Task& task, TaskState from, TaskTrigger trigger,
                             const Address& actor) {
    return codec::Event{
        "task_transition",
        {{"task", task.id.hex()},
         {"trigger", std::string(triggerName(trigger))},
         {"from", std::string(taskStateName(from))},
         {"to", std::string(taskStateName(task.state))},
         {"actor", actorText(actor)},
         {"consumer", task.consumer.hex()},
         {"provider", task.provider.isZero() ? std::string() : task.provider.hex()}}};
}

/** The job counter a trigger raises on the provider's record, if any. */
std::uint64_t* counterOf(ProviderJobs& jobs, TaskTrigger trigger) {
    switch (trigger) {
        case TaskTrigger::kAssign:
            return &jobs.assigned;
        case TaskTrigger::kStart:
            return &jobs.started;
        case TaskTrigger::kRefuse:
            return &jobs.refused;
        case TaskTrigger::kClaimTimeout:
            return &jobs.claimTimeouts;
        case TaskTrigger::kAccept:
        case TaskTrigger::kVerifyTimeout:
            return &jobs.settled;
        case TaskTrigger::kReject:
            return &jobs.rejected;
        case TaskTrigger::kReportFailure:
            return &jobs.failed;
        case TaskTrigger::kOutOfCredits:
            return &jobs.outOfCredits;
        case TaskTrigger::kPanic:
            return &jobs.panicked;
        case TaskTrigger::kCancel:
            return &jobs.cancelled;
        case TaskTrigger::kAssignTimeout:
        case TaskTrigger::kSubmitResult:
            break;
    }
    return nullptr;
}

/**
 * How a trigger moves the provider's reputation (docs/tokenomics.md "Provider reputation"):
 * +1 good job for a settlement, fault_weight points for a fault of the provider's, nothing for an
 * ending the consumer or the credits decided (out of credits, cancel) or a step on the way.
 */
enum class JobOutcome : std::uint8_t { kNeutral, kGood, kFault };

JobOutcome outcomeOf(TaskTrigger trigger) {
    switch (trigger) {
        case TaskTrigger::kAccept:
        case TaskTrigger::kVerifyTimeout:
            return JobOutcome::kGood;
        case TaskTrigger::kRefuse:
        case TaskTrigger::kClaimTimeout:
        case TaskTrigger::kReject:
        case TaskTrigger::kReportFailure:
        case TaskTrigger::kPanic:
            return JobOutcome::kFault;
        case TaskTrigger::kAssign:
        case TaskTrigger::kStart:
        case TaskTrigger::kOutOfCredits:
        case TaskTrigger::kCancel:
        case TaskTrigger::kAssignTimeout:
        case TaskTrigger::kSubmitResult:
            break;
    }
    return JobOutcome::kNeutral;
}

/** `record`'s reputation after `trigger` in `block`. */
Result<Reputation> reputationAfter(const StateLayer& state, const Provider& record,
                                   TaskTrigger trigger, const BlockContext& block) {
    const JobOutcome outcome = outcomeOf(trigger);
    if (outcome == JobOutcome::kNeutral) {
        return record.reputation;
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    const std::uint64_t epoch = reputationEpoch(params, block.timestampMs);
    if (outcome == JobOutcome::kGood) {
        return creditGoodJob(record.reputation, params.reputation, epoch);
    }
    return addFaultPoints(record.reputation, params.reputation, epoch,
                          params.reputation.faultWeight);
}

/**
 * Raises the provider's counter for `trigger` and moves its reputation (no provider, or no
 * counter: nothing).
 */
Status countJob(StateLayer& state, const Address& provider, TaskTrigger trigger,
                const BlockContext& block) {
    if (provider.isZero()) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(record, loadProvider(state, provider));
    if (!record) {
        return fail(ErrorCode::kCorrupt, "task provider " + provider.hex() + " is not registered");
    }
    std::uint64_t* counter = counterOf(record->jobs, trigger);
    if (counter == nullptr) {
        return {};
    }
    const auto next = checkedAdd(*counter, std::uint64_t{1});
    if (!next) {
        return fail(ErrorCode::kOverflow, "job counter of " + provider.hex() + " overflows");
    }
    *counter = *next;
    GL_ASSIGN_OR_RETURN(reputation, reputationAfter(state, *record, trigger, block));
    record->reputation = reputation;
    storeProvider(state, *record);
    return {};
}

}  // namespace

Result<codec::Event> moveTask(StateLayer& state, Task& task, TaskTrigger trigger,
                              const BlockContext& block, const Address& actor,
                              const Address& assignee) {
    const TaskState from = task.state;
    // Refuse and claim timeout clear the provider: count them on it before.
    const Address counted = trigger == TaskTrigger::kAssign ? assignee : task.provider;
    GL_TRY(transitionTask(state, task, trigger, block, actor, assignee));
    GL_TRY(countJob(state, counted, trigger, block));
    auto event = transitionEvent(task, from, trigger, actor);
    if (trigger == TaskTrigger::kRefuse || trigger == TaskTrigger::kClaimTimeout) {
        event.attributes.emplace_back("excluded", counted.hex());
    }
    return event;
}

Result<codec::Event> finishTask(StateLayer& state, Task& task, TaskTrigger trigger,
                                const BlockContext& block, const Address& actor,
                                const TaskUsage& usage) {
    const TaskState from = task.state;
    const u128 escrow = task.escrow;
    const u128 deposit = task.deposit;
    GL_ASSIGN_OR_RETURN(bill, endTask(state, task, trigger, block, actor, usage));
    GL_TRY(countJob(state, task.provider, trigger, block));
    auto event = transitionEvent(task, from, trigger, actor);
    event.attributes.emplace_back("escrow", toDecimal(escrow));
    event.attributes.emplace_back(
        "minutes", bill.minutes == kBillAll ? std::string("all") : std::to_string(bill.minutes));
    event.attributes.emplace_back("charged", toDecimal(bill.charged));
    event.attributes.emplace_back("to_pool", toDecimal(bill.toPool));
    event.attributes.emplace_back("to_provider", toDecimal(bill.toProvider));
    event.attributes.emplace_back("refund", toDecimal(bill.refund));
    event.attributes.emplace_back("deposit", toDecimal(deposit));
    event.attributes.emplace_back("deposit_forfeit", toDecimal(bill.depositForfeit));
    return event;
}

std::uint64_t elapsedSinceStart(const Task& task, std::uint64_t nowMs) {
    const auto& c = task.clock;
    if (nowMs < c.startedMs) {
        return 0;
    }
    return nowMs - c.startedMs;
}

TaskUsage resultUsage(const Task& task) {
    return TaskUsage{task.reportedMs, elapsedSinceStart(task, task.clock.submittedMs)};
}

}  // namespace detail

namespace {

using Events = Result<std::vector<codec::Event>>;

Result<Task> existingTask(const StateLayer& state, const Hash256& id) {
    GL_ASSIGN_OR_RETURN(task, loadTask(state, id));
    if (!task) {
        return fail(ErrorCode::kTaskNotFound, "no task " + id.hex());
    }
    return std::move(*task);
}

/** The task, checked to have a row for `trigger` in its state that `sender` may fire. */
Result<Task> taskFor(const StateLayer& state, const Hash256& id, TaskTrigger trigger,
                     const Address& sender) {
    GL_ASSIGN_OR_RETURN(task, existingTask(state, id));
    GL_ASSIGN_OR_RETURN(row, checkTrigger(task.state, trigger));
    bool verifier = false;
    if (row.actor == TaskActor::kConsumerOrVerifier) {
        GL_ASSIGN_OR_RETURN(verifiers, loadVerifiers(state));
        verifier = std::binary_search(verifiers.begin(), verifiers.end(), sender);
    }
    GL_TRY(checkParty(task, row, sender, verifier));
    return task;
}

Events one(Result<codec::Event> event) {
    if (!event) {
        return std::unexpected(event.error());
    }
    return std::vector<codec::Event>{std::move(*event)};
}

/** `event` followed by the events of deciding the task's group, if this step completed it. */
Events withGroup(StateLayer& state, const Task& task, const BlockContext& block,
                 codec::Event event) {
    std::vector<codec::Event> events{std::move(event)};
    GL_TRY(detail::settleGroupIfDone(state, task, block, events));
    return events;
}

codec::Event createdEvent(const Task& task) {
    return codec::Event{"task_created",
                        {{"task", task.id.hex()},
                         {"consumer", task.consumer.hex()},
                         {"category", task.category},
                         {"min_gflops", std::to_string(task.minGflops)},
                         {"max_minutes", std::to_string(task.maxMinutes)},
                         {"rate_per_minute", toDecimal(task.ratePerMinute)},
                         {"escrow", toDecimal(task.escrow)},
                         {"deposit", toDecimal(task.deposit)},
                         {"spec_hash", task.specHash.hex()}}};
}

/**
 * A verifier's verdict on a tied redundant task: upholds the named result (accept) or rejects
 * every result (docs/tasks.md "Redundant tasks").
 */
Events verifyGroup(StateLayer& state, const BlockContext& block, const Address& sender,
                   TaskGroup group, const codec::TaskVerify& verify) {
    GL_ASSIGN_OR_RETURN(verifiers, loadVerifiers(state));
    if (!std::binary_search(verifiers.begin(), verifiers.end(), sender)) {
        return fail(ErrorCode::kNotVerifier,
                    sender.hex() +
                        " does not hold the verifier role: only a verifier decides a "
                        "tied group");
    }
    // Nobody decides a tie they are a party to: the consumer, or a provider of a replica.
    bool party = sender == group.consumer;
    for (const auto& id : group.replicas) {
        GL_ASSIGN_OR_RETURN(replica, loadTask(state, id));
        party = party || (replica && replica->provider == sender);
    }
    if (party) {
        return fail(ErrorCode::kNotTaskParty, sender.hex() + " is a party to group " +
                                                  group.id.hex() + " and may not decide it");
    }
    if (group.state != GroupState::kTied) {
        return fail(ErrorCode::kRedundantTask, "group " + group.id.hex() + " is " +
                                                   std::string(groupStateName(group.state)) +
                                                   ": only a tie waits for a verdict");
    }
    if (verify.accept) {
        if (verify.resultHash.isZero()) {
            return fail(ErrorCode::kRedundantTask,
                        "a verdict that upholds a tied group names the result hash");
        }
        bool submitted = false;
        for (const auto& id : group.replicas) {
            GL_ASSIGN_OR_RETURN(replica, loadTask(state, id));
            submitted = submitted || (replica && replica->state == TaskState::kResultSubmitted &&
                                      replica->resultHash == verify.resultHash);
        }
        if (!submitted) {
            return fail(ErrorCode::kRedundantTask, "no replica of group " + group.id.hex() +
                                                       " submitted result " +
                                                       verify.resultHash.hex());
        }
    }
    std::vector<codec::Event> events;
    GL_TRY(detail::decideTiedGroup(state, group, verify.accept ? verify.resultHash : Hash256{},
                                   sender, block, events));
    events.back().attributes.emplace_back("reason", verify.reason);
    return events;
}

}  // namespace

Events executeTaskCreate(StateLayer& state, const BlockContext& block, const Address& sender,
                         std::uint64_t nonce, const codec::TaskCreate& create) {
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    const WorkloadCategory* category = params.index.category(create.category);
    if (category == nullptr) {
        return fail(ErrorCode::kUnknownCategory,
                    "workload category '" + create.category + "' is not in the power index");
    }
    for (const auto& text : create.constraints) {
        GL_TRY(parseLabelConstraint(text));
    }
    GL_ASSIGN_OR_RETURN(rate, taskRatePerMinute(category->priceRate, create.minGflops));
    if (rate == 0) {
        return fail(ErrorCode::kInvalidTask, "a task of " + std::to_string(create.minGflops) +
                                                 " GFLOP/s is priced at 0 per minute");
    }
    GL_ASSIGN_OR_RETURN(escrow, taskEscrow(rate, create.maxMinutes));
    const std::uint32_t replicas = std::max(create.replicas, std::uint32_t{1});
    if (replicas > params.tasks.maxReplicas) {
        return fail(ErrorCode::kInvalidTask, std::to_string(replicas) +
                                                 " replicas; tasks.max_replicas allows " +
                                                 std::to_string(params.tasks.maxReplicas));
    }
    GL_ASSIGN_OR_RETURN(pending, loadPendingCount(state, sender));
    if (checkedAdd(pending, std::uint64_t{replicas}).value_or(~std::uint64_t{0}) >
        params.tasks.maxPendingPerConsumer) {
        return fail(ErrorCode::kTooManyPendingTasks,
                    sender.hex() + " holds " + std::to_string(pending) + " pending tasks; " +
                        std::to_string(replicas) +
                        " more would pass tasks.max_pending_per_consumer");
    }
    Task task;
    task.id = taskIdOf(sender, nonce);
    task.consumer = sender;
    task.category = create.category;
    task.minGflops = create.minGflops;
    task.constraints = create.constraints;
    task.maxMinutes = create.maxMinutes;
    task.ratePerMinute = rate;
    task.escrow = escrow;
    task.deposit = params.tasks.creationDeposit;
    task.specHash = create.specHash;
    task.clock.escrowMinutes = create.maxMinutes;
    if (replicas == 1) {
        GL_TRY(escrowTask(state, task, block));
        return std::vector<codec::Event>{createdEvent(task)};
    }
    // A redundant task: k replicas, each an ordinary task with its own escrow and deposit, and
    // the group record under the id a single task would have had.
    TaskGroup group;
    group.id = task.id;
    group.consumer = sender;
    std::vector<codec::Event> events;
    for (std::uint32_t i = 0; i < replicas; ++i) {
        Task replica = task;
        replica.id = replicaIdOf(group.id, i);
        replica.group = group.id;
        group.replicas.push_back(replica.id);
        GL_TRY(escrowTask(state, replica, block));
        auto event = createdEvent(replica);
        event.attributes.emplace_back("group", group.id.hex());
        event.attributes.emplace_back("replica", std::to_string(i));
        events.push_back(std::move(event));
    }
    storeTaskGroup(state, group);
    events.push_back(codec::Event{"task_group_created",
                                  {{"group", group.id.hex()},
                                   {"consumer", sender.hex()},
                                   {"replicas", std::to_string(replicas)}}});
    return events;
}

Events executeTaskStart(StateLayer& state, const BlockContext& block, const Address& sender,
                        const codec::TaskStart& start) {
    GL_ASSIGN_OR_RETURN(task, taskFor(state, start.taskId, TaskTrigger::kStart, sender));
    // A provider that unbonded or was slashed below the bond since matching may not take it.
    GL_ASSIGN_OR_RETURN(provider, loadProvider(state, sender));
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    if (provider) {
        GL_TRY(checkBond(params, *provider));
    }
    return one(detail::moveTask(state, task, TaskTrigger::kStart, block, sender));
}

Events executeTaskRefuse(StateLayer& state, const BlockContext& block, const Address& sender,
                         const codec::TaskRefuse& refuse) {
    GL_ASSIGN_OR_RETURN(task, taskFor(state, refuse.taskId, TaskTrigger::kRefuse, sender));
    return one(detail::moveTask(state, task, TaskTrigger::kRefuse, block, sender));
}

Events executeTaskTopUp(StateLayer& state, const BlockContext& /*block*/, const Address& sender,
                        const codec::TaskTopUp& topUp) {
    GL_ASSIGN_OR_RETURN(task, existingTask(state, topUp.taskId));
    GL_TRY(checkTopUp(task.state));
    if (sender != task.consumer) {
        return fail(ErrorCode::kNotTaskParty,
                    sender.hex() + " may not top up task " + task.id.hex());
    }
    GL_ASSIGN_OR_RETURN(added, taskEscrow(task.ratePerMinute, topUp.extraMinutes));
    const auto escrow = checkedAdd(task.escrow, added);
    const auto maxMinutes = checkedAdd(task.maxMinutes, topUp.extraMinutes);
    const auto escrowMinutes = checkedAdd(task.clock.escrowMinutes, topUp.extraMinutes);
    if (!escrow || !maxMinutes || !escrowMinutes) {
        return fail(ErrorCode::kOverflow, "top-up of task " + task.id.hex() + " overflows");
    }
    GL_ASSIGN_OR_RETURN(consumer, loadAccount(state, sender));
    if (consumer.balance < added) {
        return fail(ErrorCode::kInsufficientBalance, "top-up of " + toDecimal(added) +
                                                         " exceeds the balance " +
                                                         toDecimal(consumer.balance));
    }
    consumer.balance -= added;
    storeAccount(state, sender, consumer);
    task.escrow = *escrow;
    task.maxMinutes = *maxMinutes;
    task.clock.escrowMinutes = *escrowMinutes;
    GL_TRY(storeTask(state, task));
    return std::vector<codec::Event>{
        codec::Event{"task_topped_up",
                     {{"task", task.id.hex()},
                      {"extra_minutes", std::to_string(topUp.extraMinutes)},
                      {"added", toDecimal(added)},
                      {"escrow", toDecimal(task.escrow)},
                      {"max_minutes", std::to_string(task.maxMinutes)}}}};
}

Events executeTaskSubmitResult(StateLayer& state, const BlockContext& block, const Address& sender,
                               const codec::TaskSubmitResult& result) {
    GL_ASSIGN_OR_RETURN(task, taskFor(state, result.taskId, TaskTrigger::kSubmitResult, sender));
    task.resultHash = result.resultHash;
    task.reportedMs = result.durationMs;
    GL_ASSIGN_OR_RETURN(event,
                        detail::moveTask(state, task, TaskTrigger::kSubmitResult, block, sender));
    event.attributes.emplace_back("result_hash", result.resultHash.hex());
    event.attributes.emplace_back("output_uri", result.outputUri);
    event.attributes.emplace_back("exit_code", std::to_string(result.exitCode));
    event.attributes.emplace_back("duration_ms", std::to_string(result.durationMs));
    return withGroup(state, task, block, std::move(event));
}

Events executeTaskVerify(StateLayer& state, const BlockContext& block, const Address& sender,
                         const codec::TaskVerify& verify) {
    const TaskTrigger trigger = verify.accept ? TaskTrigger::kAccept : TaskTrigger::kReject;
    GL_ASSIGN_OR_RETURN(stored, loadTask(state, verify.taskId));
    if (!stored) {
        GL_ASSIGN_OR_RETURN(group, loadTaskGroup(state, verify.taskId));
        if (group) {
            return verifyGroup(state, block, sender, std::move(*group), verify);
        }
    } else if (!stored->group.isZero()) {
        return fail(ErrorCode::kRedundantTask, "task " + stored->id.hex() +
                                                   " is a replica of group " + stored->group.hex() +
                                                   ": the group's results decide it");
    }
    if (!verify.resultHash.isZero()) {
        return fail(ErrorCode::kRedundantTask,
                    "a verdict names a result hash only on a tied redundant task");
    }
    GL_ASSIGN_OR_RETURN(task, taskFor(state, verify.taskId, trigger, sender));
    GL_ASSIGN_OR_RETURN(
        event, detail::finishTask(state, task, trigger, block, sender, detail::resultUsage(task)));
    event.attributes.emplace_back("reason", verify.reason);
    return std::vector<codec::Event>{std::move(event)};
}

Events executeTaskReportFailure(StateLayer& state, const BlockContext& block, const Address& sender,
                                const codec::TaskReportFailure& failure) {
    GL_ASSIGN_OR_RETURN(task, taskFor(state, failure.taskId, TaskTrigger::kReportFailure, sender));
    task.reportedMs = failure.durationMs;
    const TaskUsage usage{failure.durationMs, detail::elapsedSinceStart(task, block.timestampMs)};
    GL_ASSIGN_OR_RETURN(
        event, detail::finishTask(state, task, TaskTrigger::kReportFailure, block, sender, usage));
    event.attributes.emplace_back("exit_code", std::to_string(failure.exitCode));
    event.attributes.emplace_back("error", failure.error);
    event.attributes.emplace_back("duration_ms", std::to_string(failure.durationMs));
    return withGroup(state, task, block, std::move(event));
}

Events executeTaskCancel(StateLayer& state, const BlockContext& block, const Address& sender,
                         const codec::TaskCancel& cancel) {
    GL_ASSIGN_OR_RETURN(task, taskFor(state, cancel.taskId, TaskTrigger::kCancel, sender));
    const TaskUsage usage{0, detail::elapsedSinceStart(task, block.timestampMs)};
    GL_ASSIGN_OR_RETURN(
        event, detail::finishTask(state, task, TaskTrigger::kCancel, block, sender, usage));
    return withGroup(state, task, block, std::move(event));
}

}  // namespace gridledger::contracts
