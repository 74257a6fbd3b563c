#pragma once

// The method table the RPC tests serve.

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gridledger/base/result.h>
#include <gridledger/rpc/method_table.h>
#include <gridledger/rpc/params.h>

namespace gridledger::rpc::test {

/**
 * Methods for the tests: `echo` returns its params, `fail_with` fails with the ErrorCode number
 * given as params[0], `throws` throws, `hash` requires a 32-byte hex param 0 "hash".
 */
inline MethodTable testMethods() {
    MethodTable methods;
    const auto add = [&methods](std::string name, Handler handler) {
        const Status added = methods.add(std::move(name), std::move(handler));
        if (!added) {
            throw std::logic_error(added.error().message);
        }
    };
    add("echo",
        [](const boost::json::value& params) { return Result<boost::json::value>(params); });
    add("fail_with", [](const boost::json::value& params) -> Result<boost::json::value> {
        const auto code =
            static_cast<ErrorCode>(params.as_array().at(0).to_number<std::uint16_t>());
        return fail(code, "requested failure");
    });
    add("throws", [](const boost::json::value&) -> Result<boost::json::value> {
        throw std::runtime_error("handler bug");
    });
    add("hash", [](const boost::json::value& params) -> Result<boost::json::value> {
        GL_TRY(expectOnly(params, {"hash"}));
        GL_ASSIGN_OR_RETURN(hash, requireFixedHex<32>(params, 0, "hash"));
        return boost::json::value(hash.hex());
    });
    return methods;
}

/** The text of a JSON string value, or the serialized value otherwise (for comparisons). */
inline std::string textOf(const boost::json::value& value) {
    return value.is_string() ? std::string(value.get_string().c_str())
                             : boost::json::serialize(value);
}

/** A JSON-RPC request text with a numeric id. */
inline std::string requestText(std::string_view method, std::string_view params, int id) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" +
           std::string(method) + R"(","params":)" + std::string(params) + "}";
}

/** A JSON-RPC batch text: the given request texts as one array. */
inline std::string batchText(std::initializer_list<std::string> requests) {
    std::string out = "[";
    for (const std::string& request : requests) {
        if (out.size() > 1) {
            out += ',';
        }
        out += request;
    }
    out += ']';
    return out;
}

}  // namespace gridledger::rpc::test
