#pragma once

#include <cstdint>

namespace gridledger::consensus {

/**
 * The round this validator is in and the length of its timer. Rounds only grow. The timer is
 * T0 · 1.2^min(k, 6), where k counts the rounds in a row that ended with a TC.
 */
class Pacemaker {
  public:
    explicit Pacemaker(std::uint64_t t0Ms) : t0Ms_(t0Ms) {}

    [[nodiscard]] std::uint64_t round() const { return round_; }
    /** True iff the current round was entered through a TC of the previous one. */
    [[nodiscard]] bool enteredViaTc() const { return enteredViaTc_; }
    [[nodiscard]] std::uint64_t consecutiveTimeouts() const { return consecutiveTimeouts_; }

    /** Enters `round` (which must be above round()); `viaTc` says a TC ended the last round. */
    void enter(std::uint64_t round, bool viaTc);
    /** Forgets the timed-out rounds (after recovery). */
    void resetBackoff() { consecutiveTimeouts_ = 0; }
    /** The current round's timer. */
    [[nodiscard]] std::uint64_t timeoutMs() const;

  private:
    std::uint64_t t0Ms_;
    std::uint64_t round_ = 0;
    std::uint64_t consecutiveTimeouts_ = 0;
    bool enteredViaTc_ = false;
};

}  // namespace gridledger::consensus
