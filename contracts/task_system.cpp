// The chain's own task work before each block's transactions: timeouts, then matching
// (docs/tasks.md "Timeouts", "Matching"). Only key ranges in key order, sorted lists and ordered
// maps are iterated.

#include <algorithm>
#include <map>

#include <gridledger/contracts/params.h>
#include <gridledger/contracts/spot_checks.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/task_contract.h>

#include "task_steps.h"

namespace gridledger::contracts {
namespace {

using Events = std::vector<codec::Event>;

/** Slot numbers counted from genesis: global slot g starts at genesis + g·slotMs. */
struct SlotClock {
    std::uint64_t genesisMs = 0;
    std::uint64_t slotMs = 1;
    std::uint64_t slotsPerEpoch = 1;

    /** The global slot of `timeMs`; nullopt before genesis. */
    [[nodiscard]] std::optional<std::uint64_t> slotAt(std::uint64_t timeMs) const {
        if (timeMs < genesisMs) {
            return std::nullopt;
        }
        return (timeMs - genesisMs) / slotMs;
    }
    /** The start of global slot `g`, saturating. */
    [[nodiscard]] std::uint64_t startOf(std::uint64_t g) const {
        const auto offset = checkedMul(g, slotMs);
        const auto start = offset ? checkedAdd(genesisMs, *offset) : std::nullopt;
        return start.value_or(~std::uint64_t{0});
    }
};

SlotClock slotClock(const ChainParams& params) {
    return SlotClock{params.genesisTimeMs, params.tokenomics.slotMs,
                     params.tokenomics.slotsPerEpoch()};
}

/** The value of `provider`'s unchallenged attestation of global slot `g`, if any. */
Result<std::optional<std::uint64_t>> attestedValue(const StateLayer& state, const SlotClock& clock,
                                                   const Address& provider, std::uint64_t g) {
    GL_ASSIGN_OR_RETURN(samples, loadSlotSamples(state, provider, g / clock.slotsPerEpoch));
    const std::uint64_t slot = g % clock.slotsPerEpoch;
    for (const auto& sample : samples) {
        if (sample.slot == slot && !sample.challenged) {
            return std::optional<std::uint64_t>(sample.gflops);
        }
    }
    return std::optional<std::uint64_t>();
}

/**
 * The start of the slot after `provider`'s latest unchallenged attestation in the epoch of
 * `nowMs` or the one before, if any.
 */
Result<std::optional<std::uint64_t>> attestedUntil(const StateLayer& state, const SlotClock& clock,
                                                   const Address& provider, std::uint64_t nowMs) {
    const auto now = clock.slotAt(nowMs);
    if (!now) {
        return std::optional<std::uint64_t>();
    }
    const std::uint64_t epoch = *now / clock.slotsPerEpoch;
    for (std::uint64_t back = 0; back < 2 && back <= epoch; ++back) {
        GL_ASSIGN_OR_RETURN(samples, loadSlotSamples(state, provider, epoch - back));
        for (auto it = samples.rbegin(); it != samples.rend(); ++it) {
            if (!it->challenged) {
                const std::uint64_t g = (epoch - back) * clock.slotsPerEpoch + it->slot;
                return std::optional<std::uint64_t>(clock.startOf(g + 1));
            }
        }
    }
    return std::optional<std::uint64_t>();
}

/** Running: moves unattestedSinceMs up to the provider's latest attestation. */
Status refreshAttestation(const StateLayer& state, const SlotClock& clock, Task& task,
                          std::uint64_t nowMs) {
    GL_ASSIGN_OR_RETURN(until, attestedUntil(state, clock, task.provider, nowMs));
    if (until && *until > task.clock.unattestedSinceMs) {
        task.clock.unattestedSinceMs = *until;
    }
    return {};
}

/** Fires the due timeout `trigger` on `task` as the chain. */
Result<codec::Event> fireTimeout(StateLayer& state, Task& task, TaskTrigger trigger,
                                 const BlockContext& block) {
    const Address chain{};
    switch (trigger) {
        case TaskTrigger::kClaimTimeout:
            return detail::moveTask(state, task, trigger, block, chain);
        case TaskTrigger::kVerifyTimeout:
            return detail::finishTask(state, task, trigger, block, chain,
                                      detail::resultUsage(task));
        default:
            return detail::finishTask(
                state, task, trigger, block, chain,
                TaskUsage{0, detail::elapsedSinceStart(task, block.timestampMs)});
    }
}

/**
 * One task of the due index: fires its timeout if the rule, with the parameters and (Running) the
 * attestations of now, says it is due; otherwise files it again under its later due time.
 */
Status visitDue(StateLayer& state, const ChainParams& params, const BlockContext& block,
                const Hash256& id, Events& events) {
    GL_ASSIGN_OR_RETURN(task, loadTask(state, id));
    if (task && !isHot(task->state) && !task->group.isZero()) {
        return {};  // a replica its group's lapse settled earlier in this pass
    }
    if (!task || !isHot(task->state)) {
        return fail(ErrorCode::kCorrupt, "the due index names task " + id.hex() + " wrongly");
    }
    if (task->state == TaskState::kRunning) {
        GL_TRY(refreshAttestation(state, slotClock(params), *task, block.timestampMs));
    }
    const auto due =
        taskDueTimeout(*task, params.tasks, params.tokenomics.slotMs, block.timestampMs);
    if (due && !task->group.isZero() && task->state == TaskState::kResultSubmitted) {
        // A tied group's verdict window passed: the group settles all its results at once.
        return detail::lapseGroup(state, *task, block, events);
    }
    if (due) {
        GL_ASSIGN_OR_RETURN(event, fireTimeout(state, *task, *due, block));
        events.push_back(std::move(event));
        return detail::settleGroupIfDone(state, *task, block, events);
    }
    GL_TRY(storeTask(state, *task));
    if (task->dueMs <= block.timestampMs) {
        return fail(ErrorCode::kInternal, "task " + id.hex() + " is due and not due");
    }
    return {};
}

Status runTimeouts(StateLayer& state, const ChainParams& params, const BlockContext& block,
                   Events& events) {
    // Again until nothing is due: a task a claim timeout sends back to Pending may already be
    // past its assign timeout. Each pass leaves every task it visits ended or due later.
    while (true) {
        GL_ASSIGN_OR_RETURN(ids, loadDueTasks(state, block.timestampMs));
        if (ids.empty()) {
            return {};
        }
        for (const auto& id : ids) {
            GL_TRY(visitDue(state, params, block, id, events));
        }
    }
}

/** Corrected GFLOP/s held by each provider's Assigned and Running tasks. */
Result<std::map<Address, std::uint64_t>> heldCapacity(const StateLayer& state) {
    std::map<Address, std::uint64_t> held;
    for (const TaskState list : {TaskState::kAssigned, TaskState::kRunning}) {
        GL_ASSIGN_OR_RETURN(ids, loadTasksByState(state, list));
        for (const auto& id : ids) {
            GL_ASSIGN_OR_RETURN(task, loadTask(state, id));
            if (!task) {
                return fail(ErrorCode::kCorrupt, "task list names missing task " + id.hex());
            }
            auto& sum = held[task->provider];
            sum = checkedAdd(sum, task->minGflops).value_or(~std::uint64_t{0});
        }
    }
    return held;
}

/**
 * Every admitted provider as matching sees it at `nowMs`, ascending by address, with its
 * reputation score in the epoch of `nowMs`.
 */
Result<std::vector<MatchCandidate>> candidates(const StateLayer& state, const ChainParams& params,
                                               std::uint64_t nowMs) {
    std::vector<MatchCandidate> out;
    const SlotClock clock = slotClock(params);
    const auto now = clock.slotAt(nowMs);
    if (!now) {
        return out;
    }
    GL_ASSIGN_OR_RETURN(held, heldCapacity(state));
    GL_ASSIGN_OR_RETURN(addresses, loadProviderIndex(state));
    for (const auto& address : addresses) {
        GL_ASSIGN_OR_RETURN(provider, loadProvider(state, address));
        if (!provider || provider->status != ProviderStatus::kAdmitted ||
            !checkBond(params, *provider)) {
            continue;
        }
        GL_ASSIGN_OR_RETURN(value, attestedValue(state, clock, address, *now));
        if (!value && *now > 0) {
            GL_ASSIGN_OR_RETURN(previous, attestedValue(state, clock, address, *now - 1));
            value = previous;
        }
        if (!value) {
            continue;
        }
        MatchCandidate c;
        c.provider = address;
        c.admitted = true;
        c.online = true;
        c.labels = provider->inventory.labels;
        c.categories = provider->inventory.categories;
        const auto it = held.find(address);
        const std::uint64_t taken = it == held.end() ? 0 : it->second;
        c.unassignedGflops = *value > taken ? *value - taken : 0;
        c.score = providerScore(params, *provider, nowMs).score;
        out.push_back(std::move(c));
    }
    return out;
}

/**
 * The Pending tasks this block's matching looks at: at most tasks.match_scan_per_block of them,
 * in id order from after the cursor, wrapping to the first ones up to the cursor. Moves the
 * cursor to the last one, or clears it when the scan took in every Pending task, so that a
 * list within the budget is read whole from its first task every block.
 */
Result<std::vector<Hash256>> scanPending(StateLayer& state, const ChainParams& params) {
    const std::uint64_t budget = params.tasks.matchScanPerBlock;
    GL_ASSIGN_OR_RETURN(cursor, loadMatchCursor(state));
    GL_ASSIGN_OR_RETURN(scan, loadPendingAfter(state, cursor, budget));
    bool whole = scan.size() < budget;
    if (whole && cursor) {
        const std::size_t room = budget - scan.size();
        GL_ASSIGN_OR_RETURN(wrapped, loadPendingUpTo(state, *cursor, room));
        whole = wrapped.size() < room;
        scan.insert(scan.end(), wrapped.begin(), wrapped.end());
    }
    if (!whole) {
        storeMatchCursor(state, scan.back());
    } else if (cursor) {
        storeMatchCursor(state, std::nullopt);
    }
    return scan;
}

Status runMatching(StateLayer& state, const ChainParams& params, const BlockContext& block,
                   Events& events) {
    // The providers first: without one online there is no pending list to read.
    GL_ASSIGN_OR_RETURN(pool, candidates(state, params, block.timestampMs));
    if (pool.empty()) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(pending, scanPending(state, params));
    for (const auto& id : pending) {
        GL_ASSIGN_OR_RETURN(task, loadTask(state, id));
        if (!task) {
            return fail(ErrorCode::kCorrupt, "task list names missing task " + id.hex());
        }
        MatchRequest request{task->id, task->category, task->minGflops, {}, task->excluded};
        // The replicas of one redundant task go to different providers.
        GL_ASSIGN_OR_RETURN(siblings, detail::siblingProviders(state, *task));
        request.excluded.insert(request.excluded.end(), siblings.begin(), siblings.end());
        for (const auto& text : task->constraints) {
            GL_ASSIGN_OR_RETURN(constraint, parseLabelConstraint(text));
            request.constraints.push_back(std::move(constraint));
        }
        const auto chosen = matchProvider(request, pool);
        if (!chosen) {
            continue;
        }
        GL_ASSIGN_OR_RETURN(
            event, detail::moveTask(state, *task, TaskTrigger::kAssign, block, Address{}, *chosen));
        events.push_back(std::move(event));
        auto candidate = std::find_if(pool.begin(), pool.end(),
                                      [&](const auto& c) { return c.provider == *chosen; });
        candidate->unassignedGflops -= task->minGflops;
    }
    return {};
}

}  // namespace

Result<std::vector<codec::Event>> runTaskSystemWork(StateLayer& state, const BlockContext& block) {
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    Events events;
    GL_TRY(runTimeouts(state, params, block, events));
    GL_ASSIGN_OR_RETURN(lapsed, lapseDueSpotChecks(state, block));
    events.insert(events.end(), std::make_move_iterator(lapsed.begin()),
                  std::make_move_iterator(lapsed.end()));
    GL_TRY(runMatching(state, params, block, events));
    return events;
}

}  // namespace gridledger::contracts
