#include <gtest/gtest.h>

#include <gridledger/consensus/double_sign_guard.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::consensus::double_sign_guard_test {
namespace {

class DoubleSignGuard : public ::testing::Test {
  protected:
    void SetUp() override {
        std::vector<PubKey> members;
        for (int i = 0; i < 10; ++i) {
            keys_.push_back(crypto::SecretKey::generate());
            members.push_back(keys_.back().publicKey());
        }
        committee_.emplace(*Committee::create("guard-test", 1, Hash256{}, members));
    }

    /** A QC for `round` whose bitmap names the members at `signers` (committee order). */
    codec::QuorumCert qc(std::uint64_t epoch, std::uint64_t round,
                         const std::vector<std::size_t>& signers) const {
        codec::QuorumCert out;
        out.epoch = epoch;
        out.round = round;
        out.blockId = crypto::sha256(asBytes(std::to_string(round)));
        out.signers.assign(2, 0);
        for (auto i : signers) {
            out.signers[i / 8] = static_cast<std::uint8_t>(out.signers[i / 8] | (1U << (i % 8)));
        }
        return out;
    }

    const PubKey& member(std::size_t i) const { return committee_->member(i); }

    std::vector<crypto::SecretKey> keys_;
    std::optional<Committee> committee_;
};

TEST_F(DoubleSignGuard, AVoteAboveTheRecordedRoundIsFound) {
    const std::vector<codec::QuorumCert> recent{qc(1, 8, {0, 1, 2, 9}), qc(1, 9, {1, 2, 3, 9})};
    auto found = findUnrecordedVote(recent, *committee_, member(9), SafetyData{1, 8, 7});
    ASSERT_TRUE(found);
    EXPECT_EQ(found->round, 9U);
    EXPECT_EQ(found->blockId, recent[1].blockId);
}

TEST_F(DoubleSignGuard, VotesCoveredByTheSafetyDataPass) {
    const std::vector<codec::QuorumCert> recent{qc(1, 8, {0, 1, 2, 9}), qc(1, 9, {1, 2, 3, 9})};
    EXPECT_FALSE(findUnrecordedVote(recent, *committee_, member(9), SafetyData{1, 9, 8}));
    EXPECT_FALSE(findUnrecordedVote(recent, *committee_, member(9), SafetyData{1, 12, 8}));
}

TEST_F(DoubleSignGuard, OnlyThisKeysBitCounts) {
    const std::vector<codec::QuorumCert> recent{qc(1, 20, {0, 1, 2, 3, 4, 5, 6})};
    EXPECT_FALSE(findUnrecordedVote(recent, *committee_, member(8), SafetyData{1, 0, 0}));
    EXPECT_TRUE(findUnrecordedVote(recent, *committee_, member(6), SafetyData{1, 0, 0}));
    const auto outsider = crypto::SecretKey::generate();
    EXPECT_FALSE(
        findUnrecordedVote(recent, *committee_, outsider.publicKey(), SafetyData{1, 0, 0}));
}

TEST_F(DoubleSignGuard, CertificatesOfAnotherEpochAndShortBitmapsAreSkipped) {
    auto shortBitmap = qc(1, 30, {9});
    shortBitmap.signers.resize(1);  // member 9's byte is missing
    const std::vector<codec::QuorumCert> recent{qc(2, 30, {9}), shortBitmap};
    EXPECT_FALSE(findUnrecordedVote(recent, *committee_, member(9), SafetyData{1, 0, 0}));
}

}  // namespace
}  // namespace gridledger::consensus::double_sign_guard_test
