#include <algorithm>

#include <boost/json/serialize.hpp>

#include <gridledger/crypto/sha256.h>

#include "paging.h"

namespace gridledger::rpc::handlers {

namespace {

/** What a block_get asks for: a block by height or by id, and in which form. */
struct BlockQuery {
    std::optional<std::uint64_t> height;  // unset: by `id`
    Hash256 id;
    bool fullTxs = false;
};

/** block_get's params, by the one set of rules that chainGetBlock() and keptBlock() follow. */
Result<BlockQuery> readBlockQuery(const value& params) {
    GL_TRY(expectOnly(params, {"height", "id", "full_txs"}));
    GL_ASSIGN_OR_RETURN(fullTxs, optionalBool(params, 1, "full_txs"));
    BlockQuery query;
    query.fullTxs = fullTxs.value_or(false);
    if (params.is_object() && findParam(params, 0, "id") != nullptr) {
        GL_ASSIGN_OR_RETURN(id, requireFixedHex<32>(params, 0, "id"));
        query.id = id;
    } else {
        GL_ASSIGN_OR_RETURN(height, requireU64Decimal(params, 0, "height"));
        query.height = height;
    }
    return query;
}

}  // namespace

/**
 * params: [height] as a decimal string, or {"id": "0x…"}; optional "full_txs": bool. The answer
 * of a final block (executed and certified) read by height is kept in ctx.blockAnswers, as JSON
 * text, which keptBlock() serves.
 */
Result<value> chainGetBlock(const ChainContext& ctx, const value& params) {
    GL_ASSIGN_OR_RETURN(query, readBlockQuery(params));
    const bool fullTxs = query.fullTxs;
    GL_ASSIGN_OR_RETURN(
        block, query.height ? ctx.blocks->blockAt(*query.height) : ctx.blocks->blockById(query.id));
    if (!block) {
        return fail(ErrorCode::kNotFound, "no committed block there");
    }
    GL_ASSIGN_OR_RETURN(cert, ctx.blocks->certAt(block->header.height));
    GL_ASSIGN_OR_RETURN(roots, ctx.blocks->rootsAt(block->header.height));
    boost::json::array txs;
    txs.reserve(block->txs.size());
    for (const auto& tx : block->txs) {
        txs.push_back(boost::json::string(fullTxs ? toHex(tx) : crypto::sha256(tx).hex()));
    }
    boost::json::object out{{"header", headerJson(*block)},
                            {"signature", block->signature.hex()},
                            {"txs", std::move(txs)}};
    if (cert) {
        out["certified_by"] = qcJson(*cert);
    }
    GL_ASSIGN_OR_RETURN(system, ctx.blocks->systemReceiptAt(block->header.height));
    if (system) {
        // The chain's own work before the block's txs (epoch settlements): docs/tokenomics.md.
        out["system_receipt"] = receiptJson(*system);
    }
    if (roots) {
        // The roots after executing this block; a later block's header carries them certified.
        out["state_root"] = roots->stateRoot.hex();
        out["results_root"] = roots->resultsRoot.hex();
    }
    if (ctx.blockAnswers && cert && roots &&
        !ctx.blockAnswers->contains(block->header.height, fullTxs)) {
        // Final: executed, so its roots and system receipt are written, and certified.
        ctx.blockAnswers->keep(block->header.height, fullTxs, boost::json::serialize(out));
    }
    return out;
}

/**
 * The kept answer of block_get by height, for params chainGetBlock() accepts; null for a block
 * read by id, for params it would refuse (it answers their error), and for an answer not kept.
 */
std::shared_ptr<const std::string> keptBlock(const ChainContext& ctx, const value& params) {
    const Result<BlockQuery> query = readBlockQuery(params);
    if (!ctx.blockAnswers || !query) {
        return nullptr;
    }
    const std::optional<std::uint64_t> height = query->height;
    return height ? ctx.blockAnswers->find(*height, query->fullTxs) : nullptr;
}

namespace {

/** A block_list item: the block's header and the certificate that certifies it, if any yet. */
Result<std::optional<value>> blockItem(const ChainContext& ctx, std::uint64_t height) {
    GL_ASSIGN_OR_RETURN(block, ctx.blocks->blockAt(height));
    if (!block) {
        return fail(ErrorCode::kNotFound, "no committed block at " + std::to_string(height));
    }
    GL_ASSIGN_OR_RETURN(cert, ctx.blocks->certAt(height));
    boost::json::object out{{"height", std::to_string(height)},
                            {"id", block->id.hex()},
                            {"header", headerJson(*block)}};
    out["certified_by"] = cert ? value(qcJson(*cert)) : value(nullptr);
    return std::optional<value>(std::move(out));
}

}  // namespace

/**
 * params: optional `from` and `to` (decimal heights, default 1 and the pinned height), then the
 * page params `height`, `cursor`, `limit` (paging.h). A page of the committed blocks from..to
 * (heights above the pinned one are left out), ascending: `height`, `id`, `header` and
 * `certified_by`, the quorum certificate that certifies the block (signers, round).
 */
Result<value> blocksList(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"from", "to", "height", "cursor", "limit"}));
    GL_ASSIGN_OR_RETURN(from, optionalU64Decimal(params, 0, "from"));
    GL_ASSIGN_OR_RETURN(to, optionalU64Decimal(params, 1, "to"));
    const auto text = [](const std::optional<std::uint64_t>& v) {
        return v ? std::to_string(*v) : std::string();
    };
    GL_ASSIGN_OR_RETURN(
        request, readPageRequest(ctx, params, 2, "blocks_list|" + text(from) + "|" + text(to)));
    const std::uint64_t last = std::min(to.value_or(request.height), request.height);
    return pageOfRange(request, from.value_or(1), last,
                       [&](std::uint64_t height) { return blockItem(ctx, height); });
}

}  // namespace gridledger::rpc::handlers
