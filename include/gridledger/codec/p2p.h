#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>

namespace gridledger::codec {

/**
 * The kind of an application message carried by the P2P transport. The numbers reach the wire
 * (proto/p2p.proto): never renumbered, new kinds are appended.
 */
enum class MessageKind : std::uint8_t {
    kTx = 1,
    kProposal = 2,
    kVote = 3,
    kTimeout = 4,
    kTimeoutCert = 5,
    kBlockRequest = 6,
    kBlockResponse = 7,
    kSyncRequest = 8,
    kSyncResponse = 9,
    kEpochProofRequest = 10,
    kEpochProof = 11,
    kStateManifestRequest = 12,
    kStateManifest = 13,
    kStateChunkRequest = 14,
    kStateChunk = 15,
    kQuorumCert = 16,
    kBatch = 17,
    kBatchAck = 18,
    kBatchCert = 19,
};

/** The highest MessageKind this build knows. */
inline constexpr MessageKind kLastMessageKind = MessageKind::kBatchCert;

/** A stable lower-case name of a kind for logs, e.g. "block_request"; "unknown" otherwise. */
[[nodiscard]] std::string_view kindName(MessageKind kind);

/** An application message: a kind and opaque payload bytes (decoded by the node layer). */
struct NetMessage {
    MessageKind kind = MessageKind::kTx;
    Bytes payload;

    bool operator==(const NetMessage&) const = default;
};

/** Most transactions in one gossiped TxBatch. */
inline constexpr std::size_t kMaxTxBatch = 1024;
/** Most blocks in one SyncResponse. */
inline constexpr std::size_t kMaxSyncBlocks = 1024;

/** Payload of MessageKind::kTx: raw transactions gossiped between mempools. */
struct TxBatch {
    std::vector<Bytes> txs;
};

/**
 * Payload of MessageKind::kBatch: the serial-th batch of transactions its author (the sending
 * peer's validator) packed in `epoch` (docs/protocol.md §14). `sign` asks the receiver to verify
 * every signature and acknowledge the batch.
 */
struct BatchMessage {
    std::uint64_t epoch = 0;
    std::uint64_t serial = 0;
    bool sign = false;
    std::vector<Bytes> txs;

    bool operator==(const BatchMessage&) const = default;
};

/** Payload of MessageKind::kBatchAck: a member's signature of a batch it verified and holds. */
struct BatchAck {
    std::uint64_t epoch = 0;
    Hash256 digest;
    Signature signature;

    bool operator==(const BatchAck&) const = default;
};

/** Payload of MessageKind::kBlockRequest: one block asked for by id. */
struct BlockRequest {
    Hash256 blockId;
};

/** Payload of MessageKind::kSyncRequest: committed blocks from `fromHeight` on. */
struct SyncRequest {
    std::uint64_t fromHeight = 0;
    std::uint32_t maxBlocks = 0;

    bool operator==(const SyncRequest&) const = default;
};

/**
 * Payload of MessageKind::kSyncResponse: consecutive committed blocks from the requested height
 * and the commit proof of the last one (absent when there are no blocks).
 */
struct SyncResponse {
    std::vector<Block> blocks;
    std::optional<CommitProof> proof;
    /** The responder's highest committed height. */
    std::uint64_t headHeight = 0;
};

/** Payload of MessageKind::kEpochProofRequest: the proof that ended consensus epoch `epoch`. */
struct EpochProofRequest {
    std::uint64_t epoch = 0;

    bool operator==(const EpochProofRequest&) const = default;
};

/**
 * Payload of MessageKind::kEpochProof: the header of the block that ended an epoch (its
 * reconfiguration block, docs/protocol.md §12) and that block's commit proof. The epoch is the
 * header's.
 */
struct EpochProof {
    ProofHeader reconfig;
    CommitProof proof;
};

/**
 * Payload of MessageKind::kStateManifest: an encoded snapshot manifest (docs/snapshots.md), empty
 * when the responder has none to give. (kStateManifestRequest carries an empty payload.)
 */
struct StateManifest {
    Bytes manifest;
};

/**
 * Payload of MessageKind::kStateChunkRequest: the range of the state of `height` from `start`, of
 * at most `maxKeys` keys (0: as many as the responder gives).
 */
struct StateChunkRequest {
    std::uint64_t height = 0;
    Hash256 start;
    std::uint32_t maxKeys = 0;

