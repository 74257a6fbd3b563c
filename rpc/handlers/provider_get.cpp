#include <gridledger/contracts/genesis.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/settlement.h>

#include "handlers.h"

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

}  // namespace

/**
 * params: `address`, optional `height`. The provider, its inventory, its GFL balance and its task
 * counts (`jobs`).
 */
Result<value> providerGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"address", "height"}));
    GL_ASSIGN_OR_RETURN(address, requireFixedHex<20>(params, 0, "address"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(provider, contracts::readProvider(*ctx.tree, height, address));
    if (!provider) {
        return fail(ErrorCode::kProviderNotFound, "no provider " + address.hex());
    }
    GL_ASSIGN_OR_RETURN(gfl, contracts::readGfl(*ctx.tree, height, address));
    return boost::json::object{
        {"address", address.hex()},
        {"height", std::to_string(height)},
        {"status", std::string(contracts::statusName(provider->status))},
        {"registered_height", std::to_string(provider->registeredHeight)},
        {"status_height", std::to_string(provider->statusHeight)},
        {"gfl_balance", std::to_string(gfl)},
        {"inventory", boost::json::parse(contracts::inventoryToJson(provider->inventory))},
        {"jobs", jobsJson(provider->jobs)}};
}

}  // namespace gridledger::rpc::handlers
