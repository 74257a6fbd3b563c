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
    return boost::json::object{{"height", std::to_string(height)},
                               {"id", block->id.hex()},
                               {"state_root", roots->stateRoot.hex()},
                               {"results_root", roots->resultsRoot.hex()},
                               {"header", headerJson(*block)}};
}

}  // namespace gridledger::rpc::handlers
