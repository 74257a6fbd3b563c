// verifyCommitProof: a proof that a block is committed by the 2-chain rule, built from real votes
// of a four-member committee, is accepted; every way of breaking it is refused.

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>
#include <gridledger/crypto/sha256.h>

#include "harness.h"

namespace gridledger::consensus::commit_proof_test {
namespace {

using testing::kChainId;

/** A QC on (round, blockId) from the votes of members `first`, first + 1, … (count of them). */
codec::QuorumCert votedQc(const Committee& committee, const std::vector<crypto::SecretKey>& keys,
                          std::uint64_t round, const Hash256& blockId, std::size_t first = 0,
                          std::size_t count = 3) {
    std::vector<codec::Vote> votes;
    for (std::size_t i = first; i < first + count; ++i) {
        KeySigner signer(keys[i]);
        votes.push_back(signVote(signer, kChainId, committee.epoch(), round, blockId));
    }
    return buildQuorumCert(committee, votes).value();
}

class CommitProofTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(committee_.quorum(), 3U);
        // Block B at height 1, round 1 on genesis; its child C at height 2, round 2 carries a
        // QC for B; the commit QC certifies C.
        codec::BlockHeader header;
        header.round = 1;
        header.height = 1;
        header.parentId = genesis_.id;
        header.qc = genesisQc(0, genesis_.id);
        header.author = keys_[1].publicKey();
        header.timestampMs = testing::kGenesisTimeMs + 1000;
        block_ = codec::makeBlock(header, {Bytes{1, 2, 3}});
    }

    /** C's header as a correct child of B, for a test to change before C is built. */
    codec::BlockHeader childHeader() const {
        codec::BlockHeader header;
        header.round = block_.header.round + 1;
        header.height = block_.header.height + 1;
        header.parentId = block_.id;
        header.qc = votedQc(committee_, keys_, block_.header.round, block_.id);
        header.author = keys_[2].publicKey();
        header.timestampMs = block_.header.timestampMs + 1000;
        return header;
    }

    /** The proof of B with child `header` and a correct commit QC for that child. */
    codec::CommitProof proofWithChild(const codec::BlockHeader& header) const {
        const codec::Block child = codec::makeBlock(header, {});
        return codec::makeCommitProof(child.headerBytes,
                                      votedQc(committee_, keys_, child.header.round, child.id))
            .value();
    }

    codec::CommitProof validProof() const { return proofWithChild(childHeader()); }

    Status verify(const codec::CommitProof& proof) const {
        return verifyCommitProof(block_, proof, committee_, kChainId);
    }

    void expectRefused(const codec::CommitProof& proof) const {
        auto verified = verify(proof);
        ASSERT_FALSE(verified);
        EXPECT_EQ(verified.error().code, ErrorCode::kInvalidCertificate)
            << verified.error().message;
    }

    std::vector<crypto::SecretKey> keys_ = testing::testKeys(4);
    codec::Block genesis_ = testing::genesisBlock();
    Committee committee_ =
        Committee::create(kChainId, 0, genesis_.id, testing::publicKeys(keys_)).value();
    codec::Block block_;
};

TEST_F(CommitProofTest, AProofFromRealVotesIsAccepted) {
    const codec::CommitProof proof = validProof();
    auto verified = verify(proof);
    EXPECT_TRUE(verified) << verified.error().message;
    // So is the same proof after a trip through the wire encoding.
    auto decoded = codec::decodeCommitProof(codec::encodeCommitProof(proof));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_TRUE(verify(*decoded));
}

TEST_F(CommitProofTest, AProofSignedByAnyThreeOfFourMembersIsAccepted) {
    codec::BlockHeader header = childHeader();
    header.qc = votedQc(committee_, keys_, block_.header.round, block_.id, 1, 3);
    const codec::Block child = codec::makeBlock(header, {});
    for (std::size_t first = 0; first < 2; ++first) {
        auto proof = codec::makeCommitProof(
            child.headerBytes, votedQc(committee_, keys_, child.header.round, child.id, first, 3));
        ASSERT_TRUE(proof);
        EXPECT_TRUE(verify(*proof)) << "signers from member " << first;
    }
}

