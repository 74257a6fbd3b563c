#include <atomic>
#include <cstddef>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/crypto/ed25519.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::crypto::crypto_test {
namespace {

TEST(Sha256, MatchesTheFipsVector) {
    EXPECT_EQ(sha256(asBytes("abc")).hex(),
              "0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    Sha256 h;
    h.update("a").update("bc");
    EXPECT_EQ(h.finish(), sha256(asBytes("abc")));
}

// FIPS 180-2's other vectors: the empty message, a message whose padding takes a second block,
// and a million 'a's fed in pieces that straddle the 64-byte blocks.
TEST(Sha256, MatchesTheFipsVectorsAcrossBlocks) {
    EXPECT_EQ(sha256({}).hex(),
              "0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const std::string twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ(sha256(asBytes(twoBlocks)).hex(),
              "0x248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const std::string million(1'000'000, 'a');
    const std::string_view all = million;
    Sha256 pieces;
    for (std::size_t at = 0, step = 1; at < all.size(); at += step, step = step % 97 + 1) {
        pieces.update(all.substr(at, step));
    }
    const std::string expected =
        "0xcdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    EXPECT_EQ(pieces.finish().hex(), expected);
    EXPECT_EQ(sha256(asBytes(million)).hex(), expected);
}

TEST(Schnorr, MatchesBip340TestVector0) {
    // BIP-340 test vector 0: secret key 3, zero message, zero aux randomness. Signing uses fresh
    // aux randomness, so only the public key and the verification of the published signature apply.
    auto secret = fromHex("0x0000000000000000000000000000000000000000000000000000000000000003");
    auto key = SecretKey::fromBytes(*secret);
    ASSERT_TRUE(key);
    EXPECT_EQ(key->publicKey().hex(),
              "0xf9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9");
    auto sig = Signature::fromHex(
        "0xe907831f80848d1069a5371b402410364bdf1c5f8307b0084c55f1ce2dca821525f66a4a85ea8b71e482a74f"
        "382d2ce5ebeee8fdb2172f477df4900d310536c0");
    ASSERT_TRUE(sig);
    EXPECT_TRUE(verify(key->publicKey(), Hash256{}, *sig));
}

TEST(Schnorr, SignatureFailsForAnotherDigestKeyOrFlippedBit) {
    const SecretKey key = SecretKey::generate();
    const SecretKey other = SecretKey::generate();
    const Hash256 digest = signingDigest(kTxTag, "dev", asBytes("body"));
    Signature sig = key.sign(digest);
    EXPECT_TRUE(verify(key.publicKey(), digest, sig));
    EXPECT_FALSE(verify(other.publicKey(), digest, sig));
    EXPECT_FALSE(verify(key.publicKey(), signingDigest(kVoteTag, "dev", asBytes("body")), sig));
    EXPECT_FALSE(verify(key.publicKey(), signingDigest(kTxTag, "dev2", asBytes("body")), sig));
    sig[10] ^= 0x01;
    EXPECT_FALSE(verify(key.publicKey(), digest, sig));
}

TEST(Schnorr, RecurringSignerAnswersAsTheFullCheckEveryTime) {
    const SecretKey key = SecretKey::generate();
    const SecretKey other = SecretKey::generate();
    const Hash256 digest = signingDigest(kTxTag, "dev", asBytes("body"));
    const Signature sig = key.sign(digest);
    Signature flipped = sig;
    flipped[40] ^= 0x01;
    // BIP-340 test vector 5: an x coordinate with no point on the curve.
    const auto offCurve =
        PubKey::fromHex("0xeefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34");
    ASSERT_TRUE(offCurve);
    // The first round lifts each key; the later ones use the kept points.
    for (int round = 0; round < 3; ++round) {
        SCOPED_TRACE(round);
        EXPECT_TRUE(verifyRecurringSigner(key.publicKey(), digest, sig));
        EXPECT_FALSE(verifyRecurringSigner(other.publicKey(), digest, sig));
        EXPECT_FALSE(verifyRecurringSigner(key.publicKey(), digest, flipped));
        EXPECT_FALSE(verifyRecurringSigner(key.publicKey(),
                                           signingDigest(kTxTag, "dev2", asBytes("body")), sig));
        EXPECT_FALSE(verifyRecurringSigner(*offCurve, digest, sig));
        EXPECT_FALSE(verify(*offCurve, digest, sig));
    }
}

/** `count` fresh keys and each one's signature of `digest`. */
std::pair<std::vector<PubKey>, std::vector<Signature>> signersOf(std::size_t count,
                                                                 const Hash256& digest) {
    std::vector<PubKey> keys;
    std::vector<Signature> sigs;
    for (std::size_t i = 0; i < count; ++i) {
        const SecretKey key = SecretKey::generate();
        keys.push_back(key.publicKey());
        sigs.push_back(key.sign(digest));
    }
    return {keys, sigs};
}

TEST(Schnorr, RecurringSignerAnswersRightPastTheKeysItKeeps) {
    // More signers than the 4,096 points kept: the oldest are forgotten and lifted again.
    constexpr std::size_t kSigners = 4'200;
    const Hash256 digest = signingDigest(kTxTag, "dev", asBytes("body"));
    const auto [keys, sigs] = signersOf(kSigners, digest);
    std::size_t wrong = 0;
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < kSigners; ++i) {
            wrong += verifyRecurringSigner(keys[i], digest, sigs[i]) ? 0U : 1U;
            wrong += verifyRecurringSigner(keys[i], digest, sigs[(i + 1) % kSigners]) ? 1U : 0U;
        }
    }
    EXPECT_EQ(wrong, 0U);
}

TEST(Schnorr, RecurringSignerAnswersRightFromManyThreads) {
    constexpr std::size_t kSigners = 64;
    const Hash256 digest = signingDigest(kTxTag, "dev", asBytes("body"));
    const auto [keys, sigs] = signersOf(kSigners, digest);
    std::atomic<std::size_t> wrong{0};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (std::size_t n = 0; n < 2 * kSigners; ++n) {
                const std::size_t i = (n + t * 16) % kSigners;
                const bool own = verifyRecurringSigner(keys[i], digest, sigs[i]);
                const bool foreign =
                    verifyRecurringSigner(keys[i], digest, sigs[(i + 1) % kSigners]);
                if (!own || foreign) {
                    wrong.fetch_add(1);
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(wrong.load(), 0U);
}

TEST(Schnorr, RejectsOutOfRangeSecret) {
    Bytes zero(32, 0);
    EXPECT_FALSE(SecretKey::fromBytes(zero));
    Bytes max(32, 0xff);
    EXPECT_FALSE(SecretKey::fromBytes(max));
}

TEST(SigningDigest, LengthPrefixesKeepTagAndChainApart) {
    EXPECT_NE(signingDigest("ab", "c", {}), signingDigest("a", "bc", {}));
    EXPECT_NE(signingDigest(kTxTag, "a", asBytes("b")), signingDigest(kTxTag, "ab", {}));
}

TEST(Ed25519, MatchesRfc8032TestVector1) {
    auto seed = fromHex("0x9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    auto key = NodeKey::fromSeed(*seed);
    ASSERT_TRUE(key);
    EXPECT_EQ(key->publicKey().hex(),
              "0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    const auto sig = key->sign({});
    EXPECT_EQ(sig.hex(),
              "0xe5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc6"
              "1e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
    EXPECT_TRUE(verifyEd25519(key->publicKey(), {}, sig));
    EXPECT_FALSE(verifyEd25519(key->publicKey(), asBytes("x"), sig));
}

}  // namespace
}  // namespace gridledger::crypto::crypto_test
