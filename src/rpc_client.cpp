#include "rpc_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <gridledger/base/amount.h>

namespace gridledger::node {
namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;

namespace {

constexpr std::uint64_t kMaxResponseBytes = std::uint64_t{64} << 20;

}  // namespace

Result<Endpoint> parseEndpoint(std::string_view text) {
    if (text.starts_with("http://")) {
        text.remove_prefix(7);
    }
    while (text.ends_with("/")) {
        text.remove_suffix(1);
    }
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return fail(ErrorCode::kInvalidArgument, "endpoint must be host:port");
    }
    auto port = parseU64(text.substr(colon + 1));
    if (!port || *port == 0 || *port > 65535) {
        return fail(ErrorCode::kInvalidArgument, "endpoint port must be 1-65535");
    }
    return Endpoint{std::string(text.substr(0, colon)), static_cast<std::uint16_t>(*port), {}};
}

namespace {

/** Posts one JSON-RPC request body and parses the answer as JSON. */
Result<json::value> post(const Endpoint& endpoint, const json::value& request) {
    http::response<http::string_body> response;
    try {
        asio::io_context io;
        asio::ip::tcp::resolver resolver(io);
        boost::beast::tcp_stream stream(io);
        stream.expires_after(std::chrono::seconds(30));
        stream.connect(resolver.resolve(endpoint.host, std::to_string(endpoint.port)));
        http::request<http::string_body> req(http::verb::post, "/", 11);
        req.set(http::field::host, endpoint.host);
        req.set(http::field::content_type, "application/json");
        if (!endpoint.token.empty()) {
            req.set(http::field::authorization, "Bearer " + endpoint.token);
        }
        req.body() = json::serialize(request);
        req.prepare_payload();
        http::write(stream, req);
        boost::beast::flat_buffer buffer;
        // Above Beast's 8 MB default: a block_getRaw answer holds up to one largest block
        // (max_block_bytes, 4 MiB by default) as hex.
        http::response_parser<http::string_body> parser;
        parser.body_limit(kMaxResponseBytes);
        http::read(stream, buffer, parser);
        response = parser.release();
        boost::system::error_code ec;
        stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    } catch (const boost::system::system_error& e) {
        return fail(ErrorCode::kUnavailable, "cannot reach the node at " + endpoint.host + ":" +
                                                 std::to_string(endpoint.port) + ": " + e.what());
    }
    boost::system::error_code ec;
    json::value body = json::parse(response.body(), ec);
    if (ec) {
        return fail(ErrorCode::kMalformed, "the node answered with something that is not JSON-RPC");
    }
    return body;
}

/** The result of one JSON-RPC response object, or its error. */
Result<json::value> resultOf(const json::value& answer) {
    if (!answer.is_object()) {
        return fail(ErrorCode::kMalformed, "the node answered with something that is not JSON-RPC");
    }
    const auto& obj = answer.as_object();
    if (const auto* error = obj.if_contains("error")) {
        return fail(ErrorCode::kInvalidArgument, "node error: " + json::serialize(*error));
    }
    if (const auto* result = obj.if_contains("result")) {
        return *result;
    }
    return fail(ErrorCode::kMalformed, "JSON-RPC response without a result");
}

json::object requestOf(std::uint64_t id, const std::string& method, const json::value& params) {
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

}  // namespace

Result<json::value> callRpc(const Endpoint& endpoint, const std::string& method,
                            const json::value& params) {
    auto answer = post(endpoint, requestOf(1, method, params));
    if (!answer) {
        return std::unexpected(answer.error());
    }
    return resultOf(*answer);
}

Result<std::vector<Result<json::value>>> callRpcBatch(const Endpoint& endpoint,
                                                      const std::vector<RpcCall>& calls) {
    if (calls.empty()) {
        return std::vector<Result<json::value>>{};
    }
    json::array request;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        request.push_back(requestOf(i, calls[i].method, calls[i].params));
    }
    auto answer = post(endpoint, request);
    if (!answer) {
        return std::unexpected(answer.error());
    }
    if (!answer->is_array()) {
        auto single = resultOf(*answer);  // the whole batch refused: one error object
        return fail(ErrorCode::kInvalidArgument,
                    single ? "the node answered a batch with one result" : single.error().message);
    }
    std::vector<Result<json::value>> results(
        calls.size(), fail(ErrorCode::kMalformed, "the batch answer has no response for this id"));
    for (const auto& item : answer->as_array()) {
        const auto* id = item.is_object() ? item.as_object().if_contains("id") : nullptr;
        if (id != nullptr && id->is_int64() && id->as_int64() >= 0 &&
            static_cast<std::uint64_t>(id->as_int64()) < calls.size()) {
            results[static_cast<std::size_t>(id->as_int64())] = resultOf(item);
        }
    }
    return results;
}

}  // namespace gridledger::node
