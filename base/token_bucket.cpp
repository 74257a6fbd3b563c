#include <algorithm>
#include <cmath>

#include <gridledger/base/token_bucket.h>

namespace gridledger {

TokenBucket::TokenBucket(double rate, double burst, Clock::time_point now)
    : rate_(rate), burst_(burst), tokens_(burst), at_(now) {}

void TokenBucket::refill(Clock::time_point now) {
    if (now <= at_) {
        return;
    }
    const double seconds = std::chrono::duration<double>(now - at_).count();
    tokens_ = std::min(burst_, tokens_ + seconds * rate_);
    at_ = now;
}

void TokenBucket::charge(double tokens, Clock::time_point now) {
    refill(now);
    tokens_ -= tokens;
}

std::chrono::milliseconds TokenBucket::waitFor(Clock::time_point now) {
    refill(now);
    if (tokens_ >= 0) {
        return std::chrono::milliseconds::zero();
    }
    const double ms = std::ceil(-tokens_ / rate_ * 1000.0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::max(1.0, ms)));
}

double TokenBucket::tokens(Clock::time_point now) {
    refill(now);
    return tokens_;
}

}  // namespace gridledger
