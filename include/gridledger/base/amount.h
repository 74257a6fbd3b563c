#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger {

/** Unsigned 128-bit integer: DPS amounts in base units (18 decimals). */
__extension__ typedef unsigned __int128 u128;

/** Checked arithmetic: std::nullopt on overflow or underflow, never a wrapped value. */
[[nodiscard]] constexpr std::optional<std::uint64_t> checkedAdd(std::uint64_t a, std::uint64_t b) {
    std::uint64_t out = 0;
    if (__builtin_add_overflow(a, b, &out)) {
        return std::nullopt;
    }
    return out;
}
[[nodiscard]] constexpr std::optional<std::uint64_t> checkedSub(std::uint64_t a, std::uint64_t b) {
    if (b > a) {
        return std::nullopt;
    }
    return a - b;
}
[[nodiscard]] constexpr std::optional<std::uint64_t> checkedMul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out)) {
        return std::nullopt;
    }
    return out;
}
[[nodiscard]] constexpr std::optional<u128> checkedAdd(u128 a, u128 b) {
    u128 out = 0;
    if (__builtin_add_overflow(a, b, &out)) {
        return std::nullopt;
    }
    return out;
}
[[nodiscard]] constexpr std::optional<u128> checkedSub(u128 a, u128 b) {
    if (b > a) {
        return std::nullopt;
    }
    return a - b;
}
[[nodiscard]] constexpr std::optional<u128> checkedMul(u128 a, u128 b) {
    u128 out = 0;
    if (__builtin_mul_overflow(a, b, &out)) {
        return std::nullopt;
    }
    return out;
}

/** Decimal text of a u128, e.g. "1000000000000000000". */
[[nodiscard]] std::string toDecimal(u128 value);

/** Parses a plain decimal u128 (digits only, no sign, no leading zeros except "0"). */
[[nodiscard]] Result<u128> parseU128(std::string_view text);

/** Parses a plain decimal u64 (digits only, no sign, no leading zeros except "0"). */
[[nodiscard]] Result<std::uint64_t> parseU64(std::string_view text);

/** 16 bytes big-endian: the wire and storage form of a u128. */
void appendU128(Bytes& out, u128 value);
[[nodiscard]] Result<u128> readU128(ByteView in);

}  // namespace gridledger
