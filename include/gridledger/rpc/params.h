#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::rpc {

// Typed readers for a handler's params. Every parameter has a position and a name, so a client
// may send `"params": ["0xab…"]` or `"params": {"hash": "0xab…"}`. The readers fail with an
// Error that maps to -32602 invalid params (kInvalidArgument, or the parser's own code such as
// kBadHex or kOverflow) and whose message names the parameter, e.g. `param 0 "hash": expected
// 0x-prefixed hex`. Encodings follow docs/rpc.md: bytes as 0x hex, 64- and 128-bit integers as
// decimal strings.
//
// `require*` fail when the parameter is absent or JSON null; `optional*` return std::nullopt then.

/** The parameter at position `index` (array params) or member `name` (object params), or nullptr.
 */
[[nodiscard]] const boost::json::value* findParam(const boost::json::value& params,
                                                  std::size_t index, std::string_view name);

/** Fails unless params is absent (null), an array of at most names.size() items, or an object
 * whose keys are all in `names`: a handler calls it first to refuse unknown parameters. */
[[nodiscard]] Status expectOnly(const boost::json::value& params,
                                std::initializer_list<std::string_view> names);

/** Any JSON value other than null. */
[[nodiscard]] Result<const boost::json::value*> requireValue(const boost::json::value& params,
                                                             std::size_t index,
                                                             std::string_view name);

/** A JSON string. */
[[nodiscard]] Result<std::string> requireString(const boost::json::value& params, std::size_t index,
                                                std::string_view name);
[[nodiscard]] Result<std::optional<std::string>> optionalString(const boost::json::value& params,
                                                                std::size_t index,
                                                                std::string_view name);

/** A JSON boolean. */
[[nodiscard]] Result<bool> requireBool(const boost::json::value& params, std::size_t index,
                                       std::string_view name);
[[nodiscard]] Result<std::optional<bool>> optionalBool(const boost::json::value& params,
                                                       std::size_t index, std::string_view name);

/** A `0x`-prefixed hex string of any even length (kBadHex otherwise). */
[[nodiscard]] Result<Bytes> requireHex(const boost::json::value& params, std::size_t index,
                                       std::string_view name);
[[nodiscard]] Result<std::optional<Bytes>> optionalHex(const boost::json::value& params,
                                                       std::size_t index, std::string_view name);

/** A `0x`-prefixed hex string of exactly N bytes (kBadLength otherwise), e.g. a Hash256. */
template <std::size_t N>
[[nodiscard]] Result<FixedBytes<N>> requireFixedHex(const boost::json::value& params,
                                                    std::size_t index, std::string_view name) {
    auto bytes = requireHex(params, index, name);
    if (!bytes) {
        return std::unexpected(std::move(bytes).error());
    }
    auto fixed = FixedBytes<N>::fromBytes(*bytes);
    if (!fixed) {
        return fail(fixed.error().code, "param " + std::to_string(index) + " \"" +
                                            std::string(name) + "\": " + fixed.error().message);
    }
    return *fixed;
}

/** A decimal string of a u64: digits only, no sign, no leading zeros (kOverflow if too big). */
[[nodiscard]] Result<std::uint64_t> requireU64Decimal(const boost::json::value& params,
                                                      std::size_t index, std::string_view name);
[[nodiscard]] Result<std::optional<std::uint64_t>> optionalU64Decimal(
    const boost::json::value& params, std::size_t index, std::string_view name);

/** A decimal string of a u128 (DPS amounts in base units), with the rules of requireU64Decimal. */
[[nodiscard]] Result<u128> requireU128Decimal(const boost::json::value& params, std::size_t index,
                                              std::string_view name);

/** A JSON integer number in [0, max], for small counts such as a page size (not amounts). */
[[nodiscard]] Result<std::uint64_t> requireUintNumber(const boost::json::value& params,
                                                      std::size_t index, std::string_view name,
                                                      std::uint64_t max);

/** A JSON object (the pointer is into `params` and lives as long as it). */
[[nodiscard]] Result<const boost::json::object*> requireObject(const boost::json::value& params,
                                                               std::size_t index,
                                                               std::string_view name);

/** A JSON array (the pointer is into `params` and lives as long as it). */
[[nodiscard]] Result<const boost::json::array*> requireArray(const boost::json::value& params,
                                                             std::size_t index,
                                                             std::string_view name);

}  // namespace gridledger::rpc
