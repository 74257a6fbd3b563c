#include <gridledger/contracts/governance.h>

#include "paging.h"

namespace gridledger::rpc::handlers {
namespace {

boost::json::array addresses(const std::vector<Address>& list) {
    boost::json::array out;
    for (const auto& a : list) {
        out.push_back(boost::json::string(a.hex()));
    }
    return out;
}

boost::json::object proposalJson(const contracts::Proposal& p, std::uint64_t now) {
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

/** The block time of `height`, which decides whether an open proposal has expired. */
Result<std::uint64_t> blockTimeAt(const ChainContext& ctx, std::uint64_t height) {
    GL_ASSIGN_OR_RETURN(block, ctx.blocks->blockAt(height));
    return block ? block->header.timestampMs : 0;
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
    GL_ASSIGN_OR_RETURN(now, blockTimeAt(ctx, height));
    return proposalJson(*proposal, now);
}

/**
 * params: the page params `height`, `cursor`, `limit` (paging.h). A page of the governance
 * proposals, ascending by id (ids are 0, 1, 2, ... in the order they were made), each as
 * proposal_get shows it.
 */
Result<value> proposalsList(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"height", "cursor", "limit"}));
    GL_ASSIGN_OR_RETURN(request, readPageRequest(ctx, params, 0, "proposals_list"));
    GL_ASSIGN_OR_RETURN(now, blockTimeAt(ctx, request.height));
    // Proposal ids have no gaps: the list ends at the first id without a proposal.
    return pageOfSequence(request, [&](std::uint64_t id) -> Result<std::optional<value>> {
        GL_ASSIGN_OR_RETURN(proposal, contracts::readProposal(*ctx.tree, request.height, id));
        if (!proposal) {
            return std::optional<value>();
        }
        return value(proposalJson(*proposal, now));
    });
}

}  // namespace gridledger::rpc::handlers
