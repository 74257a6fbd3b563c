#include <cstdint>

#include <gridledger/ledger/columns.h>

namespace gridledger::ledger {

std::vector<std::string> columnNames() {
    return {"meta",     "blocks",      "heights",         "certs",    "tx_index",
            "receipts", "state_nodes", "state_values_v2", "consensus"};
}

storage::KvOptions storeOptions(storage::KvOptions options) {
    options.prefixColumns.emplace(columnNames()[kStateValuesColumn], Hash256::size());
    // A block inserts its state keys and transaction hashes at random places, and every read of
    // the two columns names the whole 32-byte key or hash: get, or a forward seek to a key's
    // newest version at or below the one asked for (StateTree::get).
    options.hashedColumns.emplace(columnNames()[kStateValuesColumn], Hash256::size());
    options.hashedColumns.emplace(columnNames()[kTxIndexColumn], Hash256::size());
    // The nodes of one state tree version go in ascending order under its 8-byte version.
    options.sequentialColumns.emplace(columnNames()[kStateNodesColumn], sizeof(std::uint64_t));
    return options;
}

}  // namespace gridledger::ledger
