#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/proto/chain.pb.h>

#include "../../../base/codec/tx_body.h"

namespace gridledger::codec::codec_test {
namespace {

/** The signing domain of a test chain: "gridledger-test" with an arbitrary genesis hash. */
const std::string kDomain = crypto::chainDomain("gridledger-test", crypto::sha256(asBytes("g")));

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
    const SignedTx tx = signTx(transferBody(key, 7), key, kDomain);
    auto decoded = decodeTx(tx.raw);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->hash, crypto::sha256(tx.raw));
    EXPECT_EQ(decoded->body.nonce, 7U);
    EXPECT_EQ(decoded->sender, crypto::addressOf(key.publicKey()));
    const auto& transfer = std::get<Transfer>(decoded->body.payload);
    EXPECT_TRUE(transfer.amount == u128{12345});
    EXPECT_TRUE(verifyTxSignature(*decoded, kDomain));
}

TEST(TxCodec, ASignatureHoldsOnlyOnTheGenesisItWasMadeFor) {
    // Two chains that share a chain id (every `init` names its chain gridledger-dev) but not a
    // genesis: a transaction of one is not valid on the other.
    const auto key = crypto::SecretKey::generate();
    const std::string ours = crypto::chainDomain("gridledger-dev", crypto::sha256(asBytes("a")));
    const std::string theirs = crypto::chainDomain("gridledger-dev", crypto::sha256(asBytes("b")));
    TxBody body = transferBody(key, 0);
    body.chainId = "gridledger-dev";
    const SignedTx tx = signTx(body, key, ours);
    const auto decoded = decodeTx(tx.raw);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_TRUE(verifyTxSignature(*decoded, ours));
    EXPECT_FALSE(verifyTxSignature(*decoded, theirs));
    // Nor does the chain id alone, the digest that signatures covered before the genesis was
    // bound, verify.
    EXPECT_FALSE(verifyTxSignature(*decoded, "gridledger-dev"));
}

