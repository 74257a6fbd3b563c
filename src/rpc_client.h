#pragma once

// A minimal blocking JSON-RPC 2.0 client over HTTP, used by the CLI.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json/value.hpp>

#include <gridledger/base/result.h>

namespace gridledger::node {

/** Where a node's RPC listens, parsed from "host:port" or "http://host:port". */
struct Endpoint {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8545;
    /** Sent as `Authorization: Bearer <token>` when not empty (rpc.auth_token_file). */
    std::string token{};
};

[[nodiscard]] Result<Endpoint> parseEndpoint(std::string_view text);

/**
 * Calls `method` with `params` and returns `result`. A JSON-RPC error becomes an Error whose
 * message holds the code, message and data.reason of the response. Answers larger than 64 MiB
 * fail with kUnavailable.
 */
[[nodiscard]] Result<boost::json::value> callRpc(const Endpoint& endpoint,
                                                 const std::string& method,
                                                 const boost::json::value& params);

/** One call of a batch: a method and its params. */
struct RpcCall {
    std::string method;
    boost::json::value params;
};

/**
 * Sends `calls` as one JSON-RPC batch (at most the node's `rpc.max_batch`, 100 by default) on one
 * connection. Fails as a whole when the node cannot be reached or refuses the batch; otherwise
 * gives one result per call, in the order of `calls`, each the call's result or its error as
 * callRpc reports it.
 */
[[nodiscard]] Result<std::vector<Result<boost::json::value>>> callRpcBatch(
    const Endpoint& endpoint, const std::vector<RpcCall>& calls);

}  // namespace gridledger::node
