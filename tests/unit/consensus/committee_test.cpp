#include <set>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/core.h>
#include <gridledger/consensus/signer.h>

#include "harness.h"

namespace gridledger::consensus::committee_test {
namespace {

using testing::kChainId;
using testing::publicKeys;
using testing::signQc;
using testing::testKeys;

Hash256 seedBlock() {
    return crypto::sha256(asBytes("seed block"));
}

Committee makeCommittee(std::size_t n, const Hash256& seed = seedBlock()) {
    return Committee::create(kChainId, 0, seed, publicKeys(testKeys(n))).value();
}

TEST(CommitteeMath, FaultsAndQuorumForOneToTenMembers) {
    const std::size_t expectedF[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
    const std::size_t expectedQ[] = {1, 2, 3, 3, 4, 5, 5, 6, 7, 7};
    for (std::size_t n = 1; n <= 10; ++n) {
        SCOPED_TRACE(n);
        EXPECT_EQ(maxFaultyOf(n), expectedF[n - 1]);
        EXPECT_EQ(quorumOf(n), expectedQ[n - 1]);
        const Committee committee = makeCommittee(n);
        EXPECT_EQ(committee.size(), n);
        EXPECT_EQ(committee.maxFaulty(), expectedF[n - 1]);
        EXPECT_EQ(committee.quorum(), expectedQ[n - 1]);
        // Two quorums always share an honest member: 2q − n > f.
        EXPECT_GT(2 * committee.quorum(), n + committee.maxFaulty());
    }
}

TEST(CommitteeMath, IndexOfFindsMembersOnly) {
    const auto keys = testKeys(5);
    const Committee committee = makeCommittee(4);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(committee.indexOf(keys[i].publicKey()), i);
    }
    EXPECT_FALSE(committee.indexOf(keys[4].publicKey()).has_value());
}

TEST(CommitteeMath, CreateRefusesAnEmptyOrDuplicateMemberList) {
    EXPECT_EQ(Committee::create(kChainId, 0, seedBlock(), {}).error().code,
              ErrorCode::kInvalidArgument);
    auto keys = publicKeys(testKeys(3));
    keys.push_back(keys[1]);
    EXPECT_EQ(Committee::create(kChainId, 0, seedBlock(), keys).error().code,
              ErrorCode::kInvalidArgument);
}

TEST(LeaderSelection, IsDeterministicCoversEveryMemberAndDependsOnTheSeed) {
    for (std::size_t n : {1U, 4U, 7U}) {
        SCOPED_TRACE(n);
        const Committee a = makeCommittee(n);
        const Committee b = makeCommittee(n);
        std::set<std::size_t> seen;
        for (std::uint64_t round = 1; round <= 500; ++round) {
            EXPECT_EQ(a.leaderIndex(round), b.leaderIndex(round));
            EXPECT_LT(a.leaderIndex(round), n);
            EXPECT_EQ(a.leaderOf(round), a.member(a.leaderIndex(round)));
            seen.insert(a.leaderIndex(round));
        }
        EXPECT_EQ(seen.size(), n);
    }
    const Committee a = makeCommittee(7);
    const Committee other = makeCommittee(7, crypto::sha256(asBytes("another seed")));
    std::size_t differ = 0;
    for (std::uint64_t round = 1; round <= 100; ++round) {
        differ += a.leaderIndex(round) != other.leaderIndex(round) ? 1U : 0U;
    }
    EXPECT_GT(differ, 50U);
    EXPECT_EQ(a.epochSeed(), epochSeedOf(kChainId, seedBlock(), 0));
    EXPECT_EQ(a.leaderSeed(), leaderSeedOf(kChainId, 0, a.epochSeed()));
}

TEST(EpochSeeds, EachFollowsFromThePreviousAndTheEpochAlone) {
    const Hash256 genesis = seedBlock();
    Hash256 seed = epochSeedOf(kChainId, genesis, 0);
    std::set<Hash256> seen{seed};
    for (std::uint64_t e = 0; e < 5; ++e) {
        seed = nextEpochSeed(kChainId, e, seed);
        EXPECT_EQ(seed, epochSeedOf(kChainId, genesis, e + 1)) << e;
        EXPECT_TRUE(seen.insert(seed).second) << "epoch " << e + 1 << " repeats a seed";
    }
    EXPECT_NE(epochSeedOf("another-chain", genesis, 3), epochSeedOf(kChainId, genesis, 3));
}

TEST(CommitteeSelection, TakesEveryoneUpToTheMaximumAndAStableSubsetAbove) {
    const auto validators = publicKeys(testKeys(12));
    EXPECT_EQ(selectCommittee(validators, kChainId, 3, seedBlock(), 12).value(), validators);

    const auto chosen = selectCommittee(validators, kChainId, 3, seedBlock(), 5).value();
    ASSERT_EQ(chosen.size(), 5U);
    EXPECT_EQ(selectCommittee(validators, kChainId, 3, seedBlock(), 5).value(), chosen);
    // A subset of the validators, in their order.
    std::size_t next = 0;
    for (const auto& key : chosen) {
        const auto it = std::find(validators.begin() + static_cast<std::ptrdiff_t>(next),
                                  validators.end(), key);
        ASSERT_NE(it, validators.end());
        next = static_cast<std::size_t>(it - validators.begin()) + 1;
    }
    // The lowest committee hashes: every left-out key hashes above every chosen one.
    const auto hashOf = [&](const PubKey& key) {
        Bytes body;
        appendU64(body, 3);
        append(body, seedBlock().view());
        append(body, key.view());
        return crypto::signingDigest("sdbft/committee", kChainId, body);
    };
    Hash256 highestChosen;
    for (const auto& key : chosen) {
        highestChosen = std::max(highestChosen, hashOf(key));
    }
    for (const auto& key : validators) {
        if (std::find(chosen.begin(), chosen.end(), key) == chosen.end()) {
            EXPECT_GT(hashOf(key), highestChosen);
        }
    }
    // Another epoch draws another committee.
    bool changed = false;
    for (std::uint64_t epoch = 4; epoch < 10 && !changed; ++epoch) {
        changed = selectCommittee(validators, kChainId, epoch, seedBlock(), 5).value() != chosen;
    }
    EXPECT_TRUE(changed);

    EXPECT_FALSE(selectCommittee(validators, kChainId, 3, seedBlock(), 0).has_value());
    auto duplicated = validators;
    duplicated.push_back(validators[0]);
    EXPECT_FALSE(selectCommittee(duplicated, kChainId, 3, seedBlock(), 5).has_value());
}

class QuorumCertTest : public ::testing::Test {
  protected:
    std::vector<crypto::SecretKey> keys_ = testKeys(5);  // member keys 0..3, outsider 4
    Committee committee_ = makeCommittee(4);
    Hash256 block_ = crypto::sha256(asBytes("block"));
};

TEST_F(QuorumCertTest, AQuorumOfValidVotesVerifies) {
    const auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    EXPECT_TRUE(verifyQuorumCert(qc, committee_, kChainId).has_value());
    const auto all = signQc(committee_, {keys_[0], keys_[1], keys_[2], keys_[3]}, 7, block_);
    EXPECT_TRUE(verifyQuorumCert(all, committee_, kChainId).has_value());
}

TEST_F(QuorumCertTest, TooFewSignersAreRefused) {
    auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    qc.signers[0] = 0b0011;  // two signers named, q = 3
    qc.signatures.pop_back();
    const auto status = verifyQuorumCert(qc, committee_, kChainId);
    ASSERT_FALSE(status.has_value());
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidCertificate);
    // buildQuorumCert refuses to make one too.
    KeySigner a(keys_[0]);
    KeySigner b(keys_[1]);
    EXPECT_FALSE(buildQuorumCert(committee_, {signVote(a, kChainId, 0, 7, block_),
                                              signVote(b, kChainId, 0, 7, block_)})
                     .has_value());
}

TEST_F(QuorumCertTest, ADuplicateSignerIsRefused) {
    // Two signers, padded to q signatures by repeating one of them.
    auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    qc.signers[0] = 0b0011;
    qc.signatures[2] = qc.signatures[1];
    EXPECT_FALSE(verifyQuorumCert(qc, committee_, kChainId).has_value());
    // Three signers named, but member 1's signature also fills member 2's slot.
    auto repeated = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    repeated.signatures[2] = repeated.signatures[1];
    EXPECT_FALSE(verifyQuorumCert(repeated, committee_, kChainId).has_value());
    // The same voter twice counts once when building.
    KeySigner a(keys_[0]);
    KeySigner b(keys_[1]);
    const auto va = signVote(a, kChainId, 0, 7, block_);
    const auto vb = signVote(b, kChainId, 0, 7, block_);
    EXPECT_FALSE(buildQuorumCert(committee_, {va, vb, va}).has_value());
}

TEST_F(QuorumCertTest, ANonMemberIsRefused) {
    auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    qc.signers[0] = 0b10011;  // bit 4: there is no member 4
    qc.signatures.push_back(qc.signatures[0]);
    EXPECT_FALSE(verifyQuorumCert(qc, committee_, kChainId).has_value());
    KeySigner outsider(keys_[4]);
    KeySigner a(keys_[0]);
    KeySigner b(keys_[1]);
    EXPECT_FALSE(buildQuorumCert(committee_, {signVote(a, kChainId, 0, 7, block_),
                                              signVote(b, kChainId, 0, 7, block_),
                                              signVote(outsider, kChainId, 0, 7, block_)})
                     .has_value());
    // A signature by an outsider in a member's slot does not verify either.
    auto forged = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    forged.signatures[2] = outsider.sign(voteDigest(kChainId, 0, 7, block_));
    EXPECT_FALSE(verifyQuorumCert(forged, committee_, kChainId).has_value());
}

TEST_F(QuorumCertTest, ABadSignatureIsRefused) {
    auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    qc.signatures[1][5] ^= 0x01;
    const auto status = verifyQuorumCert(qc, committee_, kChainId);
    ASSERT_FALSE(status.has_value());
    EXPECT_NE(status.error().message.find("member 1"), std::string::npos);
}

TEST_F(QuorumCertTest, AWrongBlockRoundEpochOrChainIsRefused) {
    const auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    auto otherBlock = qc;
    otherBlock.blockId = crypto::sha256(asBytes("other block"));
    EXPECT_FALSE(verifyQuorumCert(otherBlock, committee_, kChainId).has_value());
    auto otherRound = qc;
    otherRound.round = 8;
    EXPECT_FALSE(verifyQuorumCert(otherRound, committee_, kChainId).has_value());
    auto otherEpoch = qc;
    otherEpoch.epoch = 1;
    EXPECT_FALSE(verifyQuorumCert(otherEpoch, committee_, kChainId).has_value());
    EXPECT_FALSE(verifyQuorumCert(qc, committee_, "another-chain").has_value());
}

TEST_F(QuorumCertTest, MalformedBitmapsAreRefusedNotCrashes) {
    auto qc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 7, block_);
    auto empty = qc;
    empty.signers.clear();
    EXPECT_FALSE(verifyQuorumCert(empty, committee_, kChainId).has_value());
    auto longer = qc;
    longer.signers.push_back(0xff);
    EXPECT_FALSE(verifyQuorumCert(longer, committee_, kChainId).has_value());
    auto noSignatures = qc;
    noSignatures.signatures.clear();
    EXPECT_FALSE(verifyQuorumCert(noSignatures, committee_, kChainId).has_value());
}

