#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/rpc/chain_methods.h>
#include <gridledger/rpc/method_table.h>

namespace gridledger::rpc {

/** The name of the OpenRPC discovery method. */
inline constexpr std::string_view kDiscoverMethod = "rpc.discover";

/**
 * The OpenRPC document of the node's JSON-RPC API: rpc/openrpc.json of the repository, compiled
 * into the binary at build time (docs/rpc.md). Valid for the life of the program.
 */
[[nodiscard]] std::string_view openRpcDocument();

/**
 * The names of the methods the document describes, in its order. Fails with kCorrupt when the
 * compiled-in document is not a JSON object with a `methods` array of named methods.
 */
[[nodiscard]] Result<std::vector<std::string>> openRpcMethodNames();

/**
 * Registers `rpc.discover`, which takes no params and returns the document as a JSON object.
 * The document is parsed once here: fails with kCorrupt when it does not parse, and with
 * kInvalidArgument when the table already has the method.
 */
[[nodiscard]] Status addDiscoverMethod(MethodTable& table);

/** Which of the node's listeners a method table is for (docs/rpc.md, "Listeners"). */
enum class Listener {
    /** rpc.address:rpc.port: every method but the admin methods. */
    kPublic,
    /** rpc.admin_address:rpc.admin_port, loopback only: every method. */
    kAdmin,
};

/**
 * The node-internal methods, which reveal or steer the node rather than read the chain: served
 * on the admin listener only. The document tags each of them "admin".
 */
[[nodiscard]] std::vector<std::string> adminMethodNames();

/** An old name of a method that the node still answers, exactly as the method's own name. */
struct MethodAlias {
    /** The old name, e.g. `chain_getBlock`. */
    std::string_view alias;
    /** The method's name under the naming rule of docs/rpc.md §6, e.g. `block_get`. */
    std::string_view name;
};

/**
 * The deprecated aliases the node serves for one release (docs/rpc.md, "Method names"), each
 * beside its method with the same handler. The document lists each under its method's
 * `x-aliases`.
 */
[[nodiscard]] std::span<const MethodAlias> methodAliases();

/** `names` followed by the aliases of those names, in methodAliases() order. */
[[nodiscard]] std::vector<std::string> withAliases(std::vector<std::string> names);

/**
 * Registers every method a node serves on `listener`: addChainMethods(context), rpc.discover,
 * the HTTP stand-ins of the subscription methods (subscriptions.h) and the methodAliases(),
 * less withAliases(adminMethodNames()) on the public listener. The document lists exactly the
 * admin listener's methods, the aliases under `x-aliases`.
 */
[[nodiscard]] Status addNodeMethods(MethodTable& table, const ChainContext& context,
                                    Listener listener = Listener::kAdmin);

}  // namespace gridledger::rpc
