// The transaction test vectors of tests/vectors/transactions.json (docs/encoding.md): every
// value the code computes today is the one in the file, so the file, the SDK that checks it and
// the node cannot drift apart.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "vectors/cases.h"

namespace gridledger::vectors::vectors_test {
namespace {

boost::json::object loadVectors() {
    std::ifstream in(std::string(GRIDLEDGER_SOURCE_DIR) + "/tests/vectors/transactions.json");
    std::stringstream text;
    text << in.rdbuf();
    return boost::json::parse(text.str()).as_object();
}

Bytes bytesAt(const boost::json::object& v, std::string_view key) {
    return fromHex(std::string(v.at(key).as_string())).value();
}

/** Protobuf's base-128 varint, as docs/encoding.md writes it out. */
void appendVarint(Bytes& out, std::uint64_t value) {
    while (value >= 0x80) {
        out.push_back(static_cast<std::uint8_t>((value & 0x7f) | 0x80));
        value >>= 7;
    }
    out.push_back(static_cast<std::uint8_t>(value));
}

TEST(Vectors, TheChainAndItsSigningDomain) {
    const boost::json::object file = loadVectors();
    EXPECT_EQ(file.at("chain_id").as_string(), kChainId);
    EXPECT_EQ(file.at("genesis_hash").as_string(), genesisHash().hex());
    EXPECT_EQ(file.at("tx_signing_tag").as_string(), crypto::kTxTag);
    // The domain is the chain id's bytes followed by the 32 bytes of the genesis hash.
    Bytes domain(kChainId.begin(), kChainId.end());
    append(domain, genesisHash().view());
    EXPECT_EQ(bytesAt(file, "signing_domain"), domain);
}

TEST(Vectors, EveryCaseIsWhatTheCodeComputes) {
    const boost::json::object file = loadVectors();
    const auto& all = file.at("vectors").as_array();
    const auto expected = cases();
    ASSERT_EQ(all.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const boost::json::object& v = all[k].as_object();
        SCOPED_TRACE(expected[k].name);
        // Keys, address, body, its bytes, the signing digest and the task id: recomputed here.
        const boost::json::object unsignedPart = unsignedVector(expected[k]);
        for (const auto& [key, value] : unsignedPart) {
            EXPECT_EQ(v.at(key), value) << key;
        }
        // The signature (drawn once, with BIP-340's auxiliary randomness) verifies.
        const auto signature = Signature::fromBytes(bytesAt(v, "signature")).value();
        const auto publicKey = PubKey::fromBytes(bytesAt(v, "public_key")).value();
        const auto digest = Hash256::fromBytes(bytesAt(v, "signing_digest")).value();
        EXPECT_TRUE(crypto::verify(publicKey, digest, signature));
        // The transaction: field 1 the body's bytes, field 2 the 64-byte signature.
        const Bytes body = bytesAt(v, "body_hex");
        Bytes tx{0x0a};
        appendVarint(tx, body.size());
        append(tx, body);
        tx.insert(tx.end(), {0x12, 0x40});
        append(tx, signature.view());
        EXPECT_EQ(bytesAt(v, "tx_hex"), tx);
        EXPECT_EQ(v.at("tx_hash").as_string(), crypto::sha256(tx).hex());
        // And the node's decoder reads it back to the same body, signature and hash.
        const auto decoded = codec::decodeTx(tx);
        ASSERT_TRUE(decoded.has_value()) << decoded.error().message;
        EXPECT_EQ(decoded->bodyBytes, body);
        EXPECT_EQ(decoded->signature, signature);
        EXPECT_EQ(decoded->hash.hex(), v.at("tx_hash").as_string());
        EXPECT_TRUE(
            codec::verifyTxSignature(*decoded, crypto::chainDomain(kChainId, genesisHash())));
    }
}

}  // namespace
}  // namespace gridledger::vectors::vectors_test
