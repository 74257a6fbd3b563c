#include "paging.h"

#include <algorithm>

namespace gridledger::rpc::handlers {
namespace json = boost::json;

namespace {

json::object pageJson(const PageRequest& request, json::array items,
                      const std::optional<Bytes>& next) {
    json::value cursor = nullptr;
    if (next) {
        cursor = json::string(encodeCursor(request.filter, Cursor{request.height, *next}));
    }
    return {{"height", std::to_string(request.height)},
            {"items", std::move(items)},
            {"next_cursor", std::move(cursor)}};
}

std::optional<std::uint64_t> positionNumber(const Bytes& position) {
    if (position.size() != 8) {
        return std::nullopt;
    }
    std::uint64_t out = 0;
    for (const std::uint8_t b : position) {
        out = (out << 8) | b;
    }
    return out;
}

}  // namespace

Bytes numberPosition(std::uint64_t number) {
    Bytes out;
    for (int shift = 56; shift >= 0; shift -= 8) {
        out.push_back(static_cast<std::uint8_t>(number >> shift));
    }
    return out;
}

Result<PageRequest> readPageRequest(const ChainContext& ctx, const value& params, std::size_t first,
                                    std::string filter) {
    GL_ASSIGN_OR_RETURN(head, executedHeight(ctx));
    GL_ASSIGN_OR_RETURN(at, optionalU64Decimal(params, first, "height"));
    GL_ASSIGN_OR_RETURN(text, optionalString(params, first + 1, "cursor"));
    PageRequest out;
    out.filter = std::move(filter);
    out.height = at.value_or(head);
    if (at && *at > head) {
        return fail(ErrorCode::kInvalidArgument, "height " + std::to_string(*at) +
                                                     " is above the executed head " +
                                                     std::to_string(head));
    }
    if (text) {
        GL_ASSIGN_OR_RETURN(cursor, decodeCursor(out.filter, *text));
        if (cursor.height > head) {
            return fail(ErrorCode::kMalformed, "cursor: its height is above the executed head");
        }
        if (at && *at != cursor.height) {
            return fail(ErrorCode::kMalformed, "cursor: made at height " +
                                                   std::to_string(cursor.height) + ", not " +
                                                   std::to_string(*at));
        }
        out.height = cursor.height;
        out.after = std::move(cursor.position);
    }
    const value* limit = findParam(params, first + 2, "limit");
    if (limit != nullptr && !limit->is_null()) {
        GL_ASSIGN_OR_RETURN(n, requireUintNumber(params, first + 2, "limit", kMaxPageLimit));
        if (n == 0) {
            return fail(ErrorCode::kInvalidArgument, "param \"limit\": must be at least 1");
        }
        out.limit = static_cast<std::size_t>(n);
    }
    return out;
}

Result<value> pageOf(const PageRequest& request, std::span<const Bytes> positions,
                     const ItemAt& itemAt) {
    std::size_t index = 0;
    if (request.after) {
        index = static_cast<std::size_t>(
            std::upper_bound(positions.begin(), positions.end(), *request.after) -
            positions.begin());
    }
    json::array items;
    for (; index < positions.size() && items.size() < request.limit; ++index) {
        GL_ASSIGN_OR_RETURN(item, itemAt(index));
        if (item) {
            items.push_back(std::move(*item));
        }
    }
    std::optional<Bytes> next;
    if (index < positions.size()) {
        next = positions[index - 1];
    }
    return pageJson(request, std::move(items), next);
}

Result<value> pageOfRange(
    const PageRequest& request, std::uint64_t first, std::uint64_t last,
    const std::function<Result<std::optional<value>>(std::uint64_t)>& itemAt) {
    std::uint64_t number = first;
    if (request.after) {
        const auto after = positionNumber(*request.after);
        if (!after) {
            return fail(ErrorCode::kMalformed, "cursor: not a position of this list");
        }
        if (*after >= first) {
            number = *after;
            if (number == UINT64_MAX) {
                return pageJson(request, {}, std::nullopt);
            }
            ++number;
        }
    }
    json::array items;
    bool more = false;
    for (; number <= last; ++number) {
        if (items.size() >= request.limit) {
            more = true;
            break;
        }
        GL_ASSIGN_OR_RETURN(item, itemAt(number));
        if (item) {
            items.push_back(std::move(*item));
        }
        if (number == UINT64_MAX) {
            break;
        }
    }
    std::optional<Bytes> next;
    if (more) {
        next = numberPosition(number - 1);
    }
    return pageJson(request, std::move(items), next);
}

Result<value> pageOfSequence(
    const PageRequest& request,
    const std::function<Result<std::optional<value>>(std::uint64_t)>& itemAt) {
    std::uint64_t number = 0;
    if (request.after) {
        const auto after = positionNumber(*request.after);
        if (!after || *after == UINT64_MAX) {
            return fail(ErrorCode::kMalformed, "cursor: not a position of this list");
        }
        number = *after + 1;
    }
    json::array items;
    for (; items.size() < request.limit; ++number) {
        GL_ASSIGN_OR_RETURN(item, itemAt(number));
        if (!item) {
            return pageJson(request, std::move(items), std::nullopt);
        }
        items.push_back(std::move(*item));
    }
    // A full page: a cursor only when another item follows.
    GL_ASSIGN_OR_RETURN(following, itemAt(number));
    std::optional<Bytes> next;
    if (following) {
        next = numberPosition(number - 1);
    }
    return pageJson(request, std::move(items), next);
}

}  // namespace gridledger::rpc::handlers
