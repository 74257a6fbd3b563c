#pragma once

// Private helpers of base/codec for moving between domain types and protobuf messages.

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include <google/protobuf/message.h>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::codec::detail {

/**
 * Parses `raw` into `msg`; fails on garbage, on oversize input, on unknown fields (in `msg` or in
 * any message nested in it) and on any encoding other than the canonical one (fields in number
 * order, each once, shortest varints, zero values left out, repeated scalars packed):
 * re-serializing, without the unknown fields protobuf would otherwise keep and write back, must
 * give back `raw` byte for byte. So every message has exactly one encoding, and a hash of its
 * bytes names it alone.
 */
[[nodiscard]] inline Status parse(google::protobuf::Message& msg, ByteView raw,
                                  std::string_view what) {
    if (raw.size() > INT_MAX || !msg.ParseFromArray(raw.data(), static_cast<int>(raw.size()))) {
        return fail(ErrorCode::kMalformed, std::string(what) + " is not a valid encoding");
    }
    if (!msg.GetReflection()->GetUnknownFields(msg).empty()) {
        return fail(ErrorCode::kMalformed, std::string(what) + " has unknown fields");
    }
    msg.DiscardUnknownFields();  // those of nested messages: then the bytes below differ
    std::string again;
    if (!msg.SerializeToString(&again) || again.size() != raw.size() ||
        !std::equal(again.begin(), again.end(), raw.begin(),
                    [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; })) {
        return fail(ErrorCode::kMalformed, std::string(what) + " is not in canonical encoding");
    }
    return {};
}

[[nodiscard]] inline Bytes serialize(const google::protobuf::Message& msg) {
    std::string out;
    msg.SerializeToString(&out);
    return {out.begin(), out.end()};
}

/** Copies a bytes field into a fixed-size value, naming the field on error. */
template <typename Fixed>
[[nodiscard]] Result<Fixed> fixed(ByteView field, std::string_view name) {
    auto out = Fixed::fromBytes(field);
    if (!out) {
        return fail(ErrorCode::kBadLength, std::string(name) + ": " + out.error().message);
    }
    return out;
}

template <typename Fixed>
[[nodiscard]] Result<Fixed> fixed(const std::string& field, std::string_view name) {
    return fixed<Fixed>(asBytes(field), name);
}

inline std::string str(ByteView bytes) {
    return toString(bytes);
}

}  // namespace gridledger::codec::detail
