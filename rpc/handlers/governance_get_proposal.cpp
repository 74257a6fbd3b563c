#include <gridledger/contracts/governance.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {
namespace {

boost::json::array addresses(const std::vector<Address>& list) {
    boost::json::array out;
    for (const auto& a : list) {
        out.push_back(boost::json::string(a.hex()));
    }
    return out;
}

}  // namespace

/**
 * params: `id` (decimal string), optional `height`. `status` is the stored one; an open proposal
 * whose expiry has passed at that height's block time also has `expired: true`.
 */
Result<value> governanceGetProposal(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"id", "height"}));
    GL_ASSIGN_OR_RETURN(id, requireU64Decimal(params, 0, "id"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(proposal, contracts::readProposal(*ctx.tree, height, id));
    if (!proposal) {
        return fail(ErrorCode::kProposalNotFound, "no proposal " + std::to_string(id));
    }
    GL_ASSIGN_OR_RETURN(block, ctx.blocks->blockAt(height));
    const std::uint64_t now = block ? block->header.timestampMs : 0;
    const auto& p = *proposal;
    return boost::json::object{
        {"id", std::to_string(p.id)},
        {"proposer", p.proposer.hex()},
        {"action", std::string(codec::actionKind(p.action))},
        {"status", std::string(contracts::statusName(p.status))},
        {"expired", p.status == contracts::ProposalStatus::kOpen && now >= p.expiresMs},
        {"created_height", std::to_string(p.createdHeight)},
        {"created_ms", std::to_string(p.createdMs)},
        {"expires_ms", std::to_string(p.expiresMs)},
        {"closed_height", std::to_string(p.closedHeight)},
        {"yes", addresses(p.yes)},
        {"no", addresses(p.no)},
        {"outcome", p.outcome}};
}

}  // namespace gridledger::rpc::handlers
