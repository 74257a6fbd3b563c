// Consensus messages on the wire: a Broadcast effect becomes the message its kind names, and
// checkConsensusMessage hands the core only what a member of the committee validly signed.

#include "peer_messages.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>

#include "chain_builder.h"

namespace gridledger::node::peer_messages_test {
namespace {

using codec::MessageKind;
using testing::ChainBuilder;
using testing::kChainId;
using testing::TestCommittee;

class PeerMessagesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        chain_.appendMany(3);
        for (std::size_t i = 0; i < 4; ++i) {
            consensus::KeySigner signer(members().keys[i]);
            timeouts_.push_back(
                consensus::signTimeout(signer, kChainId, 0, 4, chain_.certifyingQc(3)));
        }
        tc_ = consensus::buildTimeoutCert(committee(), {timeouts_[0], timeouts_[1], timeouts_[2]})
                  .value();
    }

    const consensus::Committee& committee() const { return chain_.committee(); }
    const TestCommittee& members() const { return chain_.members(); }

    /** Member `i`'s timeout for round 4 carrying the QC on block 3 (round 3). */
    const codec::Timeout& timeout(std::size_t i) const { return timeouts_.at(i); }

    /** The TC for round 4 from the timeouts of members 0, 1 and 2. */
    const codec::TimeoutCert& timeoutCert() const { return tc_; }

    Result<CheckedInput> check(MessageKind kind, Bytes payload) const {
        return checkConsensusMessage(codec::NetMessage{kind, std::move(payload)}, committee(),
                                     kChainId);
    }

    /** Expects the message refused with `code`. */
    void expectRefused(MessageKind kind, Bytes payload, ErrorCode code) const {
        auto checked = check(kind, std::move(payload));
        ASSERT_FALSE(checked) << codec::kindName(kind) << " accepted";
        EXPECT_EQ(checked.error().code, code) << checked.error().message;
    }

    ChainBuilder chain_{TestCommittee::create()};
    std::vector<codec::Timeout> timeouts_;
    codec::TimeoutCert tc_;
};

// ---- broadcastMessage ----

TEST_F(PeerMessagesTest, ABroadcastProposalIsAProposalMessageOfTheEncodedBlock) {
    const auto block = std::make_shared<const codec::Block>(chain_.at(2));
    const codec::NetMessage message = broadcastMessage(consensus::Broadcast{block});
    EXPECT_EQ(message.kind, MessageKind::kProposal);
    auto decoded = codec::decodeBlock(message.payload);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(decoded->id, chain_.at(2).id);
    EXPECT_EQ(decoded->txs, chain_.at(2).txs);
    EXPECT_EQ(decoded->signature, chain_.at(2).signature);
}

TEST_F(PeerMessagesTest, ABroadcastTimeoutIsATimeoutMessage) {
    const codec::NetMessage message = broadcastMessage(consensus::Broadcast{timeout(1)});
    EXPECT_EQ(message.kind, MessageKind::kTimeout);
    auto decoded = codec::decodeTimeout(message.payload);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, timeout(1));
}

TEST_F(PeerMessagesTest, ABroadcastTcIsATimeoutCertMessage) {
    const codec::NetMessage message = broadcastMessage(consensus::Broadcast{timeoutCert()});
    EXPECT_EQ(message.kind, MessageKind::kTimeoutCert);
    auto decoded = codec::decodeTc(message.payload);
    ASSERT_TRUE(decoded) << decoded.error().message;
    EXPECT_EQ(*decoded, timeoutCert());
}

TEST_F(PeerMessagesTest, EveryBroadcastPassesThePeersCheck) {
    const std::vector<consensus::Broadcast> broadcasts{
        consensus::Broadcast{std::make_shared<const codec::Block>(chain_.at(3))},
        consensus::Broadcast{timeout(2)},
        consensus::Broadcast{timeoutCert()},
    };
    for (const auto& broadcast : broadcasts) {
        const codec::NetMessage message = broadcastMessage(broadcast);
        auto checked = checkConsensusMessage(message, committee(), kChainId);
        EXPECT_TRUE(checked) << codec::kindName(message.kind) << ": " << checked.error().message;
    }
}

// ---- isConsensusKind ----

