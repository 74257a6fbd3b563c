#pragma once

// Test helper for the RPC server tests: a blocking HTTP/1.1 client over a real socket (every
// operation bounded by kIoTimeout), and a bounded wait.

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "unit/rpc/test_methods.h"

namespace gridledger::rpc::test {

/** Upper bound on any single client operation; a correct server answers far sooner. */
inline constexpr std::chrono::seconds kIoTimeout{10};

/** A request of the tests: `verb` on `target` with Host 127.0.0.1 unless `host` says another. */
inline boost::beast::http::request<boost::beast::http::string_body> requestOf(
    boost::beast::http::verb verb, const std::string& target,
    const std::string& host = "127.0.0.1") {
    namespace http = boost::beast::http;
    http::request<http::string_body> request{verb, target, 11};
    if (!host.empty()) {
        request.set(http::field::host, host);
    }
    return request;
}

/** A WebSocket upgrade of /ws, with `origin` when it is not empty. */
inline boost::beast::http::request<boost::beast::http::string_body> websocketUpgrade(
    const std::string& origin) {
    namespace http = boost::beast::http;
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

/** An HTTP response as the test client received it. */
struct HttpReply {
    boost::beast::error_code ec;
    unsigned status = 0;
    std::string body;
    std::string contentType;
    std::string allow;
    std::string location;
    bool keepAlive = false;

    /** The body parsed as JSON (null when it is not JSON). */
    [[nodiscard]] boost::json::value json() const {
        boost::system::error_code parseEc;
        boost::json::parse_options options;
        options.max_depth = 1'000;  // Replies may echo deeply nested params.
        boost::json::value value = boost::json::parse(body, parseEc, {}, options);
        return parseEc ? boost::json::value() : value;
    }
};

/** A blocking HTTP client on one TCP connection, driven by its own io_context. */
class HttpTestClient {
  public:
    explicit HttpTestClient(std::uint16_t port) : stream_(io_) {
        const boost::asio::ip::tcp::endpoint endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                      port);
        stream_.expires_after(kIoTimeout);
        stream_.async_connect(endpoint, [this](boost::beast::error_code ec) { connectEc_ = ec; });
        run();
    }

    /** True when the TCP connection was established. */
    [[nodiscard]] bool connected() const { return !connectEc_; }

    /** Sends `body` as a JSON-RPC POST on this connection and reads the reply. */
    HttpReply post(std::string body, std::string contentType = "application/json",
                   bool keepAlive = true) {
        namespace http = boost::beast::http;
        http::request<http::string_body> request{http::verb::post, "/", 11};
        request.set(http::field::host, "127.0.0.1");
        request.set(http::field::content_type, contentType);
        request.keep_alive(keepAlive);
        request.body() = std::move(body);
        request.prepare_payload();
        return send(std::move(request));
    }

    /** The JSON-RPC response (result or error) of one call of `method` with `params`, id 1. */
    boost::json::value call(const std::string& method, const boost::json::value& params) {
        return post(boost::json::serialize(boost::json::object{
                        {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}))
            .json();
    }

    /** Sends a bodiless request with `verb` on `target`. */
    HttpReply get(std::string target,
                  boost::beast::http::verb verb = boost::beast::http::verb::get) {
        namespace http = boost::beast::http;
        http::request<http::string_body> request{verb, target, 11};
        request.set(http::field::host, "127.0.0.1");
        return send(std::move(request));
    }

    /** Writes `request` and reads the reply. */
    HttpReply send(boost::beast::http::request<boost::beast::http::string_body> request) {
        boost::beast::error_code ec;
        stream_.expires_after(kIoTimeout);
        boost::beast::http::async_write(
            stream_, request,
            [&ec](boost::beast::error_code writeEc, std::size_t) { ec = writeEc; });
        run();
        if (ec) {
            HttpReply reply;
            reply.ec = ec;
            return reply;
        }
        return readReply();
    }

    /** Writes raw bytes (for malformed or partial requests). */
    boost::beast::error_code writeRaw(std::string_view bytes) {
        boost::beast::error_code ec;
        stream_.expires_after(kIoTimeout);
        boost::asio::async_write(
            stream_, boost::asio::buffer(bytes.data(), bytes.size()),
            [&ec](boost::beast::error_code writeEc, std::size_t) { ec = writeEc; });
        run();
        return ec;
    }

    /** Reads one HTTP response. */
    HttpReply readReply() {
        namespace http = boost::beast::http;
        HttpReply reply;
        http::response<http::string_body> response;
        stream_.expires_after(kIoTimeout);
        http::async_read(stream_, buffer_, response,
                         [&reply](boost::beast::error_code ec, std::size_t) { reply.ec = ec; });
        run();
        if (!reply.ec) {
            reply.status = response.result_int();
            reply.body = response.body();
            reply.contentType = std::string(response[http::field::content_type]);
            reply.allow = std::string(response[http::field::allow]);
            reply.location = std::string(response[http::field::location]);
            reply.keepAlive = response.keep_alive();
        }
        return reply;
    }

    /** Reads raw bytes up to and including `delimiter`. */
    std::string readRawUntil(std::string_view delimiter) {
        std::string out;
        stream_.expires_after(kIoTimeout);
        boost::asio::async_read_until(stream_, boost::asio::dynamic_buffer(raw_),
                                      std::string(delimiter),
                                      [this, &out](boost::beast::error_code ec, std::size_t n) {
                                          if (!ec) {
                                              out = raw_.substr(0, n);
                                              raw_.erase(0, n);
                                          }
                                      });
        run();
        return out;
    }

    /**
     * True when the server has closed the connection: a read ends with end-of-stream or a reset
     * (any response bytes still in flight are skipped). False if the connection stays open for
     * kIoTimeout.
     */
    bool closedByPeer() {
        for (;;) {
            boost::beast::error_code ec;
            char scratch[4096];
            stream_.expires_after(kIoTimeout);
            stream_.async_read_some(
                boost::asio::buffer(scratch),
                [&ec](boost::beast::error_code readEc, std::size_t) { ec = readEc; });
            run();
            if (ec == boost::beast::error::timeout) {
                return false;
            }
            if (ec) {
                return true;
            }
        }
    }

    /** Closes the client side. */
    void close() {
        boost::beast::error_code ignored;
        stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        stream_.close();
    }

  private:
    void run() {
        io_.restart();
        io_.run();
    }

    boost::asio::io_context io_;
    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::string raw_;
    boost::beast::error_code connectEc_;
};

/** Polls `condition` until it holds or `limit` passes; the limit is an upper bound only. */
inline bool waitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds limit = std::chrono::milliseconds(10'000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // Poll interval only.
    }
    return true;
}

/** Asserts that `response` is a JSON-RPC error with this code and `error.data.reason`. */
inline void expectRpcError(const boost::json::value& response, std::int64_t code,
                           std::string_view reason) {
    ASSERT_TRUE(response.is_object()) << boost::json::serialize(response);
    const auto* error = response.as_object().if_contains("error");
    ASSERT_NE(error, nullptr) << boost::json::serialize(response);
    EXPECT_EQ(error->at("code"), code) << boost::json::serialize(response);
    EXPECT_EQ(textOf(error->at("data").at("reason")), reason) << boost::json::serialize(response);
}

}  // namespace gridledger::rpc::test
