// Payloads of the P2P application messages (codec/p2p.h) and the commit proof (codec/block.h):
// each round-trips, and each limit or malformation is refused with its documented error code.

#include <random>
#include <string>

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::codec::p2p_payload_test {
namespace {

Hash256 hashOf(std::string_view text) {
    return crypto::sha256(asBytes(text));
}

Bytes bytesOf(std::string_view text) {
    return {text.begin(), text.end()};
}

/** A QC whose fields all differ from their defaults (codec tests need no valid signature). */
QuorumCert someQc(std::uint64_t round, const Hash256& blockId) {
    Signature sig;
    sig[0] = static_cast<std::uint8_t>(round);
    sig[63] = 0x5a;
    return QuorumCert{2, round, blockId, {0x0b}, {sig, sig, sig}};
}

/** Block `height` of a fake chain: round = height, parent = `parentId`, `txs` as given. */
Block someBlock(std::uint64_t height, const Hash256& parentId, std::vector<Bytes> txs) {
    BlockHeader header;
    header.epoch = 2;
    header.round = height;
    header.height = height;
    header.parentId = parentId;
    header.qc = someQc(height - 1, parentId);
    header.author[5] = 0x42;
    header.timestampMs = 1'700'000'000'000 + height;
    header.execHeight = height - 1;
    header.execStateRoot = hashOf("state");
    header.execResultsRoot = hashOf("results");
    Block block = makeBlock(header, std::move(txs));
    block.signature[1] = static_cast<std::uint8_t>(height);
    return block;
}

/** Consecutive blocks at heights from..from+count-1, each naming the previous one as parent. */
std::vector<Block> someBlocks(std::uint64_t from, std::size_t count) {
    std::vector<Block> blocks;
    Hash256 parent = hashOf("parent of the first block");
    for (std::size_t i = 0; i < count; ++i) {
        blocks.push_back(someBlock(from + i, parent, {bytesOf("tx-" + std::to_string(i))}));
        parent = blocks.back().id;
    }
    return blocks;
}

/** The commit proof of `block`: a child at height + 1, round + 1, and a QC on that child. */
CommitProof someProofOf(const Block& block) {
    const Block child = someBlock(block.header.height + 1, block.id, {});
    return makeCommitProof(child.headerBytes, someQc(child.header.round, child.id)).value();
}

void expectSameBlock(const Block& actual, const Block& expected) {
    EXPECT_EQ(actual.id, expected.id);
    EXPECT_EQ(actual.header, expected.header);
    EXPECT_EQ(actual.headerBytes, expected.headerBytes);
    EXPECT_EQ(actual.txs, expected.txs);
    EXPECT_EQ(actual.signature, expected.signature);
}

void expectSameProof(const CommitProof& actual, const CommitProof& expected) {
    EXPECT_EQ(actual.childHeader, expected.childHeader);
    EXPECT_EQ(actual.childHeaderBytes, expected.childHeaderBytes);
    EXPECT_EQ(actual.childId, expected.childId);
    EXPECT_EQ(actual.commitQc, expected.commitQc);
}

/** A hand-made protobuf message of one length-delimited field 1 holding `value` (< 128 bytes). */
Bytes lengthDelimitedField1(const Bytes& value) {
    Bytes out{0x0a, static_cast<std::uint8_t>(value.size())};
    out.insert(out.end(), value.begin(), value.end());
    return out;
}

/** `raw` followed by varint field 15 = 1, a field no payload message defines. */
Bytes withUnknownField(Bytes raw) {
    raw.push_back(0x78);  // (15 << 3) | varint
    raw.push_back(0x01);
    return raw;
}

// ---- Block headers and commit proofs ----

TEST(HeaderCodec, DecodesTheBytesABlockIdIsTheHashOf) {
    const Block block = someBlock(7, hashOf("p"), {bytesOf("a"), bytesOf("b")});
    auto header = decodeHeader(block.headerBytes);
    ASSERT_TRUE(header) << header.error().message;
    EXPECT_EQ(*header, block.header);
    EXPECT_EQ(header->txCount, 2U);
    EXPECT_EQ(crypto::sha256(encodeHeader(*header)), block.id);
}

TEST(HeaderCodec, GarbageAndUnknownFieldsAreMalformed) {
    EXPECT_EQ(decodeHeader(Bytes{0xff, 0xff, 0xff}).error().code, ErrorCode::kMalformed);
    const Block block = someBlock(3, hashOf("p"), {});
    EXPECT_EQ(decodeHeader(withUnknownField(block.headerBytes)).error().code,
              ErrorCode::kMalformed);
}

TEST(CommitProofCodec, MakeTakesTheChildsHeaderAndIdFromItsBytes) {
    const Block block = someBlock(4, hashOf("p"), {});
    const Block child = someBlock(5, block.id, {bytesOf("x")});
    const QuorumCert qc = someQc(5, child.id);
    auto proof = makeCommitProof(child.headerBytes, qc);
    ASSERT_TRUE(proof) << proof.error().message;
    EXPECT_EQ(proof->childHeader, child.header);
    EXPECT_EQ(proof->childHeaderBytes, child.headerBytes);
    EXPECT_EQ(proof->childId, child.id);
    EXPECT_EQ(proof->commitQc, qc);
}

TEST(CommitProofCodec, RoundTrips) {
    const Block block = someBlock(4, hashOf("p"), {});
    const CommitProof proof = someProofOf(block);
    auto decoded = decodeCommitProof(encodeCommitProof(proof));
    ASSERT_TRUE(decoded) << decoded.error().message;
    expectSameProof(*decoded, proof);
    EXPECT_EQ(decoded->childHeader.parentId, block.id);
}

TEST(CommitProofCodec, RefusesGarbageHeadersAndCertificates) {
    EXPECT_EQ(makeCommitProof(Bytes{0xff, 0x01}, QuorumCert{}).error().code, ErrorCode::kMalformed);
    EXPECT_EQ(decodeCommitProof(Bytes{0xff, 0xff}).error().code, ErrorCode::kMalformed);

    const Block block = someBlock(4, hashOf("p"), {});
    const Bytes good = encodeCommitProof(someProofOf(block));
    EXPECT_EQ(decodeCommitProof(withUnknownField(good)).error().code, ErrorCode::kMalformed);

    EXPECT_EQ(decodeCommitProof(Bytes(good.begin(), good.end() - 1)).error().code,
              ErrorCode::kMalformed);
}

TEST(CommitProofCodec, RefusesAProofWithoutItsCommitQc) {
    const Block child = someBlock(5, hashOf("p"), {});
    Bytes headerOnly{0x0a};
    // The header is longer than 127 bytes: a two-byte varint length.
    ASSERT_GE(child.headerBytes.size(), 128U);
    ASSERT_LT(child.headerBytes.size(), 16384U);
    headerOnly.push_back(static_cast<std::uint8_t>(0x80U | (child.headerBytes.size() & 0x7fU)));
    headerOnly.push_back(static_cast<std::uint8_t>(child.headerBytes.size() >> 7U));
    headerOnly.insert(headerOnly.end(), child.headerBytes.begin(), child.headerBytes.end());
    EXPECT_EQ(decodeCommitProof(headerOnly).error().code, ErrorCode::kBadLength);
}

// ---- TxBatch ----

TEST(TxBatchCodec, RoundTripsInOrderIncludingEmptyAndLargestTxs) {
    TxBatch batch;
    batch.txs = {bytesOf("first"), Bytes{}, Bytes(kMaxTxBytes, 0x7e), bytesOf("last")};
    auto decoded = decodeTxBatch(encodeTxBatch(batch));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->txs, batch.txs);
    auto empty = decodeTxBatch(encodeTxBatch(TxBatch{}));
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->txs.empty());
}

