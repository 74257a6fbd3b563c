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
        case codec::MessageKind::kQuorumCert:
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
        case codec::MessageKind::kQuorumCert: {
            GL_ASSIGN_OR_RETURN(qc, codec::decodeQc(payload));
            GL_TRY(sameEpoch(qc.epoch, committee));
            GL_TRY(consensus::verifyQuorumCert(qc, committee, chainId));
            return consensus::QcReceived{std::move(qc)};
        }
        default:
            break;
    }
    return fail(ErrorCode::kInvalidArgument,
                "not a consensus message: " + std::string(codec::kindName(message.kind)));
}

bool HeldMessages::hold(const NodeId& from, codec::NetMessage message) {
    const std::size_t size = message.payload.size();
    const std::lock_guard lock(mutex_);
    if (limits_.messagesPerPeer == 0 || size > limits_.bytesPerPeer) {
        return false;
    }
    Queue& queue = byPeer_[from];
    while (!queue.messages.empty() && (queue.messages.size() >= limits_.messagesPerPeer ||
                                       queue.bytes + size > limits_.bytesPerPeer)) {
        queue.bytes -= queue.messages.front().payload.size();
        bytes_ -= queue.messages.front().payload.size();
        queue.messages.pop_front();
    }
    if (bytes_ + size > limits_.bytesTotal) {
        if (queue.messages.empty()) {
            byPeer_.erase(from);
        }
        return false;
    }
    queue.bytes += size;
    bytes_ += size;
    queue.messages.push_back(std::move(message));
    return true;
}

std::vector<std::pair<NodeId, codec::NetMessage>> HeldMessages::take() {
    const std::lock_guard lock(mutex_);
    std::vector<std::pair<NodeId, codec::NetMessage>> out;
    for (auto& [peer, queue] : byPeer_) {
        for (auto& message : queue.messages) {
            out.emplace_back(peer, std::move(message));
        }
    }
    byPeer_.clear();
    bytes_ = 0;
    return out;
}

std::size_t HeldMessages::size() const {
    const std::lock_guard lock(mutex_);
    std::size_t count = 0;
    for (const auto& entry : byPeer_) {
        count += entry.second.messages.size();
    }
    return count;
}

}  // namespace gridledger::node
