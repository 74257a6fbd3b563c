#pragma once

// Consensus messages between validators: what the core's effects become on the wire, and the
// decoding and signature checks a message from a peer passes before it reaches the core.

#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/effect.h>
#include <gridledger/consensus/event.h>

namespace gridledger::node {

/**
 * The start of the kWrongEpoch message for a consensus message of a later epoch than the
 * committee's (the node lags behind an epoch change). An earlier epoch's gets another message.
 */
inline constexpr std::string_view kLaterEpochMessage = "message of a later epoch";

/** A consensus message from a peer, decoded and checked, ready for the core. */
using CheckedInput =
    std::variant<consensus::ProposalReceived, consensus::VoteReceived, consensus::TimeoutReceived,
                 consensus::TimeoutCertReceived, consensus::QcReceived, consensus::BlockFetched>;

/** The wire message of a Broadcast effect (a proposal, a timeout or a TC). */
[[nodiscard]] codec::NetMessage broadcastMessage(const consensus::Broadcast& broadcast);

/** True for the kinds checkConsensusMessage() takes. */
[[nodiscard]] bool isConsensusKind(codec::MessageKind kind);

/**
 * Decodes a proposal, vote, timeout, TC, forwarded QC or block response and checks it as the core
 * requires (verifyProposal, verifyVote, verifyTimeout, verifyTimeoutCert, verifyQuorumCert
 * against `committee`). A block response becomes BlockFetched; the caller still checks that it
 * asked for that block. Fails with the decoding or verification error; never crashes on any
 * input.
 */
[[nodiscard]] Result<CheckedInput> checkConsensusMessage(const codec::NetMessage& message,
                                                         const consensus::Committee& committee,
                                                         std::string_view chainId);

/**
 * Consensus messages of a later epoch than this node's, held until it enters that epoch: at an
 * epoch change the first proposal, votes and timeouts of the new epoch reach a member that has
 * not yet executed the block that ends the old one, and dropping them would cost the new
 * epoch's first round a timeout. Bounded per peer (its oldest go first, so one peer can fill
 * only its own share) and in total (a message that does not fit is dropped). Thread-safe.
 */
class HeldMessages {
  public:
    struct Limits {
        std::size_t messagesPerPeer = 0;
        std::size_t bytesPerPeer = 0;
        std::size_t bytesTotal = 0;
    };
    explicit HeldMessages(Limits limits) : limits_(limits) {}

    /** Holds `message` from `from`; false when it was dropped. */
    bool hold(const NodeId& from, codec::NetMessage message);
    /** Every held message, each peer's oldest first, and forgets them. */
    [[nodiscard]] std::vector<std::pair<NodeId, codec::NetMessage>> take();
    /** The number of messages held. */
    [[nodiscard]] std::size_t size() const;

  private:
    struct Queue {
        std::deque<codec::NetMessage> messages;
        std::size_t bytes = 0;
    };

    Limits limits_;
    mutable std::mutex mutex_;
    std::map<NodeId, Queue> byPeer_;
    std::size_t bytes_ = 0;
};

}  // namespace gridledger::node