TEST_F(CommitProofTest, TheGenesisBlockIsProvenByAChildCarryingTheGenesisQc) {
    codec::BlockHeader header;
    header.round = 1;
    header.height = 1;
    header.parentId = genesis_.id;
    header.qc = genesisQc(0, genesis_.id);
    header.timestampMs = testing::kGenesisTimeMs + 1;
    const codec::Block child = codec::makeBlock(header, {});
    auto proof = codec::makeCommitProof(child.headerBytes, votedQc(committee_, keys_, 1, child.id));
    ASSERT_TRUE(proof);
    EXPECT_TRUE(verifyCommitProof(genesis_, *proof, committee_, kChainId));
}

TEST_F(CommitProofTest, RefusesAChildThatDoesNotNameTheBlockAsParent) {
    codec::BlockHeader header = childHeader();
    header.parentId = crypto::sha256(asBytes("another parent"));
    expectRefused(proofWithChild(header));
}

TEST_F(CommitProofTest, RefusesAChildWhoseRoundIsNotTheBlocksPlusOne) {
    for (std::uint64_t round : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{10}}) {
        codec::BlockHeader header = childHeader();
        header.round = round;
        expectRefused(proofWithChild(header));
    }
}

TEST_F(CommitProofTest, RefusesAChildAtAnotherHeight) {
    for (std::uint64_t height : {std::uint64_t{1}, std::uint64_t{3}}) {
        codec::BlockHeader header = childHeader();
        header.height = height;
        expectRefused(proofWithChild(header));
    }
}

TEST_F(CommitProofTest, RefusesAChildOfAnotherEpoch) {
    codec::BlockHeader header = childHeader();
    header.epoch = 1;
    expectRefused(proofWithChild(header));
}

TEST_F(CommitProofTest, RefusesAChildWhoseQcCertifiesAnotherBlock) {
    codec::BlockHeader header = childHeader();
    header.qc =
        votedQc(committee_, keys_, block_.header.round, crypto::sha256(asBytes("another block")));
    expectRefused(proofWithChild(header));
}

TEST_F(CommitProofTest, RefusesAChildWhoseQcIsOfAnotherRound) {
    codec::BlockHeader header = childHeader();
    header.qc = votedQc(committee_, keys_, block_.header.round + 1, block_.id);
    expectRefused(proofWithChild(header));
}

TEST_F(CommitProofTest, RefusesACommitQcForAnotherBlock) {
    codec::CommitProof proof = validProof();
    proof.commitQc = votedQc(committee_, keys_, proof.childHeader.round, block_.id);
    expectRefused(proof);
}

TEST_F(CommitProofTest, RefusesACommitQcOfAnotherRound) {
    codec::CommitProof proof = validProof();
    proof.commitQc = votedQc(committee_, keys_, proof.childHeader.round + 1, proof.childId);
    expectRefused(proof);
}

/** `qc` with the signer bit and signature of its last signer removed: q - 1 = 2 signers. */
codec::QuorumCert withoutLastSigner(codec::QuorumCert qc) {
    for (std::size_t bit = 8; bit-- > 0;) {
        if ((static_cast<unsigned>(qc.signers[0]) >> bit) & 1U) {
            qc.signers[0] = static_cast<std::uint8_t>(qc.signers[0] & ~(1U << bit));
            break;
        }
    }
    qc.signatures.pop_back();
    return qc;
}

TEST_F(CommitProofTest, RefusesACommitQcWithTooFewSigners) {
    codec::CommitProof proof = validProof();
    proof.commitQc = withoutLastSigner(proof.commitQc);
    ASSERT_EQ(proof.commitQc.signatures.size(), 2U);
    expectRefused(proof);
}

