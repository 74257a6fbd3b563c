#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <gridledger/rpc/openrpc.h>
#include <gridledger/rpc/params.h>
#include <gridledger/rpc/subscriptions.h>

namespace gridledger::rpc {
namespace {

Result<boost::json::value> parseDocument() {
    boost::system::error_code ec;
    const std::string_view text = openRpcDocument();
    boost::json::value document =
        boost::json::parse(boost::json::string_view(text.data(), text.size()), ec);
    if (ec || !document.is_object()) {
        return fail(ErrorCode::kCorrupt, "the compiled-in OpenRPC document is not a JSON object");
    }
    return document;
}

constexpr MethodAlias kAliases[] = {
    {"node_status", "node_getStatus"},   {"node_peers", "node_getPeers"},
    {"chain_getBlock", "block_get"},     {"chain_getRawBlocks", "block_getRaw"},
    {"blocks_list", "block_list"},       {"governance_getProposal", "proposal_get"},
    {"proposals_list", "proposal_list"}, {"tokenomics_getEpoch", "epoch_get"},
    {"epochs_list", "epoch_list"},       {"tasks_list", "task_list"},
    {"providers_list", "provider_list"}, {"attestations_list", "attestation_list"},
};

}  // namespace

std::span<const MethodAlias> methodAliases() {
    return kAliases;
}

std::vector<std::string> withAliases(std::vector<std::string> names) {
    const std::size_t named = names.size();
    for (const MethodAlias& alias : kAliases) {
        if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(named),
                      alias.name) != names.begin() + static_cast<std::ptrdiff_t>(named)) {
            names.emplace_back(alias.alias);
        }
    }
    return names;
}

Result<std::vector<std::string>> openRpcMethodNames() {
    GL_ASSIGN_OR_RETURN(document, parseDocument());
    const boost::json::value* methods = document.as_object().if_contains("methods");
    if (methods == nullptr || !methods->is_array()) {
        return fail(ErrorCode::kCorrupt, "the OpenRPC document has no methods array");
    }
    std::vector<std::string> names;
    for (const boost::json::value& method : methods->get_array()) {
        const boost::json::value* name =
            method.is_object() ? method.get_object().if_contains("name") : nullptr;
        if (name == nullptr || !name->is_string()) {
            return fail(ErrorCode::kCorrupt, "an OpenRPC method has no name");
        }
        names.emplace_back(name->get_string());
    }
    return names;
}

Status addDiscoverMethod(MethodTable& table) {
    GL_ASSIGN_OR_RETURN(parsed, parseDocument());
    auto document = std::make_shared<const boost::json::value>(std::move(parsed));
    return table.add(std::string(kDiscoverMethod),
                     [document](const boost::json::value& params) -> Result<boost::json::value> {
                         GL_TRY(expectOnly(params, {}));
                         return *document;
                     });
}

std::vector<std::string> adminMethodNames() {
    return {"node_getPeers"};
}

Status addNodeMethods(MethodTable& table, const ChainContext& context, Listener listener) {
    if (listener == Listener::kAdmin) {
        GL_TRY(addChainMethods(table, context));
        GL_TRY(addDiscoverMethod(table));
        GL_TRY(addSubscriptionMethods(table));
        for (const MethodAlias& alias : kAliases) {
            const Handler* handler = table.find(alias.name);
            if (handler == nullptr) {
                return fail(ErrorCode::kInvalidArgument,
                            "alias " + std::string(alias.alias) + " of an unknown method");
            }
            const KeptResult* kept = table.findKept(alias.name);
            GL_TRY(table.add(std::string(alias.alias), Handler(*handler),
                             kept != nullptr ? *kept : KeptResult()));
        }
        return {};
    }
    MethodTable all;
    GL_TRY(addNodeMethods(all, context, Listener::kAdmin));
    const std::vector<std::string> admin = withAliases(adminMethodNames());
    for (const std::string& name : all.names()) {
        if (std::find(admin.begin(), admin.end(), name) == admin.end()) {
            const KeptResult* kept = all.findKept(name);
            GL_TRY(table.add(name, *all.find(name), kept != nullptr ? *kept : KeptResult()));
        }
    }
    return {};
}

}  // namespace gridledger::rpc
