#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <utility>

#include <boost/json/array.hpp>
#include <boost/json/error.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>

#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>

namespace gridledger::rpc {
namespace {

/** Longest method name echoed back in a method_not_found message. */
constexpr std::size_t kMaxEchoedName = 64;

RpcError frameworkError(std::int32_t code, std::string message, std::string_view reason) {
    return RpcError{code, std::move(message), std::string(reason)};
}

boost::json::value errorValue(const boost::json::value& id, const RpcError& error) {
    return makeErrorResponse(id, error);
}

boost::json::value successValue(const boost::json::value& id, boost::json::value result) {
    // On the result's memory resource, so that the result moves in rather than being copied.
    boost::json::object out(result.storage());
    out["jsonrpc"] = "2.0";
    out["id"] = id;
    out["result"] = std::move(result);
    return out;
}

/** JSON-RPC 2.0 ids are strings, numbers or null. */
bool isValidId(const boost::json::value& id) {
    // A number too large for a double (1e99999) parses as infinity, which no JSON text can
    // carry: echoed, it would make the whole answer unreadable.
    if (id.is_double()) {
        return std::isfinite(id.get_double());
    }
    return id.is_string() || id.is_number() || id.is_null();
}

std::string_view view(const boost::json::string& text) {
    return {text.data(), text.size()};
}

/**
 * The JSON text of the success response to `id` whose result's text is `result`: what
 * serialising successValue() gives, without parsing the result or serialising it again.
 */
std::string keptResponse(const boost::json::value& id, const std::string& result) {
    constexpr std::string_view kHead = R"({"jsonrpc":"2.0","id":)";
    constexpr std::string_view kResult = R"(,"result":)";
    const std::string idText = boost::json::serialize(id);
    std::string out;
    out.reserve(kHead.size() + idText.size() + kResult.size() + result.size() + 1);
    out.append(kHead).append(idText).append(kResult).append(result).push_back('}');
    return out;
}

/** The response to a request whose method exists; never throws. */
boost::json::value callHandler(const Handler& handler, const boost::json::value& id,
                               const boost::json::value& params) {
    try {
        Result<boost::json::value> result = handler(params);
        if (result) {
            return successValue(id, std::move(result).value());
        }
        return errorValue(id, toRpcError(result.error()));
    } catch (...) {
        // A handler bug must not take the server down, and its text must not reach the client.
        return errorValue(id, frameworkError(kInternalError, "internal error", reason::kInternal));
    }
}

/**
 * The JSON text of `value`, or nullopt as soon as it would exceed `budget` bytes: serialized in
 * chunks, so an oversized answer is never built whole.
 */
std::optional<std::string> serializeWithin(const boost::json::value& value, std::size_t budget) {
    boost::json::serializer serializer;
    serializer.reset(&value);
    std::string out;
    char chunk[4096];
    while (!serializer.done()) {
        const boost::json::string_view part = serializer.read(chunk, sizeof chunk);
        if (part.size() > budget - out.size()) {
            return std::nullopt;
        }
        out.append(part.data(), part.size());
    }
    return out;
}

}  // namespace

/**
 * One request's response: its JSON value, or the JSON text of a success response made from a
 * kept result (KeptResult), which is written as it is.
 */
struct Dispatcher::Reply {
    boost::json::value id;        // what the response echoes
    boost::json::value response;  // null when `text` holds the response
    std::optional<std::string> text;