TEST_F(PeerMessagesTest, ConsensusKindsAreExactlyTheSixTheCheckTakes) {
    EXPECT_TRUE(isConsensusKind(MessageKind::kProposal));
    EXPECT_TRUE(isConsensusKind(MessageKind::kQuorumCert));
    EXPECT_TRUE(isConsensusKind(MessageKind::kVote));
    EXPECT_TRUE(isConsensusKind(MessageKind::kTimeout));
    EXPECT_TRUE(isConsensusKind(MessageKind::kTimeoutCert));
    EXPECT_TRUE(isConsensusKind(MessageKind::kBlockResponse));
    EXPECT_FALSE(isConsensusKind(MessageKind::kTx));
    EXPECT_FALSE(isConsensusKind(MessageKind::kBlockRequest));
    EXPECT_FALSE(isConsensusKind(MessageKind::kSyncRequest));
    EXPECT_FALSE(isConsensusKind(MessageKind::kSyncResponse));
    EXPECT_FALSE(isConsensusKind(MessageKind::kEpochProofRequest));
    EXPECT_FALSE(isConsensusKind(MessageKind::kEpochProof));
    EXPECT_FALSE(isConsensusKind(static_cast<MessageKind>(0)));
    EXPECT_FALSE(isConsensusKind(static_cast<MessageKind>(200)));
}

TEST_F(PeerMessagesTest, OtherKindsAreRefusedAsNotConsensusMessages) {
    for (auto kind :
         {MessageKind::kTx, MessageKind::kBlockRequest, MessageKind::kSyncRequest,
          MessageKind::kSyncResponse, MessageKind::kEpochProofRequest, MessageKind::kEpochProof}) {
        expectRefused(kind, codec::encodeBlock(chain_.at(1)), ErrorCode::kInvalidArgument);
    }
}

// ---- checkConsensusMessage: accepted ----

TEST_F(PeerMessagesTest, AValidProposalBecomesProposalReceived) {
    auto checked = check(MessageKind::kProposal, codec::encodeBlock(chain_.at(2)));
    ASSERT_TRUE(checked) << checked.error().message;
    const auto* proposal = std::get_if<consensus::ProposalReceived>(&*checked);
    ASSERT_NE(proposal, nullptr);
    EXPECT_EQ(proposal->block.id, chain_.at(2).id);
    EXPECT_EQ(proposal->block.header, chain_.at(2).header);
}

TEST_F(PeerMessagesTest, AValidBlockResponseBecomesBlockFetched) {
    auto checked = check(MessageKind::kBlockResponse, codec::encodeBlock(chain_.at(3)));
    ASSERT_TRUE(checked) << checked.error().message;
    const auto* fetched = std::get_if<consensus::BlockFetched>(&*checked);
    ASSERT_NE(fetched, nullptr);
    EXPECT_EQ(fetched->block.id, chain_.at(3).id);
}

TEST_F(PeerMessagesTest, AValidVoteBecomesVoteReceived) {
    const codec::Vote vote = members().vote(3, 3, chain_.at(3).id);
    auto checked = check(MessageKind::kVote, codec::encodeVote(vote));
    ASSERT_TRUE(checked) << checked.error().message;
    const auto* received = std::get_if<consensus::VoteReceived>(&*checked);
    ASSERT_NE(received, nullptr);
    EXPECT_EQ(received->vote, vote);
}

TEST_F(PeerMessagesTest, AValidTimeoutBecomesTimeoutReceived) {
    auto checked = check(MessageKind::kTimeout, codec::encodeTimeout(timeout(0)));
    ASSERT_TRUE(checked) << checked.error().message;
    const auto* received = std::get_if<consensus::TimeoutReceived>(&*checked);
    ASSERT_NE(received, nullptr);
    EXPECT_EQ(received->timeout, timeout(0));
}

TEST_F(PeerMessagesTest, AValidTcBecomesTimeoutCertReceived) {
    auto checked = check(MessageKind::kTimeoutCert, codec::encodeTc(timeoutCert()));
    ASSERT_TRUE(checked) << checked.error().message;
    const auto* received = std::get_if<consensus::TimeoutCertReceived>(&*checked);
    ASSERT_NE(received, nullptr);
    EXPECT_EQ(received->tc, timeoutCert());
}

