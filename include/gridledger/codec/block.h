#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::codec {

/** Largest encoded block accepted from anyone. */
inline constexpr std::size_t kMaxBlockBytes = std::size_t{16} << 20U;

/** A quorum certificate: q votes of the committee of `epoch` for block `blockId` in `round`. */
struct QuorumCert {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    Hash256 blockId;
    Bytes signers;  // bitmap over the committee, bit i (LSB-first in byte i/8) = member i
    std::vector<Signature> signatures;

    bool operator==(const QuorumCert&) const = default;
};

/**
 * A batch certificate (docs/protocol.md §14): f + 1 acknowledgements by the committee of `epoch`
 * of the batch named `digest`, each a signature of the member's batch acknowledgement digest.
 */
struct BatchCert {
    std::uint64_t epoch = 0;
    Hash256 digest;
    Bytes signers;  // bitmap over the committee, as in a QC
    std::vector<Signature> signatures;

    bool operator==(const BatchCert&) const = default;
};

/**
 * A timeout certificate: q timeouts for `round`, each with its signer's highest QC round, and
 * the QC of the highest of those rounds, which proves that round was certified.
 */
struct TimeoutCert {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    Bytes signers;
    std::vector<std::uint64_t> hqcRounds;
    std::vector<Signature> signatures;
    /** The signers' highest QC: its round is the largest of hqcRounds. */
    QuorumCert highQc;

    /** The highest of the signers' QC rounds (0 when empty). */
    [[nodiscard]] std::uint64_t highestHqcRound() const;
    bool operator==(const TimeoutCert&) const = default;
};

struct BlockHeader {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    std::uint64_t height = 0;
    Hash256 parentId;
    QuorumCert qc;
    std::optional<TimeoutCert> tc;
    PubKey author;
    std::uint64_t timestampMs = 0;
    Hash256 txsRoot;
    std::uint32_t txCount = 0;
    std::uint64_t execHeight = 0;
    Hash256 execStateRoot;
    Hash256 execResultsRoot;

    bool operator==(const BlockHeader&) const = default;
};

/** A block with its encoded header; `id` = SHA-256(headerBytes). */
struct Block {
    BlockHeader header;
    Bytes headerBytes;
    Hash256 id;
    std::vector<Bytes> txs;
    Signature signature;
};

/** A validator's vote for a block. Signed bytes: voteSigningBody(). */
struct Vote {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    Hash256 blockId;
    PubKey voter;
    Signature signature;

    bool operator==(const Vote&) const = default;
};

/** A validator's timeout for a round, with its highest QC. */
struct Timeout {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    QuorumCert highQc;
    PubKey author;
    Signature signature;

    bool operator==(const Timeout&) const = default;
};

/** One header on a commit proof's path, with its encoding and id. */
struct ProofHeader {
    BlockHeader header;
    Bytes headerBytes;
    /** SHA-256(headerBytes). */
    Hash256 id;

    bool operator==(const ProofHeader&) const = default;
};

/** Decodes an encoded header into a ProofHeader (id = SHA-256 of the bytes). */
[[nodiscard]] Result<ProofHeader> makeProofHeader(Bytes headerBytes);

/** Most headers on a commit proof's path. */
inline constexpr std::size_t kMaxCommitProofPath = 256;

/**
 * Proof that a block B is committed (2-chain rule): `path`, the headers of the committed blocks
 * above B up to a block L (empty when L is B itself), each naming the one before as parent; the
 * header of a child of L whose round directly follows L's and whose QC certifies L; and
 * `commitQc` certifying that child. The child's QC makes L committed, and L's ancestors with it.
 * consensus::verifyCommitProof checks it.
 */
struct CommitProof {
    std::vector<ProofHeader> path;
    BlockHeader childHeader;
    Bytes childHeaderBytes;
    /** SHA-256(childHeaderBytes). */
    Hash256 childId;
    QuorumCert commitQc;
};

/** Fixed binary encodings of what votes and timeouts sign: u64 epoch ‖ u64 round ‖ … */
[[nodiscard]] Bytes voteSigningBody(std::uint64_t epoch, std::uint64_t round,
                                    const Hash256& blockId);
[[nodiscard]] Bytes timeoutSigningBody(std::uint64_t epoch, std::uint64_t round,
                                       std::uint64_t hqcRound);

/** Merkle root over a list of hashes (binary, SHA-256, domain-separated; empty list → zero). */
[[nodiscard]] Hash256 merkleRoot(const std::vector<Hash256>& leaves);

/** Encodes a header; the block id is SHA-256 of the result. */
[[nodiscard]] Bytes encodeHeader(const BlockHeader& header);
/** Builds a Block from a header and its txs (computes headerBytes and id; signature left zero). */
[[nodiscard]] Block makeBlock(const BlockHeader& header, std::vector<Bytes> txs);

/** Parses an encoded header (as in Block::headerBytes). */
[[nodiscard]] Result<BlockHeader> decodeHeader(ByteView raw);

[[nodiscard]] Bytes encodeBlock(const Block& block);
/** Parses a block; checks field lengths and that txsRoot/txCount match the txs. */
[[nodiscard]] Result<Block> decodeBlock(ByteView raw);

[[nodiscard]] Bytes encodeQc(const QuorumCert& qc);
[[nodiscard]] Result<QuorumCert> decodeQc(ByteView raw);
[[nodiscard]] Bytes encodeBatchCert(const BatchCert& cert);
/** Fails with kMalformed on garbage, kBadLength on a digest or signature of the wrong size. */
[[nodiscard]] Result<BatchCert> decodeBatchCert(ByteView raw);
[[nodiscard]] Bytes encodeTc(const TimeoutCert& tc);
[[nodiscard]] Result<TimeoutCert> decodeTc(ByteView raw);
/**
 * Decodes the child's header and the path's (lowest first) into a proof. Fails with kMalformed
 * on a header that does not decode or a path longer than kMaxCommitProofPath.
 */
[[nodiscard]] Result<CommitProof> makeCommitProof(Bytes childHeaderBytes, QuorumCert commitQc,
                                                  std::vector<Bytes> pathHeaderBytes = {});
[[nodiscard]] Bytes encodeCommitProof(const CommitProof& proof);
[[nodiscard]] Result<CommitProof> decodeCommitProof(ByteView raw);
[[nodiscard]] Bytes encodeVote(const Vote& vote);
[[nodiscard]] Result<Vote> decodeVote(ByteView raw);
[[nodiscard]] Bytes encodeTimeout(const Timeout& timeout);
[[nodiscard]] Result<Timeout> decodeTimeout(ByteView raw);

}  // namespace gridledger::codec
