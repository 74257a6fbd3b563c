#pragma once

#include <cstddef>
#include <functional>
#include <map>
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
 * The registry of methods the server serves: one handler per name. Filled before the server
 * starts and read-only afterwards (the server takes its own copy), so lookups need no lock.
 */
class MethodTable {
  public:
    /**
     * Registers `handler` under `name`. Names are 1..128 characters of [A-Za-z0-9_.] (the
     * project's style is `namespace_camelCase`, e.g. `block_get`). Fails with
     * kInvalidArgument on a bad name, an empty handler, or a name already registered.
     */
    [[nodiscard]] Status add(std::string name, Handler handler);

    /** The handler registered under `name`, or nullptr. */
    [[nodiscard]] const Handler* find(std::string_view name) const;

    /** The registered names in lexicographic order (e.g. for an OpenRPC consistency check). */
    [[nodiscard]] std::vector<std::string> names() const;

    /** The number of registered methods. */
    [[nodiscard]] std::size_t size() const { return handlers_.size(); }

  private:
    std::map<std::string, Handler, std::less<>> handlers_;
};

}  // namespace gridledger::rpc
