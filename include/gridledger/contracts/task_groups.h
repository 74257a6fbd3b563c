#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/state_tree.h>

/**
 * Redundant tasks (docs/tasks.md "Redundant tasks"): one consumer transaction asks k providers to
 * run the same job. Each of the k replicas is an ordinary task with its own escrow; the group
 * record ties them together and holds the decision once every replica has a result or has ended:
 * the result a strict majority of the k replicas agree on is paid, and the providers of the other
 * results and of the missing ones are slashed; without a majority a verifier that is no party to
 * the task decides the same way, and a tie nobody decides pays every result.
 */
namespace gridledger::contracts {

/** Where a group stands. The numbers are stored and never renumbered. */
enum class GroupState : std::uint8_t {
    /** Some replica is still pending, assigned or running. */
    kOpen = 0,
    /** Every replica is done and no result has a majority: waiting for a verifier's verdict. */
    kTied = 1,
    /** Decided; every replica has ended. */
    kResolved = 2,
};

/** How a resolved group was decided. The numbers are stored and never renumbered. */
enum class GroupOutcome : std::uint8_t {
    /** Not decided yet. */
    kUndecided = 0,
    /** A strict majority of the k replicas submitted the same result. */
    kMajority = 1,
    /** A verifier upheld one result of a tie, or rejected them all. */
    kVerdict = 2,
    /** A tie no verifier decided within the verify window: every result is paid. */
    kLapsed = 3,
    /** No replica submitted a result: nothing to compare. */
    kNoResult = 4,
};

/** "open", "tied", "resolved". Never changes. */
[[nodiscard]] std::string_view groupStateName(GroupState state);
/** "undecided", "majority", "verdict", "lapsed", "no_result". Never changes. */
[[nodiscard]] std::string_view groupOutcomeName(GroupOutcome outcome);

/** A redundant task as stored, under the id a single task of its transaction would have. */
struct TaskGroup {
    Hash256 id;
    Address consumer;
    /** The replicas' ids, replica i at index i (replicaIdOf(id, i)). */
    std::vector<Hash256> replicas;
    GroupState state = GroupState::kOpen;
    GroupOutcome outcome = GroupOutcome::kUndecided;
    /** The result that was paid by majority or verdict; zero otherwise. */
    Hash256 upheldHash;
    /** The verifier whose verdict decided it; zero when the chain did. */
    Address decidedBy;
    /** Tied: the block time the verdict window ends. */
    std::uint64_t verdictDueMs = 0;
    std::uint64_t resolvedHeight = 0;

    bool operator==(const TaskGroup&) const = default;
};

[[nodiscard]] Bytes encodeTaskGroup(const TaskGroup& group);
[[nodiscard]] Result<TaskGroup> decodeTaskGroup(ByteView bytes);

[[nodiscard]] Result<std::optional<TaskGroup>> loadTaskGroup(const StateLayer& state,
                                                             const Hash256& id);
[[nodiscard]] Result<std::optional<TaskGroup>> readTaskGroup(const ledger::StateTree& tree,
                                                             std::uint64_t version,
                                                             const Hash256& id);
void storeTaskGroup(StateLayer& state, const TaskGroup& group);

}  // namespace gridledger::contracts
