#include <algorithm>
#include <limits>

#include <gridledger/base/overloaded.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/codec/tx.h>
#include <gridledger/proto/p2p.pb.h>

#include "pb_util.h"

namespace gridledger::codec {
namespace {

using detail::str;

constexpr std::uint32_t kMaxPort = std::numeric_limits<std::uint16_t>::max();

bool isHostChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == ':' || c == '_';
}

Result<MessageKind> kindFromProto(proto::MessageKind kind) {
    const auto value = static_cast<int>(kind);
    if (value < static_cast<int>(MessageKind::kTx) || value > static_cast<int>(kLastMessageKind)) {
        return fail(ErrorCode::kMalformed, "unknown message kind " + std::to_string(value));
    }
    return static_cast<MessageKind>(value);
}

Result<PeerAddress> addressFromProto(const proto::PeerAddress& pb) {
    PeerAddress out;
    GL_ASSIGN_OR_RETURN(nodeId, detail::fixed<NodeId>(pb.node_id(), "peer.node_id"));
    out.nodeId = nodeId;
    if (!isValidHost(pb.host())) {
        return fail(ErrorCode::kMalformed, "peer address host is not a valid host name or address");
    }
    out.host = pb.host();
    if (pb.port() == 0 || pb.port() > kMaxPort) {
        return fail(ErrorCode::kMalformed, "peer address port out of range");
    }
    out.port = static_cast<std::uint16_t>(pb.port());
    return out;
}

Result<Envelope> envelopeFromProto(const proto::Envelope& pb) {
    switch (pb.body_case()) {
        case proto::Envelope::kHello: {
            if (pb.hello().listen_port() > kMaxPort) {
                return fail(ErrorCode::kMalformed, "hello listen port out of range");
            }
            return PeerHello{pb.hello().version(),
                             static_cast<std::uint16_t>(pb.hello().listen_port()),
                             pb.hello().session()};
        }
        case proto::Envelope::kMessage: {
            GL_ASSIGN_OR_RETURN(kind, kindFromProto(pb.message().kind()));
            const std::string& payload = pb.message().payload();
            return NetMessage{kind, Bytes(payload.begin(), payload.end())};
        }
        case proto::Envelope::kPing:
            return PeerPing{pb.ping().nonce()};
        case proto::Envelope::kPong:
            return PeerPong{pb.pong().nonce()};
        case proto::Envelope::kPeers: {
            PeerList list;
            list.peers.reserve(static_cast<std::size_t>(pb.peers().peers_size()));
            for (const auto& entry : pb.peers().peers()) {
                GL_ASSIGN_OR_RETURN(address, addressFromProto(entry));
                list.peers.push_back(std::move(address));
            }
            return list;
        }
        case proto::Envelope::BODY_NOT_SET:
            break;
    }
    return fail(ErrorCode::kMalformed, "envelope has no body");
}

/** The transactions of a TxBatch or Batch: at most kMaxTxBatch, each within kMaxTxBytes. */
Result<std::vector<Bytes>> txsFromProto(const google::protobuf::RepeatedPtrField<std::string>& pb) {
    if (static_cast<std::size_t>(pb.size()) > kMaxTxBatch) {
        return fail(ErrorCode::kMalformed,
                    "tx batch holds more than " + std::to_string(kMaxTxBatch) + " transactions");
    }
    std::vector<Bytes> txs;
    txs.reserve(static_cast<std::size_t>(pb.size()));
    for (const auto& tx : pb) {
        if (tx.size() > kMaxTxBytes) {
            return fail(ErrorCode::kTxTooLarge, "gossiped transaction exceeds the size limit");
        }
        txs.emplace_back(tx.begin(), tx.end());
    }
    return txs;
}

}  // namespace

bool isValidHost(std::string_view host) {
    return !host.empty() && host.size() <= kMaxHostLength &&
           std::all_of(host.begin(), host.end(), isHostChar);
}

std::string_view kindName(MessageKind kind) {
    switch (kind) {
        case MessageKind::kTx:
            return "tx";
        case MessageKind::kProposal:
            return "proposal";
        case MessageKind::kVote:
            return "vote";
        case MessageKind::kTimeout:
            return "timeout";
        case MessageKind::kTimeoutCert:
            return "timeout_cert";
        case MessageKind::kBlockRequest:
            return "block_request";
        case MessageKind::kBlockResponse:
            return "block_response";
        case MessageKind::kSyncRequest:
            return "sync_request";
        case MessageKind::kSyncResponse:
            return "sync_response";
        case MessageKind::kEpochProofRequest:
            return "epoch_proof_request";
        case MessageKind::kEpochProof:
            return "epoch_proof";
        case MessageKind::kStateManifestRequest:
            return "state_manifest_request";
        case MessageKind::kStateManifest:
            return "state_manifest";
        case MessageKind::kStateChunkRequest:
            return "state_chunk_request";
        case MessageKind::kStateChunk:
            return "state_chunk";
        case MessageKind::kQuorumCert:
            return "quorum_cert";
        case MessageKind::kBatch:
            return "batch";
        case MessageKind::kBatchAck:
            return "batch_ack";
        case MessageKind::kBatchCert:
            return "batch_cert";
    }
    return "unknown";
}