TEST(TxBatchCodec, AcceptsExactlyKMaxTxBatchTxsAndRefusesOneMore) {
    TxBatch batch;
    for (std::size_t i = 0; i < kMaxTxBatch; ++i) {
        batch.txs.push_back(bytesOf(std::to_string(i)));
    }
    auto full = decodeTxBatch(encodeTxBatch(batch));
    ASSERT_TRUE(full) << full.error().message;
    EXPECT_EQ(full->txs.size(), kMaxTxBatch);
    batch.txs.push_back(bytesOf("one too many"));
    EXPECT_EQ(decodeTxBatch(encodeTxBatch(batch)).error().code, ErrorCode::kMalformed);
}

TEST(TxBatchCodec, RefusesATxAboveKMaxTxBytesAsTooLarge) {
    TxBatch batch;
    batch.txs = {bytesOf("small"), Bytes(kMaxTxBytes + 1, 0x01)};
    EXPECT_EQ(decodeTxBatch(encodeTxBatch(batch)).error().code, ErrorCode::kTxTooLarge);
}

TEST(TxBatchCodec, GarbageAndUnknownFieldsAreMalformed) {
    EXPECT_EQ(decodeTxBatch(Bytes{0xff, 0xff}).error().code, ErrorCode::kMalformed);
    EXPECT_EQ(decodeTxBatch(withUnknownField(encodeTxBatch(TxBatch{{bytesOf("t")}}))).error().code,
              ErrorCode::kMalformed);
}

