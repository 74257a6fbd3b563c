#pragma once

// Private to contracts/: reading and writing the JSON of genesis files. Every reader names the
// field it refuses ("genesis.<path><key>: why") with kConfig.

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include <gridledger/base/amount.h>
#include <gridledger/base/result.h>
#include <gridledger/contracts/genesis.h>

namespace gridledger::contracts::detail {

namespace json = boost::json;

[[nodiscard]] Error badField(std::string_view field, std::string_view why);

/** The member `key` of `obj`, or nullptr when absent. */
[[nodiscard]] const json::value* optionalMember(const json::object& obj, std::string_view key);
[[nodiscard]] Result<const json::value*> member(const json::object& obj, std::string_view key,
                                                std::string_view path);
[[nodiscard]] Result<std::string> getString(const json::object& obj, std::string_view key,
                                            std::string_view path = "");
/** A u64 written as a decimal string. */
[[nodiscard]] Result<std::uint64_t> getU64(const json::object& obj, std::string_view key,
                                           std::string_view path = "");
/** A u128 written as a decimal string. */
[[nodiscard]] Result<u128> getU128(const json::object& obj, std::string_view key,
                                   std::string_view path = "");
/** A u32 written as a JSON number. */
[[nodiscard]] Result<std::uint32_t> getU32(const json::object& obj, std::string_view key,
                                           std::string_view path);
[[nodiscard]] Result<const json::array*> getArray(const json::object& obj, std::string_view key,
                                                  std::string_view path = "");
[[nodiscard]] Result<const json::object*> getObject(const json::object& obj, std::string_view key,
                                                    std::string_view path = "");

template <typename Fixed>
[[nodiscard]] Result<Fixed> fixedFromJson(const json::value& value, std::string_view field) {
    if (!value.is_string()) {
        return std::unexpected(badField(field, "must be a string"));
    }
    auto out = Fixed::fromHex(value.as_string());
    if (!out) {
        return std::unexpected(badField(field, out.error().message));
    }
    return *out;
}

template <typename Fixed>
[[nodiscard]] Result<Fixed> getFixed(const json::object& obj, std::string_view key,
                                     std::string_view path) {
    GL_ASSIGN_OR_RETURN(value, member(obj, key, path));
    return fixedFromJson<Fixed>(*value, std::string(path) + std::string(key));
}

/** Parses the optional sections tokenomics, power_index, governance, verifiers, providers. */
[[nodiscard]] Status parseContractSections(const json::object& root, Genesis& out);
/** Renders the same sections into `root`. */
void renderContractSections(const Genesis& genesis, json::object& root);

[[nodiscard]] Result<codec::RegisterProvider> inventoryFromJson(const json::object& obj,
                                                                std::string_view path);
[[nodiscard]] json::object inventoryJson(const codec::RegisterProvider& inventory);

}  // namespace gridledger::contracts::detail
