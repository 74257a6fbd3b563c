#pragma once

#include <atomic>
#include <cstddef>

namespace gridledger::p2p {

/**
 * The bytes that every connection's read buffer may hold together (Limits::maxInboundBufferBytes).
 * A connection takes budget before its buffer grows and gives it back when the buffer shrinks or
 * the connection closes. Any thread.
 */
class BufferBudget {
  public:
    explicit BufferBudget(std::size_t limit) : limit_(limit) {}

    /** Takes `bytes` when they fit under the limit; false (and nothing taken) otherwise. */
    [[nodiscard]] bool tryTake(std::size_t bytes) {
        std::size_t used = used_.load(std::memory_order_relaxed);
        do {
            if (bytes > limit_ || used > limit_ - bytes) {
                return false;
            }
        } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
        return true;
    }
    /** Gives back bytes taken before. */
    void give(std::size_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
    [[nodiscard]] std::size_t used() const { return used_.load(std::memory_order_relaxed); }

  private:
    std::size_t limit_;
    std::atomic<std::size_t> used_{0};
};

}  // namespace gridledger::p2p
