#pragma once

// Block sync: a node that is behind asks a peer for committed blocks, checks that they chain to
// its own head and that a commit proof makes the last one final, then executes them. The serving
// and checking halves live here; the node drives the exchange.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/effect.h>
#include <gridledger/ledger/chain_reader.h>

namespace gridledger::node {

/** Most encoded block bytes in one sync response (kept well below the P2P frame limit). */
inline constexpr std::size_t kMaxSyncResponseBytes = std::size_t{8} << 20U;

/**
 * The answer to `request` from the ledger: committed blocks from request.fromHeight on, at most
 * min(request.maxBlocks, maxBlocks) of them (more, up to codec::kMaxSyncBlocks, only while none
 * of them has a commit proof) and at most kMaxSyncResponseBytes of headers and transactions (or
 * one block, when the first alone is larger), cut back to the highest one this node holds a
 * commit proof for, with that proof. No blocks when there are none above the request (or none
 * with a proof within reach). headHeight is the executed height.
 */
[[nodiscard]] Result<codec::SyncResponse> serveSync(const ledger::ChainReader& blocks,
                                                    const codec::SyncRequest& request,
                                                    std::uint64_t maxBlocks);

/** A commit proof for the committed block at `height`. */
struct HeightProof {
    std::uint64_t height = 0;
    codec::CommitProof proof;
};

/**
 * The commit proofs that consecutive committed blocks give one another: block i is proven by
 * block i + 1 when that one's round directly follows, with `certs[i + 1]`, the QC that certifies
 * block i + 1. `certs[i]` certifies `blocks[i]`; both have the same length. Stored with every
 * commit and sync batch, they let this node serve sync from almost any height.
 */
[[nodiscard]] std::vector<HeightProof> chainedCommitProofs(
    const std::vector<const codec::Block*>& blocks,
    const std::vector<const codec::QuorumCert*>& certs);

/**
 * The commit proof of `blocks[index]` from the commit that contained it: the blocks above it in
 * the commit as the path, and the header of the block `commitQc` certifies (the child of the
 * commit's last block) with `commitQc`. This proves the block that ended an epoch even when its
 * successor is not in the next round. Fails when a header does not decode or the path is longer
 * than codec::kMaxCommitProofPath.
 */
[[nodiscard]] Result<codec::CommitProof> commitProofInCommit(
    const std::vector<const codec::Block*>& blocks, std::size_t index, Bytes childHeaderBytes,
    const codec::QuorumCert& commitQc);

/**
 * The commit proofs a Commit gives the ledger that executed it up to `executedHeight`: each
 * block proven by its successor when their rounds follow each other (chainedCommitProofs), and
 * the last executed block (the block that ended the epoch, `endedEpochAt`, when one did) by the
 * child that commit.commitQc certifies, through the blocks above it (commitProofInCommit), when
 * `childHeaderBytes` (that child's header) is known. None names a height above `executedHeight`.
 */
[[nodiscard]] std::vector<HeightProof> commitProofsOf(const consensus::Commit& commit,
                                                      std::optional<std::size_t> endedEpochAt,
                                                      const Bytes* childHeaderBytes,
                                                      std::uint64_t executedHeight);

/** Committed blocks checked by verifySyncResponse, each with the QC that certifies it. */
struct VerifiedBlocks {
    std::vector<codec::Block> blocks;
    std::vector<codec::QuorumCert> certs;
    codec::CommitProof proof;
};

/**
 * Checks a sync response against this node's head (`headHeight`, `headId`): at least one block;
 * the blocks have heights headHeight + 1, + 2, … and the epoch of `committee`; each names the
 * previous one (the first names `headId`) as parent with a QC that certifies it and verifies
 * against the committee; the commit proof shows the last one committed. Fails with
 * kInvalidBlock or kInvalidCertificate naming the height.
 */
[[nodiscard]] Result<VerifiedBlocks> verifySyncResponse(
    codec::SyncResponse response, std::uint64_t headHeight, const Hash256& headId,
    const consensus::Committee& committee, std::string_view chainId,
    const consensus::SignatureCheck& check = consensus::bip340Check());

/**
 * Executes a verified batch in order: `execute(block, cert)` runs one block and answers whether
 * its execution ended the epoch (docs/protocol.md §12). The batch stops right after such a block:
 * blocks above the block that ended an epoch belong to no ledger, whatever proof came with them.
 * Returns the number of blocks executed, or the first error of `execute`.
 */
[[nodiscard]] Result<std::size_t> applySyncedBlocks(
    const VerifiedBlocks& verified,
    const std::function<Result<bool>(const codec::Block&, const codec::QuorumCert&)>& execute);

/**
 * The commit proofs to store after the first `executed` blocks of `verified` were executed:
 * those the blocks give one another, and the batch's own proof when every block was executed.
 * None names a height above the last executed block.
 */
[[nodiscard]] std::vector<HeightProof> syncedCommitProofs(const VerifiedBlocks& verified,
                                                          std::size_t executed);

/**
 * The last block of consensus epoch `epoch` in a ledger executed up to `executedHeight`: the
 * highest block whose epoch is at most `epoch`, if its epoch is `epoch`. Epochs never decrease
 * along a ledger, so this is a binary search. nullopt when the ledger holds no block of that
 * epoch. Only the caller knows whether the epoch has ended (its committee is of a later one).
 */
[[nodiscard]] Result<std::optional<codec::Block>> lastBlockOfEpoch(
    const ledger::ChainReader& blocks, std::uint64_t epoch, std::uint64_t executedHeight);

/**
 * The epoch proof this ledger gives for an epoch that has ended: the header of `reconfig`, the
 * block that ended it, and the commit proof stored at its height; nullopt when no proof is
 * stored there.
 */
[[nodiscard]] Result<std::optional<codec::EpochProof>> epochProofOf(
    const ledger::ChainReader& blocks, const codec::Block& reconfig);

/**
 * The answer to a peer's request for the proof that ended `epoch`, from a ledger now in
 * `currentEpoch`: the epoch proof of its last block of `epoch` (lastBlockOfEpoch, epochProofOf);
 * nullopt while that epoch has not ended here, or when no proof is stored.
 */
[[nodiscard]] Result<std::optional<codec::EpochProof>> epochProofFor(
    const ledger::ChainReader& blocks, std::uint64_t epoch, std::uint64_t currentEpoch);

/**
 * Checks an epoch proof against `committee`, the committee of the epoch it ends: the header is
 * of that epoch and its id is its hash, and the commit proof shows that block committed
 * (consensus::verifyCommitProof). Fails with kWrongEpoch for a proof of another epoch, else
 * with kInvalidBlock or kInvalidCertificate.
 */
[[nodiscard]] Status verifyEpochProof(
    const codec::EpochProof& proof, const consensus::Committee& committee, std::string_view chainId,
    const consensus::SignatureCheck& check = consensus::bip340Check());

}  // namespace gridledger::node
