#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include <gridledger/base/amount.h>

namespace gridledger {

std::string toDecimal(u128 value) {
    if (value <= std::numeric_limits<std::uint64_t>::max()) {
        return std::to_string(static_cast<std::uint64_t>(value));
    }
    // Nineteen digits at a time: dividing a u128 is a library call, where the digits of a u64
    // are the processor's own divisions. A u128 is below 10^39, so it has at most three parts.
    constexpr std::uint64_t kPart = 10'000'000'000'000'000'000ULL;  // 10^19
    constexpr std::size_t kPartDigits = 19;
    std::array<std::uint64_t, 3> parts{};  // least significant first
    std::size_t count = 0;
    while (value != 0) {
        parts.at(count++) = static_cast<std::uint64_t>(value % kPart);
        value /= kPart;
    }
    std::string out = std::to_string(parts.at(count - 1));
    for (std::size_t i = count - 1; i-- > 0;) {
        const std::string digits = std::to_string(parts.at(i));
        out.append(kPartDigits - digits.size(), '0');
        out += digits;
    }
    return out;
}

Result<u128> parseU128(std::string_view text) {
    if (text.empty()) {
        return fail(ErrorCode::kInvalidArgument, "empty number");
    }
    if (text.size() > 1 && text[0] == '0') {
        return fail(ErrorCode::kInvalidArgument, "leading zero in number");
    }
    u128 value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return fail(ErrorCode::kInvalidArgument, "number must be decimal digits");
        }
        auto times10 = checkedMul(value, u128{10});
        auto next = times10 ? checkedAdd(*times10, static_cast<u128>(c - '0')) : std::nullopt;
        if (!next) {
            return fail(ErrorCode::kOverflow, "number does not fit in 128 bits");
        }
        value = *next;
    }
    return value;
}

Result<std::uint64_t> parseU64(std::string_view text) {
    auto wide = parseU128(text);
    if (!wide) {
        return std::unexpected(wide.error());
    }
    if (*wide > UINT64_MAX) {
        return fail(ErrorCode::kOverflow, "number does not fit in 64 bits");
    }
    return static_cast<std::uint64_t>(*wide);
}

void appendU128(Bytes& out, u128 value) {
    appendU64(out, static_cast<std::uint64_t>(value >> 64));
    appendU64(out, static_cast<std::uint64_t>(value));
}

Result<u128> readU128(ByteView in) {
    if (in.size() != 16) {
        return fail(ErrorCode::kBadLength, "a 128-bit amount is 16 bytes");
    }
    return (static_cast<u128>(readU64(in)) << 64) | readU64(in.subspan(8));
}

}  // namespace gridledger