TEST_F(PeerMessagesTest, AValidForwardedQcBecomesQcReceived) {
    auto checked = check(MessageKind::kQuorumCert, codec::encodeQc(chain_.certifyingQc(3)));
    ASSERT_TRUE(checked) << checked.error().message;
    const auto* received = std::get_if<consensus::QcReceived>(&*checked);
    ASSERT_NE(received, nullptr);
    EXPECT_EQ(received->qc, chain_.certifyingQc(3));
}

// ---- checkConsensusMessage: non-members ----

TEST_F(PeerMessagesTest, RefusesAProposalByANonMember) {
    // Block 2 re-authored and signed by an outsider, with the same valid QC on block 1.
    const crypto::SecretKey outsider = testing::testKey(0, "outsider");
    codec::BlockHeader header = chain_.at(2).header;
    header.author = outsider.publicKey();
    codec::Block block = codec::makeBlock(header, chain_.at(2).txs);
    consensus::KeySigner signer(outsider);
    consensus::signProposal(signer, kChainId, block);
    for (auto kind : {MessageKind::kProposal, MessageKind::kBlockResponse}) {
        expectRefused(kind, codec::encodeBlock(block), ErrorCode::kInvalidBlock);
    }
}

TEST_F(PeerMessagesTest, RefusesAVoteByANonMember) {
    const crypto::SecretKey outsider = testing::testKey(0, "outsider");
    consensus::KeySigner signer(outsider);
    const codec::Vote vote = consensus::signVote(signer, kChainId, 0, 3, chain_.at(3).id);
    expectRefused(MessageKind::kVote, codec::encodeVote(vote), ErrorCode::kInvalidArgument);
}

TEST_F(PeerMessagesTest, RefusesATimeoutByANonMember) {
    const crypto::SecretKey outsider = testing::testKey(0, "outsider");
    consensus::KeySigner signer(outsider);
    const codec::Timeout t = consensus::signTimeout(signer, kChainId, 0, 4, chain_.certifyingQc(3));
    expectRefused(MessageKind::kTimeout, codec::encodeTimeout(t), ErrorCode::kInvalidArgument);
}

TEST_F(PeerMessagesTest, RefusesAVoteOfAnotherEpochAsWrongEpochNamingALaterOne) {
    // Around an epoch change honest peers are an epoch apart: kWrongEpoch, which the node does
    // not count as misbehaviour, and a later epoch is named as such (it starts a block sync).
    consensus::KeySigner signer(members().keys[1]);
    const codec::Vote vote = consensus::signVote(signer, kChainId, 1, 3, chain_.at(3).id);
    expectRefused(MessageKind::kVote, codec::encodeVote(vote), ErrorCode::kWrongEpoch);
    const auto checked = check(MessageKind::kVote, codec::encodeVote(vote));
    ASSERT_FALSE(checked);
    EXPECT_TRUE(checked.error().message.starts_with(kLaterEpochMessage)) << checked.error().message;
}

// ---- checkConsensusMessage: bad signatures ----

TEST_F(PeerMessagesTest, RefusesAProposalWithAFlippedSignatureByte) {
    codec::Block block = chain_.at(2);
    block.signature[7] ^= 0x01;
    for (auto kind : {MessageKind::kProposal, MessageKind::kBlockResponse}) {
        expectRefused(kind, codec::encodeBlock(block), ErrorCode::kBadSignature);
    }
}

TEST_F(PeerMessagesTest, RefusesAProposalSignedByAnotherMember) {
    codec::Block block = chain_.at(2);
    const std::size_t author = *committee().indexOf(block.header.author);
    consensus::KeySigner other(members().keys[(author + 1) % 4]);
    consensus::signProposal(other, kChainId, block);
    expectRefused(MessageKind::kProposal, codec::encodeBlock(block), ErrorCode::kBadSignature);
}

TEST_F(PeerMessagesTest, RefusesAProposalSignedForAnotherChain) {
    codec::Block block = chain_.at(2);
    consensus::KeySigner signer(members().keys[*committee().indexOf(block.header.author)]);
    consensus::signProposal(signer, "another-chain", block);
    expectRefused(MessageKind::kProposal, codec::encodeBlock(block), ErrorCode::kBadSignature);
}

