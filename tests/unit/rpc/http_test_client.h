#pragma once

// Test helper for the RPC server tests: a blocking HTTP/1.1 client over a real socket (every
// operation bounded by kIoTimeout), and a bounded wait. The client is compiled once, in
// http_test_client.cpp: the tests that use it instantiate none of Beast's I/O templates.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include "unit/rpc/test_methods.h"

namespace gridledger::rpc::test {

/** Upper bound on any single client operation; a correct server answers far sooner. */
inline constexpr std::chrono::seconds kIoTimeout{10};

/** A request of the tests: `verb` on `target` with Host 127.0.0.1 unless `host` says another. */
boost::beast::http::request<boost::beast::http::string_body> requestOf(
    boost::beast::http::verb verb, const std::string& target,
    const std::string& host = "127.0.0.1");

/** A WebSocket upgrade of /ws, with `origin` when it is not empty. */
boost::beast::http::request<boost::beast::http::string_body> websocketUpgrade(
    const std::string& origin);

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
    [[nodiscard]] boost::json::value json() const;
};

/** A blocking HTTP client on one TCP connection, driven by its own io_context. */
class HttpTestClient {
  public:
    explicit HttpTestClient(std::uint16_t port);
    ~HttpTestClient();
    HttpTestClient(const HttpTestClient&) = delete;
    HttpTestClient& operator=(const HttpTestClient&) = delete;

    /** True when the TCP connection was established. */
    [[nodiscard]] bool connected() const;

    /** Sends `body` as a JSON-RPC POST on this connection and reads the reply. */
    HttpReply post(std::string body, const std::string& contentType = "application/json",
                   bool keepAlive = true);

    /** The JSON-RPC response (result or error) of one call of `method` with `params`, id 1. */
    boost::json::value call(const std::string& method, const boost::json::value& params);

    /** Sends a bodiless request with `verb` on `target`. */
    HttpReply get(const std::string& target,
                  boost::beast::http::verb verb = boost::beast::http::verb::get);

    /** Writes `request` and reads the reply. */
    HttpReply send(const boost::beast::http::request<boost::beast::http::string_body>& request);

    /** Writes raw bytes (for malformed or partial requests). */
    boost::beast::error_code writeRaw(std::string_view bytes);

    /** Reads one HTTP response. */
    HttpReply readReply();

    /** Reads raw bytes up to and including `delimiter`. */
    std::string readRawUntil(std::string_view delimiter);

    /**
     * True when the server has closed the connection: a read ends with end-of-stream or a reset
     * (any response bytes still in flight are skipped). False if the connection stays open for
     * kIoTimeout.
     */
    bool closedByPeer();

    /** Closes the client side. */
    void close();

  private:
    struct Connection;
    std::unique_ptr<Connection> connection_;
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
