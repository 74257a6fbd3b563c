#include "peer_messages.h"

#include <gridledger/base/overloaded.h>

namespace gridledger::node {

codec::NetMessage broadcastMessage(const consensus::Broadcast& broadcast) {
    return std::visit(
        Overloaded{
            [](const consensus::BlockPtr& block) {
                return codec::NetMessage{codec::MessageKind::kProposal, codec::encodeBlock(*block)};
            },
            [](const codec::Timeout& timeout) {
                return codec::NetMessage{codec::MessageKind::kTimeout,
                                         codec::encodeTimeout(timeout)};
            },
            [](const codec::TimeoutCert& tc) {
                return codec::NetMessage{codec::MessageKind::kTimeoutCert, codec::encodeTc(tc)};
            },
        },
        broadcast.message);
}

bool isConsensusKind(codec::MessageKind kind) {
    switch (kind) {
        case codec::MessageKind::kProposal:
        case codec::MessageKind::kVote:
        case codec::MessageKind::kTimeout:
        case codec::MessageKind::kTimeoutCert:
        case codec::MessageKind::kBlockResponse:
            return true;
        default:
            return false;
    }
}

namespace {

/** kWrongEpoch for a message of `epoch` that is not the committee's (docs/protocol.md §12). */
Status sameEpoch(std::uint64_t epoch, const consensus::Committee& committee) {
    if (epoch == committee.epoch()) {
        return {};
    }
    return fail(ErrorCode::kWrongEpoch,
                std::string(epoch > committee.epoch() ? kLaterEpochMessage
                                                      : "message of an earlier epoch") +
                    ": epoch=" + std::to_string(epoch) +
                    " committee_epoch=" + std::to_string(committee.epoch()));
}

}  // namespace

Result<CheckedInput> checkConsensusMessage(const codec::NetMessage& message,
                                           const consensus::Committee& committee,
                                           std::string_view chainId) {
    const ByteView payload(message.payload);
    switch (message.kind) {
        case codec::MessageKind::kProposal:
        case codec::MessageKind::kBlockResponse: {
            GL_ASSIGN_OR_RETURN(block, codec::decodeBlock(payload));
            GL_TRY(sameEpoch(block.header.epoch, committee));
            GL_TRY(consensus::verifyProposal(block, committee, chainId));
            if (message.kind == codec::MessageKind::kProposal) {
                return consensus::ProposalReceived{std::move(block)};
            }
            return consensus::BlockFetched{std::move(block)};
        }
        case codec::MessageKind::kVote: {
            GL_ASSIGN_OR_RETURN(vote, codec::decodeVote(payload));
            GL_TRY(sameEpoch(vote.epoch, committee));
            GL_TRY(consensus::verifyVote(vote, committee, chainId));
            return consensus::VoteReceived{vote};
        }
        case codec::MessageKind::kTimeout: {
            GL_ASSIGN_OR_RETURN(timeout, codec::decodeTimeout(payload));
            GL_TRY(sameEpoch(timeout.epoch, committee));
            GL_TRY(consensus::verifyTimeout(timeout, committee, chainId));
            return consensus::TimeoutReceived{std::move(timeout)};
        }
        case codec::MessageKind::kTimeoutCert: {
            GL_ASSIGN_OR_RETURN(tc, codec::decodeTc(payload));
            GL_TRY(sameEpoch(tc.epoch, committee));
            GL_TRY(consensus::verifyTimeoutCert(tc, committee, chainId));
            return consensus::TimeoutCertReceived{std::move(tc)};
        }
        default:
            break;
    }
    return fail(ErrorCode::kInvalidArgument,
                "not a consensus message: " + std::string(codec::kindName(message.kind)));
}

}  // namespace gridledger::node
