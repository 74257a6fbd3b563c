#include "handlers.h"

namespace gridledger::rpc::handlers {

Result<value> txGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"hash"}));
    GL_ASSIGN_OR_RETURN(hash, requireFixedHex<32>(params, 0, "hash"));
    // The committed index is checked first: a tx leaves the mempool only after it is committed.
    GL_ASSIGN_OR_RETURN(where, ctx.blocks->locateTx(hash));
    if (where) {
        GL_ASSIGN_OR_RETURN(receipt, ctx.blocks->receiptAt(*where));
        if (!receipt) {
            return fail(ErrorCode::kCorrupt, "indexed transaction has no receipt");
        }
        return boost::json::object{{"hash", hash.hex()},
                                   {"status", "committed"},
                                   {"height", std::to_string(where->height)},
                                   {"index", where->index},
                                   {"receipt", receiptJson(*receipt)}};
    }
    if (auto pending = ctx.mempool->get(hash)) {
        return boost::json::object{
            {"hash", hash.hex()}, {"status", "pending"}, {"proposed", pending->proposed}};
    }
    return fail(ErrorCode::kNotFound, "unknown transaction " + hash.hex());
}

}  // namespace gridledger::rpc::handlers
