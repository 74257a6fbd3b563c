#pragma once

// Test chains for the node's unit tests: a four-member committee with deterministic keys, and a
// builder that appends signed blocks (round = height, no timeouts), each carrying a QC on its
// parent signed by three members, so that every block but the tip is certified and committed by
// the 2-chain rule and has a commit proof.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::node::testing {

inline constexpr std::string_view kChainId = "gridledger-node-test";
inline constexpr std::uint64_t kGenesisTimeMs = 1'700'000'000'000;

/** The i-th deterministic key of the family `tag` ("member" for the committee). */
inline crypto::SecretKey testKey(std::size_t i, std::string_view tag = "member") {
    const Hash256 seed =
        crypto::sha256(asBytes("node-test-" + std::string(tag) + "-key-" + std::to_string(i)));
    return crypto::SecretKey::fromBytes(seed.view()).value();
}

/** The genesis block every test chain starts from: height 0, round 0, epoch 0. */
inline codec::Block genesisBlock() {
    codec::BlockHeader header;
    header.timestampMs = kGenesisTimeMs;
    return codec::makeBlock(header, {});
}

/** The committee of epoch 0 on the genesis block, with its members' keys. */
struct TestCommittee {
    std::vector<crypto::SecretKey> keys;
    codec::Block genesis;
    consensus::Committee committee;

    /** `n` members with keys testKey(0..n-1). */
    static TestCommittee create(std::size_t n = 4) {
        std::vector<crypto::SecretKey> keys;
        std::vector<PubKey> members;
        for (std::size_t i = 0; i < n; ++i) {
            keys.push_back(testKey(i));
            members.push_back(keys.back().publicKey());
        }
        codec::Block genesis = genesisBlock();
        auto committee = consensus::Committee::create(kChainId, 0, genesis.id, members).value();
        return TestCommittee{std::move(keys), std::move(genesis), std::move(committee)};
    }

    /** A vote of member `i` for (round, blockId). */
    [[nodiscard]] codec::Vote vote(std::size_t i, std::uint64_t round,
                                   const Hash256& blockId) const {
        consensus::KeySigner signer(keys.at(i));
        return consensus::signVote(signer, kChainId, committee.epoch(), round, blockId);
    }

    /** A QC on (round, blockId) built from the votes of members 0 .. signers-1. */
    [[nodiscard]] codec::QuorumCert qc(std::uint64_t round, const Hash256& blockId,
                                       std::size_t signers = 3) const {
        std::vector<codec::Vote> votes;
        for (std::size_t i = 0; i < signers; ++i) {
            votes.push_back(vote(i, round, blockId));
        }
        return consensus::buildQuorumCert(committee, votes).value();
    }
};

/** A chain of signed blocks on the genesis block of a TestCommittee. Copyable, to fork. */
class ChainBuilder {
  public:
    using Adjust = std::function<void(codec::BlockHeader&)>;

    explicit ChainBuilder(TestCommittee committee)
        : c_(std::move(committee)),
          tipQc_(consensus::genesisQc(c_.committee.epoch(), c_.genesis.id)) {
        blocks_.push_back(c_.genesis);
    }

    [[nodiscard]] const TestCommittee& members() const { return c_; }
    [[nodiscard]] const consensus::Committee& committee() const { return c_.committee; }
    [[nodiscard]] const codec::Block& at(std::uint64_t height) const { return blocks_.at(height); }
    [[nodiscard]] std::uint64_t tipHeight() const { return blocks_.size() - 1; }

    /**
     * Appends the block at height tip + 1: round = height, parent = the tip, the tip's QC (the
     * genesis QC on genesis), authored and signed by the round's leader. `adjust` may change the
     * header before the block is hashed and signed. Then signs a QC on the new tip.
     */
    const codec::Block& append(std::vector<Bytes> txs = {}, const Adjust& adjust = {}) {
        const codec::Block& tip = blocks_.back();
        codec::BlockHeader header;
        header.epoch = c_.committee.epoch();
        header.height = tip.header.height + 1;
        header.round = header.height;
        header.parentId = tip.id;
        header.qc = tipQc_;
        const std::size_t leader = c_.committee.leaderIndex(header.round);
        header.author = c_.keys[leader].publicKey();
        header.timestampMs = tip.header.timestampMs + 1000;
        header.execHeight = tip.header.height;
        if (adjust) {
            adjust(header);
        }
        codec::Block block = codec::makeBlock(header, std::move(txs));
        consensus::KeySigner signer(c_.keys[leader]);
        consensus::signProposal(signer, kChainId, block);
        blocks_.push_back(std::move(block));
        tipQc_ = c_.qc(blocks_.back().header.round, blocks_.back().id);
        return blocks_.back();
    }

    /** Appends `count` blocks, each with one small transaction naming its height and `tag`. */
    void appendMany(std::size_t count, std::string_view tag = "tx") {
        for (std::size_t i = 0; i < count; ++i) {
            const std::string tx = std::string(tag) + "-" + std::to_string(tipHeight() + 1);
            append({Bytes(tx.begin(), tx.end())});
        }
    }

    /** The QC certifying the block at `height`: the next block's QC, or the tip's own QC. */
    [[nodiscard]] const codec::QuorumCert& certifyingQc(std::uint64_t height) const {
        return height < tipHeight() ? blocks_.at(height + 1).header.qc : tipQc_;
    }

    /** The commit proof of the block at `height` (requires height < tipHeight()). */
    [[nodiscard]] codec::CommitProof proofOf(std::uint64_t height) const {
        const codec::Block& child = blocks_.at(height + 1);
        return codec::makeCommitProof(child.headerBytes, certifyingQc(height + 1)).value();
    }

    /** This chain cut back to heights 0..height, to fork from. */
    [[nodiscard]] ChainBuilder truncated(std::uint64_t height) const {
        ChainBuilder copy = *this;
        copy.tipQc_ = certifyingQc(height);
        copy.blocks_.resize(height + 1);
        return copy;
    }

  private:
    TestCommittee c_;
    std::vector<codec::Block> blocks_;  // blocks_[h] is the block at height h
    codec::QuorumCert tipQc_;           // certifies blocks_.back()
};

}  // namespace gridledger::node::testing
