#include "pacemaker.h"

#include <cassert>
#include <cstdint>

#include <gridledger/base/amount.h>
#include <gridledger/consensus/core.h>

namespace gridledger::consensus {

std::uint64_t roundTimeoutMs(std::uint64_t t0Ms, std::uint64_t consecutiveTimeouts) {
    // 1.2^m = 6^m / 5^m, computed exactly in integers and rounded down.
    const std::uint64_t m =
        consecutiveTimeouts < kMaxBackoffSteps ? consecutiveTimeouts : kMaxBackoffSteps;
    std::uint64_t numerator = 1;
    std::uint64_t denominator = 1;
    for (std::uint64_t i = 0; i < m; ++i) {
        numerator *= 6;
        denominator *= 5;
    }
    const auto scaled = checkedMul(t0Ms, numerator);
    return scaled ? *scaled / denominator : UINT64_MAX;
}

void Pacemaker::enter(std::uint64_t round, bool viaTc) {
    assert(round > round_);
    round_ = round;
    enteredViaTc_ = viaTc;
    consecutiveTimeouts_ = viaTc ? consecutiveTimeouts_ + 1 : 0;
}

std::uint64_t Pacemaker::timeoutMs() const {
    return roundTimeoutMs(t0Ms_, consecutiveTimeouts_);
}

}  // namespace gridledger::consensus
