#pragma once

// State snapshots (docs/snapshots.md): the whole state of one executed height, in chunks that
// each carry a range proof, anchored to a committed header whose exec_state_root is that
// height's state root. Written by `gridledger snapshot export`, checked by `snapshot verify`.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/contracts/genesis.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/state_tree.h>

namespace gridledger::node {

/** Keys per chunk unless the operator says otherwise. */
inline constexpr std::size_t kSnapshotChunkKeys = 4096;
/** Most bytes of one encoded chunk or manifest a reader accepts. */
inline constexpr std::size_t kMaxSnapshotPartBytes = std::size_t{64} << 20U;

/** What a snapshot is of, and the certified header that vouches for it. */
struct SnapshotManifest {
    std::string chainId;
    Hash256 genesisHash;
    /** The executed height whose state the snapshot holds. */
    std::uint64_t height = 0;
    Hash256 stateRoot;
    /** A committed header with exec_height = height and exec_state_root = stateRoot. */
    codec::ProofHeader anchor;
    /** Shows the anchor committed (consensus::verifyCommitProof). */
    codec::CommitProof anchorProof;

    bool operator==(const SnapshotManifest&) const = default;
};

[[nodiscard]] Bytes encodeManifest(const SnapshotManifest& manifest);
/** kMalformed on anything encodeManifest does not produce. */
[[nodiscard]] Result<SnapshotManifest> decodeManifest(ByteView bytes);

/**
 * The manifest of a snapshot of `blocks` (executed up to `executedHeight`): of `height`, or when
 * not given of the highest height some committed header certifies. The anchor is the lowest
 * committed block above the height whose exec_height is that height and for which a commit
 * proof is stored. kNotFound when no such block exists (the state of that height was never
 * certified, or not yet); kCorrupt when the certified root is not the stored one.
 */
[[nodiscard]] Result<SnapshotManifest> snapshotManifest(const ledger::BlockStore& blocks,
                                                        const contracts::Genesis& genesis,
                                                        std::uint64_t executedHeight,
                                                        std::optional<std::uint64_t> height);

/** What writeSnapshot wrote or readSnapshot checked. */
struct SnapshotSummary {
    std::uint64_t height = 0;
    Hash256 stateRoot;
    std::uint64_t epoch = 0;
    std::size_t chunks = 0;
    std::size_t entries = 0;
    std::uint64_t bytes = 0;
};

/**
 * Writes the snapshot of `manifest` to `file` (which must not exist): the manifest, then the
 * state of manifest.height in ranges of `chunkKeys` keys, each proven (StateTree::proveRange).
 */
[[nodiscard]] Result<SnapshotSummary> writeSnapshot(const ledger::StateTree& tree,
                                                    const SnapshotManifest& manifest,
                                                    std::size_t chunkKeys,
                                                    const std::filesystem::path& file);

/**
 * The committee a snapshot of `genesis`'s chain (whose genesis block is `genesisBlock`) is
 * checked against, for an anchor of `epoch`: the genesis committee for the genesis epoch. A later
 * epoch's committee comes from the state after its reconfiguration block, which no header of the
 * epoch before certifies, so a snapshot anchored there is checked against the committee of a ledger
 * that executed into that epoch (`local`, the committee of the verifier's own home) or not at all:
 * kUnavailable.
 */
[[nodiscard]] Result<consensus::Committee> snapshotCommittee(
    const contracts::Genesis& genesis, const codec::Block& genesisBlock, std::uint64_t epoch,
    const std::optional<consensus::Committee>& local);

/**
 * Reads `file` and checks it whole: the manifest is of `genesis`'s chain; the anchor header
 * certifies the manifest's height and root and its commit proof verifies against the committee
 * `committeeFor` gives for the anchor's epoch; every chunk verifies against the root
 * (ledger::verifyRange), the chunks follow each other from the lowest key to the highest, and
 * nothing follows the last. Each verified chunk is handed to `onChunk` in order. Fails with the
 * first error, naming the chunk.
 */
[[nodiscard]] Result<SnapshotSummary> readSnapshot(
    const std::filesystem::path& file, const contracts::Genesis& genesis,
    const std::function<Result<consensus::Committee>(std::uint64_t epoch)>& committeeFor,
    const std::function<Status(const ledger::StateRange&)>& onChunk);

/** The genesis block of `genesis`, its state written into a scratch store under `scratch`. */
[[nodiscard]] Result<codec::Block> computeGenesisBlock(const contracts::Genesis& genesis,
                                                       const std::filesystem::path& scratch);

}  // namespace gridledger::node
