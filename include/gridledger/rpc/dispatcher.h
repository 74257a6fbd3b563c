#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <gridledger/base/result.h>
#include <gridledger/rpc/limits.h>
#include <gridledger/rpc/method_table.h>

namespace gridledger::rpc {

/**
 * The transport-independent half of the server: turns one JSON-RPC 2.0 payload (a request or a
 * batch, as received over HTTP now and over WebSocket later) into the response payload.
 *
 * Enforces UTF-8 validity, the JSON nesting depth, the batch size and the answer size of
 * `limits` (maxResponseBytes: docs/rpc.md, "Limits"); validates each
 * request object; calls the method's handler; maps its Error through rpcCodeOf. Every error
 * response carries `error.data.reason`. Thread-safe: handle() may run on many threads at once.
 */
class Dispatcher {
  public:
    /**
     * Takes its own copy of the methods, which stays read-only from then on. A call of a name
     * of `adminOnly` that the tables lack answers -32601 with reason admin_only (the method is
     * served on another listener) instead of method_not_found.
     *
     * `settle`, when set, runs on the handling thread after the handlers of one payload ran and
     * before its answer is returned (the node waits there until the transactions those handlers
     * admitted are durable). When it fails, the answer is replaced by one -32603 error with
     * reason not_durable.
     */
    Dispatcher(MethodTable methods, const ServerLimits& limits,
               std::vector<std::string> adminOnly = {}, std::function<Status()> settle = {});

    /**
     * The response to `payload`, or std::nullopt when nothing is to be sent back (a single
     * notification, or a batch of notifications only). Never throws: a handler's exception
     * becomes a -32603 error for that request.
     *
     * `connection`, when given, holds methods of one connection (a WebSocket's chain_subscribe):
     * a name found there is served by it, in a single request or inside a batch, before the
     * shared table is looked at. Its handlers run on the calling thread.
     */
    [[nodiscard]] std::optional<std::string> handle(std::string_view payload,
                                                    const MethodTable* connection = nullptr) const;

    /** The methods served. */
    [[nodiscard]] const MethodTable& methods() const { return methods_; }

  private:
    struct Reply;

    /**
     * The response to one parsed request (the payload or an element of a batch), or
     * std::nullopt for a notification; never throws. A method's kept result, when it has one
     * for the request's params, is answered without running its handler.
     */
    [[nodiscard]] std::optional<Reply> handleOne(const boost::json::value& request,
                                                 const MethodTable* connection) const;
    /** handle() before `settle`. */
    [[nodiscard]] std::optional<std::string> answer(std::string_view payload,
                                                    const MethodTable* connection) const;
    /** The answer to a non-empty batch within the limits, capped at maxResponseBytes. */
    [[nodiscard]] std::optional<std::string> handleBatch(const boost::json::array& batch,
                                                         const MethodTable* connection) const;

    MethodTable methods_;
    ServerLimits limits_;
    std::vector<std::string> adminOnly_;
    std::function<Status()> settle_;
};

/** True iff `text` is well-formed UTF-8 (no overlong forms, surrogates or values > U+10FFFF). */
[[nodiscard]] bool isValidUtf8(std::string_view text);

}  // namespace gridledger::rpc
