// Fees: every applied transaction pays its offered fee to the reward pool; one that cannot pay
// changes nothing and is not indexed, so it may still execute later.

#include <gtest/gtest.h>

#include "chain_harness.h"

namespace gridledger::contracts::fees_test {
namespace {

using testing::Chain;
using testing::kDps;
using testing::kGenesisMs;
using testing::testKey;

/** A genesis with `funded` holding 100 DPS. */
Genesis fundedGenesis(const crypto::SecretKey& funded) {
    Genesis g = testing::shortEpochGenesis(1, 0);
    g.accounts.push_back(GenesisAccount{testing::addressOf(funded), 100 * kDps});
    return g;
}

/** `payload` from `key` at `nonce` offering `fee`, signed for `chain`'s genesis. */
Bytes signedTx(const Chain& chain, const crypto::SecretKey& key, std::uint64_t nonce,
               std::uint64_t fee, codec::Payload payload) {
    const codec::TxBody body{
        chain.genesis().chainId, key.publicKey(), nonce, 1'000'000, std::move(payload), fee};
    return codec::signTx(body, key, chain.domain()).raw;
}

codec::Transfer oneDpsTo(const crypto::SecretKey& key) {
    return codec::Transfer{testing::addressOf(key), kDps};
}

TEST(Fees, AnAppliedTransferPaysItsFeeToTheRewardPoolAndItsReceiptSaysHowMuch) {
    const auto alice = testKey(90);
    Chain chain(fundedGenesis(alice));
    const std::uint64_t fee = chain.params().fees.of(codec::Payload{oneDpsTo(testKey(91))});
    ASSERT_GT(fee, 0U);
    const u128 poolBefore = chain.tokenomics().emission.rewardPool;
    // Offering more than the kind's fee is allowed, and the whole offer is paid.
    const auto receipt =
        chain.block(kGenesisMs + 1, {signedTx(chain, alice, 0, fee + 7, oneDpsTo(testKey(91)))})
            .receipts.at(0);
    ASSERT_TRUE(receipt.success()) << reasonOf(receipt.code);
    EXPECT_EQ(receipt.fee, fee + 7);
    EXPECT_EQ(chain.account(testing::addressOf(alice)).balance, 100 * kDps - kDps - (fee + 7));
    EXPECT_EQ(chain.account(testing::addressOf(testKey(91))).balance, kDps);
    EXPECT_EQ(chain.tokenomics().emission.rewardPool, poolBefore + (fee + 7));
}

TEST(Fees, AFailedPayloadStillPaysItsFeeAndConsumesItsNonce) {
    const auto alice = testKey(90);
    Chain chain(fundedGenesis(alice));
    const codec::Transfer tooMuch{testing::addressOf(testKey(91)), 1'000 * kDps};
    const std::uint64_t fee = chain.params().fees.of(codec::Payload{tooMuch});
    const auto receipt =
        chain.block(kGenesisMs + 1, {signedTx(chain, alice, 0, fee, tooMuch)}).receipts.at(0);
    EXPECT_EQ(receipt.code, ErrorCode::kInsufficientBalance);
    EXPECT_EQ(receipt.fee, fee);
    const Account after = chain.account(testing::addressOf(alice));
    EXPECT_EQ(after.nonce, 1U);
    EXPECT_EQ(after.balance, 100 * kDps - fee);
    EXPECT_TRUE(*chain.blocks().locateTx(receipt.txHash)) << "a paid failure is committed";
}

TEST(Fees, TenThousandRegisterProviderFromUnfundedKeysWriteNothing) {
    Chain chain(testing::shortEpochGenesis(1, 0));
    const auto rootBefore = **chain.blocks().rootsAt(chain.height());
    const codec::Payload registration{testing::petaflopInventory(1)};
    const std::uint64_t fee = chain.params().fees.of(registration);
    std::vector<Bytes> txs;
    std::vector<Address> senders;
    for (int i = 0; i < 10'000; ++i) {
        const auto key = crypto::SecretKey::generate();
        txs.push_back(signedTx(chain, key, 0, fee, registration));
        senders.push_back(testing::addressOf(key));
    }
    const auto done = chain.block(kGenesisMs + 1, txs);
    ASSERT_EQ(done.receipts.size(), 10'000U);
    for (const auto& receipt : done.receipts) {
        ASSERT_EQ(receipt.code, ErrorCode::kInsufficientFee);
        ASSERT_EQ(receipt.fee, 0U);
        ASSERT_FALSE(*chain.blocks().locateTx(receipt.txHash));
    }
    EXPECT_EQ(done.roots.stateRoot, rootBefore.stateRoot) << "the state did not change at all";
    StateLayer state(chain.tree(), chain.height());
    for (const Address& sender : senders) {
        ASSERT_FALSE(*state.get(accountKey(sender)));
        ASSERT_FALSE(chain.provider(sender));
    }
}

TEST(Fees, AFeeBelowTheKindsFeeIsVoidAndTheSameTransactionMayStillExecuteLater) {
    const auto alice = testKey(90);
    Chain chain(fundedGenesis(alice));
    const codec::Payload transfer{oneDpsTo(testKey(91))};
    const std::uint64_t fee = chain.params().fees.of(transfer);
    const auto cheap =
        chain.block(kGenesisMs + 1, {signedTx(chain, alice, 0, fee - 1, transfer)}).receipts.at(0);
    EXPECT_EQ(cheap.code, ErrorCode::kFeeTooLow);
    EXPECT_EQ(chain.account(testing::addressOf(alice)).nonce, 0U);
    EXPECT_EQ(chain.account(testing::addressOf(alice)).balance, 100 * kDps);
    EXPECT_FALSE(*chain.blocks().locateTx(cheap.txHash));
}

TEST(Fees, ANonceGapInABlockIsNotIndexedAndTheSameTransactionCommitsLater) {
    const auto alice = testKey(90);
    Chain chain(fundedGenesis(alice));
    const codec::Payload transfer{oneDpsTo(testKey(91))};
    const std::uint64_t fee = chain.params().fees.of(transfer);
    const Bytes second = signedTx(chain, alice, 1, fee, transfer);
    const auto gap = chain.block(kGenesisMs + 1, {second}).receipts.at(0);
    EXPECT_EQ(gap.code, ErrorCode::kNonceGap);
    EXPECT_FALSE(*chain.blocks().locateTx(gap.txHash))
        << "a transaction refused for a gap must not read as committed for ever";
    const auto later =
        chain.block(kGenesisMs + 2, {signedTx(chain, alice, 0, fee, transfer), second});
    ASSERT_TRUE(later.receipts.at(0).success());
    ASSERT_TRUE(later.receipts.at(1).success()) << reasonOf(later.receipts.at(1).code);
    const auto where = *chain.blocks().locateTx(gap.txHash);
    ASSERT_TRUE(where);
    EXPECT_EQ(where->height, chain.height());
    EXPECT_EQ(chain.account(testing::addressOf(alice)).nonce, 2U);
}

TEST(Fees, AFeeChangedByGovernanceAppliesFromTheNextBlock) {
    const auto alice = testKey(90);
    Chain chain(fundedGenesis(alice));
    const codec::Payload transfer{oneDpsTo(testKey(91))};
    const std::uint64_t fee = chain.params().fees.of(transfer);
    chain.pass(kGenesisMs + 1, codec::SetParameter{"fees.transfer", std::to_string(fee * 3)});
    EXPECT_EQ(chain.params().fees.of(transfer), fee * 3);
    EXPECT_EQ(parameterValue(chain.params(), "fees.transfer"), std::to_string(fee * 3));
    const auto old =
        chain.block(kGenesisMs + 2, {signedTx(chain, alice, 0, fee, transfer)}).receipts.at(0);
    EXPECT_EQ(old.code, ErrorCode::kFeeTooLow);
    const auto paid =
        chain.block(kGenesisMs + 3, {signedTx(chain, alice, 0, fee * 3, transfer)}).receipts.at(0);
    EXPECT_TRUE(paid.success()) << reasonOf(paid.code);
}

TEST(Fees, AZeroFeeOrAnUnknownKindIsRefused) {
    ChainParams params;
    params.fees.byKind[0] = 0;
    const auto valid = params.validate();
    ASSERT_FALSE(valid);
    EXPECT_NE(valid.error().message.find("fees.transfer"), std::string::npos);
    const auto unknown = withParameter(ChainParams{}, codec::SetParameter{"fees.mint", "5"});
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidProposal);
    const auto zero = withParameter(ChainParams{}, codec::SetParameter{"fees.attest", "0"});
    EXPECT_FALSE(zero);
}

TEST(Fees, TheFeesRoundTripThroughTheStoredParameters) {
    ChainParams params;
    for (std::size_t i = 0; i < params.fees.byKind.size(); ++i) {
        params.fees.byKind[i] = 1'000 + i;
    }
    const auto decoded = decodeParams(encodeParams(params));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->fees, params.fees);
}

}  // namespace
}  // namespace gridledger::contracts::fees_test
