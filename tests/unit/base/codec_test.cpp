#include <random>

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::codec {
namespace {

TxBody transferBody(const crypto::SecretKey& key, std::uint64_t nonce) {
    TxBody body;
    body.chainId = "gridledger-test";
    body.sender = key.publicKey();
    body.nonce = nonce;
    body.validUntilHeight = 1000;
    Address to;
    to[0] = 0xaa;
    body.payload = Transfer{to, u128{12345}};
    return body;
}

TEST(TxCodec, SignedTxDecodesToTheSameBodyAndVerifies) {
    const auto key = crypto::SecretKey::generate();
    const SignedTx tx = signTx(transferBody(key, 7), key);
    auto decoded = decodeTx(tx.raw);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->hash, crypto::sha256(tx.raw));
    EXPECT_EQ(decoded->body.nonce, 7U);
    EXPECT_EQ(decoded->sender, crypto::addressOf(key.publicKey()));
    const auto& transfer = std::get<Transfer>(decoded->body.payload);
    EXPECT_TRUE(transfer.amount == u128{12345});
    EXPECT_TRUE(verifyTxSignature(*decoded));
}

TEST(TxCodec, AnyFlippedByteBreaksDecodingOrTheSignature) {
    const auto key = crypto::SecretKey::generate();
    const SignedTx tx = signTx(transferBody(key, 1), key);
    for (std::size_t i = 0; i < tx.raw.size(); ++i) {
        Bytes bad = tx.raw;
        bad[i] ^= 0x01;
        auto decoded = decodeTx(bad);
        EXPECT_TRUE(!decoded || !verifyTxSignature(*decoded)) << "byte " << i;
    }
}

TEST(TxCodec, GarbageAndOversizedInputAreErrorsNotCrashes) {
    std::mt19937_64 rng(42);
    for (int i = 0; i < 2000; ++i) {
        Bytes junk(rng() % 200);
        for (auto& b : junk) {
            b = static_cast<std::uint8_t>(rng());
        }
        EXPECT_FALSE(decodeTx(junk) && decodeTx(junk)->raw != junk);
        (void)decodeBlock(junk);
        (void)decodeVote(junk);
        (void)decodeReceipt(junk);
    }
    EXPECT_EQ(decodeTx(Bytes(kMaxTxBytes + 1, 0)).error().code, ErrorCode::kTxTooLarge);
    EXPECT_EQ(decodeTx(Bytes{}).error().code, ErrorCode::kBadLength);
}

TEST(BlockCodec, RoundTripsAndTheIdCoversTheHeader) {
    BlockHeader header;
    header.epoch = 1;
    header.round = 5;
    header.height = 3;
    header.parentId = crypto::sha256(asBytes("parent"));
    header.qc.round = 4;
    header.qc.blockId = header.parentId;
    header.qc.signers = {0x01};
    header.qc.signatures = {Signature{}};
    QuorumCert highQc{1, 2, crypto::sha256(asBytes("certified")), {0x01}, {Signature{}}};
    header.tc = TimeoutCert{1, 4, {0x01}, {2}, {Signature{}}, highQc};
    header.timestampMs = 1700000000000;
    header.execHeight = 2;
    Block block = makeBlock(header, {Bytes{1, 2, 3}, Bytes{4}});
    auto decoded = decodeBlock(encodeBlock(block));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->id, block.id);
    EXPECT_EQ(decoded->header, block.header);
    EXPECT_EQ(decoded->txs, block.txs);
    EXPECT_EQ(decoded->header.tc->highestHqcRound(), 2U);
    EXPECT_EQ(decoded->header.tc->highQc, highQc);

    Block other = makeBlock(header, {Bytes{1, 2, 3}});
    EXPECT_NE(other.id, block.id);
    block.txs.pop_back();
    EXPECT_EQ(decodeBlock(encodeBlock(block)).error().code, ErrorCode::kInvalidBlock);
}

TEST(MerkleRoot, DependsOnEveryLeafAndItsPosition) {
    const Hash256 a = crypto::sha256(asBytes("a"));
    const Hash256 b = crypto::sha256(asBytes("b"));
    const Hash256 c = crypto::sha256(asBytes("c"));
    EXPECT_EQ(merkleRoot({}), Hash256{});
    EXPECT_NE(merkleRoot({a}), a);
    EXPECT_NE(merkleRoot({a, b}), merkleRoot({b, a}));
    EXPECT_NE(merkleRoot({a, b, c}), merkleRoot({a, b, c, c}));
    EXPECT_NE(merkleRoot({a, b, c}), merkleRoot({a, b}));
}

TEST(ReceiptCodec, RoundTripsEvents) {
    Receipt receipt;
    receipt.txHash = crypto::sha256(asBytes("tx"));
    receipt.height = 9;
    receipt.index = 2;
    receipt.code = ErrorCode::kInsufficientBalance;
    receipt.events.push_back(Event{"transfer", {{"from", "0x01"}, {"amount", "5"}}});
    auto decoded = decodeReceipt(encodeReceipt(receipt));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, receipt);
}

TEST(VoteCodec, RoundTrips) {
    Vote vote{3, 9, crypto::sha256(asBytes("b")), PubKey{}, Signature{}};
    vote.signature[0] = 7;
    auto decoded = decodeVote(encodeVote(vote));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, vote);
    Timeout timeout{3, 9, QuorumCert{3, 8, vote.blockId, {1}, {Signature{}}}, PubKey{},
                    Signature{}};
    auto decodedTimeout = decodeTimeout(encodeTimeout(timeout));
    ASSERT_TRUE(decodedTimeout);
    EXPECT_EQ(*decodedTimeout, timeout);
}

}  // namespace
}  // namespace gridledger::codec
