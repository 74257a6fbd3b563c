#include <algorithm>

#include <gridledger/crypto/sha256.h>
#include <gridledger/rpc/cursor.h>

namespace gridledger::rpc {
namespace {

constexpr std::uint8_t kCursorVersion = 1;
constexpr std::size_t kTagBytes = 8;
// version, height, filter tag, position length; then the position and the check bytes.
constexpr std::size_t kFixedBytes = 1 + 8 + kTagBytes + 1;

void appendTag(Bytes& out, const Hash256& digest) {
    out.insert(out.end(), digest.view().begin(), digest.view().begin() + kTagBytes);
}

Hash256 filterDigest(std::string_view filter) {
    return crypto::sha256(asBytes(filter));
}

Error badCursor(std::string message) {
    return Error{ErrorCode::kMalformed, "cursor: " + std::move(message)};
}

}  // namespace

std::string encodeCursor(std::string_view filter, const Cursor& cursor) {
    Bytes out;
    out.reserve(kFixedBytes + cursor.position.size() + kTagBytes);
    out.push_back(kCursorVersion);
    for (int shift = 56; shift >= 0; shift -= 8) {
        out.push_back(static_cast<std::uint8_t>(cursor.height >> shift));
    }
    appendTag(out, filterDigest(filter));
    out.push_back(static_cast<std::uint8_t>(cursor.position.size()));
    out.insert(out.end(), cursor.position.begin(), cursor.position.end());
    appendTag(out, crypto::sha256(out));
    return toHex(out);
}

Result<Cursor> decodeCursor(std::string_view filter, std::string_view text) {
    constexpr std::size_t kMaxText = 2 + 2 * (kFixedBytes + kMaxCursorPosition + kTagBytes);
    if (text.size() > kMaxText) {
        return std::unexpected(badCursor("too long"));
    }
    auto bytes = fromHex(text);
    if (!bytes) {
        return std::unexpected(badCursor("not a cursor of this node"));
    }
    const Bytes& b = *bytes;
    if (b.size() < kFixedBytes + kTagBytes || b[0] != kCursorVersion) {
        return std::unexpected(badCursor("not a cursor of this node"));
    }
    const std::size_t length = b[kFixedBytes - 1];
    if (length > kMaxCursorPosition || b.size() != kFixedBytes + length + kTagBytes) {
        return std::unexpected(badCursor("not a cursor of this node"));
    }
    const ByteView body(b.data(), kFixedBytes + length);
    const Hash256 check = crypto::sha256(body);
    if (!std::equal(check.view().begin(), check.view().begin() + kTagBytes,
                    b.begin() + static_cast<std::ptrdiff_t>(body.size()))) {
        return std::unexpected(badCursor("check bytes do not match (changed or forged)"));
    }
    const Hash256 tag = filterDigest(filter);
    if (!std::equal(tag.view().begin(), tag.view().begin() + kTagBytes, b.begin() + 9)) {
        return std::unexpected(badCursor("made for another list or filter"));
    }
    Cursor out;
    for (std::size_t i = 1; i <= 8; ++i) {
        out.height = (out.height << 8) | b[i];
    }
    out.position.assign(b.begin() + static_cast<std::ptrdiff_t>(kFixedBytes),
                        b.begin() + static_cast<std::ptrdiff_t>(kFixedBytes + length));
    return out;
}

}  // namespace gridledger::rpc
