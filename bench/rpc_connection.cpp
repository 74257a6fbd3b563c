#include "rpc_connection.h"

#include <stdexcept>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

#include "support/tx_frames.h"

namespace gridledger::bench {

namespace http = boost::beast::http;
namespace json = boost::json;

Connection::Connection(std::uint16_t port) : stream_(io_) {
    boost::asio::ip::tcp::resolver resolver(io_);
    stream_.connect(resolver.resolve("127.0.0.1", std::to_string(port)));
}

json::value Connection::call(const std::string& method, json::array params) {
    return post(json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}));
}

std::vector<std::string> Connection::postRaw(const std::vector<ByteView>& txs) {
    const std::string out = exchange("/txs", "application/octet-stream", testing::txFrames(txs));
    std::vector<std::string> reasons;
    for (std::size_t at = 0; at + Hash256::size() < out.size();) {
        at += Hash256::size();
        const auto length = static_cast<std::uint8_t>(out[at]);
        reasons.push_back(out.substr(at + 1, length));
        at += 1 + length;
    }
    if (reasons.size() != txs.size()) {
        throw std::runtime_error("POST /txs answered " + std::to_string(reasons.size()) +
                                 " outcomes for " + std::to_string(txs.size()) +
                                 " transactions: " + out.substr(0, 200));
    }
    return reasons;
}

json::value Connection::post(std::string body) {
    return json::parse(exchange("/", "application/json", std::move(body)));
}

std::string Connection::exchange(const char* target, const char* contentType, std::string body) {
    http::request<http::string_body> req(http::verb::post, target, 11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, contentType);
    req.keep_alive(true);
    req.body() = std::move(body);
    req.prepare_payload();
    http::write(stream_, req);
    http::response_parser<http::string_body> parser;
    http::read(stream_, buffer_, parser);
    return std::move(parser.get().body());
}

}  // namespace gridledger::bench