TEST_F(PeerMessagesTest, RefusesAValidlySignedProposalWhoseQcIsForged) {
    ChainBuilder forged = chain_.truncated(1);
    forged.append({}, [](codec::BlockHeader& header) { header.qc.signatures[1][3] ^= 0x10; });
    expectRefused(MessageKind::kProposal, codec::encodeBlock(forged.at(2)),
                  ErrorCode::kInvalidCertificate);
}

TEST_F(PeerMessagesTest, RefusesAVoteWithAFlippedSignatureByte) {
    codec::Vote vote = members().vote(2, 3, chain_.at(3).id);
    vote.signature[63] ^= 0x01;
    expectRefused(MessageKind::kVote, codec::encodeVote(vote), ErrorCode::kBadSignature);
}

TEST_F(PeerMessagesTest, RefusesAVoteWhoseSignatureIsForAnotherBlock) {
    codec::Vote vote = members().vote(2, 3, chain_.at(3).id);
    vote.blockId = chain_.at(2).id;
    expectRefused(MessageKind::kVote, codec::encodeVote(vote), ErrorCode::kBadSignature);
}

TEST_F(PeerMessagesTest, RefusesATimeoutWithAFlippedSignatureByte) {
    codec::Timeout t = timeout(1);
    t.signature[0] ^= 0x01;
    expectRefused(MessageKind::kTimeout, codec::encodeTimeout(t), ErrorCode::kBadSignature);
}

TEST_F(PeerMessagesTest, RefusesATimeoutWhoseHighQcIsForged) {
    codec::QuorumCert highQc = chain_.certifyingQc(3);
    highQc.signatures[0][5] ^= 0x01;
    consensus::KeySigner signer(members().keys[1]);
    const codec::Timeout t = consensus::signTimeout(signer, kChainId, 0, 4, highQc);
    expectRefused(MessageKind::kTimeout, codec::encodeTimeout(t), ErrorCode::kInvalidCertificate);
}

TEST_F(PeerMessagesTest, RefusesAForwardedQcWithAFlippedSignatureByteOrTooFewSigners) {
    codec::QuorumCert flipped = chain_.certifyingQc(3);
    flipped.signatures[1][7] ^= 0x01;
    expectRefused(MessageKind::kQuorumCert, codec::encodeQc(flipped),
                  ErrorCode::kInvalidCertificate);
    codec::QuorumCert fewer = chain_.certifyingQc(3);
    fewer.signatures.pop_back();
    expectRefused(MessageKind::kQuorumCert, codec::encodeQc(fewer), ErrorCode::kInvalidCertificate);
    const Bytes encoded = codec::encodeQc(chain_.certifyingQc(3));
    expectRefused(MessageKind::kQuorumCert, Bytes(encoded.begin(), encoded.end() - 5),
                  ErrorCode::kMalformed);
}

TEST_F(PeerMessagesTest, RefusesATcWithAFlippedSignatureByte) {
    codec::TimeoutCert tc = timeoutCert();
    tc.signatures[2][33] ^= 0x01;
    expectRefused(MessageKind::kTimeoutCert, codec::encodeTc(tc), ErrorCode::kInvalidCertificate);
}

TEST_F(PeerMessagesTest, RefusesATcWithTooFewSigners) {
    codec::TimeoutCert tc = timeoutCert();
    tc.signers[0] = 0x03;  // members 0 and 1 of the three that signed
    tc.hqcRounds.pop_back();
    tc.signatures.pop_back();
    expectRefused(MessageKind::kTimeoutCert, codec::encodeTc(tc), ErrorCode::kInvalidCertificate);
}

// ---- checkConsensusMessage: garbage ----

TEST_F(PeerMessagesTest, RefusesGarbageOfEveryConsensusKindWithoutCrashing) {
    const std::vector<MessageKind> kinds{MessageKind::kProposal, MessageKind::kVote,
                                         MessageKind::kTimeout, MessageKind::kTimeoutCert,
                                         MessageKind::kBlockResponse};
    std::mt19937_64 rng(11);
    for (int i = 0; i < 2000; ++i) {
        Bytes junk(rng() % 400);
        for (auto& b : junk) {
            b = static_cast<std::uint8_t>(rng());
        }
        for (auto kind : kinds) {
            EXPECT_FALSE(check(kind, junk)) << codec::kindName(kind) << " accepted junk";
        }
    }
    // An empty payload lacks the block, vote or QC ids; an empty TC lacks its high QC.
    for (auto kind : {MessageKind::kProposal, MessageKind::kVote, MessageKind::kTimeout,
                      MessageKind::kBlockResponse}) {
        expectRefused(kind, Bytes{}, ErrorCode::kBadLength);
    }
    expectRefused(MessageKind::kTimeoutCert, Bytes{}, ErrorCode::kMalformed);
}