Bytes encodeEnvelope(const Envelope& envelope) {
    proto::Envelope pb;
    std::visit(
        Overloaded{
            [&pb](const PeerHello& hello) {
                pb.mutable_hello()->set_version(hello.version);
                pb.mutable_hello()->set_listen_port(hello.listenPort);
                pb.mutable_hello()->set_session(hello.session);
            },
            [&pb](const NetMessage& message) {
                pb.mutable_message()->set_kind(static_cast<proto::MessageKind>(message.kind));
                pb.mutable_message()->set_payload(str(message.payload));
            },
            [&pb](const PeerPing& ping) { pb.mutable_ping()->set_nonce(ping.nonce); },
            [&pb](const PeerPong& pong) { pb.mutable_pong()->set_nonce(pong.nonce); },
            [&pb](const PeerList& list) {
                auto* peers = pb.mutable_peers();
                for (const auto& address : list.peers) {
                    auto* entry = peers->add_peers();
                    entry->set_node_id(str(address.nodeId.view()));
                    entry->set_host(address.host);
                    entry->set_port(address.port);
                }
            },
        },
        envelope);
    return detail::serialize(pb);
}

Bytes encodeTxBatch(const TxBatch& batch) {
    proto::TxBatch pb;
    for (const auto& tx : batch.txs) {
        pb.add_txs(str(tx));
    }
    return detail::serialize(pb);
}

Result<TxBatch> decodeTxBatch(ByteView raw) {
    proto::TxBatch pb;
    GL_TRY(detail::parse(pb, raw, "tx batch"));
    GL_ASSIGN_OR_RETURN(txs, txsFromProto(pb.txs()));
    return TxBatch{std::move(txs)};
}

Bytes encodeBatchMessage(const BatchMessage& batch) {
    proto::Batch pb;
    pb.set_epoch(batch.epoch);
    pb.set_serial(batch.serial);
    pb.set_sign(batch.sign);
    for (const auto& tx : batch.txs) {
        pb.add_txs(str(tx));
    }
    return detail::serialize(pb);
}

Result<BatchMessage> decodeBatchMessage(ByteView raw) {
    proto::Batch pb;
    GL_TRY(detail::parse(pb, raw, "batch"));
    GL_ASSIGN_OR_RETURN(txs, txsFromProto(pb.txs()));
    return BatchMessage{pb.epoch(), pb.serial(), pb.sign(), std::move(txs)};
}

Bytes encodeBatchAck(const BatchAck& ack) {
    proto::BatchAck pb;
    pb.set_epoch(ack.epoch);
    pb.set_digest(str(ack.digest.view()));
    pb.set_signature(str(ack.signature.view()));
    return detail::serialize(pb);
}

Result<BatchAck> decodeBatchAck(ByteView raw) {
    proto::BatchAck pb;
    GL_TRY(detail::parse(pb, raw, "batch acknowledgement"));
    GL_ASSIGN_OR_RETURN(digest, detail::fixed<Hash256>(pb.digest(), "batch_ack.digest"));
    GL_ASSIGN_OR_RETURN(signature, detail::fixed<Signature>(pb.signature(), "batch_ack.signature"));
    return BatchAck{pb.epoch(), digest, signature};
}

Bytes encodeBlockRequest(const BlockRequest& request) {
    proto::BlockRequest pb;
    pb.set_block_id(str(request.blockId.view()));
    return detail::serialize(pb);
}

Result<BlockRequest> decodeBlockRequest(ByteView raw) {
    proto::BlockRequest pb;
    GL_TRY(detail::parse(pb, raw, "block request"));
    GL_ASSIGN_OR_RETURN(id, detail::fixed<Hash256>(pb.block_id(), "block_id"));
    return BlockRequest{id};
}

Bytes encodeSyncRequest(const SyncRequest& request) {
    proto::SyncRequest pb;
    pb.set_from_height(request.fromHeight);
    pb.set_max_blocks(request.maxBlocks);
    return detail::serialize(pb);
}

Result<SyncRequest> decodeSyncRequest(ByteView raw) {
    proto::SyncRequest pb;
    GL_TRY(detail::parse(pb, raw, "sync request"));
    return SyncRequest{pb.from_height(), pb.max_blocks()};
}