TEST_F(CommitProofTest, RefusesAChildQcWithTooFewSigners) {
    codec::BlockHeader header = childHeader();
    header.qc = withoutLastSigner(header.qc);
    expectRefused(proofWithChild(header));
}

TEST_F(CommitProofTest, RefusesAFlippedByteInAnyCommitQcSignature) {
    const codec::CommitProof valid = validProof();
    for (std::size_t k = 0; k < valid.commitQc.signatures.size(); ++k) {
        for (std::size_t byte : {std::size_t{0}, std::size_t{31}, std::size_t{63}}) {
            codec::CommitProof proof = valid;
            proof.commitQc.signatures[k][byte] ^= 0x01;
            expectRefused(proof);
        }
    }
}

TEST_F(CommitProofTest, RefusesAFlippedByteInTheChildQcSignature) {
    codec::BlockHeader header = childHeader();
    header.qc.signatures[1][17] ^= 0x80;
    expectRefused(proofWithChild(header));
}

TEST_F(CommitProofTest, RefusesACommitQcSignedByNonMembers) {
    const auto outsiders = std::vector<crypto::SecretKey>{
        testing::testKey(10), testing::testKey(11), testing::testKey(12)};
    codec::CommitProof proof = validProof();
    for (std::size_t i = 0; i < 3; ++i) {
        KeySigner signer(outsiders[i]);
        proof.commitQc.signatures[i] =
            signVote(signer, kChainId, 0, proof.commitQc.round, proof.childId).signature;
    }
    expectRefused(proof);
}

TEST_F(CommitProofTest, RefusesAProofOfAnotherChain) {
    const codec::CommitProof proof = validProof();
    auto verified = verifyCommitProof(block_, proof, committee_, "another-chain");
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::kInvalidCertificate);
}

TEST_F(CommitProofTest, RefusesAChangedChildHeaderByteWhoseIdWasNotRecomputed) {
    const codec::CommitProof valid = validProof();
    for (std::size_t i = 0; i < valid.childHeaderBytes.size(); ++i) {
        codec::CommitProof proof = valid;
        proof.childHeaderBytes[i] ^= 0x01;
        auto verified = verify(proof);
        EXPECT_FALSE(verified) << "byte " << i;
    }
}

TEST_F(CommitProofTest, RefusesEveryChangedChildHeaderByteOfAReceivedProof) {
    // As received from a peer: the id and the header are derived from the changed bytes.
    const codec::CommitProof valid = validProof();
    for (std::size_t i = 0; i < valid.childHeaderBytes.size(); ++i) {
        Bytes bytes = valid.childHeaderBytes;
        bytes[i] ^= 0x01;
        auto proof = codec::makeCommitProof(bytes, valid.commitQc);
        EXPECT_TRUE(!proof || !verify(*proof)) << "byte " << i;
    }
}

TEST_F(CommitProofTest, RefusesAProofOfAnotherBlockAtTheSameHeight) {
    codec::BlockHeader header = block_.header;
    header.timestampMs += 1;
    const codec::Block sibling = codec::makeBlock(header, {Bytes{1, 2, 3}});
    ASSERT_NE(sibling.id, block_.id);
    auto verified = verifyCommitProof(sibling, validProof(), committee_, kChainId);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::kInvalidCertificate);
}

// A proof through a path: B (round 1), then after a timed-out round its successor P (height 2,
// round 3), then P's child C (height 3, round 4) certifying P, and a commit QC on C. C's QC
// commits P, and B with it, although no block directly follows B in round 2. This is how the
// block that ends an epoch is proven when the round after it timed out.
class PathProofTest : public CommitProofTest {
  protected:
    /** P's header as a correct successor of B two rounds later, for a test to change. */
    codec::BlockHeader pathHeader() const {
        codec::BlockHeader header;
        header.round = block_.header.round + 2;
        header.height = block_.header.height + 1;
        header.parentId = block_.id;
        header.qc = votedQc(committee_, keys_, block_.header.round, block_.id);
        header.author = keys_[3].publicKey();
        header.timestampMs = block_.header.timestampMs + 3000;
        return header;
    }

