#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

#include <gridledger/base/bytes.h>

namespace gridledger::p2p {

/**
 * The bounded send queue of one connection (docs/p2p.md, "Send queue"). Not thread-safe: the
 * connection guards it with its mutex. The front frame may be "in flight" (being written); it is
 * never evicted.
 *
 * Policy of push() when a frame does not fit the count or byte bound: evict the oldest droppable
 * frames (not the one in flight) until it fits; if it still does not fit, drop the new frame when
 * it is droppable, else report an overflow (the caller disconnects the peer as too slow).
 */
class SendQueue {
  public:
    struct Entry {
        std::shared_ptr<const Bytes> frame;
        bool droppable = false;
    };

    enum class Outcome : std::uint8_t {
        kQueued,      // the frame is queued (older droppable frames may have been evicted)
        kDroppedNew,  // no room: the new, droppable frame was dropped
        kOverflow,    // no room and nothing droppable: the peer cannot keep up
    };

    /** Requires maxMessages >= 1 and maxBytes >= the largest frame ever pushed. */
    SendQueue(std::size_t maxMessages, std::size_t maxBytes);

    /** Applies the policy above; counts every evicted or dropped frame in dropped(). */
    Outcome push(Entry entry);

    /** Marks the front frame in flight and returns it; nullptr when empty or already writing. */
    [[nodiscard]] std::shared_ptr<const Bytes> beginWrite();
    /** Removes the in-flight front frame (its write completed). Requires inFlight(). */
    void finishWrite();

    /**
     * Takes every queued frame except the one in flight, which stays and finishes its write
     * (so that it is sent once, never twice or cut).
     */
    [[nodiscard]] std::deque<Entry> takeQueued();
    void clear();

    [[nodiscard]] bool inFlight() const { return inFlight_; }
    [[nodiscard]] bool empty() const { return entries_.empty(); }
    [[nodiscard]] std::size_t size() const { return entries_.size(); }
    [[nodiscard]] std::size_t bytes() const { return bytes_; }
    [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

  private:
    [[nodiscard]] bool fits(std::size_t frameBytes) const;
    /** Evicts the oldest droppable frame not in flight; false when there is none. */
    bool evictOldestDroppable();

    std::size_t maxMessages_;
    std::size_t maxBytes_;
    std::deque<Entry> entries_;
    std::size_t bytes_ = 0;
    std::size_t droppable_ = 0;
    std::uint64_t dropped_ = 0;
    bool inFlight_ = false;
};

}  // namespace gridledger::p2p
