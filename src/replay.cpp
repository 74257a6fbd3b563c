#include "replay.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <gridledger/consensus/committee.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/ledger/verify_pool.h>
#include <gridledger/storage/kv_store.h>

#include "epochs.h"
#include "exec_check.h"

namespace gridledger::node {
namespace {

std::unexpected<Error> atHeight(std::uint64_t height, ErrorCode code, const std::string& what) {
    return fail(code, "height " + std::to_string(height) + ": " + what);
}

/** Blocks read and given to the verify pool ahead of the one executing. */
constexpr std::size_t kLookaheadBlocks = 8;

/**
 * One block read ahead of execution, its transactions decoded, and the verdicts on their
 * signatures, which the pool works out on every core while the blocks before it execute. A
 * transaction that does not decode is not listed: the executor decodes and checks it itself.
 */
class Prefetched {
  public:
    Prefetched(ReplaySource& source, ledger::VerifyPool& pool, std::uint64_t height)
        : entry(source.entryAt(height)), txs_(std::make_shared<std::vector<codec::SignedTx>>()) {
        if (!entry) {
            return;
        }
        const std::optional<codec::Block>& block = entry->block;
        if (!block) {
            return;
        }
        txs_->reserve(block->txs.size());
        for (const Bytes& raw : block->txs) {
            if (auto decoded = codec::decodeTx(raw)) {
                txs_->push_back(std::move(*decoded));
            }
        }
        byHash_.reserve(txs_->size());
        for (std::size_t i = 0; i < txs_->size(); ++i) {
            byHash_.emplace_back((*txs_)[i].hash, i);
        }
        std::ranges::sort(byHash_);
        pending_ = pool.startBatch(*txs_);
    }

    /**
     * For the executor: the decoded transaction of each hash and whether the pool found its
     * signature valid. Waits for the verdicts, and checks on this thread the signatures no
     * worker has taken yet.
     */
    [[nodiscard]] contracts::KnownTxs known(ledger::VerifyPool& pool) {
        valid_ = pool.finishBatch(std::move(pending_));
        return [this](const Hash256& hash) {
            const auto it = std::ranges::lower_bound(byHash_, hash, {}, &IndexEntry::first);
            if (it == byHash_.end() || it->first != hash) {
                return ledger::KnownTx{};
            }
            // Shares the block's vector of transactions rather than copying one out of it.
            return ledger::KnownTx{valid_[it->second], ledger::TxPtr(txs_, &(*txs_)[it->second])};
        };
    }

    Result<ReplayEntry> entry;

  private:
    using IndexEntry = std::pair<Hash256, std::size_t>;

    std::shared_ptr<std::vector<codec::SignedTx>> txs_;
    std::vector<IndexEntry> byHash_;  // sorted by hash
    std::vector<bool> valid_;         // at the index of txs_, once known() is called
    // Declared last, so destroyed first: a dropped batch waits for its workers while txs_ lives.
    ledger::VerifyPool::PendingBatch pending_;
};

/**
 * BIP-340 checks that remember the signatures they found valid in this block and the one before.
 * A block's header carries a QC for its parent, most often the very certificate stored with the
 * parent, checked one block earlier: the same key, digest and signature are valid again without
 * a second verification. Nothing invalid is remembered.
 */
class RememberingCheck {
  public:
    /** Moves on to the next block: what this one checked stays remembered for it. */
    void nextBlock() {
        previous_.swap(current_);
        current_.clear();
    }

    [[nodiscard]] consensus::SignatureCheck check() {
        return [this](const PubKey& key, const Hash256& digest, const Signature& signature) {
            const Checked checked{key, digest, signature};
            if (std::ranges::find(previous_, checked) != previous_.end() ||
                std::ranges::find(current_, checked) != current_.end()) {
                return true;
            }
            const bool valid = consensus::bip340Check()(key, digest, signature);
            if (valid) {
                current_.push_back(checked);
            }
            return valid;
        };
    }

