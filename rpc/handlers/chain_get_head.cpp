#include "handlers.h"

namespace gridledger::rpc::handlers {

Result<value> chainGetHead(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {}));
    GL_ASSIGN_OR_RETURN(height, executedHeight(ctx));
    GL_ASSIGN_OR_RETURN(block, ctx.blocks->blockAt(height));
    GL_ASSIGN_OR_RETURN(roots, ctx.blocks->rootsAt(height));
    if (!block || !roots) {
        return fail(ErrorCode::kCorrupt, "executed head block is missing");
    }
    return headJson(height, *block, *roots);
}

}  // namespace gridledger::rpc::handlers