// ---- BlockRequest and SyncRequest ----

TEST(BlockRequestCodec, RoundTrips) {
    const BlockRequest request{hashOf("wanted")};
    auto decoded = decodeBlockRequest(encodeBlockRequest(request));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->blockId, request.blockId);
}

TEST(BlockRequestCodec, RefusesAnIdThatIsNot32Bytes) {
    EXPECT_EQ(decodeBlockRequest(Bytes{}).error().code, ErrorCode::kBadLength);
    EXPECT_EQ(decodeBlockRequest(lengthDelimitedField1(Bytes(31, 0xaa))).error().code,
              ErrorCode::kBadLength);
    EXPECT_EQ(decodeBlockRequest(lengthDelimitedField1(Bytes(33, 0xaa))).error().code,
              ErrorCode::kBadLength);
    auto exact = decodeBlockRequest(lengthDelimitedField1(Bytes(32, 0xaa)));
    ASSERT_TRUE(exact) << exact.error().message;
    EXPECT_EQ(exact->blockId, Hash256::fromBytes(Bytes(32, 0xaa)).value());
    EXPECT_EQ(decodeBlockRequest(Bytes{0xff, 0xff}).error().code, ErrorCode::kMalformed);
}

TEST(SyncRequestCodec, RoundTripsAndRefusesGarbage) {
    const SyncRequest request{123'456'789'012ULL, 4096};
    auto decoded = decodeSyncRequest(encodeSyncRequest(request));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, request);
    EXPECT_EQ(decodeSyncRequest(Bytes{0xff, 0xff}).error().code, ErrorCode::kMalformed);
    EXPECT_EQ(decodeSyncRequest(withUnknownField(encodeSyncRequest(request))).error().code,
              ErrorCode::kMalformed);
}

// ---- SyncResponse ----

TEST(SyncResponseCodec, RoundTripsBlocksProofAndHeadHeight) {
    SyncResponse response;
    response.blocks = someBlocks(10, 3);
    response.proof = someProofOf(response.blocks.back());
    response.headHeight = 99;
    auto decoded = decodeSyncResponse(encodeSyncResponse(response));
    ASSERT_TRUE(decoded) << decoded.error().message;
    ASSERT_EQ(decoded->blocks.size(), 3U);
    for (std::size_t i = 0; i < 3; ++i) {
        expectSameBlock(decoded->blocks[i], response.blocks[i]);
        EXPECT_EQ(decoded->blocks[i].header.height, 10 + i);
    }
    ASSERT_TRUE(decoded->proof.has_value());
    expectSameProof(*decoded->proof, *response.proof);
    EXPECT_EQ(decoded->headHeight, 99U);
}

TEST(SyncResponseCodec, AnEmptyAnswerRoundTripsWithItsHeadHeight) {
    SyncResponse response;
    response.headHeight = 7;
    auto decoded = decodeSyncResponse(encodeSyncResponse(response));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_TRUE(decoded->blocks.empty());
    EXPECT_FALSE(decoded->proof.has_value());
    EXPECT_EQ(decoded->headHeight, 7U);
}

TEST(SyncResponseCodec, RefusesBlocksWithoutAProof) {
    SyncResponse response;
    response.blocks = someBlocks(1, 2);
    EXPECT_EQ(decodeSyncResponse(encodeSyncResponse(response)).error().code, ErrorCode::kMalformed);
}

TEST(SyncResponseCodec, RefusesAProofWithoutBlocks) {
    SyncResponse response;
    response.proof = someProofOf(someBlock(1, hashOf("p"), {}));
    EXPECT_EQ(decodeSyncResponse(encodeSyncResponse(response)).error().code, ErrorCode::kMalformed);
}

TEST(SyncResponseCodec, AcceptsKMaxSyncBlocksAndRefusesOneMore) {
    SyncResponse response;
    response.blocks = someBlocks(1, kMaxSyncBlocks + 1);
    response.proof = someProofOf(response.blocks.back());
    EXPECT_EQ(decodeSyncResponse(encodeSyncResponse(response)).error().code, ErrorCode::kMalformed);
    response.blocks.pop_back();
    response.proof = someProofOf(response.blocks.back());
    auto full = decodeSyncResponse(encodeSyncResponse(response));
    ASSERT_TRUE(full) << full.error().message;
    EXPECT_EQ(full->blocks.size(), kMaxSyncBlocks);
}

