#include <gridledger/contracts/settlement.h>

#include "paging.h"

namespace gridledger::rpc::handlers {

namespace {

boost::json::object epochJson(const contracts::EpochRecord& r) {
    return boost::json::object{{"epoch", std::to_string(r.epoch)},
                               {"boundary_ms", std::to_string(r.boundaryMs)},
                               {"height", std::to_string(r.height)},
                               {"providers", std::to_string(r.providers)},
                               {"gfl_supply", std::to_string(r.supplyAfter)},
                               {"gfl_payout_burned", std::to_string(r.payoutBurned)},
                               {"gfl_minted", std::to_string(r.minted)},
                               {"gfl_rebalance_burned", std::to_string(r.rebalanceBurned)},
                               {"dps_owed", toDecimal(r.owed)},
                               {"dps_paid", toDecimal(r.paid)},
                               {"dps_shortfall", toDecimal(r.shortfall)},
                               {"halvings", r.halvings},
                               {"halved_by_period", r.halvedByPeriod},
                               {"halved_by_threshold", r.halvedByThreshold},
                               {"reward_pool", toDecimal(r.rewardPoolAfter)},
                               {"converted_gfl", std::to_string(r.convertedAfter)}};
}

}  // namespace

/**
 * params: `epoch` (decimal string), optional `height`. The summary of a settled epoch; its events
 * are on the system receipt of block `height` of the answer (block_get).
 */
Result<value> tokenomicsGetEpoch(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"epoch", "height"}));
    GL_ASSIGN_OR_RETURN(epoch, requireU64Decimal(params, 0, "epoch"));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 1));
    GL_ASSIGN_OR_RETURN(record, contracts::readEpochRecord(*ctx.tree, height, epoch));
    if (!record) {
        return fail(ErrorCode::kNotFound, "epoch " + std::to_string(epoch) + " is not settled");
    }
    return epochJson(*record);
}

/**
 * params: the page params `height`, `cursor`, `limit` (paging.h). A page of the settled epochs,
 * ascending from epoch 0, each as epoch_get shows it.
 */
Result<value> epochsList(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"height", "cursor", "limit"}));
    GL_ASSIGN_OR_RETURN(request, readPageRequest(ctx, params, 0, "epochs_list"));
    // Epochs settle in order: the list ends at the first epoch without a record.
    return pageOfSequence(request, [&](std::uint64_t epoch) -> Result<std::optional<value>> {
        GL_ASSIGN_OR_RETURN(record, contracts::readEpochRecord(*ctx.tree, request.height, epoch));
        if (!record) {
            return std::optional<value>();
        }
        return value(epochJson(*record));
    });
}

}  // namespace gridledger::rpc::handlers
