#include <gridledger/contracts/accounts.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {
namespace {

/** The state key of param 0: `0x` hex of a raw 32-byte key, or {"account": "0x<address>"}. */
Result<Hash256> stateKeyParam(const value& params) {
    GL_ASSIGN_OR_RETURN(key, requireValue(params, 0, "key"));
    if (key->is_object()) {
        const boost::json::object& form = key->get_object();
        if (form.size() != 1 || !form.contains("account")) {
            return fail(ErrorCode::kInvalidArgument,
                        "param 0 \"key\": expected 0x hex of a state key or {\"account\": "
                        "\"0x<address>\"}");
        }
        const boost::json::value inner = boost::json::array{form.at("account")};
        GL_ASSIGN_OR_RETURN(address, requireFixedHex<20>(inner, 0, "key.account"));
        return contracts::accountKey(address);
    }
    return requireFixedHex<32>(params, 0, "key");
}

}  // namespace

/**
 * params: [key, height?]. The value of a state key at an executed height (the head by default), a
 * proof of it (inclusion) or of its absence (non-inclusion), and the certified state root of that
 * height the proof verifies against (docs/state_tree.md, "Verifying a proof offline").
 */
Result<value> stateGetProof(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"key", "height"}));
    GL_ASSIGN_OR_RETURN(key, stateKeyParam(params));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(roots, ctx.blocks->rootsAt(height));
    if (!roots) {
        return fail(ErrorCode::kNotFound, "no state root at height " + std::to_string(height));
    }
    GL_ASSIGN_OR_RETURN(treeRoot, ctx.tree->rootAt(height));
    if (treeRoot != roots->stateRoot) {
        // The tree and the block store are written in one batch: this is damage, not a race.
        return fail(ErrorCode::kCorrupt, "state tree root differs from the stored root at height " +
                                             std::to_string(height));
    }
    GL_ASSIGN_OR_RETURN(stored, ctx.tree->get(key, height));
    GL_ASSIGN_OR_RETURN(proof, ctx.tree->prove(key, height));
    return boost::json::object{
        {"key", key.hex()},
        {"height", std::to_string(height)},
        {"state_root", roots->stateRoot.hex()},
        {"value", stored ? value(boost::json::string(toHex(*stored))) : value(nullptr)},
        {"proof", toHex(ledger::encodeProof(proof))},
    };
}

}  // namespace gridledger::rpc::handlers