TEST_F(QuorumCertTest, TheGenesisQcIsAcceptedByConventionOnlyForTheSeedBlock) {
    EXPECT_TRUE(verifyQuorumCert(genesisQc(0, seedBlock()), committee_, kChainId).has_value());
    EXPECT_FALSE(verifyQuorumCert(genesisQc(0, block_), committee_, kChainId).has_value());
    auto withSigner = genesisQc(0, seedBlock());
    withSigner.signers = {0x01};
    withSigner.signatures = {Signature{}};
    EXPECT_FALSE(verifyQuorumCert(withSigner, committee_, kChainId).has_value());
}

TEST_F(QuorumCertTest, TimeoutCertificatesVerifyAndRefuseTheSameWays) {
    const auto hqc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 4, block_);
    std::vector<codec::Timeout> timeouts;
    for (std::size_t i = 0; i < 3; ++i) {
        KeySigner signer(keys_[i]);
        timeouts.push_back(
            signTimeout(signer, kChainId, 0, 6, i == 0 ? hqc : genesisQc(0, seedBlock())));
        EXPECT_TRUE(verifyTimeout(timeouts.back(), committee_, kChainId).has_value());
    }
    const auto tc = buildTimeoutCert(committee_, timeouts).value();
    EXPECT_EQ(tc.highestHqcRound(), 4U);
    EXPECT_TRUE(verifyTimeoutCert(tc, committee_, kChainId).has_value());

    auto tooFew = tc;
    tooFew.signers[0] = 0b0011;
    tooFew.signatures.pop_back();
    tooFew.hqcRounds.pop_back();
    EXPECT_FALSE(verifyTimeoutCert(tooFew, committee_, kChainId).has_value());
    auto badSig = tc;
    badSig.signatures[0][0] ^= 0x80;
    EXPECT_FALSE(verifyTimeoutCert(badSig, committee_, kChainId).has_value());
    auto liedHqc = tc;
    liedHqc.hqcRounds[1] = 5;  // not what member 1 signed
    EXPECT_FALSE(verifyTimeoutCert(liedHqc, committee_, kChainId).has_value());
    auto hqcNotBelow = tc;
    hqcNotBelow.hqcRounds[0] = 6;
    EXPECT_FALSE(verifyTimeoutCert(hqcNotBelow, committee_, kChainId).has_value());
    EXPECT_FALSE(buildTimeoutCert(committee_, {timeouts[0], timeouts[1], timeouts[0]}).has_value());
}

