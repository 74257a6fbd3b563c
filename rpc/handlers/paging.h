#pragma once

// Private to rpc/: the cursor discipline every list method shares (docs/rpc.md, "Lists").

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include <gridledger/rpc/cursor.h>

#include "handlers.h"

namespace gridledger::rpc::handlers {

/** One page request, checked: the pinned height, where to start, how many items at most. */
struct PageRequest {
    std::string filter;
    std::uint64_t height = 0;
    /** The position of the last item of the previous page; none for the first page. */
    std::optional<Bytes> after;
    std::size_t limit = kDefaultPageLimit;
};

/**
 * Reads the params `height`, `cursor` and `limit` at positions first, first+1 and first+2.
 * `filter` tags the cursors of one list and filter; a list's tag starts with the name the list
 * had when cursors were introduced (`tasks_list`, …), kept through renames so that a cursor
 * outlives a node upgrade.
 * A cursor pins the height it was made at; a `height` next to it must equal it. Fails with
 * kInvalidArgument for a height above the executed head, kMalformed for a cursor decodeCursor
 * refuses, one made at another height than `height` or above the head, and kInvalidArgument for
 * a limit outside 1..kMaxPageLimit.
 */
Result<PageRequest> readPageRequest(const ChainContext& ctx, const value& params, std::size_t first,
                                    std::string filter);

/**
 * The JSON of one item at `index`, or nullopt when the list's filter skips it. Errors stop the
 * page and reach the client.
 */
using ItemAt = std::function<Result<std::optional<value>>(std::size_t index)>;

/**
 * The page of the list whose item positions are `positions` (ascending, unique) starting after
 * request.after: `{height, items, next_cursor}`, next_cursor null on the last page. A cursor
 * position that lies between two positions starts at the next one.
 */
Result<value> pageOf(const PageRequest& request, std::span<const Bytes> positions,
                     const ItemAt& itemAt);

/**
 * The page of the numbered list first..last (inclusive; empty when first > last), positions being
 * the numbers as 8 bytes big-endian. `itemAt` gets the number.
 */
Result<value> pageOfRange(const PageRequest& request, std::uint64_t first, std::uint64_t last,
                          const std::function<Result<std::optional<value>>(std::uint64_t)>& itemAt);

/**
 * The page of a numbered list without gaps, 0, 1, 2, ...: `itemAt` gives nullopt for the first
 * number past the end. Positions are the numbers as 8 bytes big-endian.
 */
Result<value> pageOfSequence(
    const PageRequest& request,
    const std::function<Result<std::optional<value>>(std::uint64_t)>& itemAt);

/** `number` as an 8-byte big-endian position. */
Bytes numberPosition(std::uint64_t number);

}  // namespace gridledger::rpc::handlers