TEST_F(PeerMessagesTest, RefusesEveryTruncationAndByteFlipOfAValidProposal) {
    const Bytes valid = codec::encodeBlock(chain_.at(3));
    for (std::size_t n = 0; n < valid.size(); ++n) {
        const Bytes prefix(valid.begin(), valid.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_FALSE(check(MessageKind::kProposal, prefix)) << "prefix of " << n << " bytes";
    }
    for (std::size_t i = 0; i < valid.size(); ++i) {
        Bytes flipped = valid;
        flipped[i] ^= 0x01;
        EXPECT_FALSE(check(MessageKind::kProposal, flipped)) << "byte " << i;
    }
}

TEST_F(PeerMessagesTest, RefusesAVoteSentAsAProposalAndABlockSentAsAVote) {
    const codec::Vote vote = members().vote(0, 3, chain_.at(3).id);
    EXPECT_FALSE(check(MessageKind::kProposal, codec::encodeVote(vote)));
    EXPECT_FALSE(check(MessageKind::kVote, codec::encodeBlock(chain_.at(3))));
    EXPECT_FALSE(check(MessageKind::kTimeoutCert, codec::encodeTimeout(timeout(0))));
}

codec::NetMessage messageOf(std::size_t bytes, std::uint8_t fill) {
    return {MessageKind::kVote, Bytes(bytes, fill)};
}

NodeId peer(std::uint8_t n) {
    NodeId id;
    id[0] = n;
    return id;
}

TEST(HeldMessages, EachPeerKeepsItsNewestWithinItsShare) {
    HeldMessages held({.messagesPerPeer = 3, .bytesPerPeer = 100, .bytesTotal = 1000});
    for (std::uint8_t k = 0; k < 5; ++k) {
        EXPECT_TRUE(held.hold(peer(1), messageOf(10, k)));
    }
    // Three messages a peer: its two oldest went.
    EXPECT_EQ(held.size(), 3U);
    // 100 bytes a peer: a 90-byte message leaves room for none of the others.
    EXPECT_TRUE(held.hold(peer(2), messageOf(20, 7)));
    EXPECT_TRUE(held.hold(peer(2), messageOf(90, 8)));
    EXPECT_FALSE(held.hold(peer(2), messageOf(101, 9)));  // more than a peer's share
    const auto taken = held.take();
    ASSERT_EQ(taken.size(), 4U);
    EXPECT_EQ(taken[0].first, peer(1));
    EXPECT_EQ(taken[0].second.payload, Bytes(10, 2));
    EXPECT_EQ(taken[2].second.payload, Bytes(10, 4));
    EXPECT_EQ(taken[3].first, peer(2));
    EXPECT_EQ(taken[3].second.payload, Bytes(90, 8));
    EXPECT_EQ(held.size(), 0U);
    EXPECT_TRUE(held.take().empty());
}

TEST(HeldMessages, OnePeerCannotTakeTheOthersRoom) {
    HeldMessages held({.messagesPerPeer = 100, .bytesPerPeer = 100, .bytesTotal = 250});
    // A flooding peer holds at most its own 100 bytes, whatever it sends.
    for (std::uint8_t k = 0; k < 50; ++k) {
        EXPECT_TRUE(held.hold(peer(9), messageOf(10, k)));
    }
    EXPECT_TRUE(held.hold(peer(1), messageOf(100, 1)));
    // The total is full now: a third peer's message does not fit and is dropped.
    EXPECT_FALSE(held.hold(peer(2), messageOf(60, 2)));
    EXPECT_TRUE(held.hold(peer(2), messageOf(50, 2)));
    std::size_t fromFlooder = 0;
    for (const auto& [from, message] : held.take()) {
        fromFlooder += from == peer(9) ? 1U : 0U;
    }
    EXPECT_EQ(fromFlooder, 10U);
}

}  // namespace
}  // namespace gridledger::node::peer_messages_test
