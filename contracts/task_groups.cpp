// Redundant tasks: the group record and the decision over its replicas' results
// (docs/tasks.md "Redundant tasks"). Replicas are visited in index order and results counted in
// an ordered map, so every node decides the same way.

#include <map>
#include <string>

#include <gridledger/contracts/params.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/task_groups.h>

#include "record.h"
#include "task_steps.h"

namespace gridledger::contracts {
namespace {

using detail::RecordReader;
using detail::RecordWriter;
using Events = std::vector<codec::Event>;

constexpr std::uint8_t kGroupFormat = 1;

Hash256 groupKey(const Hash256& id) {
    return detail::stateKey("gridledger/state/task_group", id.view());
}

/** The group's replicas as stored now, in index order. */
Result<std::vector<Task>> loadReplicas(const StateLayer& state, const TaskGroup& group) {
    std::vector<Task> replicas;
    replicas.reserve(group.replicas.size());
    for (const auto& id : group.replicas) {
        GL_ASSIGN_OR_RETURN(task, loadTask(state, id));
        if (!task) {
            return fail(ErrorCode::kCorrupt,
                        "group " + group.id.hex() + " names missing replica " + id.hex());
        }
        replicas.push_back(std::move(*task));
    }
    return replicas;
}

Result<TaskGroup> groupOf(const StateLayer& state, const Task& task) {
    GL_ASSIGN_OR_RETURN(group, loadTaskGroup(state, task.group));
    if (!group) {
        return fail(ErrorCode::kCorrupt,
                    "replica " + task.id.hex() + " names missing group " + task.group.hex());
    }
    return std::move(*group);
}

/** A replica that ended without a result through its provider: failed, panicked, out of time. */
bool missedResult(TaskState state) {
    return state == TaskState::kFailed || state == TaskState::kPanicked ||
           state == TaskState::kOutOfCredits;
}

std::string actorText(const Address& actor) {
    return actor.isZero() ? std::string("system") : actor.hex();
}

/** Settles the group as decided and appends its `task_group_resolved` event. */
void closeGroup(StateLayer& state, TaskGroup& group, GroupOutcome outcome, const Hash256& upheld,
                const Address& actor, const BlockContext& block, const std::string& counts,
                Events& events) {
    group.state = GroupState::kResolved;
    group.outcome = outcome;
    group.upheldHash = upheld;
    group.decidedBy = actor;
    group.verdictDueMs = 0;
    group.resolvedHeight = block.height;
    storeTaskGroup(state, group);
    events.push_back(codec::Event{"task_group_resolved",
                                  {{"group", group.id.hex()},
                                   {"outcome", std::string(groupOutcomeName(outcome))},
                                   {"result_hash", upheld.isZero() ? std::string() : upheld.hex()},
                                   {"decided_by", actorText(actor)},
                                   {"replicas", counts}}});
}

/**
 * Pays the replicas that submitted `upheld`, rejects every other submitted result and slashes
 * its provider, and slashes the providers of missing results. `actor` (zero for the chain) fires
 * the verdicts; nobody is the challenger of the slashes, whose challenger share goes to the pool,
 * so that a verifier gains nothing by the verdict it gives.
 */
Status decide(StateLayer& state, TaskGroup& group, std::vector<Task>& replicas,
              const Hash256& upheld, const Address& actor, GroupOutcome outcome,
              const BlockContext& block, Events& events) {
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    std::size_t settled = 0;
    std::size_t rejected = 0;
    std::size_t slashed = 0;
    for (auto& replica : replicas) {
        const bool submitted = replica.state == TaskState::kResultSubmitted;
        if (submitted && !upheld.isZero() && replica.resultHash == upheld) {
            GL_ASSIGN_OR_RETURN(
                event, detail::finishTask(state, replica, TaskTrigger::kAccept, block, actor,
                                          detail::resultUsage(replica)));
            events.push_back(std::move(event));
            ++settled;
            continue;
        }
        if (submitted) {
            GL_ASSIGN_OR_RETURN(
                event, detail::finishTask(state, replica, TaskTrigger::kReject, block, actor,
                                          detail::resultUsage(replica)));
            events.push_back(std::move(event));
            ++rejected;
        } else if (!missedResult(replica.state)) {
            continue;  // cancelled by the consumer or never assigned: nobody's fault
        }
        GL_ASSIGN_OR_RETURN(
            slash, slashBond(state, params, block, replica.provider,
                             SlashPayees{.challenger = {}, .refundTo = {}, .refundCap = 0}));
        slash.attributes.emplace_back("task", replica.id.hex());
        events.push_back(std::move(slash));
        ++slashed;
    }
    const std::string counts =
        std::to_string(replicas.size()) + " replicas: " + std::to_string(settled) + " paid, " +
        std::to_string(rejected) + " rejected, " + std::to_string(slashed) + " slashed";
    closeGroup(state, group, outcome, upheld, actor, block, counts, events);
    return {};
}

}  // namespace

std::string_view groupStateName(GroupState state) {
    switch (state) {
        case GroupState::kOpen:
            return "open";
        case GroupState::kTied:
            return "tied";
        case GroupState::kResolved:
            return "resolved";
    }
    return "unknown";
}

std::string_view groupOutcomeName(GroupOutcome outcome) {
    switch (outcome) {
        case GroupOutcome::kUndecided:
            return "undecided";
        case GroupOutcome::kMajority:
            return "majority";
        case GroupOutcome::kVerdict:
            return "verdict";
        case GroupOutcome::kLapsed:
            return "lapsed";
        case GroupOutcome::kNoResult:
            return "no_result";
    }
    return "unknown";
}

Bytes encodeTaskGroup(const TaskGroup& g) {
    RecordWriter w(kGroupFormat);
    w.fixed(g.id).fixed(g.consumer);
    w.list(g.replicas, [](RecordWriter& out, const Hash256& id) { out.fixed(id); });
    w.u8(static_cast<std::uint8_t>(g.state)).u8(static_cast<std::uint8_t>(g.outcome));
    w.fixed(g.upheldHash).fixed(g.decidedBy).u64(g.verdictDueMs).u64(g.resolvedHeight);
    return w.take();
}

Result<TaskGroup> decodeTaskGroup(ByteView bytes) {
    RecordReader r(bytes, "task group");
    r.format(kGroupFormat);
    TaskGroup g;
    g.id = r.fixed<Hash256>();
    g.consumer = r.fixed<Address>();
    g.replicas = r.list<Hash256>([](RecordReader& in) { return in.fixed<Hash256>(); });
    const std::uint8_t state = r.u8();
    const std::uint8_t outcome = r.u8();
    g.upheldHash = r.fixed<Hash256>();
    g.decidedBy = r.fixed<Address>();
    g.verdictDueMs = r.u64();
    g.resolvedHeight = r.u64();
    GL_TRY(r.finish());
    if (state > static_cast<std::uint8_t>(GroupState::kResolved) ||
        outcome > static_cast<std::uint8_t>(GroupOutcome::kNoResult)) {
        return fail(ErrorCode::kCorrupt, "stored task group has an unknown state or outcome");
    }
    g.state = static_cast<GroupState>(state);
    g.outcome = static_cast<GroupOutcome>(outcome);
    return g;
}

Result<std::optional<TaskGroup>> loadTaskGroup(const StateLayer& state, const Hash256& id) {
    GL_ASSIGN_OR_RETURN(value, state.get(groupKey(id)));
    if (!value) {
        return std::optional<TaskGroup>();
    }
    GL_ASSIGN_OR_RETURN(group, decodeTaskGroup(*value));
    return std::optional<TaskGroup>(std::move(group));
}

Result<std::optional<TaskGroup>> readTaskGroup(const ledger::StateTree& tree, std::uint64_t version,
                                               const Hash256& id) {
    return loadTaskGroup(StateLayer(tree, version), id);
}

void storeTaskGroup(StateLayer& state, const TaskGroup& group) {
    state.put(groupKey(group.id), encodeTaskGroup(group));
}

namespace detail {

Status settleGroupIfDone(StateLayer& state, const Task& task, const BlockContext& block,
                         Events& events) {
    if (task.group.isZero()) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(group, groupOf(state, task));
    if (group.state != GroupState::kOpen) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(replicas, loadReplicas(state, group));
    std::map<Hash256, std::size_t> votes;
    std::size_t submitted = 0;
    for (const auto& replica : replicas) {
        if (replica.state == TaskState::kResultSubmitted) {
            ++votes[replica.resultHash];
            ++submitted;
        } else if (isHot(replica.state)) {
            return {};  // still pending, assigned or running
        }
    }
    if (submitted == 0) {
        closeGroup(state, group, GroupOutcome::kNoResult, Hash256{}, Address{}, block,
                   std::to_string(replicas.size()) + " replicas: no result", events);
        return {};
    }
    for (const auto& [hash, count] : votes) {
        if (count * 2 > replicas.size()) {
            return decide(state, group, replicas, hash, Address{}, GroupOutcome::kMajority, block,
                          events);
        }
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    const std::uint64_t due =
        checkedAdd(block.timestampMs, params.tasks.verifyWindowMs).value_or(~std::uint64_t{0});
    for (auto& replica : replicas) {
        if (replica.state == TaskState::kResultSubmitted) {
            replica.verdictDueMs = due;
            GL_TRY(storeTask(state, replica));
        }
    }
    group.state = GroupState::kTied;
    group.verdictDueMs = due;
    storeTaskGroup(state, group);
    events.push_back(codec::Event{"task_group_tied",
                                  {{"group", group.id.hex()},
                                   {"results", std::to_string(votes.size())},
                                   {"submitted", std::to_string(submitted)},
                                   {"replicas", std::to_string(replicas.size())},
                                   {"verdict_due_ms", std::to_string(due)}}});
    return {};
}

Status decideTiedGroup(StateLayer& state, TaskGroup& group, const Hash256& upheld,
                       const Address& verifier, const BlockContext& block, Events& events) {
    GL_ASSIGN_OR_RETURN(replicas, loadReplicas(state, group));
    return decide(state, group, replicas, upheld, verifier, GroupOutcome::kVerdict, block, events);
}

Status lapseGroup(StateLayer& state, const Task& task, const BlockContext& block, Events& events) {
    GL_ASSIGN_OR_RETURN(group, groupOf(state, task));
    if (group.state != GroupState::kTied) {
        return fail(ErrorCode::kCorrupt, "replica " + task.id.hex() +
                                             " is due in a group that is " +
                                             std::string(groupStateName(group.state)));
    }
    GL_ASSIGN_OR_RETURN(replicas, loadReplicas(state, group));
    std::size_t settled = 0;
    for (auto& replica : replicas) {
        if (replica.state != TaskState::kResultSubmitted) {
            continue;
        }
        GL_ASSIGN_OR_RETURN(event, finishTask(state, replica, TaskTrigger::kVerifyTimeout, block,
                                              Address{}, resultUsage(replica)));
        events.push_back(std::move(event));
        ++settled;
    }
    closeGroup(state, group, GroupOutcome::kLapsed, Hash256{}, Address{}, block,
               std::to_string(replicas.size()) + " replicas: " + std::to_string(settled) +
                   " paid without a verdict",
               events);
    return {};
}

Result<std::vector<Address>> siblingProviders(const StateLayer& state, const Task& task) {
    std::vector<Address> out;
    if (task.group.isZero()) {
        return out;
    }
    GL_ASSIGN_OR_RETURN(group, groupOf(state, task));
    for (const auto& id : group.replicas) {
        if (id == task.id) {
            continue;
        }
        GL_ASSIGN_OR_RETURN(sibling, loadTask(state, id));
        if (sibling && !sibling->provider.isZero()) {
            out.push_back(sibling->provider);
        }
    }
    return out;
}

}  // namespace detail
}  // namespace gridledger::contracts
