#include <algorithm>
#include <utility>

#include <gridledger/rpc/params.h>

namespace gridledger::rpc {
namespace {

std::string label(std::size_t index, std::string_view name) {
    return "param " + std::to_string(index) + " \"" + std::string(name) + "\"";
}

std::unexpected<Error> paramError(ErrorCode code, std::size_t index, std::string_view name,
                                  std::string_view what) {
    return fail(code, label(index, name) + ": " + std::string(what));
}

/** The parameter if present and not null; std::nullopt-like nullptr otherwise. */
const boost::json::value* present(const boost::json::value& params, std::size_t index,
                                  std::string_view name) {
    const boost::json::value* value = findParam(params, index, name);
    return (value == nullptr || value->is_null()) ? nullptr : value;
}

Result<std::string> asString(const boost::json::value& value, std::size_t index,
                             std::string_view name) {
    if (!value.is_string()) {
        return paramError(ErrorCode::kInvalidArgument, index, name, "expected a string");
    }
    const boost::json::string& text = value.get_string();
    return std::string(text.data(), text.size());
}

Result<Bytes> asHex(const boost::json::value& value, std::size_t index, std::string_view name) {
    if (!value.is_string()) {
        return paramError(ErrorCode::kInvalidArgument, index, name,
                          "expected a 0x-prefixed hex string");
    }
    const boost::json::string& text = value.get_string();
    auto bytes = fromHex(std::string_view(text.data(), text.size()));
    if (!bytes) {
        return paramError(bytes.error().code, index, name,
                          "expected 0x-prefixed hex with an even number of digits");
    }
    return std::move(bytes).value();
}

template <typename T, typename Parse>
Result<T> asDecimal(const boost::json::value& value, std::size_t index, std::string_view name,
                    Parse parse) {
    if (!value.is_string()) {
        return paramError(ErrorCode::kInvalidArgument, index, name,
                          "expected a decimal string such as \"42\"");
    }
    const boost::json::string& text = value.get_string();
    auto parsed = parse(std::string_view(text.data(), text.size()));
    if (!parsed) {
        return paramError(parsed.error().code, index, name, parsed.error().message);
    }
    return *parsed;
}

}  // namespace

const boost::json::value* findParam(const boost::json::value& params, std::size_t index,
                                    std::string_view name) {
    if (const boost::json::array* array = params.if_array()) {
        return index < array->size() ? &(*array)[index] : nullptr;
    }
    if (const boost::json::object* object = params.if_object()) {
        return object->if_contains(boost::json::string_view(name.data(), name.size()));
    }
    return nullptr;
}

Status expectOnly(const boost::json::value& params, std::initializer_list<std::string_view> names) {
    if (params.is_null()) {
        return {};
    }
    if (const boost::json::array* array = params.if_array()) {
        if (array->size() > names.size()) {
            return fail(ErrorCode::kInvalidArgument,
                        "expected at most " + std::to_string(names.size()) + " params, got " +
                            std::to_string(array->size()));
        }
        return {};
    }
    if (const boost::json::object* object = params.if_object()) {
        for (const auto& member : *object) {
            const std::string_view key(member.key().data(), member.key().size());
            if (std::find(names.begin(), names.end(), key) == names.end()) {
                return fail(ErrorCode::kInvalidArgument,
                            "unknown param \"" + std::string(key) + "\"");
            }
        }
        return {};
    }
    return fail(ErrorCode::kInvalidArgument, "params must be an array or an object");
}

Result<const boost::json::value*> requireValue(const boost::json::value& params, std::size_t index,
                                               std::string_view name) {
    const boost::json::value* value = present(params, index, name);
    if (value == nullptr) {
        return paramError(ErrorCode::kInvalidArgument, index, name, "missing");
    }
    return value;
}

Result<std::string> requireString(const boost::json::value& params, std::size_t index,
                                  std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    return asString(*value, index, name);
}

Result<std::optional<std::string>> optionalString(const boost::json::value& params,
                                                  std::size_t index, std::string_view name) {
    const boost::json::value* value = present(params, index, name);
    if (value == nullptr) {
        return std::optional<std::string>();
    }
    GL_ASSIGN_OR_RETURN(text, asString(*value, index, name));
    return std::optional<std::string>(std::move(text));
}

Result<bool> requireBool(const boost::json::value& params, std::size_t index,
                         std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    if (!value->is_bool()) {
        return paramError(ErrorCode::kInvalidArgument, index, name, "expected true or false");
    }
    return value->get_bool();
}

Result<std::optional<bool>> optionalBool(const boost::json::value& params, std::size_t index,
                                         std::string_view name) {
    if (present(params, index, name) == nullptr) {
        return std::optional<bool>();
    }
    GL_ASSIGN_OR_RETURN(flag, requireBool(params, index, name));
    return std::optional<bool>(flag);
}

Result<Bytes> requireHex(const boost::json::value& params, std::size_t index,
                         std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    return asHex(*value, index, name);
}

Result<std::optional<Bytes>> optionalHex(const boost::json::value& params, std::size_t index,
                                         std::string_view name) {
    const boost::json::value* value = present(params, index, name);
    if (value == nullptr) {
        return std::optional<Bytes>();
    }
    GL_ASSIGN_OR_RETURN(bytes, asHex(*value, index, name));
    return std::optional<Bytes>(std::move(bytes));
}

Result<std::uint64_t> requireU64Decimal(const boost::json::value& params, std::size_t index,
                                        std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    return asDecimal<std::uint64_t>(*value, index, name, parseU64);
}

Result<std::optional<std::uint64_t>> optionalU64Decimal(const boost::json::value& params,
                                                        std::size_t index, std::string_view name) {
    const boost::json::value* value = present(params, index, name);
    if (value == nullptr) {
        return std::optional<std::uint64_t>();
    }
    GL_ASSIGN_OR_RETURN(number, asDecimal<std::uint64_t>(*value, index, name, parseU64));
    return std::optional<std::uint64_t>(number);
}

Result<u128> requireU128Decimal(const boost::json::value& params, std::size_t index,
                                std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    return asDecimal<u128>(*value, index, name, parseU128);
}

Result<std::uint64_t> requireUintNumber(const boost::json::value& params, std::size_t index,
                                        std::string_view name, std::uint64_t max) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    std::uint64_t number = 0;
    if (const std::int64_t* signedNumber = value->if_int64()) {
        if (*signedNumber < 0) {
            return paramError(ErrorCode::kInvalidArgument, index, name, "must not be negative");
        }
        number = static_cast<std::uint64_t>(*signedNumber);
    } else if (const std::uint64_t* unsignedNumber = value->if_uint64()) {
        number = *unsignedNumber;
    } else {
        return paramError(ErrorCode::kInvalidArgument, index, name, "expected an integer");
    }
    if (number > max) {
        return paramError(ErrorCode::kInvalidArgument, index, name,
                          "must be at most " + std::to_string(max));
    }
    return number;
}

Result<const boost::json::object*> requireObject(const boost::json::value& params,
                                                 std::size_t index, std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    if (!value->is_object()) {
        return paramError(ErrorCode::kInvalidArgument, index, name, "expected an object");
    }
    return &value->get_object();
}

Result<const boost::json::array*> requireArray(const boost::json::value& params, std::size_t index,
                                               std::string_view name) {
    GL_ASSIGN_OR_RETURN(value, requireValue(params, index, name));
    if (!value->is_array()) {
        return paramError(ErrorCode::kInvalidArgument, index, name, "expected an array");
    }
    return &value->get_array();
}

}  // namespace gridledger::rpc
