#include <cstdint>

#include <gridledger/ledger/columns.h>

namespace gridledger::ledger {

std::vector<std::string> columnNames() {
    return {"meta",     "blocks",      "heights",      "certs",    "tx_index",
            "receipts", "state_nodes", "state_values", "consensus"};
}

storage::KvOptions storeOptions(storage::KvOptions options) {
    options.prefixColumns.emplace(columnNames()[kStateValuesColumn], Hash256::size());
    // A block inserts its transaction hashes at random places in the index, which is only read by
    // get. (The values column is read by seekForPrev, which a hashed memtable cannot serve.)
    options.hashedColumns.emplace(columnNames()[kTxIndexColumn], Hash256::size());
    // The nodes of one state tree version go in ascending order under its 8-byte version.
    options.sequentialColumns.emplace(columnNames()[kStateNodesColumn], sizeof(std::uint64_t));
    return options;
}

}  // namespace gridledger::ledger
