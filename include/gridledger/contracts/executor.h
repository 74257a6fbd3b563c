#pragma once

#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/genesis.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/ledger/verify_pool.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::contracts {

/** What executing one committed block produced. */
struct ExecutedBlock {
    std::uint64_t height = 0;
    /** One receipt per transaction, in block order. */
    std::vector<codec::Receipt> receipts;
    /**
     * The events of the work the chain did by itself before the block's transactions (the epoch
     * settlements it triggered, then task timeouts and matching): set only when there were any.
     * Index kSystemReceiptIndex, tx hash systemReceiptHash(height).
     */
    std::optional<codec::Receipt> systemReceipt;
    ledger::ExecRoots roots;
};

/** The tx hash of the system receipt at `height`: SHA-256("gridledger/system-receipt" ‖ height). */
[[nodiscard]] Hash256 systemReceiptHash(std::uint64_t height);

/**
 * What the caller knows of a block's transaction by its hash (SHA-256 of its bytes) before the
 * block executes, e.g. Mempool::known. A decoded transaction it gives must have been decoded from
 * those bytes; the executor uses it instead of decoding them again. Null: the caller knows nothing.
 */
using KnownTxs = std::function<ledger::KnownTx(const Hash256& txHash)>;

/**
 * The chain's state machine: executes committed blocks strictly in height order through the system
 * contracts and commits each block's block, receipts, state and executed height in ONE synced
 * RocksDB write batch (unsynced after setSyncedWrites(false)). Deterministic: the same blocks
 * give the same receipts and roots.
 */
class Executor {
  public:
    /** `signingDomain` is the chain's, signingDomainOf(genesis): transactions verify in it. */
    Executor(storage::KvStore& store, ledger::StateTree& tree, const ledger::BlockStore& blocks,
             std::string chainId, std::string signingDomain);

    /**
     * Writes the genesis state (version 0) and block; requires an empty database. Besides the
     * accounts it writes the chain parameters, the validator set, the tokenomics state with the
     * reward pool, the verifiers and the providers admitted at genesis.
     */
    [[nodiscard]] Result<ExecutedBlock> commitGenesis(const Genesis& genesis);

    /**
     * Whether each commit fsyncs the write-ahead log before it returns (the default). A database
     * may do without when a crash that loses commits loses nothing else it cannot redo: replay's
     * scratch copy, and the node, whose consensus store keeps a block until after its execution.
     * Without, a commit hands its batch to the store's writer thread (KvStore::writeBehind) and
     * returns: the next block executes from the tree's memory while RocksDB inserts the batch,
     * and every later call on the store sees the block as written.
     */
    void setSyncedWrites(bool synced) { syncedWrites_ = synced; }

    /**
     * Whether each commit stores the block, its certificate, receipts and transaction index
     * besides the state and the roots (the default). Execution reads none of them, as a ledger
     * started from a state snapshot shows: replay's scratch copy, which checks roots and is then
     * thrown away, keeps the state and the roots alone. Genesis is stored whole either way.
     */
    void setKeepsBlocks(bool keeps) { keepsBlocks_ = keeps; }

    /**
     * Executes `block` (height = executed height + 1) certified by `certifyingQc` and commits it.
     * An invalid transaction fails with a receipt; it never halts the chain. Fails only on storage
     * errors, a block at the wrong height, or a reward pool beyond 128 bits (kInternal).
     */
    [[nodiscard]] Result<ExecutedBlock> executeAndCommit(const codec::Block& block,
                                                         const codec::QuorumCert& certifyingQc,
                                                         const KnownTxs& known);

    /** Root of the results of one block: Merkle root over SHA-256 of each encoded receipt. */
    [[nodiscard]] static Hash256 resultsRoot(const std::vector<codec::Receipt>& receipts);
    /** The same over receipts already encoded (codec::encodeReceipt), in leaf order. */
    [[nodiscard]] static Hash256 resultsRootOfEncoded(std::span<const Bytes> encodedReceipts);
    /**
     * The same with the block's system receipt, when there is one, as the first leaf (it ran
     * before the transactions); without one it equals resultsRoot(receipts).
     */
    [[nodiscard]] static Hash256 resultsRoot(const std::optional<codec::Receipt>& system,
                                             const std::vector<codec::Receipt>& receipts);

    /**
     * Executes `block` into `state` without committing: the system work of its timestamp (epoch
     * settlements, then task timeouts and matching), then its transactions. What executeAndCommit
     * commits; tests use it to run many blocks in memory. Fails only on storage errors or a reward
     * pool beyond 128 bits.
     */
    [[nodiscard]] Result<ExecutedBlock> execute(StateLayer& state, const codec::Block& block,
                                                const KnownTxs& known) const;

  private:
    [[nodiscard]] Result<codec::Receipt> executeTx(StateLayer& state, const BlockContext& context,
                                                   std::uint32_t index, ByteView raw,
                                                   const KnownTxs& known, const FeeParams& fees,
                                                   std::set<Hash256>& seen, u128& feesPaid) const;
    [[nodiscard]] Result<ExecutedBlock> commit(const codec::Block& block,
                                               const codec::QuorumCert& certifyingQc,
                                               const StateLayer& state, ExecutedBlock executed);

    storage::KvStore& store_;
    ledger::StateTree& tree_;
    const ledger::BlockStore& blocks_;
    std::string chainId_;
    std::string signingDomain_;
    bool syncedWrites_ = true;
    bool keepsBlocks_ = true;
    /**
     * The batch the next block fills, emptied: its memory, grown to a block's writes, stays the
     * executor's (or, written behind, passes between it and the store), so that a block neither
     * takes fresh pages for its batch (page faults, dear on a virtual machine) nor copies it as
     * it grows.
     */
    storage::WriteBatch batch_;
};

}  // namespace gridledger::contracts
