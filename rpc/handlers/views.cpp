#include "handlers.h"

namespace gridledger::rpc::handlers {
namespace json = boost::json;

namespace {

std::string dec(std::uint64_t v) {
    return std::to_string(v);
}

}  // namespace

Result<std::uint64_t> executedHeight(const ChainContext& ctx) {
    GL_ASSIGN_OR_RETURN(height, ctx.blocks->executedHeight());
    if (!height) {
        return fail(ErrorCode::kUnavailable, "the node has not written its genesis yet");
    }
    return *height;
}

Result<std::uint64_t> readHeight(const ChainContext& ctx, const value& params, std::size_t index) {
    GL_ASSIGN_OR_RETURN(head, executedHeight(ctx));
    GL_ASSIGN_OR_RETURN(at, optionalU64Decimal(params, index, "height"));
    const std::uint64_t height = at.value_or(head);
    if (height > head) {
        return fail(ErrorCode::kNotFound, "height " + std::to_string(height) +
                                              " is above the executed head " +
                                              std::to_string(head));
    }
    GL_ASSIGN_OR_RETURN(first, ctx.blocks->firstHeight());
    if (height != 0 && height < first) {
        return fail(ErrorCode::kNotFound,
                    "height " + std::to_string(height) + " is below this node's first height " +
                        std::to_string(first) + " (it started from a state snapshot)");
    }
    return height;
}

json::object qcJson(const codec::QuorumCert& qc) {
    json::array sigs;
    for (const auto& sig : qc.signatures) {
        sigs.push_back(json::string(sig.hex()));
    }
    return {{"epoch", dec(qc.epoch)},
            {"round", dec(qc.round)},
            {"block_id", qc.blockId.hex()},
            {"signers", toHex(qc.signers)},
            {"signatures", std::move(sigs)}};
}

json::object headerJson(const codec::Block& block) {
    const auto& h = block.header;
    json::object out{{"id", block.id.hex()},
                     {"epoch", dec(h.epoch)},
                     {"round", dec(h.round)},
                     {"height", dec(h.height)},
                     {"parent_id", h.parentId.hex()},
                     {"author", h.author.hex()},
                     {"timestamp_ms", dec(h.timestampMs)},
                     {"txs_root", h.txsRoot.hex()},
                     {"tx_count", h.txCount},
                     {"exec_height", dec(h.execHeight)},
                     {"exec_state_root", h.execStateRoot.hex()},
                     {"exec_results_root", h.execResultsRoot.hex()},
                     {"qc", qcJson(h.qc)}};
    if (h.tc) {
        out["tc"] = json::object{{"epoch", dec(h.tc->epoch)},
                                 {"round", dec(h.tc->round)},
                                 {"highest_hqc_round", dec(h.tc->highestHqcRound())}};
    }
    return out;
}

json::object headJson(std::uint64_t height, const codec::Block& block,
                      const ledger::ExecRoots& roots) {
    return {{"height", dec(height)},
            {"id", block.id.hex()},
            {"state_root", roots.stateRoot.hex()},
            {"results_root", roots.resultsRoot.hex()},
            {"header", headerJson(block)}};
}

json::object attributesJson(const codec::Event& event) {
    json::object attributes;
    for (const auto& [key, val] : event.attributes) {
        attributes[key] = val;
    }
    return attributes;
}

json::object receiptJson(const codec::Receipt& receipt) {
    json::array events;
    for (const auto& event : receipt.events) {
        events.push_back(json::object{{"kind", event.kind}, {"attributes", attributesJson(event)}});
    }
    return {{"tx_hash", receipt.txHash.hex()},
            {"height", dec(receipt.height)},
            {"index", receipt.index},
            {"success", receipt.success()},
            {"code", static_cast<std::uint32_t>(receipt.code)},
            {"reason", reasonOf(receipt.code)},
            {"fee", dec(receipt.fee)},
            {"events", std::move(events)}};
}

}  // namespace gridledger::rpc::handlers
