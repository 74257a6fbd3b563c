// Provider reputation (docs/tokenomics.md "Provider reputation"): lazily decayed counters and
// the score matching ranks by. Pure integer functions, no state.
#include <string>
#include <utility>

#include <gridledger/base/amount.h>
#include <gridledger/contracts/reputation.h>

namespace gridledger::contracts {
namespace {

std::uint64_t halve(std::uint64_t value, std::uint64_t halvings) {
    return halvings >= 64 ? 0 : value >> halvings;
}

Result<std::uint64_t> addChecked(std::uint64_t value, std::uint64_t step) {
    const auto sum = checkedAdd(value, step);
    if (!sum) {
        return fail(ErrorCode::kOverflow, "reputation counter overflows");
    }
    return *sum;
}

}  // namespace

Status validateReputation(const ReputationParams& params) {
    if (params.priorJobs == 0) {
        return fail(ErrorCode::kInvalidArgument, "reputation.prior_jobs must be positive");
    }
    const std::pair<const char*, std::uint64_t> bounded[] = {
        {"reputation.prior_jobs", params.priorJobs},
        {"reputation.fault_weight", params.faultWeight},
        {"reputation.slash_weight", params.slashWeight}};
    for (const auto& [name, value] : bounded) {
        if (value > kMaxReputationWeight) {
            return fail(ErrorCode::kInvalidArgument,
                        std::string(name) + " above " + std::to_string(kMaxReputationWeight));
        }
    }
    return {};
}

Reputation decayReputation(const Reputation& r, const ReputationParams& params,
                           std::uint64_t epoch) {
    if (epoch <= r.epoch) {
        return r;
    }
    Reputation out = r;
    out.epoch = epoch;
    if (params.halfLifeEpochs == 0) {
        return out;
    }
    const std::uint64_t halvings = epoch / params.halfLifeEpochs - r.epoch / params.halfLifeEpochs;
    out.good = halve(r.good, halvings);
    out.faults = halve(r.faults, halvings);
    return out;
}

Result<Reputation> creditGoodJob(const Reputation& r, const ReputationParams& params,
                                 std::uint64_t epoch) {
    Reputation out = decayReputation(r, params, epoch);
    GL_ASSIGN_OR_RETURN(good, addChecked(out.good, 1));
    out.good = good;
    return out;
}

Result<Reputation> addFaultPoints(const Reputation& r, const ReputationParams& params,
                                  std::uint64_t epoch, std::uint64_t points) {
    Reputation out = decayReputation(r, params, epoch);
    GL_ASSIGN_OR_RETURN(faults, addChecked(out.faults, points));
    out.faults = faults;
    return out;
}

std::uint32_t reputationScore(const Reputation& decayed, const ReputationParams& params) {
    const u128 credit = u128{decayed.good} + params.priorJobs;
    const u128 total = credit + decayed.faults;
    if (total == 0) {
        return 10'000;
    }
    return static_cast<std::uint32_t>(credit * 10'000 / total);
}

}  // namespace gridledger::contracts