    /**
     * The response's JSON text (a kept one is moved out), or nullopt as soon as it would exceed
     * `budget` bytes.
     */
    [[nodiscard]] std::optional<std::string> takeText(std::size_t budget) {
        if (text) {
            return text->size() <= budget ? std::exchange(text, std::nullopt) : std::nullopt;
        }
        return serializeWithin(response, budget);
    }
};

namespace {

/** The id a response to `request` would echo; nullopt for a notification (no answer at all). */
std::optional<boost::json::value> replyIdOf(const boost::json::value& request) {
    const boost::json::object* object = request.if_object();
    if (object == nullptr) {
        return boost::json::value();
    }
    const boost::json::value* id = object->if_contains("id");
    if (id == nullptr) {
        return std::nullopt;
    }
    return isValidId(*id) ? *id : boost::json::value();
}

RpcError responseTooLarge(std::size_t limit, bool ran) {
    return frameworkError(kResponseTooLarge,
                          (ran ? std::string("the answer exceeds ")
                               : std::string("not run: the batch's answer reached ")) +
                              "the limit of " + std::to_string(limit) +
                              " bytes (rpc.max_response_bytes)",
                          reason::kResponseTooLarge);
}

}  // namespace

bool isValidUtf8(std::string_view text) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t size = text.size();
    std::size_t i = 0;
    while (i < size) {
        const std::uint32_t lead = bytes[i];
        if (lead < 0x80) {
            ++i;
            continue;
        }
        std::size_t length = 0;
        std::uint32_t point = 0;
        std::uint32_t smallest = 0;
        if ((lead & 0xE0U) == 0xC0U) {
            length = 2;
            point = lead & 0x1FU;
            smallest = 0x80;
        } else if ((lead & 0xF0U) == 0xE0U) {
            length = 3;
            point = lead & 0x0FU;
            smallest = 0x800;
        } else if ((lead & 0xF8U) == 0xF0U) {
            length = 4;
            point = lead & 0x07U;
            smallest = 0x10000;
        } else {
            return false;
        }
        if (size - i < length) {
            return false;
        }
        for (std::size_t k = 1; k < length; ++k) {
            const std::uint32_t next = bytes[i + k];
            if ((next & 0xC0U) != 0x80U) {
                return false;
            }
            point = (point << 6U) | (next & 0x3FU);
        }
        if (point < smallest || point > 0x10FFFF || (point >= 0xD800 && point <= 0xDFFF)) {
            return false;
        }
        i += length;
    }
    return true;
}

Dispatcher::Dispatcher(MethodTable methods, const ServerLimits& limits,
                       std::vector<std::string> adminOnly, std::function<Status()> settle)
    : methods_(std::move(methods)),
      limits_(limits),
      adminOnly_(std::move(adminOnly)),
      settle_(std::move(settle)) {}

std::optional<Dispatcher::Reply> Dispatcher::handleOne(const boost::json::value& request,
                                                       const MethodTable* connection) const {
    const auto refuse = [](const boost::json::value& id, const RpcError& error) {
        return Reply{id, errorValue(id, error), std::nullopt};
    };
    try {
        const boost::json::object* object = request.if_object();
        if (object == nullptr) {
            return refuse(nullptr, frameworkError(kInvalidRequest, "request must be an object",
                                                  reason::kInvalidRequest));
        }
        const boost::json::value* id = object->if_contains("id");
        if (id != nullptr && !isValidId(*id)) {
            return refuse(nullptr,
                          frameworkError(kInvalidRequest, "id must be a string, a number or null",
                                         reason::kBadId));
        }
        const boost::json::value& replyId = id != nullptr ? *id : boost::json::value();
        const boost::json::value* version = object->if_contains("jsonrpc");
        if (version == nullptr || !version->is_string() || view(version->get_string()) != "2.0") {
            return refuse(replyId, frameworkError(kInvalidRequest, "\"jsonrpc\" must be \"2.0\"",
                                                  reason::kBadVersion));
        }
        const boost::json::value* method = object->if_contains("method");
        if (method == nullptr || !method->is_string()) {
            return refuse(replyId, frameworkError(kInvalidRequest, "\"method\" must be a string",
                                                  reason::kBadMethod));
        }
        const boost::json::value* params = object->if_contains("params");
        if (params != nullptr && !params->is_array() && !params->is_object()) {
            return refuse(
                replyId, frameworkError(kInvalidRequest, "\"params\" must be an array or an object",
                                        reason::kBadParams));
        }
        const std::string_view name = view(method->get_string());
        const MethodTable* table = connection;
        const Handler* handler = table != nullptr ? table->find(name) : nullptr;
        if (handler == nullptr) {
            table = &methods_;
            handler = methods_.find(name);
        }
        if (handler == nullptr) {
            if (id == nullptr) {
                return std::nullopt;
            }
            if (std::find(adminOnly_.begin(), adminOnly_.end(), name) != adminOnly_.end()) {
                return refuse(replyId,
                              frameworkError(kMethodNotFound,
                                             std::string(name) + " is served on the admin listener "
                                                                 "only (rpc.admin_port)",
                                             reason::kAdminOnly));
            }
            return refuse(replyId, frameworkError(kMethodNotFound,
                                                  "method not found: " +
                                                      std::string(name.substr(0, kMaxEchoedName)),
                                                  reason::kMethodNotFound));
        }
        const boost::json::value noParams;
        const boost::json::value& given = params != nullptr ? *params : noParams;
        if (id == nullptr) {
            (void)callHandler(*handler, replyId, given);
            return std::nullopt;  // A notification: the client asked for no answer.
        }
        if (const KeptResult* kept = table->findKept(name)) {
            if (const std::shared_ptr<const std::string> result = (*kept)(given)) {
                return Reply{replyId, nullptr, keptResponse(replyId, *result)};
            }
        }
        return Reply{replyId, callHandler(*handler, replyId, given), std::nullopt};
    } catch (...) {
        return refuse(nullptr, frameworkError(kInternalError, "internal error", reason::kInternal));
    }
}

