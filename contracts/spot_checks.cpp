#include <algorithm>

#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/spot_checks.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/tasks.h>

#include "record.h"
#include "state_index.h"

namespace gridledger::contracts {
namespace {

using detail::RecordReader;
using detail::RecordWriter;
using EventList = std::vector<codec::Event>;
using Events = Result<EventList>;

constexpr std::uint8_t kSpotCheckFormat = 1;

Hash256 checkKey(const Hash256& task) {
    return detail::stateKey("gridledger/state/task_spot_check", task.view());
}

/** Every open spot check under its due time: members are due time (u64 BE) ‖ task id. */
detail::StateIndex dueIndex() {
    return detail::StateIndex("gridledger/state/spot_checks_by_due");
}

Bytes dueMember(std::uint64_t dueMs, const Hash256& task) {
    Bytes member;
    appendU64(member, dueMs);
    append(member, task.view());
    return member;
}

void storeCheck(StateLayer& state, const SpotCheck& check) {
    state.put(checkKey(check.task), encodeSpotCheck(check));
}

Status requireVerifier(const StateLayer& state, const Address& sender) {
    GL_ASSIGN_OR_RETURN(verifiers, loadVerifiers(state));
    if (!std::binary_search(verifiers.begin(), verifiers.end(), sender)) {
        return fail(ErrorCode::kNotVerifier, sender.hex() + " does not hold the verifier role");
    }
    return {};
}

/** The block time `task` settled, from its history; nullopt when it is not settled. */
std::optional<std::uint64_t> settledAt(const Task& task) {
    if (task.state != TaskState::kSettled || task.history.empty() ||
        task.history.back().to != TaskState::kSettled) {
        return std::nullopt;
    }
    return task.history.back().timestampMs;
}

Result<Task> taskOf(const StateLayer& state, const Hash256& id) {
    GL_ASSIGN_OR_RETURN(task, loadTask(state, id));
    if (!task) {
        return fail(ErrorCode::kTaskNotFound, "no task " + id.hex());
    }
    return std::move(*task);
}

/** Ends an open spot check: its state, the decider and the due index entry. */
void closeCheck(StateLayer& state, SpotCheck& check, SpotCheckState outcome, const Address& decider,
                const BlockContext& block, std::string reason) {
    dueIndex().remove(state, dueMember(check.dueMs, check.task));
    check.state = outcome;
    check.decidedBy = decider;
    check.decidedHeight = block.height;
    check.verdictReason = std::move(reason);
    storeCheck(state, check);
}

codec::Event decidedEvent(const SpotCheck& check, const Task& task) {
    return codec::Event{
        "task_spot_check_decided",
        {{"task", check.task.hex()},
         {"outcome", std::string(spotCheckStateName(check.state))},
         {"challenger", check.challenger.hex()},
         {"provider", task.provider.hex()},
         {"decided_by", check.decidedBy.isZero() ? std::string("system") : check.decidedBy.hex()},
         {"bond", toDecimal(check.bond)},
         {"bond_to",
          check.state == SpotCheckState::kUpheld ? check.challenger.hex() : task.provider.hex()},
         {"reason", check.verdictReason}}};
}

}  // namespace

std::string_view spotCheckStateName(SpotCheckState state) {
    switch (state) {
        case SpotCheckState::kOpen:
            return "open";
        case SpotCheckState::kUpheld:
            return "upheld";
        case SpotCheckState::kRejected:
            return "rejected";
        case SpotCheckState::kLapsed:
            return "lapsed";
    }
    return "unknown";
}

Bytes encodeSpotCheck(const SpotCheck& c) {
    RecordWriter w(kSpotCheckFormat);
    w.fixed(c.task).fixed(c.challenger).u128v(c.bond);
    w.u64(c.openedHeight).u64(c.openedMs).u64(c.dueMs);
    w.text(c.reason).fixed(c.evidence).u8(static_cast<std::uint8_t>(c.state));
    w.fixed(c.decidedBy).u64(c.decidedHeight).text(c.verdictReason);
    return w.take();
}

Result<SpotCheck> decodeSpotCheck(ByteView bytes) {
    RecordReader r(bytes, "spot check");
    r.format(kSpotCheckFormat);
    SpotCheck c;
    c.task = r.fixed<Hash256>();
    c.challenger = r.fixed<Address>();
    c.bond = r.u128v();
    c.openedHeight = r.u64();
    c.openedMs = r.u64();
    c.dueMs = r.u64();
    c.reason = r.text();
    c.evidence = r.fixed<Hash256>();
    const std::uint8_t state = r.u8();
    c.decidedBy = r.fixed<Address>();
    c.decidedHeight = r.u64();
    c.verdictReason = r.text();
    GL_TRY(r.finish());
    if (state > static_cast<std::uint8_t>(SpotCheckState::kLapsed)) {
        return fail(ErrorCode::kCorrupt, "stored spot check has an unknown state");
    }
    c.state = static_cast<SpotCheckState>(state);
    return c;
}

Result<std::optional<SpotCheck>> loadSpotCheck(const StateLayer& state, const Hash256& task) {
    GL_ASSIGN_OR_RETURN(value, state.get(checkKey(task)));
    if (!value) {
        return std::optional<SpotCheck>();
    }
    GL_ASSIGN_OR_RETURN(check, decodeSpotCheck(*value));
    return std::optional<SpotCheck>(std::move(check));
}

Result<std::optional<SpotCheck>> readSpotCheck(const ledger::StateTree& tree, std::uint64_t version,
                                               const Hash256& task) {
    return loadSpotCheck(StateLayer(tree, version), task);
}

namespace {

/** The open spot checks due at or before `upToMs`, by due time then task id. */
Result<std::vector<Hash256>> dueChecks(const StateLayer& state, std::uint64_t upToMs) {
    Bytes upTo;
    appendU64(upTo, upToMs);
    GL_ASSIGN_OR_RETURN(members, dueIndex().membersBetween(state, {}, upTo));
    std::vector<Hash256> tasks;
    tasks.reserve(members.size());
    for (const auto& member : members) {
        if (member.size() != 8 + Hash256::size()) {
            return fail(ErrorCode::kCorrupt, "the spot-check due index holds a malformed entry");
        }
        tasks.push_back(*Hash256::fromBytes(ByteView(member).subspan(8)));
    }
    return tasks;
}

}  // namespace

Result<std::vector<Hash256>> loadOpenSpotChecks(const StateLayer& state) {
    return dueChecks(state, ~std::uint64_t{0});
}

Events executeTaskSpotCheck(StateLayer& state, const BlockContext& block, const Address& sender,
                            const codec::TaskSpotCheck& request) {
    GL_TRY(requireVerifier(state, sender));
    GL_ASSIGN_OR_RETURN(task, taskOf(state, request.taskId));
    const auto settled = settledAt(task);
    if (!settled) {
        return fail(ErrorCode::kSpotCheckClosed, "task " + task.id.hex() + " is " +
                                                     std::string(taskStateName(task.state)) +
                                                     ": only a settled result may be spot-checked");
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    const std::uint64_t closes =
        checkedAdd(*settled, params.tasks.spotCheckWindowMs).value_or(~std::uint64_t{0});
    if (block.timestampMs > closes) {
        return fail(ErrorCode::kSpotCheckClosed, "the spot-check window of task " + task.id.hex() +
                                                     " closed at " + std::to_string(closes));
    }
    GL_ASSIGN_OR_RETURN(existing, loadSpotCheck(state, task.id));
    if (existing) {
        return fail(ErrorCode::kSpotCheckClosed,
                    "task " + task.id.hex() + " was spot-checked before (" +
                        std::string(spotCheckStateName(existing->state)) + ")");
    }
    const u128 bond = params.tasks.spotCheckBond;
    GL_ASSIGN_OR_RETURN(account, loadAccount(state, sender));
    if (account.balance < bond) {
        return fail(ErrorCode::kInsufficientBalance, "balance " + toDecimal(account.balance) +
                                                         " cannot lock the spot-check bond " +
                                                         toDecimal(bond));
    }
    account.balance -= bond;
    storeAccount(state, sender, account);
    SpotCheck check;
    check.task = task.id;
    check.challenger = sender;
    check.bond = bond;
    check.openedHeight = block.height;
    check.openedMs = block.timestampMs;
    check.dueMs =
        checkedAdd(block.timestampMs, params.tasks.spotCheckVerdictMs).value_or(~std::uint64_t{0});
    check.reason = request.reason;
    check.evidence = request.evidence;
    storeCheck(state, check);
    dueIndex().add(state, dueMember(check.dueMs, check.task));
    return EventList{codec::Event{
        "task_spot_check_opened",
        {{"task", task.id.hex()},
         {"provider", task.provider.hex()},
         {"challenger", sender.hex()},
         {"bond", toDecimal(bond)},
         {"due_ms", std::to_string(check.dueMs)},
         {"reason", request.reason},
         {"evidence", request.evidence.isZero() ? std::string() : request.evidence.hex()}}}};
}

Events executeTaskSpotCheckVerdict(StateLayer& state, const BlockContext& block,
                                   const Address& sender,
                                   const codec::TaskSpotCheckVerdict& verdict) {
    GL_TRY(requireVerifier(state, sender));
    GL_ASSIGN_OR_RETURN(check, loadSpotCheck(state, verdict.taskId));
    if (!check || check->state != SpotCheckState::kOpen) {
        return fail(ErrorCode::kNoSpotCheck,
                    "task " + verdict.taskId.hex() + " has no open spot check");
    }
    GL_ASSIGN_OR_RETURN(task, taskOf(state, verdict.taskId));
    if (sender == check->challenger || sender == task.consumer || sender == task.provider) {
        return fail(ErrorCode::kNotTaskParty,
                    sender.hex() + " may not decide the spot check of task " + task.id.hex() +
                        ": its challenger, the task's consumer and its provider may not");
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    EventList events;
    if (verdict.upheld) {
        closeCheck(state, *check, SpotCheckState::kUpheld, sender, block, verdict.reason);
        GL_TRY(creditAccount(state, check->challenger, check->bond));
        events.push_back(decidedEvent(*check, task));
        GL_ASSIGN_OR_RETURN(slash, slashBond(state, params, block, task.provider,
                                             SlashPayees{.challenger = check->challenger,
                                                         .refundTo = task.consumer,
                                                         .refundCap = task.charged}));
        slash.attributes.emplace_back("task", task.id.hex());
        events.push_back(std::move(slash));
        return events;
    }
    closeCheck(state, *check, SpotCheckState::kRejected, sender, block, verdict.reason);
    GL_TRY(creditAccount(state, task.provider, check->bond));
    events.push_back(decidedEvent(*check, task));
    return events;
}

Events lapseDueSpotChecks(StateLayer& state, const BlockContext& block) {
    EventList events;
    GL_ASSIGN_OR_RETURN(due, dueChecks(state, block.timestampMs));
    for (const auto& id : due) {
        GL_ASSIGN_OR_RETURN(check, loadSpotCheck(state, id));
        if (!check || check->state != SpotCheckState::kOpen) {
            return fail(ErrorCode::kCorrupt, "the spot-check due index names " + id.hex());
        }
        GL_ASSIGN_OR_RETURN(task, taskOf(state, id));
        closeCheck(state, *check, SpotCheckState::kLapsed, Address{}, block,
                   "no verdict within tasks.spot_check_verdict_ms");
        GL_TRY(creditAccount(state, task.provider, check->bond));
        events.push_back(decidedEvent(*check, task));
    }
    return events;
}

}  // namespace gridledger::contracts
