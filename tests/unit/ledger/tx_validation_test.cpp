#include <limits>
#include <optional>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/ledger/tx_validation.h>

namespace gridledger::ledger::tx_validation_test {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

struct TransferSpec {
    std::uint64_t nonce = 0;
    std::uint64_t validUntil = 100;
    u128 amount = 1;
    std::optional<Address> to;
    std::string chainId = "gridledger-test";
};

codec::SignedTx signedTransfer(const crypto::SecretKey& key, const TransferSpec& spec) {
    codec::TxBody body;
    body.chainId = spec.chainId;
    body.sender = key.publicKey();
    body.nonce = spec.nonce;
    body.validUntilHeight = spec.validUntil;
    Address other;
    other[0] = 0x42;
    body.payload = codec::Transfer{spec.to.value_or(other), spec.amount};
    return codec::signTx(body, key, crypto::chainDomain(spec.chainId, Hash256{}));
}

TxRules testRules() {
    TxRules rules;
    rules.chainId = "gridledger-test";
    rules.nextHeight = 10;
    rules.maxValidityBlocks = 1000;
    return rules;
}

ErrorCode codeOf(const Status& status) {
    return status ? ErrorCode::kOk : status.error().code;
}

class CheckShapeTest : public ::testing::Test {
  protected:
    crypto::SecretKey key_ = crypto::SecretKey::generate();
};

TEST_F(CheckShapeTest, AcceptsAWellFormedTransfer) {
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, {}), testRules())), ErrorCode::kOk);
}

TEST_F(CheckShapeTest, RefusesAnotherChainIdWithWrongChainId) {
    TransferSpec spec;
    spec.chainId = "gridledger-other";
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())),
              ErrorCode::kWrongChainId);
}

TEST_F(CheckShapeTest, RefusesATxAboveTheConfiguredSizeWithTxTooLarge) {
    const codec::SignedTx tx = signedTransfer(key_, {});
    TxRules rules = testRules();
    rules.maxTxBytes = tx.raw.size();
    EXPECT_EQ(codeOf(checkShape(tx, rules)), ErrorCode::kOk);
    rules.maxTxBytes = tx.raw.size() - 1;
    EXPECT_EQ(codeOf(checkShape(tx, rules)), ErrorCode::kTxTooLarge);
}

TEST_F(CheckShapeTest, NeverAcceptsMoreThanTheCodecLimitWhateverTheConfiguration) {
    codec::SignedTx tx = signedTransfer(key_, {});
    tx.raw.resize(codec::kMaxTxBytes + 1);
    TxRules rules = testRules();
    rules.maxTxBytes = 10 * codec::kMaxTxBytes;
    EXPECT_EQ(codeOf(checkShape(tx, rules)), ErrorCode::kTxTooLarge);
}

TEST_F(CheckShapeTest, RefusesATransferOfZeroWithZeroAmount) {
    TransferSpec spec;
    spec.amount = 0;
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())), ErrorCode::kZeroAmount);
}

TEST_F(CheckShapeTest, RefusesATransferToTheSenderWithSelfTransfer) {
    TransferSpec spec;
    spec.to = crypto::addressOf(key_.publicKey());
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())),
              ErrorCode::kSelfTransfer);
}

TEST_F(CheckShapeTest, ExpiresBelowTheNextHeightButStillValidAtIt) {
    TransferSpec spec;
    spec.validUntil = 9;  // next height is 10
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())), ErrorCode::kExpired);
    spec.validUntil = 10;
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())), ErrorCode::kOk);
}

TEST_F(CheckShapeTest, RefusesAnExpiryBeyondTheValidityHorizonWithInvalidArgument) {
    TransferSpec spec;
    spec.validUntil = 10 + 1000;
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())), ErrorCode::kOk);
    spec.validUntil = 10 + 1001;
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), testRules())),
              ErrorCode::kInvalidArgument);
}

TEST_F(CheckShapeTest, TheValidityHorizonSaturatesInsteadOfWrapping) {
    TxRules rules = testRules();
    rules.nextHeight = kMax - 5;
    TransferSpec spec;
    spec.validUntil = kMax;
    EXPECT_EQ(codeOf(checkShape(signedTransfer(key_, spec), rules)), ErrorCode::kOk);
}

TEST(CheckNonce, AcceptsTheNextNonceAndAnyFreeNonceInsideTheWindow) {
    const PendingNonces pending{{5, Hash256{}}};
    EXPECT_EQ(codeOf(checkNonce(4, 4, pending, 64)), ErrorCode::kOk);
    EXPECT_EQ(codeOf(checkNonce(6, 4, pending, 64)), ErrorCode::kOk);
    EXPECT_EQ(codeOf(checkNonce(4 + 63, 4, pending, 64)), ErrorCode::kOk);
}

TEST(CheckNonce, RefusesAnAlreadyUsedNonceWithNonceTooLow) {
    EXPECT_EQ(codeOf(checkNonce(3, 4, {}, 64)), ErrorCode::kNonceTooLow);
    EXPECT_EQ(codeOf(checkNonce(0, 1, {}, 64)), ErrorCode::kNonceTooLow);
}

TEST(CheckNonce, RefusesANonceHeldByAnotherPendingTxWithNonceTaken) {
    const PendingNonces pending{{4, Hash256{}}, {6, Hash256{}}};
    EXPECT_EQ(codeOf(checkNonce(4, 4, pending, 64)), ErrorCode::kNonceTaken);
    EXPECT_EQ(codeOf(checkNonce(6, 4, pending, 64)), ErrorCode::kNonceTaken);
}

TEST(CheckNonce, RefusesANonceBeyondTheWindowWithNonceGap) {
    EXPECT_EQ(codeOf(checkNonce(4 + 64, 4, {}, 64)), ErrorCode::kNonceGap);
    EXPECT_EQ(codeOf(checkNonce(1'000'000, 4, {}, kDefaultNonceWindow)), ErrorCode::kNonceGap);
    EXPECT_EQ(codeOf(checkNonce(4, 4, {}, 0)), ErrorCode::kNonceGap);
}

TEST(CheckNonce, TheWindowSaturatesNearTheTopOfTheRange) {
    EXPECT_EQ(codeOf(checkNonce(kMax - 1, kMax - 10, {}, 64)), ErrorCode::kOk);
    EXPECT_EQ(codeOf(checkNonce(kMax, kMax - 10, {}, 64)), ErrorCode::kNonceGap);
    EXPECT_EQ(codeOf(checkNonce(0, kMax - 10, {}, 64)), ErrorCode::kNonceTooLow);
}

}  // namespace
}  // namespace gridledger::ledger::tx_validation_test
