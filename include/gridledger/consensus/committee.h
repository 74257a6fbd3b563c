#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>

namespace gridledger::consensus {

/** Largest committee of a consensus epoch unless genesis or governance says otherwise. */
inline constexpr std::size_t kDefaultCommitteeMax = 31;

/** Largest number of faulty members a committee of n tolerates: f = ⌊(n−1)/3⌋ (0 for n = 0). */
[[nodiscard]] std::size_t maxFaultyOf(std::size_t n);

/** Quorum of a committee of n: q = ⌊2n/3⌋ + 1. */
[[nodiscard]] std::size_t quorumOf(std::size_t n);

/**
 * The seed of epoch `epoch` + 1 after `previous`, the seed of `epoch`:
 * signingDigest("sdbft/seed", chainId, u64 (epoch + 1) ‖ previous). Epoch 0's seed is
 * signingDigest("sdbft/seed", chainId, u64 0 ‖ genesis block id). No proposer can choose a seed:
 * the chain of seeds is fixed by genesis (docs/protocol.md §1).
 */
[[nodiscard]] Hash256 nextEpochSeed(std::string_view chainId, std::uint64_t epoch,
                                    const Hash256& previous);

/** The seed of `epoch` on the chain whose genesis block is `genesisBlockId`. */
[[nodiscard]] Hash256 epochSeedOf(std::string_view chainId, const Hash256& genesisBlockId,
                                  std::uint64_t epoch);

/** The leader seed of an epoch: signingDigest("sdbft/leader", chainId, u64 epoch ‖ epochSeed). */
[[nodiscard]] Hash256 leaderSeedOf(std::string_view chainId, std::uint64_t epoch,
                                   const Hash256& epochSeed);

/**
 * The members of one consensus epoch, in a fixed order (bit i of a certificate's signer bitmap is
 * member i). Immutable once built; cheap to copy.
 */
class Committee {
  public:
    /**
     * Builds the committee of `epoch` that starts from block `seedBlockId`, with the epoch's
     * seed `epochSeed` (epochSeedOf). Requires `members` non-empty and pairwise distinct; fails
     * with kInvalidArgument otherwise. Guarantees n = members.size(), f = maxFaultyOf(n),
     * q = quorumOf(n).
     */
    [[nodiscard]] static Result<Committee> create(std::string_view chainId, std::uint64_t epoch,
                                                  const Hash256& seedBlockId,
                                                  const Hash256& epochSeed,
                                                  std::vector<PubKey> members);
    /**
     * The same with epochSeedOf(chainId, seedBlockId, epoch): right for a chain's first
     * committee, whose seed block is the genesis block.
     */
    [[nodiscard]] static Result<Committee> create(std::string_view chainId, std::uint64_t epoch,
                                                  const Hash256& seedBlockId,
                                                  std::vector<PubKey> members);

    [[nodiscard]] std::uint64_t epoch() const { return epoch_; }
    /** The block this epoch starts from; the genesis QC (round 0) certifies it. */
    [[nodiscard]] const Hash256& seedBlockId() const { return seedBlockId_; }
    /** The epoch's seed: the next epoch's comes from it (nextEpochSeed). */
    [[nodiscard]] const Hash256& epochSeed() const { return epochSeed_; }
    [[nodiscard]] const Hash256& leaderSeed() const { return leaderSeed_; }
    [[nodiscard]] const std::vector<PubKey>& members() const { return members_; }
    /** n, the number of members. */
    [[nodiscard]] std::size_t size() const { return members_.size(); }
    /** f = ⌊(n−1)/3⌋. */
    [[nodiscard]] std::size_t maxFaulty() const { return maxFaultyOf(size()); }
    /** q = ⌊2n/3⌋ + 1. */
    [[nodiscard]] std::size_t quorum() const { return quorumOf(size()); }
    /** Member i; requires i < size(). */
    [[nodiscard]] const PubKey& member(std::size_t i) const { return members_.at(i); }
    /** The index of `key`, or nullopt when it is not a member. */
    [[nodiscard]] std::optional<std::size_t> indexOf(const PubKey& key) const;
    [[nodiscard]] bool contains(const PubKey& key) const { return indexOf(key).has_value(); }
    /** Index of the leader of `round`: SHA-256(leaderSeed ‖ u64 round) mod n, big-endian. */
    [[nodiscard]] std::size_t leaderIndex(std::uint64_t round) const;
    /** The leader of `round`. */
    [[nodiscard]] const PubKey& leaderOf(std::uint64_t round) const {
        return members_[leaderIndex(round)];
    }