TEST(TxCodec, AnyFlippedByteBreaksDecodingOrTheSignature) {
    const auto key = crypto::SecretKey::generate();
    const SignedTx tx = signTx(transferBody(key, 1), key, kDomain);
    for (std::size_t i = 0; i < tx.raw.size(); ++i) {
        Bytes bad = tx.raw;
        bad[i] ^= 0x01;
        auto decoded = decodeTx(bad);
        EXPECT_TRUE(!decoded || !verifyTxSignature(*decoded, kDomain)) << "byte " << i;
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

/** Whether two bodies are the same, field by field. */
bool sameBody(const TxBody& a, const TxBody& b) {
    return a.chainId == b.chainId && a.sender == b.sender && a.nonce == b.nonce &&
           a.validUntilHeight == b.validUntilHeight && a.fee == b.fee && a.payload == b.payload;
}

/** Bodies of transfers with each number zero (left out of the encoding), small, or the largest. */
std::vector<TxBody> transferBodies() {
    std::mt19937_64 rng(7);
    const std::array<std::uint64_t, 4> numbers = {0, 1, 300, ~std::uint64_t{0}};
    std::vector<TxBody> out;
    for (std::size_t i = 0; i < 64; ++i) {
        TxBody body;
        body.chainId = std::vector<std::string>{"", "gridledger-dev", std::string(200, 'c')}[i % 3];
        body.sender = crypto::SecretKey::generate().publicKey();
        body.nonce = numbers[i % 4];
        body.validUntilHeight = numbers[(i / 4) % 4];
        body.fee = numbers[(i / 16) % 4];
        Address to;
        for (std::size_t k = 0; k < Address::kSize; ++k) {
            to[k] = static_cast<std::uint8_t>(rng());
        }
        const u128 amount = i % 2 == 0 ? u128{0} : (u128{rng()} << 64U) | rng();
        body.payload = Transfer{to, amount};
        out.push_back(body);
    }
    return out;
}

TEST(TxBodyCodec, TransfersAreReadStraightFromTheirBytesAsProtobufReadsThem) {
    for (const TxBody& body : transferBodies()) {
        const Bytes bytes = encodeTxBody(body);
        const std::optional<TxBody> straight = detail::transferBodyOf(bytes);
        ASSERT_TRUE(straight) << "a canonical transfer is read without protobuf: " << toHex(bytes);
        EXPECT_TRUE(sameBody(*straight, body));
        const auto throughProto = detail::bodyThroughProto(bytes);
        ASSERT_TRUE(throughProto) << throughProto.error().message;
        EXPECT_TRUE(sameBody(*throughProto, body));
    }
    // Other payloads are left to protobuf.
    TxBody cancel = transferBodies().front();
    cancel.payload = TaskCancel{crypto::sha256(asBytes("task"))};
    EXPECT_FALSE(detail::transferBodyOf(encodeTxBody(cancel)));
    EXPECT_TRUE(detail::bodyThroughProto(encodeTxBody(cancel)));
}

TEST(TxBodyCodec, NoChangedTransferIsReadStraightUnlessProtobufReadsItTheSame) {
    // Every byte of a few encoded transfers replaced, dropped, or preceded by another: whatever
    // the straight reader takes, protobuf takes too, as the same body, so a body never has two
    // readings and the canonical-encoding rules hold on both paths.
    const std::array<std::uint8_t, 8> values = {0x00, 0x01, 0x02, 0x0a, 0x12, 0x7f, 0x80, 0xff};
    std::size_t straight = 0;
    std::size_t checked = 0;
    const auto check = [&](const Bytes& bytes) {
        ++checked;
        const std::optional<TxBody> read = detail::transferBodyOf(bytes);
        if (!read) {
            return;
        }
        ++straight;
        const auto throughProto = detail::bodyThroughProto(bytes);
        ASSERT_TRUE(throughProto) << toHex(bytes) << ": " << throughProto.error().message;
        EXPECT_TRUE(sameBody(*read, *throughProto)) << toHex(bytes);
    };
    const std::vector<TxBody> bodies = transferBodies();
    for (std::size_t b = 0; b < bodies.size(); b += 5) {
        const Bytes bytes = encodeTxBody(bodies[b]);
        for (std::size_t i = 0; i <= bytes.size(); ++i) {
            for (const std::uint8_t value : values) {
                if (i < bytes.size()) {
                    Bytes changed = bytes;
                    changed[i] = value;
                    check(changed);
                    changed[i] = bytes[i] ^ 0x80U;
                    check(changed);
                }
                Bytes inserted = bytes;
                inserted.insert(inserted.begin() + static_cast<std::ptrdiff_t>(i), value);
                check(inserted);
            }
            check(Bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(i)));
        }
    }
    // The changes that keep a canonical transfer (a byte of the key, the address, the amount)
    // are read straight; the others were all checked against protobuf.
    EXPECT_GT(straight, checked / 10);
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

TEST(BlockCodec, WritesTheBytesLibprotobufWritesForTheSameMessage) {
    const auto throughProtobuf = [](const Block& block) {
        proto::Block pb;
        pb.set_header(toString(block.headerBytes));
        for (const auto& tx : block.txs) {
            pb.add_txs(toString(tx));
        }
        pb.set_signature(toString(block.signature.view()));
        std::string out;
        EXPECT_TRUE(pb.SerializeToString(&out));
        return out;
    };
    std::mt19937_64 rng(5);
    const auto bytes = [&rng](std::size_t length) {
        Bytes out(length);
        for (auto& b : out) {
            b = static_cast<std::uint8_t>(rng());
        }
        return out;
    };
    std::vector<Block> blocks;
    blocks.emplace_back();  // no header bytes, no transaction, a zero signature
    Block edges;
    edges.headerBytes = bytes(90);
    edges.txs = {Bytes{}, bytes(1), bytes(127), bytes(128), bytes(16383), bytes(16384)};
    edges.signature[0] = 1;
    blocks.push_back(edges);
    for (int i = 0; i < 50; ++i) {
        Block block;
        block.headerBytes = bytes(rng() % 300);
        for (std::size_t t = rng() % 200; t > 0; --t) {
            block.txs.push_back(bytes(rng() % 400));
        }
        block.signature[rng() % Signature::size()] = static_cast<std::uint8_t>(rng());
        blocks.push_back(std::move(block));
    }
    for (const auto& block : blocks) {
        ASSERT_EQ(toString(encodeBlock(block)), throughProtobuf(block)) << block.txs.size();
    }
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

/** proto::Receipt's own encoding of `receipt`, made by libprotobuf. */
std::string throughProtobuf(const Receipt& receipt) {
    proto::Receipt pb;
    pb.set_tx_hash(toString(receipt.txHash.view()));
    pb.set_height(receipt.height);
    pb.set_index(receipt.index);
    pb.set_code(static_cast<std::uint32_t>(receipt.code));
    pb.set_fee(receipt.fee);
    for (const auto& event : receipt.events) {
        auto* e = pb.add_events();
        e->set_kind(event.kind);
        for (const auto& [key, value] : event.attributes) {
            e->add_keys(key);
            e->add_values(value);
        }
    }
    std::string out;
    EXPECT_TRUE(pb.SerializeToString(&out));
    return out;
}

TEST(ReceiptCodec, WritesTheBytesLibprotobufWritesForTheSameMessage) {
    std::vector<Receipt> receipts;
    receipts.emplace_back();  // every scalar zero, no event
    Receipt edges;
    edges.txHash = crypto::sha256(asBytes("edges"));
    edges.height = std::numeric_limits<std::uint64_t>::max();
    edges.index = std::numeric_limits<std::uint32_t>::max();
    edges.code = ErrorCode::kInsufficientBalance;
    edges.fee = 300;
    edges.events.emplace_back();                               // an event with nothing in it
    edges.events.push_back(Event{"", {{"", ""}, {"k", ""}}});  // no kind, empty attributes
    edges.events.push_back(Event{"long", {{"a", std::string(200, 'x')}}});      // 2-byte lengths
    edges.events.push_back(Event{"longer", {{"b", std::string(20000, 'y')}}});  // 3-byte lengths
    receipts.push_back(edges);

    std::mt19937_64 rng(11);
    const auto text = [&rng](std::size_t maxLength) {
        std::string out(rng() % (maxLength + 1), ' ');
        for (char& c : out) {
            c = static_cast<char>(' ' + rng() % 95);  // printable ASCII, so that it decodes
        }
        return out;
    };
    for (int i = 0; i < 500; ++i) {
        Receipt receipt;
        receipt.txHash = crypto::sha256(asBytes(text(8)));
        receipt.height = rng() >> (rng() % 64);
        receipt.index = static_cast<std::uint32_t>(rng() >> (32 + rng() % 32));
        receipt.code = static_cast<ErrorCode>(rng() % 3 == 0 ? 0 : rng() % 0x10000);
        receipt.fee = rng() % 2 == 0 ? 0 : rng() >> (rng() % 64);
        for (std::size_t e = rng() % 4; e > 0; --e) {
            Event event{text(12), {}};
            for (std::size_t a = rng() % 5; a > 0; --a) {
                event.attributes.emplace_back(text(10), text(rng() % 8 == 0 ? 300 : 70));
            }
            receipt.events.push_back(std::move(event));
        }
        receipts.push_back(std::move(receipt));
    }

    for (const auto& receipt : receipts) {
        const Bytes encoded = encodeReceipt(receipt);
        ASSERT_EQ(toString(encoded), throughProtobuf(receipt)) << receipt.height;
        auto decoded = decodeReceipt(encoded);
        ASSERT_TRUE(decoded) << decoded.error().message;
        EXPECT_EQ(*decoded, receipt);
    }
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

// ---- one encoding per message ----

/** `value` as a protobuf varint, padded with `extra` redundant continuation bytes. */
Bytes varint(std::uint64_t value, std::size_t extra = 0) {
    Bytes out;
    while (value >= 0x80) {
        out.push_back(static_cast<std::uint8_t>((value & 0x7fU) | 0x80U));
        value >>= 7U;
    }
    out.push_back(static_cast<std::uint8_t>(value));
    if (extra > 0) {
        out.back() |= 0x80U;
        out.insert(out.end(), extra - 1, std::uint8_t{0x80});
        out.push_back(0x00);
    }
    return out;
}

/** A length-delimited field `number` holding `bytes` (length varint padded by `extra`). */
Bytes lengthField(std::uint32_t number, ByteView bytes, std::size_t extra = 0) {
    Bytes out{static_cast<std::uint8_t>((number << 3U) | 2U)};
    append(out, varint(bytes.size(), extra));
    append(out, bytes);
    return out;
}

/** `raw` with its first tag byte written as a two-byte varint of the same value. */
Bytes overlongFirstTag(ByteView raw) {
    Bytes out{static_cast<std::uint8_t>(raw[0] | 0x80U), 0x00};
    out.insert(out.end(), raw.begin() + 1, raw.end());
    return out;
}

TEST(CanonicalEncoding, TheVarintHelperPadsWithRedundantContinuationBytes) {
    EXPECT_EQ(varint(5), (Bytes{0x05}));
    EXPECT_EQ(varint(5, 1), (Bytes{0x85, 0x00}));
    EXPECT_EQ(varint(300), (Bytes{0xac, 0x02}));
    EXPECT_EQ(varint(300, 1), (Bytes{0xac, 0x82, 0x00}));
}

TEST(CanonicalEncoding, ARelayedTransactionCannotBeReencodedUnderAnotherHash) {
    const auto key = crypto::SecretKey::generate();
    const SignedTx tx = signTx(transferBody(key, 3), key, kDomain);
    const Bytes body = lengthField(1, tx.bodyBytes);
    const Bytes sig = lengthField(2, tx.signature.view());
    Bytes canonical = body;
    append(canonical, sig);
    ASSERT_EQ(canonical, tx.raw) << "the fields rebuilt by hand are the signed transaction";
    ASSERT_TRUE(decodeTx(canonical));

    Bytes reordered = sig;
    append(reordered, body);
    Bytes repeated = lengthField(2, Signature{}.view());
    append(repeated, canonical);  // a later field wins in protobuf: the real signature
    Bytes overlongLength = lengthField(1, tx.bodyBytes, 1);
    append(overlongLength, sig);
    Bytes unknownBytesField = canonical;
    append(unknownBytesField, lengthField(3, Bytes{1}));
    Bytes unknownVarintField = canonical;
    append(unknownVarintField, Bytes{0x18, 0x01});  // field 3, varint 1
    const Bytes cutShort(canonical.begin(), canonical.end() - 1);
    const std::vector<std::pair<std::string, Bytes>> variants{
        {"fields reordered", reordered},
        {"a field repeated", repeated},
        {"an over-long length", overlongLength},
        {"an over-long tag", overlongFirstTag(canonical)},
        {"an unknown length-delimited field", unknownBytesField},
        {"an unknown varint field", unknownVarintField},
        {"the last field cut short", cutShort}};
    for (const auto& [what, raw] : variants) {
        SCOPED_TRACE(what);
        ASSERT_NE(crypto::sha256(raw), tx.hash);
        const auto decoded = decodeTx(raw);
        ASSERT_FALSE(decoded) << "the same signed body under another hash";
        EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
    }
}

TEST(CanonicalEncoding, AnEmptyFieldWrittenOutIsRefusedWhereLeavingItOutIsNot) {
    const Bytes sig = lengthField(2, Signature{}.view());
    // Without a body the transaction is well encoded; it fails on the sender key it lacks.
    const auto withoutBody = decodeTx(sig);
    ASSERT_FALSE(withoutBody);
    EXPECT_EQ(withoutBody.error().code, ErrorCode::kBadLength);
    // The same transaction with its empty body written out has a second encoding: refused.
    Bytes emptyBody = lengthField(1, Bytes{});
    append(emptyBody, sig);
    const auto decoded = decodeTx(emptyBody);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
}

TEST(CanonicalEncoding, ASignedBodyInANonCanonicalEncodingIsRefused) {
    // Even the signer cannot give one body two encodings: an explicit zero field is refused.
    const auto key = crypto::SecretKey::generate();
    const TxBody body = transferBody(key, 0);
    Bytes bodyBytes = encodeTxBody(body);
    append(bodyBytes, Bytes{0x28, 0x00});  // field 5 (fee) = 0, which the canonical form omits
    const Signature sig = key.sign(crypto::signingDigest(crypto::kTxTag, kDomain, bodyBytes));
    Bytes raw = lengthField(1, bodyBytes);
    append(raw, lengthField(2, sig.view()));
    const auto decoded = decodeTx(raw);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
}

TEST(CanonicalEncoding, BlocksAndConsensusMessagesAcceptOnlyTheirCanonicalEncoding) {
    const auto key = crypto::SecretKey::generate();
    BlockHeader header;
    header.height = 4;
    header.round = 5;
    header.timestampMs = 6;
    const Block block = makeBlock(header, {signTx(transferBody(key, 0), key, kDomain).raw});
    const Bytes blockBytes = encodeBlock(block);
    ASSERT_TRUE(decodeBlock(blockBytes));
    EXPECT_FALSE(decodeBlock(overlongFirstTag(blockBytes)));

    Vote vote{3, 9, crypto::sha256(asBytes("b")), key.publicKey(), Signature{}};
    vote.signature[0] = 7;
    const Bytes voteBytes = encodeVote(vote);
    ASSERT_TRUE(decodeVote(voteBytes));
    EXPECT_FALSE(decodeVote(overlongFirstTag(voteBytes)));
    Bytes twice = voteBytes;
    append(twice, voteBytes);  // every field twice: the values are the same, the bytes are not
    EXPECT_FALSE(decodeVote(twice));

    const QuorumCert qc{3, 8, vote.blockId, {1}, {Signature{}}};
    const Bytes qcBytes = encodeQc(qc);
    ASSERT_TRUE(decodeQc(qcBytes));
    EXPECT_FALSE(decodeQc(overlongFirstTag(qcBytes)));
}

TEST(CanonicalEncoding, AnUnknownFieldInANestedMessageIsRefused) {
    // A commit proof whose quorum certificate carries a field 13 that QuorumCert does not have:
    // the bytes would decode to the proof that the canonical bytes hold, so both are refused.
    BlockHeader header;
    header.height = 4;
    header.round = 5;
    const Block child = makeBlock(header, {});
    const QuorumCert qc{3, 8, child.id, {1}, {Signature{}}};
    Bytes qcBytes = encodeQc(qc);
    Bytes canonical = lengthField(1, child.headerBytes);
    append(canonical, lengthField(2, qcBytes));
    const auto proof = decodeCommitProof(canonical);
    ASSERT_TRUE(proof) << proof.error().message;
    ASSERT_EQ(encodeCommitProof(*proof), canonical) << "the fields rebuilt by hand are the proof";

    append(qcBytes, lengthField(13, Signature{}.view()));
    EXPECT_FALSE(decodeQc(qcBytes));
    Bytes withUnknown = lengthField(1, child.headerBytes);
    append(withUnknown, lengthField(2, qcBytes));
    const auto decoded = decodeCommitProof(withUnknown);
    ASSERT_FALSE(decoded) << "one proof under two encodings";
    EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
}

}  // namespace
}  // namespace gridledger::codec::codec_test