Bytes encodeSyncResponse(const SyncResponse& response) {
    proto::SyncResponse pb;
    for (const auto& block : response.blocks) {
        pb.add_blocks(str(encodeBlock(block)));
    }
    if (response.proof) {
        pb.set_commit_proof(str(encodeCommitProof(*response.proof)));
    }
    pb.set_head_height(response.headHeight);
    return detail::serialize(pb);
}

Result<SyncResponse> decodeSyncResponse(ByteView raw) {
    proto::SyncResponse pb;
    GL_TRY(detail::parse(pb, raw, "sync response"));
    if (static_cast<std::size_t>(pb.blocks_size()) > kMaxSyncBlocks) {
        return fail(ErrorCode::kMalformed,
                    "sync response holds more than " + std::to_string(kMaxSyncBlocks) + " blocks");
    }
    if (pb.blocks().empty() != pb.commit_proof().empty()) {
        return fail(ErrorCode::kMalformed, "sync response needs a commit proof with its blocks");
    }
    SyncResponse response;
    response.headHeight = pb.head_height();
    response.blocks.reserve(static_cast<std::size_t>(pb.blocks_size()));
    for (const auto& encoded : pb.blocks()) {
        GL_ASSIGN_OR_RETURN(block, decodeBlock(asBytes(encoded)));
        response.blocks.push_back(std::move(block));
    }
    if (!pb.commit_proof().empty()) {
        auto proof = decodeCommitProof(asBytes(pb.commit_proof()));
        if (!proof) {
            return std::unexpected(proof.error());
        }
        response.proof.emplace(std::move(*proof));
    }
    return response;
}

Bytes encodeEpochProofRequest(const EpochProofRequest& request) {
    proto::EpochProofRequest pb;
    pb.set_epoch(request.epoch);
    return detail::serialize(pb);
}

Result<EpochProofRequest> decodeEpochProofRequest(ByteView raw) {
    proto::EpochProofRequest pb;
    GL_TRY(detail::parse(pb, raw, "epoch proof request"));
    return EpochProofRequest{pb.epoch()};
}

Bytes encodeStateManifest(const StateManifest& manifest) {
    proto::StateManifest pb;
    pb.set_manifest(str(manifest.manifest));
    return detail::serialize(pb);
}

Result<StateManifest> decodeStateManifest(ByteView raw) {
    proto::StateManifest pb;
    GL_TRY(detail::parse(pb, raw, "state manifest"));
    return StateManifest{Bytes(pb.manifest().begin(), pb.manifest().end())};
}

Bytes encodeStateChunkRequest(const StateChunkRequest& request) {
    proto::StateChunkRequest pb;
    pb.set_height(request.height);
    pb.set_start(str(request.start.view()));
    pb.set_max_keys(request.maxKeys);
    return detail::serialize(pb);
}

Result<StateChunkRequest> decodeStateChunkRequest(ByteView raw) {
    proto::StateChunkRequest pb;
    GL_TRY(detail::parse(pb, raw, "state chunk request"));
    GL_ASSIGN_OR_RETURN(start, detail::fixed<Hash256>(pb.start(), "state chunk request start"));
    return StateChunkRequest{pb.height(), start, pb.max_keys()};
}

Bytes encodeStateChunk(const StateChunk& chunk) {
    proto::StateChunk pb;
    pb.set_height(chunk.height);
    pb.set_start(str(chunk.start.view()));
    pb.set_range(str(chunk.range));
    return detail::serialize(pb);
}

Result<StateChunk> decodeStateChunk(ByteView raw) {
    proto::StateChunk pb;
    GL_TRY(detail::parse(pb, raw, "state chunk"));
    GL_ASSIGN_OR_RETURN(start, detail::fixed<Hash256>(pb.start(), "state chunk start"));
    return StateChunk{pb.height(), start, Bytes(pb.range().begin(), pb.range().end())};
}

Bytes encodeEpochProof(const EpochProof& proof) {
    proto::EpochProof pb;
    pb.set_reconfig_header(str(proof.reconfig.headerBytes));
    pb.set_commit_proof(str(encodeCommitProof(proof.proof)));
    return detail::serialize(pb);
}

Result<EpochProof> decodeEpochProof(ByteView raw) {
    proto::EpochProof pb;
    GL_TRY(detail::parse(pb, raw, "epoch proof"));
    GL_ASSIGN_OR_RETURN(
        reconfig, makeProofHeader(Bytes(pb.reconfig_header().begin(), pb.reconfig_header().end())));
    GL_ASSIGN_OR_RETURN(commitProof, decodeCommitProof(asBytes(pb.commit_proof())));
    return EpochProof{std::move(reconfig), std::move(commitProof)};
}

Result<Envelope> decodeEnvelope(ByteView raw) {
    proto::Envelope pb;
    GL_TRY(detail::parse(pb, raw, "p2p envelope"));
    return envelopeFromProto(pb);
}

}  // namespace gridledger::codec
