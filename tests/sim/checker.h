#pragma once

// The invariants of SDBFT, checked as the simulation runs: agreement, validity, one signature per
// round for honest validators, persistence before sending, and liveness after GST.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/effect.h>

#include "sim/scenario.h"
#include "sim/sim_crypto.h"

namespace gridledger::sim {

/** The first invariant a run broke. */
struct Violation {
    /** agreement, validity, double-vote, double-timeout, vote-after-timeout, vote-rule,
     * timeout-rule, unpersisted-send, bad-message, recovery or liveness. */
    std::string invariant;
    std::string detail;
    std::uint64_t atMs = 0;
};

/**
 * Watches what the instances sign, send and commit. Safety invariants cover instances whose role
 * is safetyChecked() (not twins, not equivocators); liveness covers honest instances only, and
 * only when the scenario has at most f faulty members. The first violation is kept.
 */
class Checker {
  public:
    /** Keeps references: all three must outlive the checker. `committees` holds the committee of
     * each epoch (the simulator adds one per epoch change). */
    Checker(const Scenario& scenario, const Verifier::Committees& committees,
            const Verifier& verifier);

    /** Checks `invariant` alone from now on: the others are not flagged (to show that one check
     * finds a broken run by itself). */
    void checkOnly(std::string invariant) { only_ = std::move(invariant); }

    /** Every proposal any instance signed (what "proposed" means for validity). */
    void onProposalSigned(const consensus::BlockPtr& block);
    /** Instance `i` sent its proposal `block` (one block per honest key and round). */
    void onProposalSent(std::size_t i, const codec::Block& block, std::uint64_t nowMs);
    /** A vote left instance `i` while its persisted safety data was `persisted`. */
    void onVoteSent(std::size_t i, const codec::Vote& vote, const consensus::SafetyData& persisted,
                    std::uint64_t nowMs);
    /**
     * A timeout left instance `i`, in its `incarnation`-th life, while its persisted safety data
     * was `persisted`. One incarnation sends one timeout per round (re-sent unchanged). A later
     * incarnation may sign the round again, with a high QC at least as high: the first timeout
     * died with the process's memory, and both satisfy the timeout rule.
     */
    void onTimeoutSent(std::size_t i, const codec::Timeout& timeout,
                       const consensus::SafetyData& persisted, std::uint64_t incarnation,
                       std::uint64_t nowMs);
    /** Instance `i`'s core emitted `commit`. Blocks above their epoch's reconfiguration block
     * are left out: no ledger holds them (docs/protocol.md §12). */
    void onCommit(std::size_t i, const consensus::Commit& commit, std::uint64_t nowMs);
    /** Instance `i` appended `block` to its ledger (executed it), through a commit of its core
     * or through block sync: every ledger holds the same block at each height. */
    void onAppended(std::size_t i, const codec::Block& block, std::uint64_t nowMs);
    /** Records a violation found by the driver itself (a message failing verification, a core
     * that cannot be rebuilt, a ledger that does not extend). */
    void flag(std::string invariant, std::string detail, std::uint64_t nowMs);
    /** GST is reached at `nowMs`: from now on, every liveness-checked instance must commit
     * scenario.liveCommits new heights within `boundMs`. */
    void startLiveness(std::uint64_t nowMs, std::uint64_t boundMs);
    /** Called before each step at virtual time `nowMs`: the liveness clock. */
    void onClock(std::uint64_t nowMs);

    [[nodiscard]] bool failed() const { return violation_.has_value(); }
    [[nodiscard]] const std::optional<Violation>& violation() const { return violation_; }
    /** The first violation of each invariant broken so far, by invariant name. */
    [[nodiscard]] const std::map<std::string, Violation>& violations() const { return all_; }
    /** After GST, every liveness-checked instance committed liveCommits new heights. */
    [[nodiscard]] bool liveDone() const;
    /** Highest height committed by instance `i`. */
    [[nodiscard]] std::uint64_t height(std::size_t i) const { return height_[i]; }
    /** Longest time from GST to the first new commit of a liveness-checked instance. */
    [[nodiscard]] std::uint64_t recoveryMs() const;
    /** The liveness bound set at GST (0 before). */
    [[nodiscard]] std::uint64_t livenessBoundMs() const { return boundMs_; }

  private:
    void checkValidity(const consensus::Commit& commit, std::size_t i, std::uint64_t nowMs);
    /** The leader `block`'s round must have: with leader reputation, over its parent's chain. */
    [[nodiscard]] const PubKey& leaderFor(const codec::Block& block,
                                          const consensus::Committee& committee) const;
    [[nodiscard]] bool livenessChecked(std::size_t i) const;

    const Scenario& scenario_;
    const Verifier::Committees& committees_;
    const Verifier& verifier_;
    std::optional<Violation> violation_;
    std::optional<std::string> only_;
    std::map<std::string, Violation> all_;

    std::map<Hash256, consensus::BlockPtr> signed_;
    std::map<std::uint64_t, std::pair<Hash256, std::size_t>> canonical_;  // height -> (id, by)
    std::set<Hash256> validated_;
    /** (key, epoch, round): rounds start again at 1 in every epoch. */
    using SignedRound = std::tuple<std::size_t, std::uint64_t, std::uint64_t>;
    std::map<SignedRound, Hash256> votes_;
    std::map<SignedRound, Hash256> proposals_;
    struct SentTimeout {
        std::uint64_t hqcRound = 0;
        std::uint64_t incarnation = 0;
        std::size_t instance = 0;
    };
    std::map<SignedRound, SentTimeout> timeouts_;
    /** Per (key, epoch), the highest rounds it voted and timed out in. */
    struct SignedRounds {
        std::uint64_t vote = 0;
        std::uint64_t timeout = 0;
    };
    std::map<std::pair<std::size_t, std::uint64_t>, SignedRounds> signedRounds_;

    std::vector<std::uint64_t> height_;
    bool gstSeen_ = false;
    std::uint64_t gstAtMs_ = 0;
    std::uint64_t boundMs_ = 0;
    std::vector<std::uint64_t> heightAtGst_;
    std::vector<std::optional<std::uint64_t>> firstCommitAfterGst_;
};

}  // namespace gridledger::sim
