#pragma once

// Private helpers of base/codec for moving between domain types and protobuf messages.

#include <algorithm>
#include <climits>
#include <cstddef>
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

// Writing the messages a node writes most often (a block, a receipt) straight into their bytes,
// in the encoding libprotobuf gives the same message: fields in number order, zero scalars and
// empty singular fields left out, every element of a repeated field written, lengths and
// integers as shortest varints. Going through a message costs a string per bytes field and a
// second copy. Every field number these write is below 16, so a tag is one byte.

inline constexpr std::uint8_t kVarintType = 0;
inline constexpr std::uint8_t kLengthDelimitedType = 2;
/** A tag and the longest varint, 10 bytes: the most a scalar field takes. */
inline constexpr std::size_t kMaxScalarBytes = 1 + 10;

[[nodiscard]] constexpr std::uint8_t tag(std::uint8_t field, std::uint8_t wireType) {
    return static_cast<std::uint8_t>(field << 3U | wireType);
}

[[nodiscard]] inline std::size_t varintSize(std::uint64_t value) {
    std::size_t size = 1;
    for (; value >= 0x80; value >>= 7U) {
        ++size;
    }
    return size;
}

inline void putVarint(Bytes& out, std::uint64_t value) {
    for (; value >= 0x80; value >>= 7U) {
        out.push_back(static_cast<std::uint8_t>(value | 0x80U));
    }
    out.push_back(static_cast<std::uint8_t>(value));
}

/** A varint field, left out when zero. */
inline void putScalar(Bytes& out, std::uint8_t field, std::uint64_t value) {
    if (value != 0) {
        out.push_back(tag(field, kVarintType));
        putVarint(out, value);
    }
}

/** The bytes a length-delimited field of `length` bytes takes, its tag and length included. */
[[nodiscard]] inline std::size_t fieldSize(std::size_t length) {
    return 1 + varintSize(length) + length;
}

/** A length-delimited field, written even when empty (an element of a repeated field). */
inline void putBytes(Bytes& out, std::uint8_t field, ByteView bytes) {
    out.push_back(tag(field, kLengthDelimitedType));
    putVarint(out, bytes.size());
    out.insert(out.end(), bytes.begin(), bytes.end());
}

}  // namespace gridledger::codec::detail
