#pragma once

#include <chrono>
#include <cstdint>

namespace gridledger {

/**
 * A token bucket that may run into debt: `rate` tokens per second, at most `burst` held. A charge
 * is taken whole even when it exceeds the tokens held (a frame is charged once it has been read),
 * and the bucket then owes the difference; waitFor() says how long until the debt is repaid.
 * Time is passed in, so the policy is a pure unit.
 */
class TokenBucket {
  public:
    using Clock = std::chrono::steady_clock;

    /** `rate` and `burst` must be positive; the bucket starts full at `now`. */
    TokenBucket(double rate, double burst, Clock::time_point now);

    /** Takes `tokens` (refilling first up to `now`). */
    void charge(double tokens, Clock::time_point now);
    /** Zero when the bucket holds no debt at `now`, else the time until it is repaid. */
    [[nodiscard]] std::chrono::milliseconds waitFor(Clock::time_point now);
    /** Tokens held at `now` (negative: debt). */
    [[nodiscard]] double tokens(Clock::time_point now);

  private:
    void refill(Clock::time_point now);

    double rate_;
    double burst_;
    double tokens_;
    Clock::time_point at_;
};

}  // namespace gridledger
