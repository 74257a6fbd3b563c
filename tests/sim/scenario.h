#pragma once

// A simulated run, fully determined by (n, fault class, rules, seed): the committee, who is
// faulty and how, the links, the partitions, the crashes and the workload.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/consensus/core.h>

#include "sim/weak_rules.h"

namespace gridledger::sim {

/** A uniform integer in [lo, hi] (lo <= hi); plain modulo, so identical on every standard library.
 */
[[nodiscard]] inline std::uint64_t between(std::mt19937_64& rng, std::uint64_t lo,
                                           std::uint64_t hi) {
    return hi - lo == UINT64_MAX ? rng() : lo + rng() % (hi - lo + 1);
}

/** True with probability permille / 1000. */
[[nodiscard]] inline bool chance(std::mt19937_64& rng, unsigned permille) {
    return rng() % 1000 < permille;
}

/** Virtual time 0 of every run, as the cores' clock (milliseconds since the Unix epoch). */
inline constexpr std::uint64_t kClockBaseMs = 1'700'000'000'000;
/** The chain id of every simulated committee. */
inline constexpr std::string_view kSimChainId = "gridledger-sim";

/** The kind of trouble a scenario brings. Each class keeps the faulty members within f, except
 * kExcessTwins (a negative control). */
enum class FaultClass : std::uint8_t {
    kNone,       // random link delays only
    kLossy,      // drops, duplicates, reordering, stale and replayed messages
    kCrash,      // crashes (also mid-step) and restarts from the persisted state; up to f stay down
    kPartition,  // partitions that heal before GST
    kTwins,      // up to f keys run by two honest cores each, split by partitions
    kEquivocation,   // up to f leaders send two different blocks to the two halves
    kWithhold,       // up to f members never send their votes
    kForking,        // up to f leaders that show a block to one member only and, after a TC,
                     // propose below their lock (what V2 refuses)
    kMixed,          // up to f faulty members of mixed kinds, with crashes, loss and partitions
    kExcessTwins,    // f + 1 twinned keys and a partition that never heals: must fork
    kTwinsRounds,    // up to f twinned keys, and before GST a partition chosen per round: the
                     // messages of round r reach only the instances on their sender's side of
                     // round r's partition (the schedules of the Twins paper)
    kTcForgery,      // up to f members that forge TCs claiming a QC nobody holds, and send no
                     // timeout or proposal of their own
    kSyncLiar,       // one member whose driver lies to block sync (claims of far heights and
                     // later epochs, silent, empty or epoch-crossing answers), and honest
                     // members down long enough to need sync
    kBatchForgery,   // certified batches; up to f members that put a transaction with a bad
                     // signature in each of their batches, acknowledge each other's unchecked,
                     // withhold their acknowledgements from honest batches and propose
                     // certificates they made up
    kBatchHoarding,  // certified batches; up to f members that send each batch only to the
                     // members they ask to sign it and answer no request for batch data
};

/** The class's command-line name ("none", "lossy", ..., "excess-twins"). */
[[nodiscard]] std::string_view faultName(FaultClass faults);
/** The class named `name`, or nullopt. */
[[nodiscard]] std::optional<FaultClass> parseFault(std::string_view name);
/** The classes within f that a committee of n can run (only none and crash for n = 1, which has
 * no peers). */
[[nodiscard]] std::vector<FaultClass> faultClassesFor(std::size_t n);

/** What an instance (one running core) is. */
enum class Role : std::uint8_t {
    kHonest,        // follows the protocol; may crash and restart
    kTwin,          // one of two honest cores sharing a key: the pair is one faulty member
    kEquivocator,   // honest core, but its driver sends a second block of its rounds to half
    kWithholder,    // honest core, but its driver never sends its votes
    kForker,        // honest core, but its driver shows its blocks to one member only, and after
                    // a TC sends instead a block that extends two blocks below its highest QC
    kCrashed,       // honest until it crashes for good before GST
    kTcForger,      // honest core, but its driver sends no timeout or proposal of its own and,
                    // from q - 1 honest timeouts of a round, forges a TC whose own entry claims
                    // a QC of the round below that it does not hold
    kSyncLiar,      // honest core, but its driver claims far heights (its own signed copies of
                    // proposals) and later epochs (unsigned) to every instance, and answers
                    // block sync silently, emptily, or across the end of an epoch when it can
    kBatchForger,   // honest core, but its driver forges batches (see kBatchForgery)
    kBatchHoarder,  // honest core, but its driver hoards batch data (see kBatchHoarding)
};

[[nodiscard]] std::string_view roleName(Role role);
/** Roles whose signatures and commits the safety invariants cover (not twins, equivocators,
 * forkers: their keys sign conflicting messages by design). */
[[nodiscard]] bool safetyChecked(Role role);

/** One-way delay of a directed link, uniform in [minMs, maxMs]. */
struct LinkDelay {
    std::uint64_t minMs = 0;
    std::uint64_t maxMs = 0;
};

/** From startMs until healMs, messages between instances on different sides are lost. */
struct Partition {
    std::uint64_t startMs = 0;
    std::uint64_t healMs = 0;
    std::vector<std::uint8_t> side;  // per instance
};

/** Instance `instance` crashes at `atMs` (midStep: after a random prefix of one step's
 * effects) and restarts from its persisted state at `restartMs`, if any. */
struct CrashPlan {
    std::size_t instance = 0;
    std::uint64_t atMs = 0;
    std::optional<std::uint64_t> restartMs;
    bool midStep = false;
};

/** Every parameter of one run. Virtual times are milliseconds from the start of the run. */
struct Scenario {
    std::uint64_t seed = 0;
    std::size_t n = 1;
    FaultClass faults = FaultClass::kNone;
    RulesVariant rules = RulesVariant::kTwoChain;
    consensus::Options options;

