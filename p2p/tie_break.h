#pragma once

#include <gridledger/base/bytes.h>

namespace gridledger::p2p {

/**
 * The rule that leaves one connection per pair of nodes (docs/p2p.md, "One connection per
 * node"). `self` holds a registered connection to `peer` and a new one became ready; returns
 * true when the new one replaces it. Both ends reach the same verdict for the same pair of
 * connections: the connection dialed by the lower node id is kept; of two connections dialed by
 * the same side, the newer is kept (the older one is stale, e.g. its dialer restarted).
 */
[[nodiscard]] bool keepsNewConnection(const NodeId& self, const NodeId& peer, bool newOutbound,
                                      bool existingOutbound);

}  // namespace gridledger::p2p
