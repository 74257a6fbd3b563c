#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <gridledger/base/error.h>

namespace gridledger::rpc {

// JSON-RPC error codes. They reach clients, so none is ever renumbered or reused (docs/rpc.md).

// The JSON-RPC 2.0 standard codes.
inline constexpr std::int32_t kParseError = -32700;
inline constexpr std::int32_t kInvalidRequest = -32600;
inline constexpr std::int32_t kMethodNotFound = -32601;
inline constexpr std::int32_t kInvalidParams = -32602;
inline constexpr std::int32_t kInternalError = -32603;

// The server-error band as used by EIP-1474.
inline constexpr std::int32_t kInvalidInput = -32000;
inline constexpr std::int32_t kResourceNotFound = -32001;
inline constexpr std::int32_t kResourceUnavailable = -32002;
inline constexpr std::int32_t kTransactionRejected = -32003;
inline constexpr std::int32_t kMethodNotSupported = -32004;
inline constexpr std::int32_t kLimitExceeded = -32005;
inline constexpr std::int32_t kVersionNotSupported = -32006;

// GridLedger domain codes live in [kDomainFirst, kDomainLast].
inline constexpr std::int32_t kDomainFirst = -32099;
inline constexpr std::int32_t kDomainLast = -32010;
inline constexpr std::int32_t kInvalidBlock = -32010;
inline constexpr std::int32_t kInvalidCertificate = -32011;
inline constexpr std::int32_t kNotSafeToVote = -32012;
inline constexpr std::int32_t kNotSafeToTimeout = -32013;
inline constexpr std::int32_t kDoubleSignRisk = -32014;
inline constexpr std::int32_t kConfigError = -32015;
/**
 * The answer would exceed ServerLimits::maxResponseBytes. Not -32005: the request itself was
 * within every limit (and may have run); a smaller page or batch succeeds.
 */
inline constexpr std::int32_t kResponseTooLarge = -32016;

/**
 * Stable `error.data.reason` tokens of the errors the framework itself raises (protocol and
 * limits). Errors returned by handlers carry `gridledger::reasonOf(code)` instead.
 */
namespace reason {
inline constexpr std::string_view kParseError = "parse_error";
inline constexpr std::string_view kInvalidUtf8 = "invalid_utf8";
inline constexpr std::string_view kTooDeep = "too_deep";
inline constexpr std::string_view kInvalidRequest = "invalid_request";
inline constexpr std::string_view kBadVersion = "bad_jsonrpc_version";
inline constexpr std::string_view kBadId = "bad_id";
inline constexpr std::string_view kBadMethod = "bad_method";
inline constexpr std::string_view kBadParams = "bad_params";
inline constexpr std::string_view kEmptyBatch = "empty_batch";
inline constexpr std::string_view kBatchTooLarge = "batch_too_large";
inline constexpr std::string_view kBodyTooLarge = "body_too_large";
inline constexpr std::string_view kHeaderTooLarge = "header_too_large";
inline constexpr std::string_view kBadHttp = "bad_http_request";
inline constexpr std::string_view kBadContentType = "bad_content_type";
inline constexpr std::string_view kHttpMethodNotAllowed = "http_method_not_allowed";
inline constexpr std::string_view kPathNotFound = "path_not_found";
inline constexpr std::string_view kTooManyWebSockets = "too_many_websockets";
inline constexpr std::string_view kMethodNotFound = "method_not_found";
inline constexpr std::string_view kInternal = "internal";
inline constexpr std::string_view kResponseTooLarge = "response_too_large";
inline constexpr std::string_view kForbiddenHost = "forbidden_host";
inline constexpr std::string_view kForbiddenOrigin = "forbidden_origin";
inline constexpr std::string_view kUnauthorized = "unauthorized";
inline constexpr std::string_view kAdminOnly = "admin_only";
inline constexpr std::string_view kNotDurable = "not_durable";
inline constexpr std::string_view kBadTxFrame = "bad_tx_frame";
/** A path under `/explorer/` that tries to leave its directory or name a hidden file. */
inline constexpr std::string_view kBadPath = "bad_path";
}  // namespace reason

/** A JSON-RPC error as it goes on the wire: code, message and the `data.reason` token. */
struct RpcError {
    std::int32_t code = kInternalError;
    std::string message;
    std::string reason;
};

/**
 * The JSON-RPC code of a GridLedger error code, from the single table in rpc/errors.cpp.
 * Total: every ErrorCode has exactly one JSON-RPC code, and the mapping never changes.
 */
[[nodiscard]] std::int32_t rpcCodeOf(ErrorCode code);

/** Converts a handler's Error: code from rpcCodeOf, the Error's message, reason = reasonOf. */
[[nodiscard]] RpcError toRpcError(const Error& error);

/** The JSON error object `{"code", "message", "data": {"reason"}}`. */
[[nodiscard]] boost::json::object toJson(const RpcError& error);

/** A complete error response `{"jsonrpc": "2.0", "id": id, "error": {...}}`. */
[[nodiscard]] boost::json::object makeErrorResponse(const boost::json::value& id,
                                                    const RpcError& error);

/** The serialized error response with `"id": null` (for transport-level errors). */
[[nodiscard]] std::string errorResponseText(const RpcError& error);

}  // namespace gridledger::rpc
