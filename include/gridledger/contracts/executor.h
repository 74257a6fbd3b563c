#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/genesis.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::contracts {

/** What executing one committed block produced. */
struct ExecutedBlock {
    std::uint64_t height = 0;
    std::vector<codec::Receipt> receipts;
    ledger::ExecRoots roots;
};

/** Tells whether a transaction's signature was already verified (e.g. at mempool admission). */
using VerifiedCache = std::function<bool(const Hash256& txHash)>;

/**
 * The chain's state machine: executes committed blocks strictly in height order through the system
 * contracts and commits each block's block, receipts, state and executed height in ONE synced
 * RocksDB write batch. Deterministic: the same blocks give the same receipts and roots.
 */
class Executor {
  public:
    Executor(storage::KvStore& store, ledger::StateTree& tree, const ledger::BlockStore& blocks,
             std::string chainId);

    /** Writes the genesis state (version 0) and block; requires an empty database. */
    [[nodiscard]] Result<ExecutedBlock> commitGenesis(const Genesis& genesis);

    /**
     * Executes `block` (height = executed height + 1) certified by `certifyingQc` and commits it.
     * An invalid transaction fails with a receipt; it never halts the chain. Fails only on storage
     * errors or a block at the wrong height.
     */
    [[nodiscard]] Result<ExecutedBlock> executeAndCommit(const codec::Block& block,
                                                         const codec::QuorumCert& certifyingQc,
                                                         const VerifiedCache& verified);

    /** Root of the results of one block: Merkle root over SHA-256 of each encoded receipt. */
    [[nodiscard]] static Hash256 resultsRoot(const std::vector<codec::Receipt>& receipts);

  private:
    [[nodiscard]] Result<codec::Receipt> executeTx(StateLayer& block, std::uint64_t height,
                                                   std::uint32_t index, ByteView raw,
                                                   const VerifiedCache& verified,
                                                   std::set<Hash256>& seen) const;
    [[nodiscard]] Result<ExecutedBlock> commit(const codec::Block& block,
                                               const codec::QuorumCert& certifyingQc,
                                               const StateLayer& state,
                                               std::vector<codec::Receipt> receipts);

    storage::KvStore& store_;
    ledger::StateTree& tree_;
    const ledger::BlockStore& blocks_;
    std::string chainId_;
};

}  // namespace gridledger::contracts
