#include <gridledger/ledger/columns.h>

namespace gridledger::ledger {

std::vector<std::string> columnNames() {
    return {"meta",     "blocks",      "heights",      "certs",    "tx_index",
            "receipts", "state_nodes", "state_values", "consensus"};
}

}  // namespace gridledger::ledger
