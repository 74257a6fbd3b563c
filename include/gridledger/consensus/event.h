#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/codec/block.h>

namespace gridledger::consensus {

/** Which of a round's timers fired. */
enum class TimerKind : std::uint8_t {
    /** The round timer: on expiry the validator signs and broadcasts a timeout. */
    kRound = 0,
    /** The leader's empty-block timer: on expiry an idle leader proposes. */
    kProposal = 1,
};

/**
 * Starts the core: emits the effects of recovery (commits and fetches), the timer of the current
 * round and, for its leader, the proposal. Any event delivered first starts the core implicitly.
 */
struct Start {};

/** A proposal from the committee. The driver checked verifyProposal() (signature, QC, TC). */
struct ProposalReceived {
    codec::Block block;
};

/** A vote addressed to this validator (possibly by itself). The driver checked verifyVote(). */
struct VoteReceived {
    codec::Vote vote;
};

/** A timeout from a member. The driver checked verifyTimeout() (signature and high QC). */
struct TimeoutReceived {
    codec::Timeout timeout;
};

/**
 * A TC broadcast by a member with its timeout (sync info for members still in an earlier round).
 * The driver checked verifyTimeoutCert().
 */
struct TimeoutCertReceived {
    codec::TimeoutCert tc;
};

/** A QC forwarded by a member (ForwardQc). The driver checked verifyQuorumCert(). */
struct QcReceived {
    codec::QuorumCert qc;
};

/** A timer scheduled by ScheduleTimer{kind, round} expired. */
struct TimerFired {
    TimerKind kind = TimerKind::kRound;
    std::uint64_t round = 0;
};

/** A block asked for by Fetch. The driver checked verifyProposal() and that its id is the one
 * asked. */
struct BlockFetched {
    codec::Block block;
};

/** The driver executed the committed block at `height`; the roots are the state after it. */
struct Executed {
    std::uint64_t height = 0;
    Hash256 stateRoot;
    Hash256 resultsRoot;
};

/** The block the core asked for with BuildProposal, filled with txs, timestamped and signed. */
struct ProposalBuilt {
    codec::Block block;
};

/**
 * The mempool holds transactions: the next proposal of this validator goes out without waiting
 * for the empty-block interval. Send it when the mempool becomes non-empty.
 */
struct PayloadAvailable {};

/**
 * The driver executed `block`, a committed block of the core's epoch, and its execution changed
 * the validator set to `validators` (docs/protocol.md §12). Deliver it right after the block's
 * Executed, and append or execute no block above it: the epoch ends with `block`. The core
 * switches to the next epoch: seed nextEpochSeed(chain, epoch, current seed), committee
 * selectCommittee(validators, chain, epoch + 1, that seed, committeeMax), root `block`, genesis
 * QC of round 0 on it, round 1, zeroed safety data.
 */
struct EpochChange {
    codec::Block block;
    std::vector<PubKey> validators;
};

/** An input of the core and the driver's clock (milliseconds since the Unix epoch) at delivery. */
struct Event {
    std::uint64_t nowMs = 0;
    std::variant<Start, ProposalReceived, VoteReceived, TimeoutReceived, TimeoutCertReceived,
                 QcReceived, TimerFired, BlockFetched, Executed, ProposalBuilt, PayloadAvailable,
                 EpochChange>
        body;
};

}  // namespace gridledger::consensus
