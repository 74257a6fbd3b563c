#pragma once

// The last K things that happened in a run, kept cheaply and printed only when a run fails.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

#include <gridledger/base/bytes.h>

namespace gridledger::sim {

/** What a trace entry records. */
enum class TraceKind : std::uint8_t {
    kStart,
    kProposal,  // received
    kVote,      // received
    kTimeout,   // received
    kTc,        // received
    kFetchRequest,
    kFetched,
    kRoundTimer,
    kProposalTimer,
    kExecuted,
    kBuilt,
    kPayload,
    kSentProposal,
    kSentVote,
    kSentTimeout,
    kEquivocated,
    kCommitted,
    kCrash,
    kRestart,
    kRejected,  // round field: the error code
    kQc,        // received: a QC forwarded to this instance as the next leader
};

/** One step or one effect of one instance. */
struct TraceEntry {
    std::uint64_t atMs = 0;
    std::uint32_t instance = 0;
    std::uint32_t peer = 0;  // the sender of a received message, else the instance itself
    TraceKind kind = TraceKind::kStart;
    std::uint64_t round = 0;
    std::uint64_t height = 0;
    std::uint32_t idPrefix = 0;  // first four bytes of the block id involved, if any
};

/** A ring of the last `depth` entries. */
class Trace {
  public:
    explicit Trace(std::size_t depth) : depth_(depth) {}

    void add(const TraceEntry& entry) {
        if (depth_ == 0) {
            return;
        }
        if (entries_.size() == depth_) {
            entries_.pop_front();
        }
        entries_.push_back(entry);
    }

    /** The first four bytes of `id` as a number, for TraceEntry::idPrefix. */
    [[nodiscard]] static std::uint32_t prefix(const Hash256& id) {
        return (std::uint32_t{id[0]} << 24U) | (std::uint32_t{id[1]} << 16U) |
               (std::uint32_t{id[2]} << 8U) | std::uint32_t{id[3]};
    }

    /** One line per entry, oldest first. */
    [[nodiscard]] std::string format() const;

  private:
    std::size_t depth_;
    std::deque<TraceEntry> entries_;
};

}  // namespace gridledger::sim
