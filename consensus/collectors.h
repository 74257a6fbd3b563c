#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>

namespace gridledger::consensus {

/** Votes per round and block, until a quorum forms a QC. One vote per member and round. */
class VoteCollector {
  public:
    /** The outcome of adding a vote. */
    enum class Added { kNew, kDuplicate, kEquivocation };

    /**
     * Adds the (already verified) vote of member `index`. Sets `qc` when this vote completes the
     * first quorum for its block.
     */
    Added add(const Committee& committee, std::size_t index, const codec::Vote& vote,
              std::optional<codec::QuorumCert>& qc);

    /** How many members voted for `blockId` in `round`. */
    [[nodiscard]] std::size_t count(std::uint64_t round, const Hash256& blockId) const;

    /** Forgets every round below `round`. */
    void pruneBelow(std::uint64_t round);

  private:
    struct RoundVotes {
        std::map<std::size_t, Hash256> votedFor;
        std::map<Hash256, std::vector<codec::Vote>> byBlock;
        std::set<Hash256> certified;
    };
    std::map<std::uint64_t, RoundVotes> rounds_;
};

/** Timeouts per round, until a quorum forms a TC. One timeout per member and round. */
class TimeoutCollector {
  public:
    /** Adds the (already verified) timeout of member `index`; returns the TC it completes, once. */
    std::optional<codec::TimeoutCert> add(const Committee& committee, std::size_t index,
                                          const codec::Timeout& timeout);

    /** How many members timed out `round`. */
    [[nodiscard]] std::size_t count(std::uint64_t round) const;

    /** Forgets every round below `round`. */
    void pruneBelow(std::uint64_t round);

  private:
    struct RoundTimeouts {
        std::map<std::size_t, codec::Timeout> byMember;
        bool certified = false;
    };
    std::map<std::uint64_t, RoundTimeouts> rounds_;
};

}  // namespace gridledger::consensus
