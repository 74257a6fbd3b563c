#include "handlers.h"

namespace gridledger::rpc::handlers {

Result<value> txSubmit(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"tx"}));
    GL_ASSIGN_OR_RETURN(raw, requireHex(params, 0, "tx"));
    GL_ASSIGN_OR_RETURN(hash, ctx.mempool->submit(raw));
    if (ctx.txAdmitted) {
        ctx.txAdmitted(hash, raw);
    }
    return boost::json::object{{"hash", hash.hex()}, {"status", "pending"}};
}

}  // namespace gridledger::rpc::handlers
