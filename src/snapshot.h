#pragma once

// State snapshots (docs/snapshots.md): the whole state of one executed height, in chunks that
// each carry a range proof, anchored to a committed header whose exec_state_root is that
// height's state root. Written by `gridledger snapshot export`, checked by `snapshot verify`.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
    /** The committed block at `height`, its transactions included: a ledger's head after import. */
    codec::Block base;
    /** The headers of the committed blocks between `base` and `anchor`, ascending. */
    std::vector<codec::ProofHeader> between;
    /** A committed header with exec_height = height and exec_state_root = stateRoot. */
    codec::ProofHeader anchor;
    /** Shows the anchor committed (consensus::verifyCommitProof). */
    codec::CommitProof anchorProof;
};

/** What a checked manifest vouches for, beyond the state root. */
struct CertifiedBase {
    /** The QC that certifies manifest.base (carried by the header above it). */
    codec::QuorumCert certifyingQc;
    /** The results root of manifest.height, from the anchor. */
    Hash256 resultsRoot;
};

/**
 * Checks a manifest against the chain of `genesis` and `committee` (the committee of the
 * anchor's epoch): chain id and genesis hash; the anchor certifies the height and state root, and
 * its commit proof verifies; the base block, the headers between and the anchor chain by parent
 * id and height; the QC above the base certifies it and verifies; base and anchor are of one
 * epoch. Fails with the first fault.
 */
[[nodiscard]] Result<CertifiedBase> verifyManifest(const SnapshotManifest& manifest,
                                                   const contracts::Genesis& genesis,
                                                   const consensus::Committee& committee);

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

/**
 * The manifest a node that holds only the genesis can verify, the one peers are served: of the
 * highest certified height while the ledger is in the genesis epoch; once that epoch has ended,
 * of the highest height a committed header of the genesis epoch certifies (the joining node then
 * crosses the epoch changes by block sync). Fails as snapshotManifest does.
 */
[[nodiscard]] Result<SnapshotManifest> genesisVerifiableManifest(const ledger::BlockStore& blocks,
                                                                 const contracts::Genesis& genesis,
                                                                 std::uint64_t executedHeight);

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
 * Writes a snapshot file: the manifest, then each range added, in order. Written beside the
 * target (FILE.partial) and renamed by finish(), so that a snapshot file is always whole; the
 * partial file is removed when the writer goes without finishing.
 */
class SnapshotWriter {
  public:
    /** Requires `file` not to exist (kInvalidArgument otherwise). */
    [[nodiscard]] static Result<SnapshotWriter> create(const std::filesystem::path& file,
                                                       const SnapshotManifest& manifest);
    SnapshotWriter(SnapshotWriter&&) = default;
    SnapshotWriter& operator=(SnapshotWriter&&) = default;
    SnapshotWriter(const SnapshotWriter&) = delete;
    SnapshotWriter& operator=(const SnapshotWriter&) = delete;
    ~SnapshotWriter();

    [[nodiscard]] Status add(const ledger::StateRange& range);
    /** The chunks added so far. */
    [[nodiscard]] std::size_t chunks() const { return summary_.chunks; }
    [[nodiscard]] Result<SnapshotSummary> finish();

  private:
    SnapshotWriter() = default;

    std::filesystem::path file_;
    std::filesystem::path partial_;
    std::unique_ptr<std::ofstream> out_;
    SnapshotSummary summary_;
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
 * Reads `file` and checks it whole: the manifest verifies (verifyManifest) against the committee
 * `committeeFor` gives for the anchor's epoch, and is handed to `onManifest`; every chunk
 * verifies against the root (ledger::verifyRange), the chunks follow each other from the lowest
 * key to the highest, and nothing follows the last. Each verified chunk is handed to `onChunk` in
 * order. Fails with the first error, naming the chunk.
 */
[[nodiscard]] Result<SnapshotSummary> readSnapshot(
    const std::filesystem::path& file, const contracts::Genesis& genesis,
    const std::function<Result<consensus::Committee>(std::uint64_t epoch)>& committeeFor,
    const std::function<Status(const SnapshotManifest&, const CertifiedBase&)>& onManifest,
    const std::function<Status(const ledger::StateRange&)>& onChunk);

/**
 * Starts a ledger in `chainDir` (which must not exist) from the snapshot `file` of `genesis`'s
 * chain: the genesis block and state; the snapshot's state as the state of its height; its base
 * block as the executed head, certified by the QC above it, with the roots the anchor certifies;
 * and that height as the ledger's first height (ledger::BlockStore::firstHeight). The file is
 * checked whole first, as readSnapshot does, against the genesis committee (an anchor of a later
 * epoch is kUnavailable); on any error nothing is left in `chainDir`.
 */
[[nodiscard]] Result<SnapshotSummary> importSnapshot(const std::filesystem::path& file,
                                                     const contracts::Genesis& genesis,
                                                     const std::filesystem::path& chainDir);

/**
 * The genesis block of `genesis`, its state written into a scratch store held in memory only
 * (no file is written).
 */
[[nodiscard]] Result<codec::Block> computeGenesisBlock(const contracts::Genesis& genesis);

}  // namespace gridledger::node
