#include <algorithm>

#include <gridledger/base/amount.h>
#include <gridledger/contracts/spot_checks.h>
#include <gridledger/contracts/task_groups.h>
#include <gridledger/contracts/tasks.h>

#include "paging.h"

namespace gridledger::rpc::handlers {
namespace {

boost::json::array historyJson(const std::vector<contracts::TaskHistoryEntry>& history) {
    boost::json::array out;
    for (const auto& e : history) {
        out.push_back(boost::json::object{
            {"from", std::string(contracts::taskStateName(e.from))},
            {"to", std::string(contracts::taskStateName(e.to))},
            {"trigger", std::string(contracts::triggerName(e.trigger))},
            {"height", std::to_string(e.height)},
            {"timestamp_ms", std::to_string(e.timestampMs)},
            {"actor", e.actor == Address{} ? std::string("system") : e.actor.hex()}});
    }
    return out;
}

Result<contracts::TaskState> stateNamed(const std::string& name) {
    for (std::uint8_t s = 0; s < contracts::kTaskStateCount; ++s) {
        const auto state = static_cast<contracts::TaskState>(s);
        if (contracts::taskStateName(state) == name) {
            return state;
        }
    }
    return fail(ErrorCode::kInvalidArgument, "no task state '" + name + "'");
}

std::string hashOrEmpty(const Hash256& hash) {
    return hash.isZero() ? std::string() : hash.hex();
}

std::string actorOrEmpty(const Address& actor, bool decided) {
    if (!decided) {
        return {};
    }
    return actor.isZero() ? std::string("system") : actor.hex();
}

value spotCheckJson(const std::optional<contracts::SpotCheck>& check) {
    if (!check) {
        return nullptr;
    }
    const bool decided = check->state != contracts::SpotCheckState::kOpen;
    return boost::json::object{{"state", std::string(contracts::spotCheckStateName(check->state))},
                               {"challenger", check->challenger.hex()},
                               {"bond", toDecimal(check->bond)},
                               {"opened_height", std::to_string(check->openedHeight)},
                               {"due_ms", std::to_string(check->dueMs)},
                               {"reason", check->reason},
                               {"evidence", hashOrEmpty(check->evidence)},
                               {"decided_by", actorOrEmpty(check->decidedBy, decided)},
                               {"decided_height", std::to_string(check->decidedHeight)},
                               {"verdict_reason", check->verdictReason}};
}

Result<boost::json::object> taskJson(const ChainContext& ctx, const Hash256& id,
                                     std::uint64_t height, const contracts::Task& task) {
    boost::json::array constraints;
    for (const auto& c : task.constraints) {
        constraints.push_back(boost::json::string(c));
    }
    boost::json::array excluded;
    for (const auto& a : task.excluded) {
        excluded.push_back(boost::json::string(a.hex()));
    }
    GL_ASSIGN_OR_RETURN(check, contracts::readSpotCheck(*ctx.tree, height, id));
    return boost::json::object{
        {"id", id.hex()},
        {"height", std::to_string(height)},
        {"group", hashOrEmpty(task.group)},
        {"consumer", task.consumer.hex()},
        {"provider", task.provider == Address{} ? std::string() : task.provider.hex()},
        {"state", std::string(contracts::taskStateName(task.state))},
        {"category", task.category},
        {"min_gflops", std::to_string(task.minGflops)},
        {"constraints", std::move(constraints)},
        {"max_minutes", std::to_string(task.maxMinutes)},
        {"rate_per_minute", toDecimal(task.ratePerMinute)},
        {"escrow", toDecimal(task.escrow)},
        {"deposit", toDecimal(task.deposit)},
        {"created_height", std::to_string(task.createdHeight)},
        {"spec_hash", task.specHash.hex()},
        {"result_hash", task.resultHash.hex()},
        {"reported_ms", std::to_string(task.reportedMs)},
        {"charged", toDecimal(task.charged)},
        {"verdict_due_ms", std::to_string(task.verdictDueMs)},
        {"excluded", std::move(excluded)},
        {"history", historyJson(task.history)},
        {"spot_check", spotCheckJson(check)}};
}

}  // namespace

/** params: `id` (32-byte hex), optional `height`. The task with every transition it went through.
 */
Result<value> taskGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"id", "height"}));
    GL_ASSIGN_OR_RETURN(id, requireFixedHex<32>(params, 0, "id"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(task, contracts::readTask(*ctx.tree, height, id));
    if (!task) {
        GL_ASSIGN_OR_RETURN(group, contracts::readTaskGroup(*ctx.tree, height, id));
        return fail(ErrorCode::kTaskNotFound,
                    "no task " + id.hex() +
                        (group ? std::string(": it is a redundant task, see task_getGroup") : ""));
    }
    GL_ASSIGN_OR_RETURN(json, taskJson(ctx, id, height, *task));
    return json;
}

/**
 * params: `id` (32-byte hex), optional `height`. A redundant task: its state, how it was decided
 * and each replica's state, provider and result.
 */
Result<value> taskGetGroup(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"id", "height"}));
    GL_ASSIGN_OR_RETURN(id, requireFixedHex<32>(params, 0, "id"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(group, contracts::readTaskGroup(*ctx.tree, height, id));
    if (!group) {
        return fail(ErrorCode::kTaskNotFound, "no redundant task " + id.hex());
    }
    boost::json::array replicas;
    for (const auto& rid : group->replicas) {
        GL_ASSIGN_OR_RETURN(task, contracts::readTask(*ctx.tree, height, rid));
        if (!task) {
            return fail(ErrorCode::kCorrupt, "group " + id.hex() + " names missing " + rid.hex());
        }
        replicas.push_back(boost::json::object{
            {"id", rid.hex()},
            {"state", std::string(contracts::taskStateName(task->state))},
            {"provider", task->provider == Address{} ? std::string() : task->provider.hex()},
            {"result_hash", hashOrEmpty(task->resultHash)}});
    }
    const bool decided = group->state == contracts::GroupState::kResolved;
    return boost::json::object{
        {"id", id.hex()},
        {"height", std::to_string(height)},
        {"consumer", group->consumer.hex()},
        {"state", std::string(contracts::groupStateName(group->state))},
        {"outcome", std::string(contracts::groupOutcomeName(group->outcome))},
        {"result_hash", hashOrEmpty(group->upheldHash)},
        {"decided_by", actorOrEmpty(group->decidedBy, decided)},
        {"verdict_due_ms", std::to_string(group->verdictDueMs)},
        {"resolved_height", std::to_string(group->resolvedHeight)},
        {"replicas", std::move(replicas)}};
}

/**
 * params: `by` ("consumer", "provider" or "state"), `key` (an address, or a state name such as
 * "running"), then the page params `height`, `cursor`, `limit` (paging.h). A page of the tasks,
 * ascending by id, each as task_get shows it.
 */
Result<value> tasksList(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"by", "key", "height", "cursor", "limit"}));
    GL_ASSIGN_OR_RETURN(by, requireString(params, 0, "by"));
    GL_ASSIGN_OR_RETURN(key, requireString(params, 1, "key"));
    if (by != "state" && by != "consumer" && by != "provider") {
        return fail(ErrorCode::kInvalidArgument, "`by` is consumer, provider or state");
    }
    GL_ASSIGN_OR_RETURN(request, readPageRequest(ctx, params, 2, "tasks_list|" + by + "|" + key));
    const std::uint64_t height = request.height;
    std::vector<Hash256> ids;
    if (by == "state") {
        GL_ASSIGN_OR_RETURN(state, stateNamed(key));
        GL_ASSIGN_OR_RETURN(found, contracts::readTasksByState(*ctx.tree, height, state));
        ids = std::move(found);
    } else {
        GL_ASSIGN_OR_RETURN(address, requireFixedHex<20>(params, 1, "key"));
        GL_ASSIGN_OR_RETURN(
            found, by == "consumer" ? contracts::readTasksByConsumer(*ctx.tree, height, address)
                                    : contracts::readTasksByProvider(*ctx.tree, height, address));
        ids = std::move(found);
    }
    std::sort(ids.begin(), ids.end());
    std::vector<Bytes> positions;
    positions.reserve(ids.size());
    for (const auto& id : ids) {
        positions.emplace_back(id.view().begin(), id.view().end());
    }
    return pageOf(request, positions, [&](std::size_t i) -> Result<std::optional<value>> {
        GL_ASSIGN_OR_RETURN(task, contracts::readTask(*ctx.tree, height, ids[i]));
        if (!task) {
            return fail(ErrorCode::kCorrupt, "task index names a missing task " + ids[i].hex());
        }
        GL_ASSIGN_OR_RETURN(json, taskJson(ctx, ids[i], height, *task));
        return value(std::move(json));
    });
}

}  // namespace gridledger::rpc::handlers
