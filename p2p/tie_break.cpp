#include "tie_break.h"

namespace gridledger::p2p {

bool keepsNewConnection(const NodeId& self, const NodeId& peer, bool newOutbound,
                        bool existingOutbound) {
    const NodeId& newDialer = newOutbound ? self : peer;
    const NodeId& existingDialer = existingOutbound ? self : peer;
    if (newDialer == existingDialer) {
        return true;
    }
    return newDialer < existingDialer;
}

}  // namespace gridledger::p2p
