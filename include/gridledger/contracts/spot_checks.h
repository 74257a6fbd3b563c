#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/state_tree.h>

/**
 * Spot checks (docs/tasks.md "Spot checks"): within tasks.spot_check_window_ms of a task's
 * settlement, a verifier may challenge its result by locking tasks.spot_check_bond. Another
 * verifier, neither the task's consumer nor its provider, decides: upheld, the provider is
 * slashed and the consumer refunded from the slash up to what the task charged, and the
 * challenger gets its bond back; rejected, or no verdict within tasks.spot_check_verdict_ms, the
 * bond goes to the provider. One spot check per task. Integer-only and deterministic.
 */
namespace gridledger::contracts {

/** Where a spot check stands. The numbers are stored and never renumbered. */
enum class SpotCheckState : std::uint8_t {
    kOpen = 0,
    kUpheld = 1,
    kRejected = 2,
    /** No verdict within the window: the chain rejected it. */
    kLapsed = 3,
};

/** "open", "upheld", "rejected", "lapsed". Never changes. */
[[nodiscard]] std::string_view spotCheckStateName(SpotCheckState state);

/** A spot check as stored, under its task's id. */
struct SpotCheck {
    Hash256 task;
    Address challenger;
    /** The DPS the challenger locked (tasks.spot_check_bond when it opened). */
    u128 bond = 0;
    std::uint64_t openedHeight = 0;
    std::uint64_t openedMs = 0;
    /** The block time it lapses without a verdict. */
    std::uint64_t dueMs = 0;
    std::string reason;
    /** Evidence hash; zero when none. */
    Hash256 evidence;
    SpotCheckState state = SpotCheckState::kOpen;
    /** The verifier that decided it; zero while open or when it lapsed. */
    Address decidedBy;
    std::uint64_t decidedHeight = 0;
    std::string verdictReason;

    bool operator==(const SpotCheck&) const = default;
};

[[nodiscard]] Bytes encodeSpotCheck(const SpotCheck& check);
[[nodiscard]] Result<SpotCheck> decodeSpotCheck(ByteView bytes);

[[nodiscard]] Result<std::optional<SpotCheck>> loadSpotCheck(const StateLayer& state,
                                                             const Hash256& task);
[[nodiscard]] Result<std::optional<SpotCheck>> readSpotCheck(const ledger::StateTree& tree,
                                                             std::uint64_t version,
                                                             const Hash256& task);

/** The tasks whose spot check is open, by due time then task id. */
[[nodiscard]] Result<std::vector<Hash256>> loadOpenSpotChecks(const StateLayer& state);

/**
 * Opens a spot check of a settled task: kNotVerifier for a sender without the role,
 * kTaskNotFound, kSpotCheckClosed when the task is not settled, its window has passed or it was
 * spot-checked before, kInsufficientBalance when the sender cannot lock the bond. Event
 * `task_spot_check_opened`.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskSpotCheck(
    StateLayer& state, const BlockContext& block, const Address& sender,
    const codec::TaskSpotCheck& check);

/**
 * Decides an open spot check: kNotVerifier for a sender without the role, kNoSpotCheck when none
 * is open on the task, kNotTaskParty when the sender is its challenger, the task's consumer or
 * its provider. Events `task_spot_check_decided` and, upheld, `provider_slashed`.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeTaskSpotCheckVerdict(
    StateLayer& state, const BlockContext& block, const Address& sender,
    const codec::TaskSpotCheckVerdict& verdict);

/**
 * The chain's own work at the start of each block: every open spot check whose verdict window
 * ended at or before the block's time lapses, its bond to the provider, by due time then task id.
 */
[[nodiscard]] Result<std::vector<codec::Event>> lapseDueSpotChecks(StateLayer& state,
                                                                   const BlockContext& block);

}  // namespace gridledger::contracts
