#include <algorithm>

#include <gridledger/contracts/genesis.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/settlement.h>

#include "paging.h"

namespace gridledger::rpc::handlers {

namespace {

boost::json::object jobsJson(const contracts::ProviderJobs& j) {
    return boost::json::object{{"assigned", std::to_string(j.assigned)},
                               {"started", std::to_string(j.started)},
                               {"refused", std::to_string(j.refused)},
                               {"claim_timeouts", std::to_string(j.claimTimeouts)},
                               {"settled", std::to_string(j.settled)},
                               {"rejected", std::to_string(j.rejected)},
                               {"failed", std::to_string(j.failed)},
                               {"out_of_credits", std::to_string(j.outOfCredits)},
                               {"panicked", std::to_string(j.panicked)},
                               {"cancelled", std::to_string(j.cancelled)}};
}

/**
 * The provider's reputation at the block of `height` (docs/tokenomics.md "Provider reputation"):
 * its counters decayed to that block's epoch and the score matching ranks it by there.
 */
Result<boost::json::object> reputationJson(const ChainContext& ctx, std::uint64_t height,
                                           const contracts::Provider& provider) {
    GL_ASSIGN_OR_RETURN(params, contracts::readParams(*ctx.tree, height));
    GL_ASSIGN_OR_RETURN(block, ctx.blocks->blockAt(height));
    const std::uint64_t nowMs = block ? block->header.timestampMs : params.genesisTimeMs;
    const auto s = contracts::providerScore(params, provider, nowMs);
    return boost::json::object{{"score", std::to_string(s.score)},
                               {"good", std::to_string(s.decayed.good)},
                               {"faults", std::to_string(s.decayed.faults)},
                               {"epoch", std::to_string(s.decayed.epoch)}};
}

bool statusNamed(const std::string& name) {
    using contracts::ProviderStatus;
    for (const auto s :
         {ProviderStatus::kRegistered, ProviderStatus::kAdmitted, ProviderStatus::kSuspended}) {
        if (contracts::statusName(s) == name) {
            return true;
        }
    }
    return false;
}

Result<boost::json::object> providerJson(const ChainContext& ctx, std::uint64_t height,
                                         const Address& address,
                                         const contracts::Provider& provider) {
    GL_ASSIGN_OR_RETURN(gfl, contracts::readGfl(*ctx.tree, height, address));
    GL_ASSIGN_OR_RETURN(reputation, reputationJson(ctx, height, provider));
    return boost::json::object{
        {"address", address.hex()},
        {"height", std::to_string(height)},
        {"status", std::string(contracts::statusName(provider.status))},
        {"registered_height", std::to_string(provider.registeredHeight)},
        {"status_height", std::to_string(provider.statusHeight)},
        {"gfl_balance", std::to_string(gfl)},
        {"inventory", boost::json::parse(contracts::inventoryToJson(provider.inventory))},
        {"jobs", jobsJson(provider.jobs)},
        {"bond", toDecimal(provider.bond)},
        {"bond_state", std::string(contracts::bondStateName(provider.bondState))},
        {"unbond_release_ms", std::to_string(provider.unbondReleaseMs)},
        {"slashed", toDecimal(provider.slashed)},
        {"reputation", std::move(reputation)}};
}

}  // namespace

/**
 * params: `address`, optional `height`. The provider, its inventory, its GFL balance, its task
 * counts (`jobs`), its stake (`bond`, `bond_state`, `unbond_release_ms`, `slashed`) and its
 * `reputation` (score, decayed good jobs and fault points, their epoch) at that height.
 */
Result<value> providerGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"address", "height"}));
    GL_ASSIGN_OR_RETURN(address, requireFixedHex<20>(params, 0, "address"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(provider, contracts::readProvider(*ctx.tree, height, address));
    if (!provider) {
        return fail(ErrorCode::kProviderNotFound, "no provider " + address.hex());
    }
    GL_ASSIGN_OR_RETURN(out, providerJson(ctx, height, address, *provider));
    return out;
}

/**
 * params: optional `status` ("registered", "admitted", ...), then the page params `height`,
 * `cursor`, `limit` (paging.h). A page of the registered providers, ascending by address, each as
 * provider_get shows it; with `status`, only those in that status.
 */
Result<value> providersList(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"status", "height", "cursor", "limit"}));
    GL_ASSIGN_OR_RETURN(status, optionalString(params, 0, "status"));
    if (status && !statusNamed(*status)) {
        return fail(ErrorCode::kInvalidArgument, "no provider status '" + *status + "'");
    }
    GL_ASSIGN_OR_RETURN(request,
                        readPageRequest(ctx, params, 1, "providers_list|" + status.value_or("")));
    const std::uint64_t height = request.height;
    GL_ASSIGN_OR_RETURN(addresses, contracts::readProviderIndex(*ctx.tree, height));
    std::sort(addresses.begin(), addresses.end());
    std::vector<Bytes> positions;
    positions.reserve(addresses.size());
    for (const auto& a : addresses) {
        positions.emplace_back(a.view().begin(), a.view().end());
    }
    return pageOf(request, positions, [&](std::size_t i) -> Result<std::optional<value>> {
        GL_ASSIGN_OR_RETURN(provider, contracts::readProvider(*ctx.tree, height, addresses[i]));
        if (!provider) {
            return fail(ErrorCode::kCorrupt,
                        "provider index names a missing provider " + addresses[i].hex());
        }
        if (status && contracts::statusName(provider->status) != *status) {
            return std::optional<value>();
        }
        GL_ASSIGN_OR_RETURN(out, providerJson(ctx, height, addresses[i], *provider));
        return value(std::move(out));
    });
}

}  // namespace gridledger::rpc::handlers
