#include "handlers.h"

namespace gridledger::rpc::handlers {
namespace {

/** The committed transaction's JSON, or nullopt when the committed index does not hold it. */
Result<std::optional<value>> committedTx(const ChainContext& ctx, const Hash256& hash) {
    GL_ASSIGN_OR_RETURN(where, ctx.blocks->locateTx(hash));
    if (!where) {
        return std::optional<value>{};
    }
    GL_ASSIGN_OR_RETURN(receipt, ctx.blocks->receiptAt(*where));
    if (!receipt) {
        return fail(ErrorCode::kCorrupt, "indexed transaction has no receipt");
    }
    return std::optional<value>{boost::json::object{{"hash", hash.hex()},
                                                    {"status", "committed"},
                                                    {"height", std::to_string(where->height)},
                                                    {"index", where->index},
                                                    {"receipt", receiptJson(*receipt)}}};
}

}  // namespace

Result<value> txGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"hash"}));
    GL_ASSIGN_OR_RETURN(hash, requireFixedHex<32>(params, 0, "hash"));
    // A tx leaves the mempool only after it is committed, so the committed index is read before
    // the mempool and, for a commit that lands between the two reads, once more after it.
    GL_ASSIGN_OR_RETURN(before, committedTx(ctx, hash));
    if (before) {
        return std::move(*before);
    }
    if (auto pending = ctx.mempool->get(hash)) {
        return boost::json::object{
            {"hash", hash.hex()}, {"status", "pending"}, {"proposed", pending->proposed}};
    }
    GL_ASSIGN_OR_RETURN(after, committedTx(ctx, hash));
    if (after) {
        return std::move(*after);
    }
    return fail(ErrorCode::kNotFound, "unknown transaction " + hash.hex());
}

}  // namespace gridledger::rpc::handlers
