#include <gridledger/contracts/params.h>
#include <gridledger/contracts/settlement.h>
#include <gridledger/contracts/stake.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {
namespace json = boost::json;

namespace {

json::object indexJson(const contracts::PowerIndexParams& index) {
    json::array factors;
    for (const auto& f : index.factors) {
        factors.push_back(
            json::object{{"name", f.name}, {"reference_max", std::to_string(f.referenceMax)}});
    }
    json::array categories;
    for (const auto& c : index.categories) {
        json::array weights;
        for (const auto& w : c.weights) {
            weights.push_back(json::object{{"factor", w.factor}, {"weight_bps", w.weightBps}});
        }
        categories.push_back(json::object{{"name", c.name},
                                          {"price_rate", toDecimal(c.priceRate)},
                                          {"weights", std::move(weights)}});
    }
    return {{"green_max_bonus_bps", index.greenMaxBonusBps},
            {"factors", std::move(factors)},
            {"categories", std::move(categories)}};
}

}  // namespace

/**
 * params: optional `height`. The emission state (n, last halving, converted GFL, reward pool), the
 * GFL supply, the next epoch to settle and every parameter (docs/tokenomics.md).
 */
Result<value> tokenomicsGet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"height"}));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 0));
    GL_ASSIGN_OR_RETURN(state, contracts::readTokenomics(*ctx.tree, height));
    GL_ASSIGN_OR_RETURN(p, contracts::readParams(*ctx.tree, height));
    GL_ASSIGN_OR_RETURN(totals, contracts::readStakeTotals(*ctx.tree, height));
    const auto& t = p.tokenomics;
    const auto& k = p.stake;
    json::object fees;
    for (std::size_t kind = 0; kind < codec::kPayloadKindCount; ++kind) {
        fees[codec::kPayloadKinds[kind]] = std::to_string(p.fees.byKind[kind]);
    }
    return json::object{
        {"height", std::to_string(height)},
        {"gfl_supply", std::to_string(state.gflSupply)},
        {"reward_pool", toDecimal(state.emission.rewardPool)},
        {"halvings", state.emission.halvings},
        {"last_halving_ms", std::to_string(state.emission.lastHalvingMs)},
        {"converted_gfl", std::to_string(state.emission.convertedGfl)},
        {"next_epoch", std::to_string(state.nextEpoch)},
        {"genesis_time_ms", std::to_string(p.genesisTimeMs)},
        {"tokenomics",
         json::object{{"epoch_ms", std::to_string(t.epochMs)},
                      {"slot_ms", std::to_string(t.slotMs)},
                      {"reward_share_bps", t.rewardShareBps},
                      {"reward_rate", std::to_string(t.rewardRate)},
                      {"halving_period_ms", std::to_string(t.halvingPeriodMs)},
                      {"halving_gfl_threshold", std::to_string(t.halvingGflThreshold)},
                      {"pool_share_bps", t.poolShareBps}}},
        {"power_index", indexJson(p.index)},
        {"governance",
         json::object{{"proposal_ttl_ms", std::to_string(p.governance.proposalTtlMs)}}},
        {"fees", std::move(fees)},
        {"stake", json::object{{"provider_bond", toDecimal(k.providerBond)},
                               {"slash_bps", k.slashBps},
                               {"slash_burn_bps", k.slashBurnBps},
                               {"slash_challenger_bps", k.slashChallengerBps},
                               {"slash_pool_bps", k.slashPoolBps},
                               {"unbonding_delay_ms", std::to_string(k.unbondingDelayMs)},
                               {"bonded", toDecimal(totals.bonded)},
                               {"burned", toDecimal(totals.burned)}}},
        {"reputation",
         json::object{{"half_life_epochs", std::to_string(p.reputation.halfLifeEpochs)},
                      {"prior_jobs", std::to_string(p.reputation.priorJobs)},
                      {"fault_weight", std::to_string(p.reputation.faultWeight)},
                      {"slash_weight", std::to_string(p.reputation.slashWeight)}}}};
}

}  // namespace gridledger::rpc::handlers
