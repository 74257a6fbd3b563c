#include <gtest/gtest.h>

#include <gridledger/crypto/sealed_box.h>

namespace gridledger::crypto::sealed_box_test {
namespace {

// The smallest cost checkScryptParams accepts keeps these tests fast; the parameters travel
// with the box, so opening does not depend on the defaults.
constexpr ScryptParams kCheap{.n = 1024, .r = 8, .p = 1};

Bytes secretBytes() {
    Bytes secret(32);
    for (std::size_t i = 0; i < secret.size(); ++i) {
        secret[i] = static_cast<std::uint8_t>(0xA0 + i);
    }
    return secret;
}

TEST(SealedBox, OpensWithThePassphraseAndAssociatedDataItWasSealedWith) {
    const auto box = seal(secretBytes(), "correct horse", asBytes("account:dev"), kCheap);
    ASSERT_TRUE(box) << box.error().message;
    EXPECT_EQ(box->salt.size(), kSealSaltBytes);
    EXPECT_EQ(box->nonce.size(), kSealNonceBytes);
    EXPECT_EQ(box->tag.size(), kSealTagBytes);
    EXPECT_NE(box->ciphertext, secretBytes());
    const auto opened = open(*box, "correct horse", asBytes("account:dev"));
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(*opened, secretBytes());
}

TEST(SealedBox, EverySealUsesAFreshSaltAndNonce) {
    const auto a = seal(secretBytes(), "pw", asBytes("x"), kCheap);
    const auto b = seal(secretBytes(), "pw", asBytes("x"), kCheap);
    ASSERT_TRUE(a && b);
    EXPECT_NE(a->salt, b->salt);
    EXPECT_NE(a->nonce, b->nonce);
    EXPECT_NE(a->ciphertext, b->ciphertext);
}

TEST(SealedBox, AWrongPassphraseOrOtherAssociatedDataDoesNotAuthenticate) {
    const auto box = seal(secretBytes(), "correct horse", asBytes("account:dev"), kCheap);
    ASSERT_TRUE(box);
    const auto wrong = open(*box, "correct horsf", asBytes("account:dev"));
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code, ErrorCode::kBadSignature);
    const auto renamed = open(*box, "correct horse", asBytes("account:validator"));
    ASSERT_FALSE(renamed);
    EXPECT_EQ(renamed.error().code, ErrorCode::kBadSignature);
}

TEST(SealedBox, AnyAlteredByteFailsCleanly) {
    const auto box = seal(secretBytes(), "pw", asBytes("node:node"), kCheap);
    ASSERT_TRUE(box);
    for (Bytes SealedBox::*field :
         {&SealedBox::salt, &SealedBox::nonce, &SealedBox::ciphertext, &SealedBox::tag}) {
        for (std::size_t i = 0; i < ((*box).*field).size(); ++i) {
            SealedBox altered = *box;
            (altered.*field)[i] ^= 0x01U;
            const auto opened = open(altered, "pw", asBytes("node:node"));
            ASSERT_FALSE(opened) << "byte " << i;
            EXPECT_EQ(opened.error().code, ErrorCode::kBadSignature);
        }
    }
    SealedBox otherCost = *box;
    otherCost.kdf.n = 2048;
    EXPECT_EQ(open(otherCost, "pw", asBytes("node:node")).error().code, ErrorCode::kBadSignature);
}

TEST(SealedBox, MalformedBoxesAndParametersAreRefused) {
    const auto box = seal(secretBytes(), "pw", asBytes("a"), kCheap);
    ASSERT_TRUE(box);
    SealedBox shortTag = *box;
    shortTag.tag.pop_back();
    EXPECT_EQ(open(shortTag, "pw", asBytes("a")).error().code, ErrorCode::kInvalidArgument);
    SealedBox noSalt = *box;
    noSalt.salt.clear();
    EXPECT_EQ(open(noSalt, "pw", asBytes("a")).error().code, ErrorCode::kInvalidArgument);

    EXPECT_TRUE(checkScryptParams({}));
    EXPECT_TRUE(checkScryptParams(kCheap));
    EXPECT_FALSE(checkScryptParams({.n = 1000, .r = 8, .p = 1}));  // not a power of two
    EXPECT_FALSE(checkScryptParams({.n = 512, .r = 8, .p = 1}));
    EXPECT_FALSE(checkScryptParams({.n = std::uint64_t{1} << 21U, .r = 8, .p = 1}));
    EXPECT_FALSE(checkScryptParams({.n = std::uint64_t{1} << 20U, .r = 16, .p = 1}));  // 2 GiB
    EXPECT_FALSE(checkScryptParams({.n = 1024, .r = 0, .p = 1}));
    EXPECT_FALSE(checkScryptParams({.n = 1024, .r = 8, .p = 0}));
    SealedBox huge = *box;
    huge.kdf.n = std::uint64_t{1} << 40U;
    EXPECT_EQ(open(huge, "pw", asBytes("a")).error().code, ErrorCode::kInvalidArgument);
}

TEST(SealedBox, TheDefaultCostRoundTrips) {
    const auto box = seal(secretBytes(), "pw", asBytes("a"));
    ASSERT_TRUE(box) << box.error().message;
    EXPECT_EQ(box->kdf, ScryptParams{});
    const auto opened = open(*box, "pw", asBytes("a"));
    ASSERT_TRUE(opened) << opened.error().message;
    EXPECT_EQ(*opened, secretBytes());
}

}  // namespace
}  // namespace gridledger::crypto::sealed_box_test
