#pragma once

// Replay for auditors: rebuilds the state from genesis using only the stored blocks and their
// certificates, checking every certificate, every signature and every state root on the way. The
// blocks come from a ReplaySource: a data dir (BlockStoreSource) or a node's RPC (replay_rpc.h).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>

#include <gridledger/base/result.h>
#include <gridledger/contracts/genesis.h>
#include <gridledger/ledger/block_store.h>

namespace gridledger::node {

/** What a source holds at one height; each part absent when the source does not hold it. */
struct ReplayEntry {
    std::optional<codec::Block> block;
    /** The QC certifying the block (replay does not check the one of height 0). */
    std::optional<codec::QuorumCert> cert;
    /** The roots the source stored after executing the block (compared, never trusted). */
    std::optional<ledger::ExecRoots> roots;
};

/**
 * Where a replay reads the committed chain. Nothing a source gives is trusted: replayChain checks
 * every block and certificate it returns.
 */
class ReplaySource {
  public:
    virtual ~ReplaySource() = default;

    /** The source's executed height (when the replay starts: the default last height). */
    [[nodiscard]] virtual Result<std::uint64_t> executedHeight() = 0;

    /**
     * What the source holds at `height`. Asked for ascending heights from 0, each once. An Error
     * (bytes that do not decode, a source that cannot be read) fails the replay at that height.
     */
    [[nodiscard]] virtual Result<ReplayEntry> entryAt(std::uint64_t height) = 0;
};

/** The blocks of a data dir's database. `store` must outlive the source. */
class BlockStoreSource final : public ReplaySource {
  public:
    explicit BlockStoreSource(const ledger::BlockStore& store) : store_(store) {}

    /** The stored executed height; kCorrupt when the database has none. */
    [[nodiscard]] Result<std::uint64_t> executedHeight() override;
    /** The stored block, certificate and roots; kCorrupt naming the part that does not decode. */
    [[nodiscard]] Result<ReplayEntry> entryAt(std::uint64_t height) override;

  private:
    const ledger::BlockStore& store_;
};

/** What a successful replay checked. */
struct ReplaySummary {
    std::uint64_t blocks = 0;
    std::uint64_t txs = 0;
    /** QCs checked: the one in each header and the one that certifies each block. */
    std::uint64_t certificates = 0;
    /** Epoch changes: blocks whose execution changed the validator set. */
    std::uint64_t epochChanges = 0;
    double seconds = 0;
    /** The replayed head and the state root after it (equal to the stored one). */
    std::uint64_t height = 0;
    Hash256 stateRoot;
};

/** Called after each replayed height, for progress reports. */
using ReplayProgress = std::function<void(std::uint64_t height)>;

/**
 * Re-executes the committed chain of `source` from the genesis of `genesis` into a new database
 * at `scratch` (which must not exist), up to `toHeight` or the source's executed height. For
 * each height it checks that the stored block decodes, is signed by a member of the committee of
 * its epoch (derived from the replayed state: docs/protocol.md §12),
 * carries a valid QC for its parent and links to it, that the stored certificate is a valid QC
 * for it, that the execution roots in its header are the replay's own, executes it with every
 * transaction signature verified, and compares the resulting state and results roots with the
 * stored ones. Fails at the first difference with an error that starts with "height N:".
 */
[[nodiscard]] Result<ReplaySummary> replayChain(const contracts::Genesis& genesis,
                                                ReplaySource& source,
                                                const std::filesystem::path& scratch,
                                                std::optional<std::uint64_t> toHeight,
                                                const ReplayProgress& progress = {});

}  // namespace gridledger::node