    bool operator==(const StateChunkRequest&) const = default;
};

/** Payload of MessageKind::kStateChunk: that range, encoded (empty when it cannot be given). */
struct StateChunk {
    std::uint64_t height = 0;
    Hash256 start;
    Bytes range;
};

[[nodiscard]] Bytes encodeTxBatch(const TxBatch& batch);
/** Fails with kMalformed on garbage or more than kMaxTxBatch txs, kTxTooLarge on a big tx. */
[[nodiscard]] Result<TxBatch> decodeTxBatch(ByteView raw);
[[nodiscard]] Bytes encodeBatchMessage(const BatchMessage& batch);
/** Fails with kMalformed on garbage or more than kMaxTxBatch txs, kTxTooLarge on a big tx. */
[[nodiscard]] Result<BatchMessage> decodeBatchMessage(ByteView raw);
[[nodiscard]] Bytes encodeBatchAck(const BatchAck& ack);
/** Fails with kMalformed on garbage, kBadLength on a digest or signature of the wrong size. */
[[nodiscard]] Result<BatchAck> decodeBatchAck(ByteView raw);
[[nodiscard]] Bytes encodeBlockRequest(const BlockRequest& request);
[[nodiscard]] Result<BlockRequest> decodeBlockRequest(ByteView raw);
[[nodiscard]] Bytes encodeSyncRequest(const SyncRequest& request);
[[nodiscard]] Result<SyncRequest> decodeSyncRequest(ByteView raw);
[[nodiscard]] Bytes encodeSyncResponse(const SyncResponse& response);
/**
 * Fails with kMalformed on garbage, more than kMaxSyncBlocks blocks, blocks without a proof or
 * a proof without blocks; with the block decoding error of a bad block.
 */
[[nodiscard]] Result<SyncResponse> decodeSyncResponse(ByteView raw);

[[nodiscard]] Bytes encodeEpochProofRequest(const EpochProofRequest& request);
[[nodiscard]] Result<EpochProofRequest> decodeEpochProofRequest(ByteView raw);
[[nodiscard]] Bytes encodeStateManifest(const StateManifest& manifest);
[[nodiscard]] Result<StateManifest> decodeStateManifest(ByteView raw);
[[nodiscard]] Bytes encodeStateChunkRequest(const StateChunkRequest& request);
/** Fails with kMalformed on garbage, kBadLength on a start that is not 32 bytes. */
[[nodiscard]] Result<StateChunkRequest> decodeStateChunkRequest(ByteView raw);
[[nodiscard]] Bytes encodeStateChunk(const StateChunk& chunk);
/** Fails with kMalformed on garbage, kBadLength on a start that is not 32 bytes. */
[[nodiscard]] Result<StateChunk> decodeStateChunk(ByteView raw);

[[nodiscard]] Bytes encodeEpochProof(const EpochProof& proof);
/** Fails with kMalformed on garbage, a header that does not decode or a bad commit proof. */
[[nodiscard]] Result<EpochProof> decodeEpochProof(ByteView raw);

/** The first frame each side of a P2P connection sends after the TLS handshake. */
struct PeerHello {
    std::uint32_t version = 0;
    /** The sender's P2P listen port; 0 when it does not listen. */
    std::uint16_t listenPort = 0;
    /** Drawn at random when the sender's network started (0: unknown): a connection from the
     * same node id with another session means that node restarted. */
    std::uint64_t session = 0;

    bool operator==(const PeerHello&) const = default;
};

/** Keep-alive request; answered by a PeerPong with the same nonce. */
struct PeerPing {
    std::uint64_t nonce = 0;

    bool operator==(const PeerPing&) const = default;
};

/** Keep-alive answer. */
struct PeerPong {
    std::uint64_t nonce = 0;

    bool operator==(const PeerPong&) const = default;
};

/** Longest host name or address accepted in a PeerAddress. */
inline constexpr std::size_t kMaxHostLength = 253;

/** True iff `host` has 1 to kMaxHostLength characters, each of `A-Z a-z 0-9 . : _ -`. */
[[nodiscard]] bool isValidHost(std::string_view host);

/** Where a node can be dialed: its node id and host:port. */
struct PeerAddress {
    NodeId nodeId;
    /** An IP literal or a host name: see isValidHost(). */
    std::string host;
    /** 1..65535. */
    std::uint16_t port = 0;

    bool operator==(const PeerAddress&) const = default;
};

/** Peer exchange: addresses of allowed nodes known to the sender. */
struct PeerList {
    std::vector<PeerAddress> peers;

    bool operator==(const PeerList&) const = default;
};

/** One frame body of the P2P transport. */
using Envelope = std::variant<PeerHello, NetMessage, PeerPing, PeerPong, PeerList>;

/** Encodes an envelope (without the frame's length prefix). */
[[nodiscard]] Bytes encodeEnvelope(const Envelope& envelope);

/**
 * Parses an envelope. Fails with kMalformed on garbage, unknown fields, an empty body, an
 * unknown message kind, a listen port above 65535, or a peer address whose node id is not 20
 * bytes, whose host is not isValidHost(), or whose port is not 1..65535.
 * Never crashes on any input.
 */
[[nodiscard]] Result<Envelope> decodeEnvelope(ByteView raw);

}  // namespace gridledger::codec
