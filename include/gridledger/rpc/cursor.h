#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::rpc {

/** The page size of a list method when the request names none (docs/rpc.md, "Lists"). */
inline constexpr std::uint64_t kDefaultPageLimit = 100;
/** The largest page size a list method accepts; a larger `limit` is refused. */
inline constexpr std::uint64_t kMaxPageLimit = 1000;
/** The longest position a cursor carries (a task id is 32 bytes, an address 20, a number 8). */
inline constexpr std::size_t kMaxCursorPosition = 64;

/**
 * Where the next page of a list starts: the height every page of the list reads, and the
 * position of the last item already returned (items come in ascending byte order of position).
 */
struct Cursor {
    std::uint64_t height = 0;
    Bytes position;

    friend bool operator==(const Cursor&, const Cursor&) = default;
};

/**
 * The opaque text of `cursor` for the list request `filter` (the method name and its filter
 * params, e.g. "tasks_list|consumer|0xab…"). Requires position.size() <= kMaxCursorPosition.
 * The text is 0x hex of: version 1, height (8 bytes big-endian), the first 8 bytes of
 * SHA-256(filter), the position length and bytes, and the first 8 bytes of SHA-256 of all that.
 * Deterministic: the same inputs give the same text.
 */
[[nodiscard]] std::string encodeCursor(std::string_view filter, const Cursor& cursor);

/**
 * The cursor `text` encodes, if encodeCursor made it for the same `filter`. Fails with
 * kMalformed when the text is not hex, has the wrong length or version, fails its check bytes
 * (a changed character) or was made for another filter. Never reads past `text`.
 */
[[nodiscard]] Result<Cursor> decodeCursor(std::string_view filter, std::string_view text);

}  // namespace gridledger::rpc