    /** The proof of B through the path P (from `header`) and P's correct child. */
    codec::CommitProof proofThrough(const codec::BlockHeader& header) const {
        const codec::Block path = codec::makeBlock(header, {});
        codec::BlockHeader childHeader;
        childHeader.round = path.header.round + 1;
        childHeader.height = path.header.height + 1;
        childHeader.parentId = path.id;
        childHeader.qc = votedQc(committee_, keys_, path.header.round, path.id);
        childHeader.author = keys_[0].publicKey();
        childHeader.timestampMs = path.header.timestampMs + 1000;
        const codec::Block child = codec::makeBlock(childHeader, {});
        return codec::makeCommitProof(child.headerBytes,
                                      votedQc(committee_, keys_, child.header.round, child.id),
                                      {path.headerBytes})
            .value();
    }
};

TEST_F(PathProofTest, AProofThroughABlockInALaterRoundIsAccepted) {
    const codec::CommitProof proof = proofThrough(pathHeader());
    ASSERT_EQ(proof.path.size(), 1U);
    auto verified = verify(proof);
    EXPECT_TRUE(verified) << verified.error().message;
    // The block's certificate is the path's first QC.
    EXPECT_EQ(certifyingQcOf(proof).blockId, block_.id);
    // The path survives the wire encoding.
    auto decoded = codec::decodeCommitProof(codec::encodeCommitProof(proof));
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->path, proof.path);
    EXPECT_TRUE(verify(*decoded));
}

TEST_F(PathProofTest, WithoutItsPathTheSameChildProvesNothing) {
    codec::CommitProof proof = proofThrough(pathHeader());
    proof.path.clear();
    expectRefused(proof);
}

TEST_F(PathProofTest, RefusesAPathThatDoesNotNameTheBlockAsParent) {
    codec::BlockHeader header = pathHeader();
    header.parentId = crypto::sha256(asBytes("another parent"));
    expectRefused(proofThrough(header));
}

TEST_F(PathProofTest, RefusesAPathAtAnotherHeightOrEpochOrInAnEarlierRound) {
    codec::BlockHeader header = pathHeader();
    header.height += 1;
    expectRefused(proofThrough(header));
    header = pathHeader();
    header.epoch = 1;
    expectRefused(proofThrough(header));
    header = pathHeader();
    header.round = block_.header.round;
    expectRefused(proofThrough(header));
}

TEST_F(PathProofTest, RefusesAPathWhoseQcDoesNotCertifyTheBlock) {
    codec::BlockHeader header = pathHeader();
    header.qc =
        votedQc(committee_, keys_, block_.header.round, crypto::sha256(asBytes("another block")));
    expectRefused(proofThrough(header));
    header = pathHeader();
    header.qc = withoutLastSigner(header.qc);
    expectRefused(proofThrough(header));
    header = pathHeader();
    header.qc.signatures[0][5] ^= 0x10;
    expectRefused(proofThrough(header));
}

TEST_F(PathProofTest, RefusesAPathHeaderWhoseIdWasNotRecomputed) {
    codec::CommitProof proof = proofThrough(pathHeader());
    proof.path.front().headerBytes.back() ^= 0x01;
    expectRefused(proof);
}

TEST_F(PathProofTest, RefusesAPathLongerThanTheLimit) {
    const codec::CommitProof valid = proofThrough(pathHeader());
    std::vector<Bytes> path(codec::kMaxCommitProofPath + 1, valid.path.front().headerBytes);
    auto made = codec::makeCommitProof(valid.childHeaderBytes, valid.commitQc, path);
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().code, ErrorCode::kMalformed);
    // The same from the wire.
    codec::CommitProof longer = valid;
    longer.path.assign(codec::kMaxCommitProofPath + 1, valid.path.front());
    auto decoded = codec::decodeCommitProof(codec::encodeCommitProof(longer));
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
}

}  // namespace
}  // namespace gridledger::consensus::commit_proof_test