TEST(SyncResponseCodec, RefusesABlockWhoseTxsDoNotMatchItsHeader) {
    SyncResponse response;
    response.blocks = someBlocks(1, 3);
    response.proof = someProofOf(response.blocks.back());
    response.blocks[1].txs.push_back(bytesOf("smuggled"));
    EXPECT_EQ(decodeSyncResponse(encodeSyncResponse(response)).error().code,
              ErrorCode::kInvalidBlock);
}

TEST(SyncResponseCodec, RefusesABlockWhoseHeaderIsGarbage) {
    SyncResponse response;
    response.blocks = someBlocks(1, 3);
    response.proof = someProofOf(response.blocks.back());
    response.blocks[2].headerBytes = {0xff, 0xff, 0xff};
    EXPECT_EQ(decodeSyncResponse(encodeSyncResponse(response)).error().code, ErrorCode::kMalformed);
}

TEST(SyncResponseCodec, RefusesAGarbageProof) {
    SyncResponse response;
    response.blocks = someBlocks(1, 1);
    response.proof = someProofOf(response.blocks.back());
    response.proof->childHeaderBytes = {0xff, 0xff};
    EXPECT_EQ(decodeSyncResponse(encodeSyncResponse(response)).error().code, ErrorCode::kMalformed);
}

/** What any accepted sync response guarantees, whatever bytes it came from. */
void expectSyncResponseInvariants(const Result<SyncResponse>& decoded) {
    if (!decoded) {
        return;
    }
    EXPECT_LE(decoded->blocks.size(), kMaxSyncBlocks);
    EXPECT_EQ(decoded->blocks.empty(), !decoded->proof.has_value());
    for (const auto& block : decoded->blocks) {
        EXPECT_EQ(block.id, crypto::sha256(block.headerBytes));
        EXPECT_EQ(block.header.txCount, block.txs.size());
    }
    if (decoded->proof) {
        EXPECT_EQ(decoded->proof->childId, crypto::sha256(decoded->proof->childHeaderBytes));
    }
}

TEST(P2pPayloadCodec, GarbageIsRefusedOrDecodesToAPayloadWithinItsLimits) {
    std::mt19937_64 rng(7);
    SyncResponse valid;
    valid.blocks = someBlocks(1, 2);
    valid.proof = someProofOf(valid.blocks.back());
    const Bytes validResponse = encodeSyncResponse(valid);
    std::size_t mutatedAccepted = 0;
    for (int i = 0; i < 3000; ++i) {
        Bytes junk(rng() % 300);
        for (auto& b : junk) {
            b = static_cast<std::uint8_t>(rng());
        }
        if (auto batch = decodeTxBatch(junk)) {
            EXPECT_LE(batch->txs.size(), kMaxTxBatch);
        }
        (void)decodeBlockRequest(junk);
        (void)decodeSyncRequest(junk);
        (void)decodeHeader(junk);
        if (auto proof = decodeCommitProof(junk)) {
            EXPECT_EQ(proof->childId, crypto::sha256(proof->childHeaderBytes));
        }
        expectSyncResponseInvariants(decodeSyncResponse(junk));
        // A valid response with one bit changed: refused, or (a bit of a signature or of a
        // varint field) decoded with every invariant still holding.
        Bytes mutated = validResponse;
        mutated[rng() % mutated.size()] ^= static_cast<std::uint8_t>(1U << (rng() % 8));
        auto decoded = decodeSyncResponse(mutated);
        if (decoded) {
            ++mutatedAccepted;
        }
        expectSyncResponseInvariants(decoded);
    }
    // Both outcomes occur, so the invariants above were exercised on accepted input.
    EXPECT_GT(mutatedAccepted, 0U);
    EXPECT_LT(mutatedAccepted, 3000U);
}

TEST(SyncResponseCodec, NoTruncatedResponseDecodesAsTheWholeOne) {
    SyncResponse valid;
    valid.blocks = someBlocks(1, 2);
    valid.proof = someProofOf(valid.blocks.back());
    valid.headHeight = 5;
    const Bytes encoded = encodeSyncResponse(valid);
    for (std::size_t n = 0; n < encoded.size(); ++n) {
        const Bytes prefix(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(n));
        auto decoded = decodeSyncResponse(prefix);
        EXPECT_TRUE(!decoded || decoded->headHeight != valid.headHeight)
            << "prefix of " << n << " bytes";
    }
}

}  // namespace
}  // namespace gridledger::codec::p2p_payload_test
