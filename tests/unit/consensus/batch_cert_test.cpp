// Certified batches: the digest that names a batch, the members asked to sign it, and the
// certificate f + 1 acknowledgements make (docs/protocol.md §14).
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/consensus/batches.h>
#include <gridledger/crypto/sha256.h>

#include "harness.h"

namespace gridledger::consensus::batch_cert_test {
namespace {

using testing::kChainId;
using testing::publicKeys;
using testing::testKeys;

Bytes text(std::string_view s) {
    return {s.begin(), s.end()};
}

Committee makeCommittee(const std::vector<crypto::SecretKey>& keys) {
    return Committee::create(kChainId, 0, crypto::sha256(asBytes("seed")), publicKeys(keys))
        .value();
}

Batch sampleBatch(const PubKey& author) {
    return Batch{author, 0, 3, {text("tx one"), text("tx two")}};
}

std::map<std::size_t, Signature> acksOf(const std::vector<crypto::SecretKey>& keys,
                                        const std::vector<std::size_t>& members,
                                        const Hash256& digest, std::uint64_t epoch = 0) {
    std::map<std::size_t, Signature> out;
    for (const auto m : members) {
        out.emplace(m, keys[m].sign(batchAckDigest(kChainId, epoch, digest)));
    }
    return out;
}

TEST(BatchDigest, IsTheDocumentedHashOfAuthorEpochSerialAndLengthPrefixedTransactions) {
    const auto keys = testKeys(1);
    const Batch batch = sampleBatch(keys[0].publicKey());
    Bytes expected = text("gridledger/batch-digest");
    const auto author = batch.author.view();
    expected.insert(expected.end(), author.begin(), author.end());
    const Bytes fields{0, 0, 0, 0, 0, 0, 0, 0,  // epoch 0
                       0, 0, 0, 0, 0, 0, 0, 3,  // serial 3
                       0, 0, 0, 2};             // two transactions
    expected.insert(expected.end(), fields.begin(), fields.end());
    for (const auto& tx : batch.txs) {
        expected.insert(expected.end(), {0, 0, 0, static_cast<std::uint8_t>(tx.size())});
        expected.insert(expected.end(), tx.begin(), tx.end());
    }
    EXPECT_EQ(batchDigest(batch), crypto::sha256(expected));
}

TEST(BatchDigest, EveryFieldAndTheSplitBetweenTransactionsChangeIt) {
    const auto keys = testKeys(2);
    const Batch batch = sampleBatch(keys[0].publicKey());
    std::set<Hash256> digests{batchDigest(batch)};
    Batch other = batch;
    other.author = keys[1].publicKey();
    digests.insert(batchDigest(other));
    other = batch;
    other.epoch = 1;
    digests.insert(batchDigest(other));
    other = batch;
    other.serial = 4;
    digests.insert(batchDigest(other));
    other = batch;
    other.txs = {text("tx on"), text("etx two")};  // the same bytes, split elsewhere
    digests.insert(batchDigest(other));
    other.txs = {text("tx onetx two")};
    digests.insert(batchDigest(other));
    EXPECT_EQ(digests.size(), 6U);
}

TEST(BatchSigners, TheAuthorAndFOthersChosenByTheDigest) {
    const auto keys = testKeys(7);
    const Committee committee = makeCommittee(keys);
    std::set<std::size_t> firstOthers;
    for (std::uint64_t serial = 0; serial < 40; ++serial) {
        Batch batch = sampleBatch(keys[2].publicKey());
        batch.serial = serial;
        const Hash256 digest = batchDigest(batch);
        const auto signers = batchSigners(committee, digest, 2);
        ASSERT_EQ(signers.size(), committee.maxFaulty() + 1);
        EXPECT_EQ(signers.front(), 2U);
        EXPECT_EQ(std::set<std::size_t>(signers.begin(), signers.end()).size(), signers.size());
        for (const auto s : signers) {
            EXPECT_LT(s, committee.size());
        }
        EXPECT_EQ(batchSigners(committee, digest, 2), signers);
        firstOthers.insert(signers[1]);
    }
    // The digest spreads the work: over 40 batches every other member is asked first.
    EXPECT_EQ(firstOthers.size(), committee.size() - 1);
}

TEST(BatchSigners, MembersFoundSilentArePassedOverWhileEnoughOthersAnswer) {
    const auto keys = testKeys(7);  // f = 2
    const Committee committee = makeCommittee(keys);
    for (std::uint64_t serial = 0; serial < 20; ++serial) {
        Batch batch = sampleBatch(keys[2].publicKey());
        batch.serial = serial;
        const Hash256 digest = batchDigest(batch);
        const auto usual = batchSigners(committee, digest, 2);
        // Members silent but the usual ones change nothing.
        std::set<std::size_t> unasked{0, 1, 3, 4, 5, 6};
        unasked.erase(usual[1]);
        unasked.erase(usual[2]);
        EXPECT_EQ(batchSigners(committee, digest, 2, unasked), usual);
        // With the usual first other silent, the author asks the next one that answers.
        const std::set<std::size_t> silent{usual[1]};
        const auto signers = batchSigners(committee, digest, 2, silent);
        ASSERT_EQ(signers.size(), 3U);
        EXPECT_EQ(signers.front(), 2U);
        EXPECT_EQ(signers[1], usual[2]);
        std::size_t next = (usual[2] + 1) % committee.size();
        next = next == 2 ? next + 1 : next;
        EXPECT_EQ(signers[2], next);
        // All six silent: the usual ones, since f others must be asked.
        EXPECT_EQ(batchSigners(committee, digest, 2, {0, 1, 3, 4, 5, 6}), usual);
    }
}

TEST(BatchCert, FPlusOneAcknowledgementsCertifyAndFDoNot) {
    const auto keys = testKeys(7);  // f = 2
    const Committee committee = makeCommittee(keys);
    const Hash256 digest = batchDigest(sampleBatch(keys[0].publicKey()));
    EXPECT_EQ(batchCertThreshold(committee), 3U);
    const auto cert = buildBatchCert(committee, digest, acksOf(keys, {0, 4, 6}, digest));
    ASSERT_TRUE(cert.has_value()) << cert.error().message;
    EXPECT_TRUE(verifyBatchCert(*cert, committee, kChainId));
    EXPECT_EQ(batchCertSigners(*cert, committee, kChainId).value(),
              (std::vector<std::size_t>{0, 4, 6}));

    EXPECT_EQ(buildBatchCert(committee, digest, acksOf(keys, {0, 4}, digest)).error().code,
              ErrorCode::kInvalidArgument);
    // The same f signatures put together by hand: well formed, but too few.
    BatchCert two = *cert;
    two.signers[0] = static_cast<std::uint8_t>(two.signers[0] & ~(1U << 6U));
    two.signatures.pop_back();
    EXPECT_TRUE(batchCertSigners(two, committee, kChainId).has_value());
    EXPECT_EQ(verifyBatchCert(two, committee, kChainId).error().code,
              ErrorCode::kInvalidCertificate);
}

TEST(BatchCert, ASignatureOfAnythingElseIsRefused) {
    const auto keys = testKeys(4);
    const Committee committee = makeCommittee(keys);
    const Hash256 digest = batchDigest(sampleBatch(keys[0].publicKey()));
    const Hash256 otherDigest = batchDigest(sampleBatch(keys[1].publicKey()));
    const BatchCert good = buildBatchCert(committee, digest, acksOf(keys, {1, 3}, digest)).value();
    ASSERT_TRUE(verifyBatchCert(good, committee, kChainId));

    BatchCert cert = good;
    cert.signatures[1] = acksOf(keys, {3}, otherDigest).at(3);  // another batch
    EXPECT_EQ(verifyBatchCert(cert, committee, kChainId).error().code,
              ErrorCode::kInvalidCertificate);
    cert = good;
    cert.signatures[1] = acksOf(keys, {3}, digest, 1).at(3);  // another epoch
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
    cert = good;
    cert.signatures[1] = keys[3].sign(batchAckDigest("another-chain", 0, digest));
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
    cert = good;
    cert.signatures[1] = acksOf(keys, {2}, digest).at(2);  // member 2's, under member 3's bit
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
    cert = good;
    cert.epoch = 1;
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
    cert = good;
    cert.signers[0] = static_cast<std::uint8_t>(cert.signers[0] | (1U << 5U));  // beyond n = 4
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
    cert = good;
    cert.signers.push_back(0);
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
    cert = good;
    cert.signatures.push_back(cert.signatures[0]);
    EXPECT_FALSE(verifyBatchCert(cert, committee, kChainId));
}

}  // namespace
}  // namespace gridledger::consensus::batch_cert_test
