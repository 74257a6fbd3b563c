#include <string>

#include <gtest/gtest.h>

#include <gridledger/codec/p2p.h>

#include "../../../p2p/frame.h"

namespace gridledger::codec::codec_test {
namespace {

NodeId nodeIdWith(std::uint8_t byte) {
    NodeId id;
    id[0] = byte;
    return id;
}

TEST(P2pCodec, EveryEnvelopeKindRoundTrips) {
    const std::vector<Envelope> envelopes = {
        PeerHello{1, 26656},
        PeerHello{1, 26656, 0x0123456789abcdefULL},
        NetMessage{MessageKind::kVote, Bytes{1, 2, 3}},
        NetMessage{MessageKind::kSyncResponse, Bytes{}},
        PeerPing{42},
        PeerPong{43},
        PeerList{{PeerAddress{nodeIdWith(1), "127.0.0.1", 1},
                  PeerAddress{nodeIdWith(2), "validator-2.grid.example", 65535}}},
    };
    for (const Envelope& envelope : envelopes) {
        auto decoded = decodeEnvelope(encodeEnvelope(envelope));
        ASSERT_TRUE(decoded) << decoded.error().message;
        EXPECT_EQ(*decoded, envelope);
    }
}

TEST(P2pCodec, EveryKnownKindHasAStableName) {
    EXPECT_EQ(kindName(MessageKind::kTx), "tx");
    EXPECT_EQ(kindName(MessageKind::kBlockRequest), "block_request");
    EXPECT_EQ(kindName(MessageKind::kSyncResponse), "sync_response");
    EXPECT_EQ(kindName(MessageKind::kEpochProofRequest), "epoch_proof_request");
    EXPECT_EQ(kindName(MessageKind::kEpochProof), "epoch_proof");
    EXPECT_EQ(kindName(MessageKind::kStateManifestRequest), "state_manifest_request");
    EXPECT_EQ(kindName(MessageKind::kQuorumCert), "quorum_cert");
    EXPECT_EQ(kindName(MessageKind::kBatch), "batch");
    EXPECT_EQ(kindName(MessageKind::kBatchAck), "batch_ack");
    EXPECT_EQ(kindName(kLastMessageKind), "batch_cert");
    EXPECT_EQ(static_cast<int>(kLastMessageKind), 19);
}

TEST(P2pCodec, BatchPayloadsRoundTripAndRefuseGarbage) {
    const BatchMessage batch{3, 17, true, {Bytes{1, 2, 3}, Bytes(300, 0x7f)}};
    auto decodedBatch = decodeBatchMessage(encodeBatchMessage(batch));
    ASSERT_TRUE(decodedBatch) << decodedBatch.error().message;
    EXPECT_EQ(*decodedBatch, batch);
    BatchMessage tooMany{3, 18, false, std::vector<Bytes>(kMaxTxBatch + 1, Bytes{1})};
    EXPECT_EQ(decodeBatchMessage(encodeBatchMessage(tooMany)).error().code, ErrorCode::kMalformed);

    Hash256 digest;
    digest[5] = 0x55;
    Signature signature;
    signature[63] = 0x11;
    const BatchAck ack{3, digest, signature};
    auto decodedAck = decodeBatchAck(encodeBatchAck(ack));
    ASSERT_TRUE(decodedAck) << decodedAck.error().message;
    EXPECT_EQ(*decodedAck, ack);

    const BatchCert cert{3, digest, Bytes{0x05}, {signature, signature}};
    auto decodedCert = decodeBatchCert(encodeBatchCert(cert));
    ASSERT_TRUE(decodedCert) << decodedCert.error().message;
    EXPECT_EQ(*decodedCert, cert);

    // Garbage.
    EXPECT_FALSE(decodeBatchAck(Bytes{0xff, 0xff, 0xff}));
    EXPECT_FALSE(decodeBatchCert(Bytes{0xff, 0xff, 0xff}));
    EXPECT_FALSE(decodeBatchMessage(Bytes{0xff, 0xff, 0xff}));
}

TEST(P2pCodec, StateSyncPayloadsRoundTripAndRefuseAShortStart) {
    Hash256 start;
    start[0] = 0x80;
    const StateChunkRequest request{42, start, 7};
    EXPECT_EQ(decodeStateChunkRequest(encodeStateChunkRequest(request)).value(), request);
    const auto chunk = decodeStateChunk(encodeStateChunk(StateChunk{42, start, Bytes{1, 2, 3}}));
    ASSERT_TRUE(chunk);
    EXPECT_EQ(chunk->height, 42U);
    EXPECT_EQ(chunk->start, start);
    EXPECT_EQ(chunk->range, (Bytes{1, 2, 3}));
    EXPECT_EQ(decodeStateManifest(encodeStateManifest(StateManifest{Bytes{9}})).value().manifest,
              Bytes{9});
    // A request whose start is not 32 bytes.
    const Bytes shortStart = encodeStateChunkRequest(StateChunkRequest{1, Hash256{}, 0});
    Bytes cut(shortStart.begin(), shortStart.end() - 1);
    cut[cut.size() - 32] = 31;  // the length byte of the start field (the last field written)
    EXPECT_EQ(decodeStateChunkRequest(cut).error().code, ErrorCode::kBadLength);
    EXPECT_EQ(decodeStateChunk(asBytes("garbage")).error().code, ErrorCode::kMalformed);
}

TEST(P2pCodec, GarbageAndEmptyEnvelopesAreMalformed) {
    EXPECT_EQ(decodeEnvelope(Bytes{}).error().code, ErrorCode::kMalformed);  // no body
    EXPECT_EQ(decodeEnvelope(Bytes{0xff, 0xff, 0xff, 0xff}).error().code, ErrorCode::kMalformed);
    EXPECT_EQ(decodeEnvelope(asBytes("not a protobuf at all")).error().code, ErrorCode::kMalformed);
}

TEST(P2pCodec, UnknownMessageKindIsMalformed) {
    Bytes raw = encodeEnvelope(NetMessage{MessageKind::kTx, Bytes{7}});
    // Envelope.message (field 2, length-delimited) holds NetMessage.kind (field 1, varint 1).
    ASSERT_GE(raw.size(), 4U);
    ASSERT_EQ(raw[2], 0x08);
    raw[3] = 0x63;  // kind 99
    EXPECT_EQ(decodeEnvelope(raw).error().code, ErrorCode::kMalformed);
    raw[3] = 0x00;  // kind 0 (unspecified)
    EXPECT_EQ(decodeEnvelope(raw).error().code, ErrorCode::kMalformed);
}

TEST(P2pCodec, BadPeerAddressesAreMalformed) {
    const auto rejects = [](const PeerAddress& address) {
        auto decoded = decodeEnvelope(encodeEnvelope(PeerList{{address}}));
        return !decoded && decoded.error().code == ErrorCode::kMalformed;
    };
    EXPECT_TRUE(rejects(PeerAddress{nodeIdWith(1), "", 1}));
    EXPECT_TRUE(rejects(PeerAddress{nodeIdWith(1), "127.0.0.1", 0}));
    EXPECT_TRUE(rejects(PeerAddress{nodeIdWith(1), "host name with spaces", 1}));
    EXPECT_TRUE(rejects(PeerAddress{nodeIdWith(1), std::string(kMaxHostLength + 1, 'a'), 1}));
    EXPECT_FALSE(rejects(PeerAddress{nodeIdWith(1), std::string(kMaxHostLength, 'a'), 1}));
    EXPECT_FALSE(rejects(PeerAddress{nodeIdWith(1), "::1", 1}));
}

TEST(P2pCodec, DecodingNeverCrashesOnTruncatedOrFlippedInput) {
    const Bytes raw = encodeEnvelope(PeerList{{PeerAddress{nodeIdWith(9), "10.0.0.1", 26656}}});
    for (std::size_t cut = 0; cut < raw.size(); ++cut) {
        (void)decodeEnvelope(ByteView(raw.data(), cut));
    }
    for (std::size_t i = 0; i < raw.size(); ++i) {
        for (std::uint8_t bit = 0; bit < 8; ++bit) {
            Bytes flipped = raw;
            flipped[i] = static_cast<std::uint8_t>(flipped[i] ^ (1U << bit));
            (void)decodeEnvelope(flipped);
        }
    }
}

TEST(P2pFrame, AFrameIsABigEndianLengthThenTheEnvelope) {
    const Envelope envelope = NetMessage{MessageKind::kProposal, Bytes(300, 0xab)};
    auto frame = p2p::encodeFrame(envelope, 1024);
    ASSERT_TRUE(frame);
    const Bytes body = encodeEnvelope(envelope);
    ASSERT_EQ((*frame)->size(), p2p::kFrameHeaderBytes + body.size());
    EXPECT_EQ(readU32(**frame), body.size());
    EXPECT_TRUE(std::equal(body.begin(), body.end(), (*frame)->begin() + 4));
}

TEST(P2pFrame, ABodyAboveTheLimitIsRefused) {
    const Envelope envelope = NetMessage{MessageKind::kProposal, Bytes(2000, 0)};
    auto frame = p2p::encodeFrame(envelope, 1024);
    ASSERT_FALSE(frame);
    EXPECT_EQ(frame.error().code, ErrorCode::kTooLarge);
}

TEST(P2pFrame, OnlyTransactionGossipIsDroppable) {
    EXPECT_TRUE(p2p::isDroppable(NetMessage{MessageKind::kTx, {}}));
    EXPECT_FALSE(p2p::isDroppable(NetMessage{MessageKind::kVote, {}}));
    EXPECT_FALSE(p2p::isDroppable(NetMessage{MessageKind::kProposal, {}}));
    EXPECT_FALSE(p2p::isDroppable(NetMessage{MessageKind::kBlockResponse, {}}));
}

}  // namespace
}  // namespace gridledger::codec::codec_test