    /** Per instance: its key (twins share one) and its role. Instances 0..n-1 hold keys 0..n-1. */
    std::vector<std::size_t> keyOf;
    std::vector<Role> roles;
    /** links[from * instances() + to]. */
    std::vector<LinkDelay> links;
    /** Before GST, per message: lost, sent twice, delivered seconds late, replayed later (‰). */
    unsigned dropPermille = 0;
    unsigned duplicatePermille = 0;
    unsigned stalePermille = 0;
    unsigned replayPermille = 0;
    /** Before GST a lost message is retransmitted, as TCP does, instead of lost: it arrives one
     * retransmission timeout late, the link's round trip plus 200 ms (Linux's minimum RTO). */
    bool retransmitLost = false;
    std::vector<Partition> partitions;
    /** Before GST, roundSides[r - 1] (when not empty) gives each instance its side for the
     * messages of round r (proposals, votes, timeouts, TCs): those cross no side. */
    std::vector<std::vector<std::uint8_t>> roundSides;
    /** Before GST the network drops the copies of a vote to members other than the next leader
     * it is addressed to. */
    bool votesToLeaderOnly = false;
    std::vector<CrashPlan> crashes;

    /** Block sync as the node runs it, scaled to the simulator's short chains: a block more than
     * syncLagBlocks above the committed root goes to sync; batches of syncBatchBlocks; a peer
     * silent for syncAnswerMs is left for the next. */
    std::uint64_t syncLagBlocks = 8;
    std::uint32_t syncBatchBlocks = 16;
    std::uint64_t syncAnswerMs = 2000;

    /** Global stabilisation time: no loss, partitions or crashes after it. */
    std::uint64_t gstMs = 0;
    /** Transactions arrive at a random instance every 1..2·txIntervalMs, 1..txBatchMax at once. */
    std::uint64_t txIntervalMs = 300;
    std::size_t txBatchMax = 5;
    /** Every mempool always holds transactions (latency measurements): no idle rounds. */
    bool endlessMempool = false;
    /** Proposals carry certificates of batches instead of transactions (docs/protocol.md §14):
     * arriving transactions become a batch of the member they arrive at. */
    bool certifiedBatches = false;
    /** Certified batches: how long an author waits for the acknowledgements of the members it
     * asked before it asks every other member, and how long a member waits for a batch's data
     * before it asks the next signer. Both outlast a round trip on the scenario's links. */
    std::uint64_t batchAckRetryMs = 400;
    std::uint64_t batchFetchRetryMs = 300;
    /** Certified batches: the certificates a leader puts in one proposal. */
    std::size_t certsPerBlock = 8;

