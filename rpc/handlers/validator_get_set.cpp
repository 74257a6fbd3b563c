#include <gridledger/contracts/governance.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {

/** params: optional `height`. The validator set of record (docs/tokenomics.md "Governance"). */
Result<value> validatorGetSet(const ChainContext& ctx, const value& params) {
    GL_TRY(expectOnly(params, {"height"}));
    GL_ASSIGN_OR_RETURN(height, readHeight(ctx, params, 0));
    GL_ASSIGN_OR_RETURN(set, contracts::readValidatorSet(*ctx.tree, height));
    boost::json::array validators;
    for (const auto& v : set.validators) {
        validators.push_back(boost::json::object{{"name", v.name},
                                                 {"consensus_key", v.consensusKey.hex()},
                                                 {"address", v.address().hex()},
                                                 {"node_id", v.nodeId.hex()}});
    }
    return boost::json::object{{"height", std::to_string(height)},
                               {"version", std::to_string(set.version)},
                               {"changed_at_height", std::to_string(set.changedAtHeight)},
                               {"validators", std::move(validators)}};
}

}  // namespace gridledger::rpc::handlers
