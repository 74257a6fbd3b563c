#include "handlers.h"

namespace gridledger::rpc::handlers {

Result<value> nodeStatus(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {}));
    GL_ASSIGN_OR_RETURN(height, executedHeight(ctx));
    GL_ASSIGN_OR_RETURN(roots, ctx.blocks->rootsAt(height));
    GL_ASSIGN_OR_RETURN(first, ctx.blocks->firstHeight());
    const NodeStatus status = ctx.status();
    return boost::json::object{
        {"chain_id", ctx.chainId},
        {"genesis_hash", ctx.genesisHash.hex()},
        {"version", status.version},
        {"validator", status.validator.hex()},
        {"executed_height", std::to_string(height)},
        {"first_height", std::to_string(first)},
        {"state_root", roots ? roots->stateRoot.hex() : Hash256{}.hex()},
        {"consensus_epoch", std::to_string(status.epoch)},
        {"consensus_round", std::to_string(status.round)},
        {"highest_qc_round", std::to_string(status.highestQcRound)},
        {"node_id", status.nodeId.hex()},
        {"peers", status.peers},
        {"syncing", status.syncing},
        {"mempool_size", ctx.mempool->size()},
        {"mempool_bytes", ctx.mempool->bytes()},
    };
}

/**
 * No params. The P2P peers connected now, sorted by node id: `node_id`, `direction` ("outbound"
 * when this node dialed, else "inbound") and `address`. A live view, not pinned to a height and
 * not paged (the peer count is bounded by the P2P connection limit).
 */
Result<value> nodePeers(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {}));
    boost::json::array items;
    if (ctx.peers) {
        for (const auto& peer : ctx.peers()) {
            items.push_back(
                boost::json::object{{"node_id", peer.nodeId.hex()},
                                    {"direction", peer.outbound ? "outbound" : "inbound"},
                                    {"address", peer.address}});
        }
    }
    return boost::json::object{{"items", std::move(items)}};
}

}  // namespace gridledger::rpc::handlers
