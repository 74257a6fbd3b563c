#pragma once

// Deliberately weakened safety rules, injected into every core of a scenario to prove that the
// invariant checker catches what the real rules prevent (the negative controls).

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include <gridledger/consensus/safety_rules.h>

namespace gridledger::sim {

/** Which safety rules the cores of a scenario run. */
enum class RulesVariant : std::uint8_t {
    /** consensus::TwoChainSafetyRules, as in the node. */
    kTwoChain = 0,
    /** The vote rule without `round > last_voted_round`: a validator may vote twice in a round. */
    kSkipRoundCheck = 1,
    /** The vote rule without V2 (`qc_round >= tc.highest_hqc_round` after a TC). */
    kSkipLock = 2,
    /**
     * The real vote and timeout rules, but the driver's TC check without the certificate of the
     * TC's highest QC (docs/protocol.md §2): a TC may claim a QC nobody holds.
     */
    kSkipTcHighQc = 3,
    /**
     * The real rules, but the driver's send barrier does not sync: blocks, QCs and TCs written
     * without a sync may be lost by a crash although a message that depends on them left.
     */
    kSkipSendBarrier = 4,
    /**
     * The real rules, but block sync is told that no executed block ended its epoch: a sync
     * batch runs past the block R that ended it, into blocks no honest ledger holds.
     */
    kSyncPastEpochEnd = 5,
    /**
     * The real rules, but block sync as it was before sync had to be shown evidence: a message
     * that merely claims a later epoch (unsigned, unverifiable) starts a sync with its sender,
     * and while a sync runs the core gets no consensus message.
     */
    kClaimStartsSync = 6,
    /**
     * The real rules, but certified batches (docs/protocol.md §14) with f acknowledgements instead
     * of f + 1: the f faulty members can certify a batch that no honest member verified.
     */
    kBatchQuorumF = 7,
};

/** The name used on the command line and in replay lines ("two-chain", "skip-round", ...). */
[[nodiscard]] std::string_view rulesName(RulesVariant rules);
/** The variant named `name`, or nullopt. */
[[nodiscard]] std::optional<RulesVariant> parseRules(std::string_view name);

/** The rules of `variant`: the real ones, or the real ones with one clause removed. */
[[nodiscard]] std::unique_ptr<consensus::SafetyRules> makeRules(RulesVariant variant);

}  // namespace gridledger::sim