    /**
     * The leader of `round` with leader reputation (docs/protocol.md §1), for a block whose
     * parent's chain is `recent`: the parent first, then its ancestors, newest to oldest. Blocks
     * of this epoch count, and those of `previous`'s epoch when `previous` (the committee before
     * this one) is given, as long as their round is above 0; only the first `window` of them.
     * A member is active when it authored one of those blocks or signed the QC or the TC one of
     * them carries (a certificate of the previous epoch names its signers by `previous`'s
     * order), unless it is silenced: some block carries a TC the member did not sign, and the
     * member neither authored that block nor appears in a newer one. With window 0 or in an
     * open round (a multiple of window · n) the base leader leaderIndex(round) leads. Otherwise
     * the line is the active, not silenced members in member order, or every member when fewer
     * than q are. Round P + 1, P the parent's round (0 for a parent of another epoch), goes to
     * its base leader when that one is in the line, else to the member at position
     * (P + 1) mod (line length); each later round on the same parent goes to the next member
     * of the line.
     */
    [[nodiscard]] std::size_t reputationLeaderIndex(
        std::uint64_t round, const std::vector<const codec::BlockHeader*>& recent,
        std::size_t window, const Committee* previous = nullptr) const;

  private:
    Committee() = default;

    std::uint64_t epoch_ = 0;
    Hash256 seedBlockId_;
    Hash256 epochSeed_;
    Hash256 leaderSeed_;
    std::vector<PubKey> members_;
    std::map<PubKey, std::size_t> index_;
};

/**
 * The committee of `epoch` chosen from the validator set: all of `validators` when there are at
 * most `committeeMax`, else the `committeeMax` validators with the lowest
 * signingDigest("sdbft/committee", chainId, u64 epoch ‖ epochSeed ‖ pubkey). The result keeps
 * the order of `validators`. Fails with kInvalidArgument on an empty or duplicate set or on
 * committeeMax = 0.
 */
[[nodiscard]] Result<std::vector<PubKey>> selectCommittee(const std::vector<PubKey>& validators,
                                                          std::string_view chainId,
                                                          std::uint64_t epoch,
                                                          const Hash256& epochSeed,
                                                          std::size_t committeeMax);

/** The digest a vote signs: signingDigest(kVoteTag, chainId, voteSigningBody(...)). */
[[nodiscard]] Hash256 voteDigest(std::string_view chainId, std::uint64_t epoch, std::uint64_t round,
                                 const Hash256& blockId);
/** The digest a timeout signs: signingDigest(kTimeoutTag, chainId, timeoutSigningBody(...)). */
[[nodiscard]] Hash256 timeoutDigest(std::string_view chainId, std::uint64_t epoch,
                                    std::uint64_t round, std::uint64_t hqcRound);
/** The digest a block's author signs: signingDigest(kProposalTag, chainId, blockId). */
[[nodiscard]] Hash256 proposalDigest(std::string_view chainId, const Hash256& blockId);

/** The genesis QC of an epoch: round 0, certifying `blockId`, no signers. */
[[nodiscard]] codec::QuorumCert genesisQc(std::uint64_t epoch, const Hash256& blockId);

/**
 * How a signature is checked: true iff `signature` is `key`'s signature of `digest`. The chain's
 * signatures are BIP-340 (bip340Check()); the simulator runs the same checks with its own cheap
 * deterministic signatures.
 */
using SignatureCheck = std::function<bool(const PubKey&, const Hash256&, const Signature&)>;

/** The chain's signature check: BIP-340 Schnorr (crypto::verify). */
[[nodiscard]] const SignatureCheck& bip340Check();

/**
 * Checks a QC against the committee: same epoch; a signer bitmap of exactly ⌈n/8⌉ bytes with no
 * bit beyond n; at least q signers; one signature per signer, in member order; each a valid
 * Schnorr signature of voteDigest(chainId, epoch, round, blockId). A round-0 QC is accepted by
 * convention iff it has no signers and certifies committee.seedBlockId() (the genesis QC).
 * Fails with kInvalidCertificate; never crashes on arbitrary input.
 */
[[nodiscard]] Status verifyQuorumCert(const codec::QuorumCert& qc, const Committee& committee,
                                      std::string_view chainId,
                                      const SignatureCheck& check = bip340Check());

/**
 * The part of verifyTimeoutCert that does not look at the TC's high QC: same epoch, well-formed
 * bitmap, at least q signers, one hqc round and one signature per signer, each hqc round below
 * the TC's round, each signature valid. Fails with kInvalidCertificate.
 */
[[nodiscard]] Status verifyTimeoutCertSignatures(const codec::TimeoutCert& tc,
                                                 const Committee& committee,
                                                 std::string_view chainId,
                                                 const SignatureCheck& check = bip340Check());

/**
 * Checks a TC like a QC: same epoch, well-formed bitmap, at least q signers, one hqc round and one
 * signature per signer, each hqc round below the TC's round, each signature a valid Schnorr
 * signature of timeoutDigest(chainId, epoch, round, hqcRound), and a high QC whose round is the
 * largest hqc round and that verifies (verifyQuorumCert): verifyTimeoutCertSignatures and the
 * proof of the highest QC. Fails with kInvalidCertificate.
 */
[[nodiscard]] Status verifyTimeoutCert(const codec::TimeoutCert& tc, const Committee& committee,
                                       std::string_view chainId,
                                       const SignatureCheck& check = bip340Check());

/** Checks a vote: a member of the epoch signed voteDigest(...). Fails with kBadSignature etc. */
[[nodiscard]] Status verifyVote(const codec::Vote& vote, const Committee& committee,
                                std::string_view chainId,
                                const SignatureCheck& check = bip340Check());

/** Checks a timeout: member, signature, hqc round below the round, and its high QC. */
[[nodiscard]] Status verifyTimeout(const codec::Timeout& timeout, const Committee& committee,
                                   std::string_view chainId,
                                   const SignatureCheck& check = bip340Check());

/**
 * Checks what a driver must check before it hands a proposal or a fetched block to the core: the
 * author is a member and signed proposalDigest(chainId, id), and the embedded QC and TC verify.
 * It does not check that the author leads the block's round (the core does).
 */
[[nodiscard]] Status verifyProposal(const codec::Block& block, const Committee& committee,
                                    std::string_view chainId,
                                    const SignatureCheck& check = bip340Check());

/**
 * Checks that `proof` shows `block` committed by the 2-chain rule: the path's headers (same
 * epoch, each one height and at least one round above the one before, naming it as parent)
 * lead from the block to a block L, the first carrying a valid QC for the block; the child (same
 * epoch, L's height + 1 and round + 1) names L as parent and carries a valid QC for it; and the
 * proof's QC validly certifies the child. Fails with kInvalidCertificate; never crashes on any
 * input.
 */
[[nodiscard]] Status verifyCommitProof(const codec::Block& block, const codec::CommitProof& proof,
                                       const Committee& committee, std::string_view chainId,
                                       const SignatureCheck& check = bip340Check());

/**
 * The QC that certifies the block a commit proof proves, as the proof carries it: the first path
 * header's QC, or the child's when the path is empty. Valid once verifyCommitProof passed.
 */
[[nodiscard]] const codec::QuorumCert& certifyingQcOf(const codec::CommitProof& proof);

/**
 * Builds a QC from votes that all name one (epoch, round, blockId) of `committee`'s epoch.
 * Votes of non-members fail; a second vote of one voter is ignored; the signatures are not
 * checked (the caller checked each vote). Fails with kInvalidCertificate below q distinct voters.
 */
[[nodiscard]] Result<codec::QuorumCert> buildQuorumCert(const Committee& committee,
                                                        const std::vector<codec::Vote>& votes);

/**
 * Builds a TC from timeouts that all name one (epoch, round). Same rules as buildQuorumCert;
 * each signer's hqc round is the round of its timeout's high QC, and the TC carries the highest
 * of those QCs (the timeouts' own QCs are assumed checked, as their signatures are).
 */
[[nodiscard]] Result<codec::TimeoutCert> buildTimeoutCert(
    const Committee& committee, const std::vector<codec::Timeout>& timeouts);

}  // namespace gridledger::consensus