// The answer is written as it is produced, so the cap is checked against the bytes already
// taken. Once a response does not fit, that request and every later one are answered with a
// small response_too_large error: the client learns which requests ran and which did not, and
// the server runs nothing whose answer it would have to drop.
std::optional<std::string> Dispatcher::handleBatch(const boost::json::array& batch,
                                                   const MethodTable* connection) const {
    const std::size_t limit = limits_.maxResponseBytes;
    std::string out = "[";
    std::size_t answered = 0;
    bool full = false;
    for (const boost::json::value& request : batch) {
        std::optional<boost::json::value> refused;
        if (full) {
            std::optional<boost::json::value> id = replyIdOf(request);
            if (!id) {
                continue;  // A notification past the cap: neither run nor answered.
            }
            refused = errorValue(*id, responseTooLarge(limit, false));
        } else {
            std::optional<Reply> reply = handleOne(request, connection);
            if (!reply) {
                continue;
            }
            // Room for this entry's separator and for the closing bracket.
            const std::size_t taken = out.size() + (answered == 0 ? 0 : 1) + 1;
            const std::optional<std::string> text =
                taken <= limit ? reply->takeText(limit - taken) : std::nullopt;
            if (text) {
                if (answered != 0) {
                    out += ',';
                }
                out += *text;
                ++answered;
                continue;
            }
            full = true;
            refused = errorValue(reply->id, responseTooLarge(limit, true));
        }
        if (answered != 0) {
            out += ',';
        }
        out += boost::json::serialize(*refused);
        ++answered;
    }
    if (answered == 0) {
        return std::nullopt;
    }
    out += "]";
    return out;
}

std::optional<std::string> Dispatcher::handle(std::string_view payload,
                                              const MethodTable* connection) const {
    std::optional<std::string> out = answer(payload, connection);
    if (settle_) {
        if (Status settled = settle_(); !settled && out) {
            return errorResponseText(frameworkError(
                kInternalError, "the answer could not be made durable: " + settled.error().message,
                reason::kNotDurable));
        }
    }
    return out;
}

std::optional<std::string> Dispatcher::answer(std::string_view payload,
                                              const MethodTable* connection) const {
    try {
        if (!isValidUtf8(payload)) {
            return errorResponseText(
                frameworkError(kParseError, "request is not valid UTF-8", reason::kInvalidUtf8));
        }
        boost::json::parse_options options;
        options.max_depth = limits_.maxJsonDepth;
        boost::system::error_code ec;
        const boost::json::value parsed =
            boost::json::parse(boost::json::string_view(payload.data(), payload.size()), ec,
                               boost::json::storage_ptr(), options);
        if (ec == boost::json::error::too_deep) {
            return errorResponseText(frameworkError(
                kLimitExceeded,
                "JSON nested deeper than " + std::to_string(limits_.maxJsonDepth) + " levels",
                reason::kTooDeep));
        }
        if (ec) {
            return errorResponseText(
                frameworkError(kParseError, "invalid JSON: " + ec.message(), reason::kParseError));
        }
        const boost::json::array* batch = parsed.if_array();
        if (batch == nullptr) {
            std::optional<Reply> reply = handleOne(parsed, connection);
            if (!reply) {
                return std::nullopt;
            }
            std::optional<std::string> text = reply->takeText(limits_.maxResponseBytes);
            if (!text) {
                return boost::json::serialize(
                    errorValue(reply->id, responseTooLarge(limits_.maxResponseBytes, true)));
            }
            return text;
        }
        if (batch->empty()) {
            return errorResponseText(
                frameworkError(kInvalidRequest, "empty batch", reason::kEmptyBatch));
        }
        if (batch->size() > limits_.maxBatchItems) {
            return errorResponseText(frameworkError(kLimitExceeded,
                                                    "batch of " + std::to_string(batch->size()) +
                                                        " requests exceeds the limit of " +
                                                        std::to_string(limits_.maxBatchItems),
                                                    reason::kBatchTooLarge));
        }
        return handleBatch(*batch, connection);
    } catch (...) {
        return errorResponseText(
            frameworkError(kInternalError, "internal error", reason::kInternal));
    }
}

}  // namespace gridledger::rpc