    /**
     * With at most f faulty members and the real rules: after GST every honest instance commits
     * liveCommits new heights within a bound set at GST from the leader schedule. Let r0 be the
     * highest round at GST and w >= r0 the first round such that rounds w .. w + liveCommits + 1
     * all have honest leaders (what the 2-chain rule needs for liveCommits commits). The bound
     * is (w + liveCommits + 2 - r0 + livenessSlackRounds) rounds, each at the longest round timer
     * plus four link delays and the empty-block interval.
     */
    bool checkLiveness = true;
    std::size_t liveCommits = 3;
    std::uint64_t livenessSlackRounds = 8;
    /** Hard end of the run. */
    std::uint64_t endMs = 0;
    /**
     * Reconfiguration runs (empty: one epoch): validatorSets[k] lists the keys, in order, of the
     * validator set of epoch k. The simulated execution of the block at height reconfigHeight(k)
     * of epoch k changes the set to validatorSets[k + 1] (docs/protocol.md §12); instances of
     * keys outside the current committee follow the chain without signing.
     */
    std::vector<std::vector<std::size_t>> validatorSets;
    std::uint64_t reconfigInterval = 10;

    /** The height of epoch k's reconfiguration block. */
    [[nodiscard]] std::uint64_t reconfigHeight(std::uint64_t epoch) const {
        return reconfigInterval * (epoch + 1);
    }
    /** True iff executing `block` (of epoch `epoch`, at `height`) changes the validator set. */
    [[nodiscard]] bool endsEpoch(std::uint64_t epoch, std::uint64_t height) const {
        return epoch + 1 < validatorSets.size() && height == reconfigHeight(epoch);
    }
    /** True iff a block of `epoch` at `height` lies above its epoch's reconfiguration block:
     * never appended to a ledger. */
    [[nodiscard]] bool discarded(std::uint64_t epoch, std::uint64_t height) const {
        return epoch + 1 < validatorSets.size() && height > reconfigHeight(epoch);
    }
    /** The number of keys: n, or every key named by validatorSets. */
    [[nodiscard]] std::size_t keyCount() const;

    [[nodiscard]] std::size_t instances() const { return keyOf.size(); }
    [[nodiscard]] const LinkDelay& link(std::size_t from, std::size_t to) const {
        return links[from * instances() + to];
    }
    /** Keys with a faulty instance (twin, equivocator, withholder, crashed for good). */
    [[nodiscard]] std::size_t faultyKeys() const;
    /** The scenario's parameters, several lines. */
    [[nodiscard]] std::string describe() const;
    /** The gridledger_sim command that reruns exactly this scenario. */
    [[nodiscard]] std::string replayLine() const;
};

/**
 * The scenario of (n, faults, rules, seed). Requires 1 <= n <= 64. Deterministic. Its cores run
 * leader reputation over `reputationWindow` blocks (0: off), which changes nothing else of it.
 */
[[nodiscard]] Scenario makeScenario(std::size_t n, FaultClass faults, std::uint64_t seed,
                                    RulesVariant rules = RulesVariant::kTwoChain,
                                    std::size_t reputationWindow = 0);

/**
 * A reconfiguration run: the validator set moves through `sets` (key indices; sets[0] is the
 * genesis committee), one change per epoch, under `faults` (none, lossy, crash, partition or
 * sync-liar).
 * Every key has one instance; permanent crashes stay within f of the smallest committee.
 */
[[nodiscard]] Scenario makeReconfigScenario(const std::vector<std::vector<std::size_t>>& sets,
                                            FaultClass faults, std::uint64_t seed,
                                            RulesVariant rules = RulesVariant::kTwoChain);

/** A fault-free scenario with every link at exactly `delayMs` and a mempool that never runs dry
 * (for latency measurements); it runs until `endMs`. */
[[nodiscard]] Scenario makeSteadyScenario(std::size_t n, std::uint64_t delayMs,
                                          std::uint64_t endMs);

}  // namespace gridledger::sim
