#pragma once

// Private helpers of base/codec for moving between domain types and protobuf messages.

#include <climits>
#include <string>

#include <google/protobuf/message.h>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::codec::detail {

/** Parses `raw` into `msg`; fails on garbage, on oversize input and on unknown fields. */
[[nodiscard]] inline Status parse(google::protobuf::Message& msg, ByteView raw,
                                  std::string_view what) {
    if (raw.size() > INT_MAX || !msg.ParseFromArray(raw.data(), static_cast<int>(raw.size()))) {
        return fail(ErrorCode::kMalformed, std::string(what) + " is not a valid encoding");
    }
    if (!msg.GetReflection()->GetUnknownFields(msg).empty()) {
        return fail(ErrorCode::kMalformed, std::string(what) + " has unknown fields");
    }
    return {};
}

[[nodiscard]] inline Bytes serialize(const google::protobuf::Message& msg) {
    std::string out;
    msg.SerializeToString(&out);
    return {out.begin(), out.end()};
}

/** Copies a protobuf bytes field into a fixed-size value, naming the field on error. */
template <typename Fixed>
[[nodiscard]] Result<Fixed> fixed(const std::string& field, std::string_view name) {
    auto out = Fixed::fromBytes(asBytes(field));
    if (!out) {
        return fail(ErrorCode::kBadLength, std::string(name) + ": " + out.error().message);
    }
    return out;
}

inline std::string str(ByteView bytes) {
    return toString(bytes);
}

}  // namespace gridledger::codec::detail
