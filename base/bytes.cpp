#include <gridledger/base/bytes.h>

namespace gridledger {
namespace {

constexpr std::string_view kDigits = "0123456789abcdef";

int nibble(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

}  // namespace

std::string toHex(ByteView bytes) {
    std::string out(2 + bytes.size() * 2, '0');
    out[1] = 'x';
    char* digit = out.data() + 2;
    for (const std::uint8_t b : bytes) {
        *digit++ = kDigits[b >> 4U];
        *digit++ = kDigits[b & 0x0fU];
    }
    return out;
}

Result<Bytes> fromHex(std::string_view text) {
    if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
        return fail(ErrorCode::kBadHex, "hex must start with 0x");
    }
    text.remove_prefix(2);
    if (text.size() % 2 != 0) {
        return fail(ErrorCode::kBadHex, "hex has an odd number of digits");
    }
    Bytes out;
    out.reserve(text.size() / 2);
    for (std::size_t i = 0; i < text.size(); i += 2) {
        const int hi = nibble(text[i]);
        const int lo = nibble(text[i + 1]);
        if (hi < 0 || lo < 0) {
            return fail(ErrorCode::kBadHex,
                        "invalid hex digit at position " + std::to_string(i + 2));
        }
        out.push_back(static_cast<std::uint8_t>((hi << 4) | lo));
    }
    return out;
}

void appendU64(Bytes& out, std::uint64_t value) {
    for (int shift = 56; shift >= 0; shift -= 8) {
        out.push_back(static_cast<std::uint8_t>(value >> shift));
    }
}

void appendU32(Bytes& out, std::uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) {
        out.push_back(static_cast<std::uint8_t>(value >> shift));
    }
}

std::uint64_t readU64(ByteView in) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < 8; ++i) {
        value = (value << 8) | in[i];
    }
    return value;
}

std::uint32_t readU32(ByteView in) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        value = (value << 8) | in[i];
    }
    return value;
}

}  // namespace gridledger
