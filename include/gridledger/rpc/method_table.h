#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include <gridledger/base/result.h>

namespace gridledger::rpc {

/**
 * One JSON-RPC method. `params` is the request's "params" member: an array (positional), an
 * object (named) or null when the request had none; read it with the helpers of params.h.
 * Returns the "result" value, or an Error whose code maps to a JSON-RPC code (errors.h).
 *
 * Handlers run on the server's I/O threads, possibly several at once, so a handler must be
 * thread-safe. An exception escaping a handler is caught by the server and reported as
 * -32603 internal error; handlers should return Errors instead.
 */
using Handler = std::function<Result<boost::json::value>(const boost::json::value& params)>;

/**
 * A method's kept results: the JSON text of the result its handler would return for `params`,
 * when that result was kept serialised (an answer that can no longer change); null otherwise,
 * and the handler runs. The text must be what serialising the handler's result gives, byte for
 * byte, and `params` the handler would accept: any doubt answers null. Thread-safe, as handlers.
 */
using KeptResult =
    std::function<std::shared_ptr<const std::string>(const boost::json::value& params)>;

/**
 * The registry of methods the server serves: one handler per name. Filled before the server
 * starts and read-only afterwards (the server takes its own copy), so lookups need no lock.
 */
class MethodTable {
  public:
    /**
     * Registers `handler` under `name`, with its kept results if it has any. Names are 1..128
     * characters of [A-Za-z0-9_.] (the project's style is `namespace_camelCase`, e.g. `block_get`).
     * Fails with kInvalidArgument on a bad name, an empty handler, or a name already registered.
     */
    [[nodiscard]] Status add(std::string name, Handler handler, KeptResult kept = {});

    /** The handler registered under `name`, or nullptr. */
    [[nodiscard]] const Handler* find(std::string_view name) const;

    /** The kept results of the method registered under `name`, or nullptr when it has none. */
    [[nodiscard]] const KeptResult* findKept(std::string_view name) const;

    /** The registered names in lexicographic order (e.g. for an OpenRPC consistency check). */
    [[nodiscard]] std::vector<std::string> names() const;

    /** The number of registered methods. */
    [[nodiscard]] std::size_t size() const { return handlers_.size(); }

  private:
    struct Method {
        Handler handler;
        KeptResult kept;
    };

    std::map<std::string, Method, std::less<>> handlers_;
};

}  // namespace gridledger::rpc
