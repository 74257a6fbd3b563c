#include <gridledger/rpc/chain_methods.h>

#include "handlers/handlers.h"

namespace gridledger::rpc {

Status addChainMethods(MethodTable& table, const ChainContext& context) {
    using Fn = Result<boost::json::value> (*)(const ChainContext&, const boost::json::value&);
    using KeptFn =
        std::shared_ptr<const std::string> (*)(const ChainContext&, const boost::json::value&);
    struct Method {
        const char* name;
        Fn fn;
        KeptFn kept = nullptr;  // served when the context keeps block answers
    };
    const Method methods[] = {
        {"node_getStatus", handlers::nodeStatus},
        {"node_getPeers", handlers::nodePeers},
        {"tx_submit", handlers::txSubmit},
        {"tx_get", handlers::txGet},
        {"account_get", handlers::accountGet},
        {"chain_getHead", handlers::chainGetHead},
        {"block_get", handlers::chainGetBlock, handlers::keptBlock},
        {"block_getRaw", handlers::chainGetRawBlocks},
        {"state_getProof", handlers::stateGetProof},
        {"validator_getSet", handlers::validatorGetSet},
        {"proposal_get", handlers::governanceGetProposal},
        {"provider_get", handlers::providerGet},
        {"tokenomics_get", handlers::tokenomicsGet},
        {"epoch_get", handlers::tokenomicsGetEpoch},
        {"task_get", handlers::taskGet},
        {"task_getGroup", handlers::taskGetGroup},
        {"task_list", handlers::tasksList},
        {"provider_list", handlers::providersList},
        {"proposal_list", handlers::proposalsList},
        {"epoch_list", handlers::epochsList},
        {"block_list", handlers::blocksList},
        {"attestation_list", handlers::attestationsList},
    };
    for (const auto& [name, fn, keptFn] : methods) {
        KeptResult kept;
        if (keptFn != nullptr && context.blockAnswers) {
            kept = [context, keptFn](const boost::json::value& params) {
                return keptFn(context, params);
            };
        }
        GL_TRY(table.add(
            name, [context, fn](const boost::json::value& params) { return fn(context, params); },
            std::move(kept)));
    }
    return {};
}

}  // namespace gridledger::rpc
