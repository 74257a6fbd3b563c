#pragma once

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

/**
 * Registers every method a node serves: addChainMethods(context), rpc.discover and the HTTP
 * stand-ins of the subscription methods (subscriptions.h). The document lists exactly these.
 */
[[nodiscard]] Status addNodeMethods(MethodTable& table, const ChainContext& context);

}  // namespace gridledger::rpc
