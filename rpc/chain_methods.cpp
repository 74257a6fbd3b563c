#include <gridledger/rpc/chain_methods.h>

#include "handlers/handlers.h"

namespace gridledger::rpc {

Status addChainMethods(MethodTable& table, const ChainContext& context) {
    using Fn = Result<boost::json::value> (*)(const ChainContext&, const boost::json::value&);
    const std::pair<const char*, Fn> methods[] = {
        {"node_status", handlers::nodeStatus},
        {"node_peers", handlers::nodePeers},
        {"tx_submit", handlers::txSubmit},
        {"tx_get", handlers::txGet},
        {"account_get", handlers::accountGet},
        {"chain_getHead", handlers::chainGetHead},
        {"chain_getBlock", handlers::chainGetBlock},
        {"chain_getRawBlocks", handlers::chainGetRawBlocks},
        {"state_getProof", handlers::stateGetProof},
        {"validator_getSet", handlers::validatorGetSet},
        {"governance_getProposal", handlers::governanceGetProposal},
        {"provider_get", handlers::providerGet},
        {"tokenomics_get", handlers::tokenomicsGet},
        {"tokenomics_getEpoch", handlers::tokenomicsGetEpoch},
        {"task_get", handlers::taskGet},
        {"tasks_list", handlers::tasksList},
        {"providers_list", handlers::providersList},
        {"proposals_list", handlers::proposalsList},
        {"epochs_list", handlers::epochsList},
        {"blocks_list", handlers::blocksList},
        {"attestations_list", handlers::attestationsList},
    };
    for (const auto& [name, fn] : methods) {
        GL_TRY(table.add(
            name, [context, fn](const boost::json::value& params) { return fn(context, params); }));
    }
    return {};
}

}  // namespace gridledger::rpc
