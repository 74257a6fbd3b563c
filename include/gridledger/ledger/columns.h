#pragma once

#include <string>
#include <vector>

#include <gridledger/storage/kv_store.h>

namespace gridledger::ledger {

/** The column families of a node's database, in the order given to storage::KvStore::open. */
enum Columns : storage::Column {
    kMetaColumn = 0,     // executed height, roots and commit proofs per height, chain identity
    kBlocksColumn,       // block id → encoded block: committed, or proposed and not yet pruned
    kHeightsColumn,      // u64 height → block id
    kCertsColumn,        // u64 height → encoded QC certifying the committed block at that height
    kTxIndexColumn,      // tx hash → u64 height ‖ u32 index
    kReceiptsColumn,     // u64 height → tx receipts; height ‖ u32 index → one receipt
    kStateNodesColumn,   // Merkle tree nodes
    kStateValuesColumn,  // raw state key ‖ inverted version → value
    kConsensusColumn,    // safety data, the heights and ids of uncommitted blocks, certificates
    kColumnCount,
};

/** Names of the column families, indexed by Columns. */
[[nodiscard]] std::vector<std::string> columnNames();

/**
 * The options a node's database opens with: `options` plus the prefix filter of the state values
 * column, whose keys are a state key (32 bytes) ‖ a version, looked up by state key
 * (StateTree::get); the insert hint of the state nodes column; and hashed memtables for the state
 * values and the transaction index, whose reads name a whole 32-byte key or hash.
 */
[[nodiscard]] storage::KvOptions storeOptions(storage::KvOptions options = {});

}  // namespace gridledger::ledger
