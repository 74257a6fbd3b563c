#include "handlers.h"

namespace gridledger::rpc::handlers {

/**
 * params: `from` (decimal string), optional `count` (1..kMaxRawBlocks, default 1). The stored
 * bytes of the executed blocks from `from` up, for auditors who decode and check them themselves.
 */
Result<value> chainGetRawBlocks(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"from", "count"}));
    GL_ASSIGN_OR_RETURN(from, requireU64Decimal(params, 0, "from"));
    std::uint64_t count = 1;
    if (findParam(params, 1, "count") != nullptr) {
        GL_ASSIGN_OR_RETURN(asked, requireUintNumber(params, 1, "count", kMaxRawBlocks));
        if (asked == 0) {
            return fail(ErrorCode::kInvalidArgument, "param 1 \"count\": must be at least 1");
        }
        count = asked;
    }
    GL_ASSIGN_OR_RETURN(head, executedHeight(ctx));
    if (from > head) {
        return fail(ErrorCode::kNotFound, "height " + std::to_string(from) +
                                              " is above the executed head " +
                                              std::to_string(head));
    }
    const std::uint64_t last = std::min(head, from + (count - 1));
    boost::json::array blocks;
    std::size_t bytes = 0;
    for (std::uint64_t h = from; h <= last && (h == from || bytes < kMaxRawBlockBytes); ++h) {
        GL_ASSIGN_OR_RETURN(block, ctx.blocks->rawBlockAt(h));
        GL_ASSIGN_OR_RETURN(cert, ctx.blocks->rawCertAt(h));
        GL_ASSIGN_OR_RETURN(roots, ctx.blocks->rootsAt(h));
        if (!block && h == from) {
            return fail(ErrorCode::kCorrupt,
                        "the block at height " + std::to_string(h) + " is missing");
        }
        if (!block) {
            break;  // the answer ends before it: a call from this height names it
        }
        bytes += block->size() + (cert ? cert->size() : 0);
        boost::json::object entry{{"height", std::to_string(h)}, {"block", toHex(*block)}};
        if (cert) {
            entry["certificate"] = toHex(*cert);
        }
        if (roots) {
            entry["state_root"] = roots->stateRoot.hex();
            entry["results_root"] = roots->resultsRoot.hex();
        }
        blocks.push_back(std::move(entry));
    }
    return boost::json::object{{"chain_id", ctx.chainId},
                               {"executed_height", std::to_string(head)},
                               {"blocks", std::move(blocks)}};
}

}  // namespace gridledger::rpc::handlers
