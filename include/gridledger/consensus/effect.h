#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/error.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/event.h>
#include <gridledger/consensus/safety_rules.h>

namespace gridledger::consensus {

/** Blocks are shared between the tree and the effects that carry them; never mutated. */
using BlockPtr = std::shared_ptr<const codec::Block>;

/** Make the safety data durable (fsync) before performing any later Broadcast or SendVote. */
struct PersistSafety {
    SafetyData data;
};

/** Store a block of the tree (above the committed root) for recovery. */
struct PersistBlock {
    BlockPtr block;
};

/** Store a QC for recovery. */
struct PersistQc {
    codec::QuorumCert qc;
};

/** Store the new highest TC for recovery (it replaces the previous one). */
struct PersistTc {
    codec::TimeoutCert tc;
};

/**
 * Send a message to every other member of the committee: a proposal, a timeout, or the TC that
 * started the sender's round (sent with its timeout, encoded with codec::encodeTc).
 */
struct Broadcast {
    std::variant<BlockPtr, codec::Timeout, codec::TimeoutCert> message;
};

/**
 * Send a vote to `to`, the leader of the next round; when `to` is this validator, loop it back.
 * The node and the simulator also send a copy to every other member and loop every own vote back,
 * so that each member forms the QC (docs/protocol.md §8); the core accepts a vote at any member.
 */
struct SendVote {
    PubKey to;
    codec::Vote vote;
};

/**
 * Send `qc`, which this member formed from the votes it received, to `to`, the leader of the round
 * after the QC's. A leader whose own copy of some vote is lost or late then proposes with the QC
 * of the first member that has it (docs/protocol.md §6, "Forwarded QCs").
 */
struct ForwardQc {
    PubKey to;
    codec::QuorumCert qc;
};

/** Deliver TimerFired{kind, round} after `delayMs`. Earlier timers need not be cancelled. */
struct ScheduleTimer {
    TimerKind kind = TimerKind::kRound;
    std::uint64_t round = 0;
    std::uint64_t delayMs = 0;
};

/** Obtain the block `blockId` (certified by some QC) and deliver it as BlockFetched. */
struct Fetch {
    Hash256 blockId;
    /** A member that should hold the block (the author of the message that referenced it). */
    std::optional<PubKey> hint;
};

/**
 * The 2-chain rule committed `blocks` (heights consecutive, the first one's parent is the
 * previous committed block). `qc` certifies the last block; `commitQc` certifies its child, whose
 * round follows directly, and is what makes the commit final. The driver appends them to the
 * ledger, executes them in order and reports each as Executed. After a restart a Commit may repeat
 * blocks the ledger already holds; the driver skips those (their ids match).
 */
struct Commit {
    std::vector<BlockPtr> blocks;
    codec::QuorumCert qc;
    codec::QuorumCert commitQc;
};

/**
 * This validator leads `round`: build a block with these header fields, author = this validator,
 * txs from the mempool (none is fine; leave out txs of uncommitted ancestors),
 * timestampMs = min(max(clock, minTimestampMs), maxTimestampMs), make it with codec::makeBlock,
 * sign it (signProposal)
 * and deliver it as ProposalBuilt. The core persists and broadcasts it. If transactions remain in
 * the mempool, send PayloadAvailable again.
 */
struct BuildProposal {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    std::uint64_t height = 0;
    Hash256 parentId;
    codec::QuorumCert qc;
    std::optional<codec::TimeoutCert> tc;
    std::uint64_t execHeight = 0;
    Hash256 execStateRoot;
    Hash256 execResultsRoot;
    std::uint64_t minTimestampMs = 0;
    /** Equal to minTimestampMs on a chain with a fixed block time, else UINT64_MAX. */
    std::uint64_t maxTimestampMs = UINT64_MAX;
};

/** An input was refused; for logs at debug level (peers can trigger it). Nothing to perform. */
struct Rejected {
    Error error;
};

/** An output of the core. The driver performs a step's effects in order. */
using Effect = std::variant<PersistSafety, PersistBlock, PersistQc, PersistTc, Broadcast, SendVote,
                            ForwardQc, ScheduleTimer, Fetch, Commit, BuildProposal, Rejected>;
using Effects = std::vector<Effect>;

}  // namespace gridledger::consensus
