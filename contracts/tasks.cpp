#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/settlement.h>
#include <gridledger/contracts/tasks.h>

#include "record.h"
#include "state_index.h"

namespace gridledger::contracts {
namespace {

using detail::RecordReader;
using detail::RecordWriter;

// The pending task counts and the matching cursor.
constexpr std::uint8_t kBookkeepingFormat = 1;
/**
 * Format 2 of the task record added the spec hash, the result hash and the reported duration,
 * format 3 the creation deposit and the due time, format 4 the group, the verdict due time and
 * the charge.
 */
constexpr std::uint8_t kTaskFormat = 4;

Hash256 taskKey(const Hash256& id) {
    return detail::stateKey("gridledger/state/task", id.view());
}

detail::StateIndex consumerIndex(const Address& consumer) {
    return detail::StateIndex("gridledger/state/tasks_by_consumer", consumer.view());
}

detail::StateIndex providerIndex(const Address& provider) {
    return detail::StateIndex("gridledger/state/tasks_by_provider", provider.view());
}

detail::StateIndex stateIndex(TaskState taskState) {
    const std::uint8_t id = static_cast<std::uint8_t>(taskState);
    return detail::StateIndex("gridledger/state/tasks_by_state", ByteView{&id, 1});
}

/** Every hot task under its next due time: members are due time (u64 BE) ‖ task id. */
detail::StateIndex dueIndex() {
    return detail::StateIndex("gridledger/state/tasks_by_due");
}

Bytes dueMember(std::uint64_t dueMs, const Hash256& id) {
    Bytes member;
    appendU64(member, dueMs);
    append(member, id.view());
    return member;
}

Hash256 pendingCountKey(const Address& consumer) {
    return detail::stateKey("gridledger/state/pending_tasks", consumer.view());
}

Hash256 matchCursorKey() {
    return detail::stateKey("gridledger/state/task_match_cursor", {});
}

/** Task ids out of index members, in their order. */
Result<std::vector<Hash256>> idsOf(const std::vector<Bytes>& members) {
    std::vector<Hash256> ids;
    ids.reserve(members.size());
    for (const auto& member : members) {
        const auto id = Hash256::fromBytes(member);
        if (!id) {
            return fail(ErrorCode::kCorrupt, "a task index holds a malformed id");
        }
        ids.push_back(*id);
    }
    return ids;
}

/** The task ids an index lists, ascending. */
Result<std::vector<Hash256>> idsIn(const StateLayer& state, const detail::StateIndex& index) {
    GL_ASSIGN_OR_RETURN(members, index.members(state));
    return idsOf(members);
}

/** Raises (`up`) or lowers by one the consumer's pending count; a count of 0 has no key. */
Status countPending(StateLayer& state, const Address& consumer, bool up) {
    GL_ASSIGN_OR_RETURN(count, loadPendingCount(state, consumer));
    const auto next =
        up ? checkedAdd(count, std::uint64_t{1}) : checkedSub(count, std::uint64_t{1});
    if (!next) {
        return fail(ErrorCode::kCorrupt, "pending count of " + consumer.hex() + " is out of range");
    }
    if (*next == 0) {
        state.erase(pendingCountKey(consumer));
        return {};
    }
    RecordWriter w(kBookkeepingFormat);
    w.u64(*next);
    state.put(pendingCountKey(consumer), w.take());
    return {};
}

/** Files the task under the due time of its next timeout (none once ended), then stores it. */
Status putTask(StateLayer& state, Task& task) {
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    const std::uint64_t due = taskDueAt(task, params.tasks, params.tokenomics.slotMs).value_or(0);
    if (due != task.dueMs) {
        if (task.dueMs != 0) {
            dueIndex().remove(state, dueMember(task.dueMs, task.id));
        }
        if (due != 0) {
            dueIndex().add(state, dueMember(due, task.id));
        }
        task.dueMs = due;
    }
    state.put(taskKey(task.id), encodeTask(task));
    return {};
}

void writeClock(RecordWriter& w, const TaskClock& c) {
    w.u8(static_cast<std::uint8_t>(c.state));
    w.u64(c.pendingSinceMs).u64(c.createdMs).u64(c.assignedMs).u64(c.startedMs);
    w.u64(c.submittedMs).u64(c.escrowMinutes).u64(c.unattestedSinceMs);
}

TaskClock readClock(RecordReader& r) {
    TaskClock c;
    c.state = static_cast<TaskState>(r.u8());
    c.pendingSinceMs = r.u64();
    c.createdMs = r.u64();
    c.assignedMs = r.u64();
    c.startedMs = r.u64();
    c.submittedMs = r.u64();
    c.escrowMinutes = r.u64();
    c.unattestedSinceMs = r.u64();
    return c;
}

void updateClock(Task& task, TaskTrigger trigger, std::uint64_t nowMs) {
    auto& c = task.clock;
    switch (trigger) {
        case TaskTrigger::kAssign:
            c.assignedMs = nowMs;
            break;
        case TaskTrigger::kRefuse:
        case TaskTrigger::kClaimTimeout:
            c.pendingSinceMs = nowMs;
            break;
        case TaskTrigger::kStart:
            c.startedMs = nowMs;
            c.unattestedSinceMs = nowMs;
            break;
        case TaskTrigger::kSubmitResult:
            c.submittedMs = nowMs;
            break;
        default:
            break;
    }
    c.state = task.state;
}

}  // namespace

Hash256 taskIdOf(const Address& consumer, std::uint64_t nonce) {
    crypto::Sha256 h;
    h.update("gridledger/task-id").update(consumer.view()).updateU64(nonce);
    return h.finish();
}

Hash256 replicaIdOf(const Hash256& group, std::uint32_t index) {
    crypto::Sha256 h;
    h.update("gridledger/task-replica").update(group.view());
    Bytes be;
    appendU32(be, index);
    h.update(be);
    return h.finish();
}

std::optional<std::uint64_t> taskDueAt(const Task& task, const TaskParams& params,
                                       std::uint64_t slotMs) {
    if (!task.group.isZero() && task.state == TaskState::kResultSubmitted) {
        return task.verdictDueMs == 0 ? std::nullopt : std::optional(task.verdictDueMs);
    }
    return timeoutDueAt(task.clock, params, slotMs);
}

std::optional<TaskTrigger> taskDueTimeout(const Task& task, const TaskParams& params,
                                          std::uint64_t slotMs, std::uint64_t nowMs) {
    if (!task.group.isZero() && task.state == TaskState::kResultSubmitted) {
        if (task.verdictDueMs != 0 && task.verdictDueMs <= nowMs) {
            return TaskTrigger::kVerifyTimeout;
        }
        return std::nullopt;
    }
    return dueTimeout(task.clock, params, slotMs, nowMs);
}

Bytes encodeTask(const Task& t) {
    RecordWriter w(kTaskFormat);
    w.fixed(t.id).fixed(t.consumer).fixed(t.provider).u8(static_cast<std::uint8_t>(t.state));
    w.text(t.category).u64(t.minGflops);
    w.list(t.constraints, [](RecordWriter& out, const std::string& c) { out.text(c); });
    w.u64(t.maxMinutes).u128v(t.ratePerMinute).u128v(t.escrow).u128v(t.deposit);
    w.u64(t.createdHeight);
    w.fixed(t.specHash).fixed(t.resultHash).u64(t.reportedMs);
    writeClock(w, t.clock);
    w.u64(t.dueMs);
    w.list(t.excluded, [](RecordWriter& out, const Address& a) { out.fixed(a); });
    w.list(t.history, [](RecordWriter& out, const TaskHistoryEntry& e) {
        out.u8(static_cast<std::uint8_t>(e.from)).u8(static_cast<std::uint8_t>(e.to));
        out.u8(static_cast<std::uint8_t>(e.trigger)).u64(e.height).u64(e.timestampMs);
        out.fixed(e.actor);
    });
    w.fixed(t.group).u64(t.verdictDueMs).u128v(t.charged);
    return w.take();
}

Result<Task> decodeTask(ByteView bytes) {
    RecordReader r(bytes, "task");
    r.format(kTaskFormat);
    Task t;
    t.id = r.fixed<Hash256>();
    t.consumer = r.fixed<Address>();
    t.provider = r.fixed<Address>();
    t.state = static_cast<TaskState>(r.u8());
    t.category = r.text();
    t.minGflops = r.u64();
    t.constraints = r.list<std::string>([](RecordReader& in) { return in.text(); });
    t.maxMinutes = r.u64();
    t.ratePerMinute = r.u128v();
    t.escrow = r.u128v();
    t.deposit = r.u128v();
    t.createdHeight = r.u64();
    t.specHash = r.fixed<Hash256>();
    t.resultHash = r.fixed<Hash256>();
    t.reportedMs = r.u64();
    t.clock = readClock(r);
    t.dueMs = r.u64();
    t.excluded = r.list<Address>([](RecordReader& in) { return in.fixed<Address>(); });
    t.history = r.list<TaskHistoryEntry>([](RecordReader& in) {
        TaskHistoryEntry e;
        e.from = static_cast<TaskState>(in.u8());
        e.to = static_cast<TaskState>(in.u8());
        e.trigger = static_cast<TaskTrigger>(in.u8());
        e.height = in.u64();
        e.timestampMs = in.u64();
        e.actor = in.fixed<Address>();
        return e;
    });
    t.group = r.fixed<Hash256>();
    t.verdictDueMs = r.u64();
    t.charged = r.u128v();
    GL_TRY(r.finish());
    if (static_cast<std::uint8_t>(t.state) >= kTaskStateCount) {
        return fail(ErrorCode::kCorrupt, "stored task has an unknown state");
    }
    return t;
}

Result<std::optional<Task>> loadTask(const StateLayer& state, const Hash256& id) {
    GL_ASSIGN_OR_RETURN(value, state.get(taskKey(id)));
    if (!value) {
        return std::optional<Task>();
    }
    GL_ASSIGN_OR_RETURN(task, decodeTask(*value));
    return std::optional<Task>(std::move(task));
}

Result<std::optional<Task>> readTask(const ledger::StateTree& tree, std::uint64_t version,
                                     const Hash256& id) {
    GL_ASSIGN_OR_RETURN(value, tree.get(taskKey(id), version));
    if (!value) {
        return std::optional<Task>();
    }
    GL_ASSIGN_OR_RETURN(task, decodeTask(*value));
    return std::optional<Task>(std::move(task));
}

Status storeTask(StateLayer& state, Task& task) {
    return putTask(state, task);
}

Status insertTask(StateLayer& state, Task task, const BlockContext& block) {
    GL_ASSIGN_OR_RETURN(existing, state.get(taskKey(task.id)));
    if (existing) {
        return fail(ErrorCode::kInvalidTask, "task " + task.id.hex() + " exists");
    }
    task.state = TaskState::kPending;
    task.createdHeight = block.height;
    task.clock.state = TaskState::kPending;
    task.clock.createdMs = block.timestampMs;
    task.clock.pendingSinceMs = block.timestampMs;
    consumerIndex(task.consumer).add(state, task.id.view());
    stateIndex(task.state).add(state, task.id.view());
    GL_TRY(countPending(state, task.consumer, true));
    task.dueMs = 0;
    return putTask(state, task);
}

Status checkParty(const Task& task, const TaskTransition& transition, const Address& actor,
                  bool actorIsVerifier) {
    bool allowed = false;
    switch (transition.actor) {
        case TaskActor::kConsumer:
            allowed = actor == task.consumer;
            break;
        case TaskActor::kProvider:
            allowed = actor == task.provider && task.provider != Address{};
            break;
        case TaskActor::kConsumerOrVerifier:
            allowed = actor == task.consumer || actorIsVerifier;
            break;
        case TaskActor::kSystem:
            allowed = false;
            break;
    }
    if (!allowed) {
        return fail(ErrorCode::kNotTaskParty, actor.hex() + " may not " +
                                                  std::string(triggerName(transition.trigger)) +
                                                  " task " + task.id.hex());
    }
    return {};
}

Result<TaskTransition> transitionTask(StateLayer& state, Task& task, TaskTrigger trigger,
                                      const BlockContext& block, const Address& actor,
                                      const Address& assignee) {
    GL_ASSIGN_OR_RETURN(row, checkTrigger(task.state, trigger));
    stateIndex(row.from).remove(state, task.id.view());
    stateIndex(row.to).add(state, task.id.view());
    if (row.from == TaskState::kPending) {
        GL_TRY(countPending(state, task.consumer, false));
    }
    if (row.to == TaskState::kPending) {
        GL_TRY(countPending(state, task.consumer, true));
    }
    if (trigger == TaskTrigger::kAssign) {
        task.provider = assignee;
        providerIndex(assignee).add(state, task.id.view());
    }
    if (trigger == TaskTrigger::kRefuse || trigger == TaskTrigger::kClaimTimeout) {
        detail::insertSorted(task.excluded, task.provider);
        task.provider = Address{};
    }
    task.state = row.to;
    updateClock(task, trigger, block.timestampMs);
    task.history.push_back(
        TaskHistoryEntry{row.from, row.to, trigger, block.height, block.timestampMs, actor});
    GL_TRY(putTask(state, task));
    return row;
}

Status escrowTask(StateLayer& state, Task task, const BlockContext& block) {
    const auto locked = checkedAdd(task.escrow, task.deposit);
    if (!locked) {
        return fail(ErrorCode::kOverflow,
                    "escrow and deposit of task " + task.id.hex() + " overflow");
    }
    GL_ASSIGN_OR_RETURN(consumer, loadAccount(state, task.consumer));
    if (consumer.balance < *locked) {
        return fail(ErrorCode::kInsufficientBalance,
                    "escrow of " + toDecimal(task.escrow) + " and deposit of " +
                        toDecimal(task.deposit) + " exceed the balance " +
                        toDecimal(consumer.balance));
    }
    consumer.balance -= *locked;
    storeAccount(state, task.consumer, consumer);
    return insertTask(state, std::move(task), block);
}

Result<TaskBill> endTask(StateLayer& state, Task& task, TaskTrigger trigger,
                         const BlockContext& block, const Address& actor, const TaskUsage& usage) {
    GL_ASSIGN_OR_RETURN(row, checkTrigger(task.state, trigger));
    if (isHot(row.to)) {
        return fail(ErrorCode::kInvalidArgument,
                    std::string(triggerName(trigger)) + " does not end a task");
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    GL_ASSIGN_OR_RETURN(tokenomics, loadTokenomics(state));
    const auto minutes = billedMinutes(row, usage, params.tasks);
    GL_ASSIGN_OR_RETURN(bill, billTask(params.tokenomics, tokenomics.emission, task.escrow,
                                       task.ratePerMinute, minutes));
    bill.depositForfeit = forfeitedDeposit(row, task.deposit, params.tasks.depositForfeitBps);
    bill.depositRefund = task.deposit - bill.depositForfeit;
    const auto pool = checkedAdd(bill.emission.rewardPool, bill.depositForfeit);
    if (!pool) {
        return fail(ErrorCode::kOverflow, "reward pool overflows");
    }
    bill.emission.rewardPool = *pool;
    const auto refund = checkedAdd(bill.refund, bill.depositRefund);
    if (!refund) {
        return fail(ErrorCode::kOverflow, "refund of task " + task.id.hex() + " overflows");
    }
    GL_TRY(creditAccount(state, task.provider, bill.toProvider));
    GL_TRY(creditAccount(state, task.consumer, *refund));
    tokenomics.emission = bill.emission;
    storeTokenomics(state, tokenomics);
    task.escrow = 0;
    task.deposit = 0;
    task.charged = bill.charged;
    task.verdictDueMs = 0;
    GL_TRY(transitionTask(state, task, trigger, block, actor));
    return bill;
}

Result<std::vector<Hash256>> loadDueTasks(const StateLayer& state, std::uint64_t nowMs) {
    Bytes upTo;
    appendU64(upTo, nowMs);
    GL_ASSIGN_OR_RETURN(members, dueIndex().membersBetween(state, {}, upTo));
    std::vector<Hash256> ids;
    ids.reserve(members.size());
    for (const auto& member : members) {
        if (member.size() != 8 + Hash256::size()) {
            return fail(ErrorCode::kCorrupt, "the due index holds a malformed entry");
        }
        ids.push_back(*Hash256::fromBytes(ByteView(member).subspan(8)));
    }
    return ids;
}

Result<std::uint64_t> loadPendingCount(const StateLayer& state, const Address& consumer) {
    GL_ASSIGN_OR_RETURN(value, state.get(pendingCountKey(consumer)));
    if (!value) {
        return std::uint64_t{0};
    }
    RecordReader r(*value, "pending task count");
    r.format(kBookkeepingFormat);
    const std::uint64_t count = r.u64();
    GL_TRY(r.finish());
    return count;
}

Result<std::vector<Hash256>> loadTasksByConsumer(const StateLayer& state, const Address& consumer) {
    return idsIn(state, consumerIndex(consumer));
}

Result<std::vector<Hash256>> loadTasksByProvider(const StateLayer& state, const Address& provider) {
    return idsIn(state, providerIndex(provider));
}

Result<std::vector<Hash256>> loadTasksByState(const StateLayer& state, TaskState taskState) {
    return idsIn(state, stateIndex(taskState));
}

Result<std::vector<Hash256>> loadPendingAfter(const StateLayer& state,
                                              const std::optional<Hash256>& after,
                                              std::size_t limit) {
    const auto index = stateIndex(TaskState::kPending);
    GL_ASSIGN_OR_RETURN(members, after ? index.membersAfter(state, after->view(), limit)
                                       : index.membersBetween(state, {}, {}, limit));
    return idsOf(members);
}

Result<std::vector<Hash256>> loadPendingUpTo(const StateLayer& state, const Hash256& last,
                                             std::size_t limit) {
    GL_ASSIGN_OR_RETURN(
        members, stateIndex(TaskState::kPending).membersBetween(state, {}, last.view(), limit));
    return idsOf(members);
}

Result<std::optional<Hash256>> loadMatchCursor(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(value, state.get(matchCursorKey()));
    if (!value) {
        return std::optional<Hash256>();
    }
    RecordReader r(*value, "task matching cursor");
    r.format(kBookkeepingFormat);
    const auto id = r.fixed<Hash256>();
    GL_TRY(r.finish());
    return std::optional<Hash256>(id);
}

void storeMatchCursor(StateLayer& state, const std::optional<Hash256>& cursor) {
    if (!cursor) {
        state.erase(matchCursorKey());
        return;
    }
    RecordWriter w(kBookkeepingFormat);
    w.fixed(*cursor);
    state.put(matchCursorKey(), w.take());
}

Result<std::vector<Hash256>> readTasksByConsumer(const ledger::StateTree& tree,
                                                 std::uint64_t version, const Address& consumer) {
    return loadTasksByConsumer(StateLayer(tree, version), consumer);
}

Result<std::vector<Hash256>> readTasksByProvider(const ledger::StateTree& tree,
                                                 std::uint64_t version, const Address& provider) {
    return loadTasksByProvider(StateLayer(tree, version), provider);
}

Result<std::vector<Hash256>> readTasksByState(const ledger::StateTree& tree, std::uint64_t version,
                                              TaskState taskState) {
    return loadTasksByState(StateLayer(tree, version), taskState);
}

}  // namespace gridledger::contracts
