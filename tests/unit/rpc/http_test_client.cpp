#include "unit/rpc/http_test_client.h"

#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>

namespace gridledger::rpc::test {

namespace http = boost::beast::http;

http::request<http::string_body> requestOf(http::verb verb, const std::string& target,
                                           const std::string& host) {
    http::request<http::string_body> request{verb, target, 11};
    if (!host.empty()) {
        request.set(http::field::host, host);
    }
    return request;
}

http::request<http::string_body> websocketUpgrade(const std::string& origin) {
    auto request = requestOf(http::verb::get, "/ws");
    request.set(http::field::connection, "Upgrade");
    request.set(http::field::upgrade, "websocket");
    request.set(http::field::sec_websocket_version, "13");
    request.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
    if (!origin.empty()) {
        request.set(http::field::origin, origin);
    }
    return request;
}

boost::json::value HttpReply::json() const {
    boost::system::error_code parseEc;
    boost::json::parse_options options;
    options.max_depth = 1'000;  // Replies may echo deeply nested params.
    boost::json::value value = boost::json::parse(body, parseEc, {}, options);
    return parseEc ? boost::json::value() : value;
}

/** The socket, its buffers and the io_context that drives them, one operation at a time. */
struct HttpTestClient::Connection {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream{io};
    boost::beast::flat_buffer buffer;
    std::string raw;
    boost::beast::error_code connectEc;

    void run() {
        io.restart();
        io.run();
    }
};

HttpTestClient::HttpTestClient(std::uint16_t port) : connection_(std::make_unique<Connection>()) {
    const boost::asio::ip::tcp::endpoint endpoint(boost::asio::ip::make_address("127.0.0.1"), port);
    Connection& c = *connection_;
    c.stream.expires_after(kIoTimeout);
    c.stream.async_connect(endpoint, [&c](boost::beast::error_code ec) { c.connectEc = ec; });
    c.run();
}

HttpTestClient::~HttpTestClient() = default;

bool HttpTestClient::connected() const {
    return !connection_->connectEc;
}

HttpReply HttpTestClient::post(std::string body, const std::string& contentType, bool keepAlive) {
    http::request<http::string_body> request{http::verb::post, "/", 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::content_type, contentType);
    request.keep_alive(keepAlive);
    request.body() = std::move(body);
    request.prepare_payload();
    return send(request);
}

boost::json::value HttpTestClient::call(const std::string& method,
                                        const boost::json::value& params) {
    return post(boost::json::serialize(boost::json::object{
                    {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}))
        .json();
}

HttpReply HttpTestClient::get(const std::string& target, http::verb verb) {
    http::request<http::string_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    return send(request);
}

HttpReply HttpTestClient::send(const http::request<http::string_body>& request) {
    Connection& c = *connection_;
    boost::beast::error_code ec;
    c.stream.expires_after(kIoTimeout);
    http::async_write(c.stream, request,
                      [&ec](boost::beast::error_code writeEc, std::size_t) { ec = writeEc; });
    c.run();
    if (ec) {
        HttpReply reply;
        reply.ec = ec;
        return reply;
    }
    return readReply();
}

boost::beast::error_code HttpTestClient::writeRaw(std::string_view bytes) {
    Connection& c = *connection_;
    boost::beast::error_code ec;
    c.stream.expires_after(kIoTimeout);
    boost::asio::async_write(
        c.stream, boost::asio::buffer(bytes.data(), bytes.size()),
        [&ec](boost::beast::error_code writeEc, std::size_t) { ec = writeEc; });
    c.run();
    return ec;
}

HttpReply HttpTestClient::readReply() {
    Connection& c = *connection_;
    HttpReply reply;
    http::response<http::string_body> response;
    c.stream.expires_after(kIoTimeout);
    http::async_read(c.stream, c.buffer, response,
                     [&reply](boost::beast::error_code ec, std::size_t) { reply.ec = ec; });
    c.run();
    if (!reply.ec) {
        // The analyzer takes Beast's parser, which reads into `response`, for a move out of it.
        reply.status = response.result_int();  // NOLINT(clang-analyzer-cplusplus.Move)
        reply.body = response.body();
        reply.contentType = std::string(response[http::field::content_type]);
        reply.allow = std::string(response[http::field::allow]);
        reply.location = std::string(response[http::field::location]);
        reply.keepAlive = response.keep_alive();
    }
    return reply;
}

std::string HttpTestClient::readRawUntil(std::string_view delimiter) {
    Connection& c = *connection_;
    std::string out;
    c.stream.expires_after(kIoTimeout);
    boost::asio::async_read_until(c.stream, boost::asio::dynamic_buffer(c.raw),
                                  std::string(delimiter),
                                  [&c, &out](boost::beast::error_code ec, std::size_t n) {
                                      if (!ec) {
                                          out = c.raw.substr(0, n);
                                          c.raw.erase(0, n);
                                      }
                                  });
    c.run();
    return out;
}

bool HttpTestClient::closedByPeer() {
    Connection& c = *connection_;
    for (;;) {
        boost::beast::error_code ec;
        char scratch[4096];
        c.stream.expires_after(kIoTimeout);
        c.stream.async_read_some(
            boost::asio::buffer(scratch),
            [&ec](boost::beast::error_code readEc, std::size_t) { ec = readEc; });
        c.run();
        if (ec == boost::beast::error::timeout) {
            return false;
        }
        if (ec) {
            return true;
        }
    }
}

void HttpTestClient::close() {
    Connection& c = *connection_;
    boost::beast::error_code ignored;
    c.stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    c.stream.close();
}

}  // namespace gridledger::rpc::test
