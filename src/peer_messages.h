#pragma once

// Consensus messages between validators: what the core's effects become on the wire, and the
// decoding and signature checks a message from a peer passes before it reaches the core.

#include <string_view>
#include <variant>

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
                 consensus::TimeoutCertReceived, consensus::BlockFetched>;

/** The wire message of a Broadcast effect (a proposal, a timeout or a TC). */
[[nodiscard]] codec::NetMessage broadcastMessage(const consensus::Broadcast& broadcast);

/** True for the kinds checkConsensusMessage() takes. */
[[nodiscard]] bool isConsensusKind(codec::MessageKind kind);

/**
 * Decodes a proposal, vote, timeout, TC or block response and checks it as the core requires
 * (verifyProposal, verifyVote, verifyTimeout, verifyTimeoutCert against `committee`). A block
 * response becomes BlockFetched; the caller still checks that it asked for that block. Fails
 * with the decoding or verification error; never crashes on any input.
 */
[[nodiscard]] Result<CheckedInput> checkConsensusMessage(const codec::NetMessage& message,
                                                         const consensus::Committee& committee,
                                                         std::string_view chainId);

}  // namespace gridledger::node