  private:
    using Checked = std::tuple<PubKey, Hash256, Signature>;
    std::vector<Checked> previous_;
    std::vector<Checked> current_;
};

}  // namespace

Result<std::uint64_t> BlockStoreSource::executedHeight() {
    GL_ASSIGN_OR_RETURN(height, store_.executedHeight());
    if (!height) {
        return fail(ErrorCode::kCorrupt, "the database holds no executed height");
    }
    return *height;
}

Result<ReplayEntry> BlockStoreSource::entryAt(std::uint64_t height) {
    ReplayEntry entry;
    GL_ASSIGN_OR_RETURN(block, store_.blockAt(height));
    entry.block = std::move(block);
    GL_ASSIGN_OR_RETURN(roots, store_.rootsAt(height));
    entry.roots = roots;
    auto cert = store_.certAt(height);
    if (!cert) {
        return std::unexpected(cert.error());
    }
    entry.cert.swap(*cert);
    return entry;
}

Result<ReplaySummary> replayChain(const contracts::Genesis& genesis, ReplaySource& source,
                                  const std::filesystem::path& scratch,
                                  std::optional<std::uint64_t> toHeight,
                                  const ReplayProgress& progress) {
    const auto started = std::chrono::steady_clock::now();
    if (std::filesystem::exists(scratch)) {
        return fail(ErrorCode::kInvalidArgument, scratch.string() + " already exists");
    }
    storage::KvOptions scratchOptions;
    scratchOptions.disposable = true;  // removed after the replay, or a crash
    GL_ASSIGN_OR_RETURN(store, storage::KvStore::open(scratch, ledger::columnNames(),
                                                      ledger::storeOptions(scratchOptions)));
    ledger::StateTree tree(*store, ledger::kStateNodesColumn, ledger::kStateValuesColumn);
    ledger::BlockStore replayed(*store);
    const std::string domain = contracts::signingDomainOf(genesis);
    contracts::Executor executor(*store, tree, replayed, genesis.chainId, domain);
    executor.setSyncedWrites(false);
    executor.setKeepsBlocks(false);  // the source holds them; only the roots are compared

    GL_ASSIGN_OR_RETURN(written, executor.commitGenesis(genesis));
    auto storedGenesis = source.entryAt(0);
    if (!storedGenesis) {
        return atHeight(0, storedGenesis.error().code, storedGenesis.error().message);
    }
    GL_ASSIGN_OR_RETURN(ownGenesis, replayed.blockAt(0));
    if (!storedGenesis->block || !ownGenesis || storedGenesis->block->id != ownGenesis->id) {
        return atHeight(0, ErrorCode::kCorrupt,
                        "the stored genesis block is not the one this genesis file gives");
    }
    GL_ASSIGN_OR_RETURN(committee, genesisCommittee(genesis, *ownGenesis));
    GL_ASSIGN_OR_RETURN(executed, source.executedHeight());
    const std::uint64_t top = std::min(executed, toHeight.value_or(UINT64_MAX));

    ReplaySummary summary;
    summary.stateRoot = written.roots.stateRoot;
    Hash256 parentId = ownGenesis->id;
    std::uint64_t parentTimeMs = ownGenesis->header.timestampMs;
    // Signatures are checked on every core ahead of execution; certificates and state roots in
    // order, on this thread, since each depends on what the blocks before it did.
    ledger::VerifyPoolOptions poolOptions;
    poolOptions.domain = domain;
    ledger::VerifyPool pool(poolOptions);
    RememberingCheck remembered;
    const consensus::SignatureCheck check = remembered.check();
    std::deque<Prefetched> ahead;
    std::uint64_t nextToRead = 1;
    for (std::uint64_t h = 1; h <= top; ++h) {
        for (; nextToRead <= top && ahead.size() < kLookaheadBlocks; ++nextToRead) {
            ahead.emplace_back(source, pool, nextToRead);
        }
        Prefetched current = std::move(ahead.front());
        ahead.pop_front();
        auto& entry = current.entry;
        if (!entry) {
            return atHeight(h, entry.error().code, entry.error().message);
        }
        if (!entry->block) {
            return atHeight(h, ErrorCode::kCorrupt, "the block is missing");
        }
        const codec::Block& b = *entry->block;
        if (b.header.height != h || b.header.parentId != parentId ||
            b.header.qc.blockId != parentId) {
            return atHeight(
                h, ErrorCode::kInvalidBlock,
                "the block does not extend the block at height " + std::to_string(h - 1));
        }
        // The time rules every voter applied (docs/protocol.md §3), but the clock's drift.
        const std::uint64_t blockTimeMs = genesis.consensus.blockTimeMs;
        if (b.header.timestampMs <= parentTimeMs ||
            (blockTimeMs != 0 && b.header.timestampMs - parentTimeMs != blockTimeMs)) {
            return atHeight(h, ErrorCode::kInvalidBlock,
                            blockTimeMs != 0 ? "the timestamp is not the parent's + block_time_ms"
                                             : "the timestamp is not after the parent's");
        }
        remembered.nextBlock();
        if (auto checked = consensus::verifyProposal(b, committee, domain, check); !checked) {
            return atHeight(h, checked.error().code, checked.error().message);
        }
        const auto& cert = entry->cert;
        if (!cert) {
            return atHeight(h, ErrorCode::kCorrupt, "the certificate is missing");
        }
        if (cert->blockId != b.id || cert->round != b.header.round) {
            return atHeight(h, ErrorCode::kInvalidCertificate,
                            "the stored certificate is for another block");
        }
        if (auto checked = consensus::verifyQuorumCert(*cert, committee, domain, check); !checked) {
            return atHeight(h, checked.error().code, "certificate: " + checked.error().message);
        }
        if (b.header.execHeight >= h) {
            return atHeight(h, ErrorCode::kInvalidBlock, "the exec height is not below the block");
        }
        GL_ASSIGN_OR_RETURN(execRoots, replayed.rootsAt(b.header.execHeight));
        // The same check a node makes before it executes a committed block.
        if (auto same = checkCertifiedRoots(b.header, execRoots); !same) {
            return atHeight(h, same.error().code, same.error().message);
        }
        GL_ASSIGN_OR_RETURN(done, executor.executeAndCommit(b, *cert, current.known(pool)));
        // A block whose execution changed the validator set ends its epoch: the blocks above it
        // are checked against the next committee, seeded by it (docs/protocol.md §12).
        GL_ASSIGN_OR_RETURN(
            next, nextEpochAfter(tree, b, committee, domain, genesis.consensus.committeeMax));
        if (next) {
            committee = std::move(next->committee);
            summary.epochChanges += 1;
        }
        const auto& stored = entry->roots;
        if (!stored || *stored != done.roots) {
            return atHeight(h, ErrorCode::kCorrupt,
                            "replayed state root " + done.roots.stateRoot.hex() +
                                " differs from the stored " +
                                (stored ? stored->stateRoot.hex() : std::string("(none)")));
        }
        summary.blocks += 1;
        summary.txs += b.txs.size();
        summary.certificates += 2;
        summary.height = h;
        summary.stateRoot = done.roots.stateRoot;
        parentId = b.id;
        parentTimeMs = b.header.timestampMs;
        if (progress) {
            progress(h);
        }
    }
    summary.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return summary;
}

}  // namespace gridledger::node