TEST_F(QuorumCertTest, ATimeoutCertCarriesTheQcOfItsHighestHqcRound) {
    const auto hqc = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 4, block_);
    const auto lower = signQc(committee_, {keys_[0], keys_[1], keys_[2]}, 3, block_);
    std::vector<codec::Timeout> timeouts;
    for (std::size_t i = 0; i < 3; ++i) {
        KeySigner signer(keys_[i]);
        timeouts.push_back(signTimeout(signer, kChainId, 0, 6, i == 1 ? hqc : lower));
    }
    const auto tc = buildTimeoutCert(committee_, timeouts).value();
    EXPECT_EQ(tc.highQc, hqc);
    EXPECT_TRUE(verifyTimeoutCert(tc, committee_, kChainId).has_value());

    auto lowerQc = tc;
    lowerQc.highQc = lower;  // a real QC, but not of the highest signed hqc round
    EXPECT_FALSE(verifyTimeoutCert(lowerQc, committee_, kChainId).has_value());
    auto forgedQc = tc;
    forgedQc.highQc.signatures[0][0] ^= 0x80;
    EXPECT_FALSE(verifyTimeoutCert(forgedQc, committee_, kChainId).has_value());
}

// A faulty member signs a timeout claiming an hqc round no QC exists for, and assembles a TC
// from it and two honest timeouts. Were the TC accepted, honest voters would refuse every
// proposal of the next leader, whose QC is below that claimed round.
TEST_F(QuorumCertTest, ATimeoutCertWhoseHighestHqcRoundNoQcProvesIsRefused) {
    std::vector<codec::Timeout> honest;
    for (std::size_t i = 0; i < 2; ++i) {
        KeySigner signer(keys_[i]);
        honest.push_back(signTimeout(signer, kChainId, 0, 6, genesisQc(0, seedBlock())));
    }
    codec::TimeoutCert forged;
    forged.epoch = 0;
    forged.round = 6;
    forged.signers = {0b1011};
    forged.hqcRounds = {0, 0, 5};
    forged.signatures = {honest[0].signature, honest[1].signature,
                         keys_[3].sign(timeoutDigest(kChainId, 0, 6, 5))};
    forged.highQc = genesisQc(0, seedBlock());
    EXPECT_FALSE(verifyTimeoutCert(forged, committee_, kChainId).has_value());
    // Nor with a QC of round 5 that only the faulty member signed.
    forged.highQc.round = 5;
    forged.highQc.blockId = block_;
    forged.highQc.signers = {0b1000};
    forged.highQc.signatures = {keys_[3].sign(voteDigest(kChainId, 0, 5, block_))};
    EXPECT_FALSE(verifyTimeoutCert(forged, committee_, kChainId).has_value());
}

TEST(RoundTimer, GrowsByOnePointTwoPerTimedOutRoundUpToSixSteps) {
    const std::uint64_t expected[] = {1000, 1200, 1440, 1728, 2073, 2488, 2985, 2985, 2985};
    for (std::uint64_t k = 0; k < 9; ++k) {
        EXPECT_EQ(roundTimeoutMs(1000, k), expected[k]) << "k=" << k;
    }
    EXPECT_EQ(roundTimeoutMs(86'400'000, 100), 86'400'000ULL * 46656 / 15625);
}

}  // namespace
}  // namespace gridledger::consensus::committee_test
