#include "sim/weak_rules.h"

#include <algorithm>
#include <array>
#include <utility>

namespace gridledger::sim {
namespace {

constexpr std::array<std::pair<RulesVariant, std::string_view>, 8> kNames{{
    {RulesVariant::kTwoChain, "two-chain"},
    {RulesVariant::kSkipRoundCheck, "skip-round"},
    {RulesVariant::kSkipLock, "skip-lock"},
    {RulesVariant::kSkipTcHighQc, "skip-tc-qc"},
    {RulesVariant::kSkipSendBarrier, "skip-barrier"},
    {RulesVariant::kSyncPastEpochEnd, "sync-past-epoch-end"},
    {RulesVariant::kClaimStartsSync, "claim-starts-sync"},
    {RulesVariant::kBatchQuorumF, "batch-quorum-f"},
}};

/** The real rules with one vote clause taken out; the timeout rule is untouched. */
class WeakenedRules final : public consensus::SafetyRules {
  public:
    explicit WeakenedRules(RulesVariant variant) : variant_(variant) {}

    [[nodiscard]] std::expected<consensus::SafetyData, consensus::SafetyError> decideVote(
        const consensus::SafetyData& data, const consensus::VoteRequest& request) const override {
        consensus::SafetyData seen = data;
        consensus::VoteRequest asked = request;
        if (variant_ == RulesVariant::kSkipRoundCheck) {
            seen.lastVotedRound = 0;  // the clause `round > last_voted_round` always passes
        } else {
            asked.tcHighestHqcRound = 0;  // V2 always passes
        }
        auto next = real_.decideVote(seen, asked);
        if (next) {
            next->lastVotedRound = std::max(next->lastVotedRound, data.lastVotedRound);
        }
        return next;
    }

    [[nodiscard]] std::expected<consensus::SafetyData, consensus::SafetyError> decideTimeout(
        const consensus::SafetyData& data,
        const consensus::TimeoutRequest& request) const override {
        return real_.decideTimeout(data, request);
    }

  private:
    RulesVariant variant_;
    consensus::TwoChainSafetyRules real_;
};

}  // namespace

std::string_view rulesName(RulesVariant rules) {
    for (const auto& [variant, name] : kNames) {
        if (variant == rules) {
            return name;
        }
    }
    return "unknown";
}

std::optional<RulesVariant> parseRules(std::string_view name) {
    for (const auto& [variant, known] : kNames) {
        if (known == name) {
            return variant;
        }
    }
    return std::nullopt;
}

std::unique_ptr<consensus::SafetyRules> makeRules(RulesVariant variant) {
    if (variant != RulesVariant::kSkipRoundCheck && variant != RulesVariant::kSkipLock) {
        return std::make_unique<consensus::TwoChainSafetyRules>();
    }
    return std::make_unique<WeakenedRules>(variant);
}

}  // namespace gridledger::sim
