#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>

#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc::server_limits_test {
namespace {

using test::expectRpcError;
using test::HttpReply;
using test::HttpTestClient;
using test::requestText;

/** Starts a server with `limits` (and `methods`) on an ephemeral loopback port. */
std::unique_ptr<Server> startServer(const ServerLimits& limits,
                                    MethodTable methods = test::testMethods()) {
    auto server = std::make_unique<Server>(std::move(methods), ServerOptions{.limits = limits});
    const Status started = server->start();
    EXPECT_TRUE(started) << started.error().message;
    return server;
}

TEST(ServerLimits, OversizedBodyGets413AndTheConnectionIsClosed) {
    const auto server = startServer(ServerLimits{.maxBodyBytes = 1024});
    HttpTestClient client(server->port());
    // Announce 2 MB but send only a little: the server must answer without waiting for the rest.
    ASSERT_FALSE(
        client.writeRaw("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Content-Length: 2000000\r\n\r\n" +
                        std::string(512, ' ')));
    const HttpReply reply = client.readReply();
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.status, 413U);
    EXPECT_FALSE(reply.keepAlive);
    expectRpcError(reply.json(), kLimitExceeded, "body_too_large");
    EXPECT_TRUE(client.closedByPeer());

    HttpTestClient next(server->port());
    EXPECT_EQ(next.post(requestText("echo", "[1]", 1)).json().at("result"),
              boost::json::parse("[1]"));
}

TEST(ServerLimits, ChunkedBodyOverTheLimitIsRefusedToo) {
    const auto server = startServer(ServerLimits{.maxBodyBytes = 1024});
    HttpTestClient client(server->port());
    ASSERT_FALSE(
        client.writeRaw("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n800\r\n" +
                        std::string(0x800, ' ') + "\r\n"));
    const HttpReply reply = client.readReply();
    EXPECT_EQ(reply.status, 413U);
    expectRpcError(reply.json(), kLimitExceeded, "body_too_large");
}

TEST(ServerLimits, BodyExactlyAtTheLimitIsServed) {
    const auto server = startServer(ServerLimits{.maxBodyBytes = 1024});
    std::string body = requestText("echo", "[]", 1);
    body.resize(1024, ' ');
    HttpTestClient client(server->port());
    const HttpReply reply = client.post(body);
    EXPECT_EQ(reply.status, 200U);
    EXPECT_TRUE(reply.json().as_object().contains("result")) << reply.body;
}

TEST(ServerLimits, OversizedHeadGets431AndMalformedHttpGets400) {
    const auto server = startServer(ServerLimits{.maxHeaderBytes = 1024});
    HttpTestClient big(server->port());
    ASSERT_FALSE(big.writeRaw(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: " + std::string(2048, 'a') + "\r\n\r\n"));
    const HttpReply tooBig = big.readReply();
    EXPECT_EQ(tooBig.status, 431U);
    expectRpcError(tooBig.json(), kLimitExceeded, "header_too_large");
    EXPECT_TRUE(big.closedByPeer());

    HttpTestClient garbage(server->port());
    ASSERT_FALSE(garbage.writeRaw("NOT HTTP AT ALL\r\n\r\n"));
    const HttpReply bad = garbage.readReply();
    EXPECT_EQ(bad.status, 400U);
    expectRpcError(bad.json(), kInvalidRequest, "bad_http_request");
    EXPECT_TRUE(garbage.closedByPeer());
}

TEST(ServerLimits, TooDeepNestingIsRefused) {
    const auto server = startServer(ServerLimits{});  // Default depth limit: 64.
    HttpTestClient client(server->port());
    // The request object is one level, so 63 nested arrays in "params" make 64.
    const std::string ok = std::string(63, '[') + std::string(63, ']');
    EXPECT_TRUE(client.post(requestText("echo", ok, 1)).json().as_object().contains("result"));
    const std::string deep = std::string(64, '[') + std::string(64, ']');
    expectRpcError(client.post(requestText("echo", deep, 1)).json(), kLimitExceeded, "too_deep");
    expectRpcError(client.post(std::string(100'000, '[')).json(), kLimitExceeded, "too_deep");
}

TEST(ServerLimits, BatchAboveTheLimitGetsOneError) {
    const auto server = startServer(ServerLimits{});  // Default batch limit: 100.
    const auto batch = [](int items) {
        std::string out = "[";
        for (int i = 0; i < items; ++i) {
            out += (i == 0 ? "" : ",") + requestText("echo", "[]", i);
        }
        return out + "]";
    };
    HttpTestClient client(server->port());
    const boost::json::value full = client.post(batch(100)).json();
    ASSERT_TRUE(full.is_array());
    EXPECT_EQ(full.as_array().size(), 100U);
    expectRpcError(client.post(batch(101)).json(), kLimitExceeded, "batch_too_large");
}

TEST(ServerLimits, AtTheLimitANewConnectionEvictsTheLongestIdleOne) {
    const auto server = startServer(ServerLimits{.maxConnections = 2});
    HttpTestClient first(server->port());
    HttpTestClient second(server->port());
    // A served request proves that the server has admitted the connection; both then sit idle,
    // `first` the longer. A client reads its reply before the server's session turns to wait for
    // the next request, and only then is it idle again and evictable: each request waits for
    // that, so that `first` is idle since before `second`.
    ASSERT_EQ(first.post(requestText("echo", "[1]", 1)).status, 200U);
    ASSERT_TRUE(test::waitUntil([&] { return server->idleConnectionCount() == 2; }));
    ASSERT_EQ(second.post(requestText("echo", "[2]", 2)).status, 200U);
    ASSERT_TRUE(test::waitUntil([&] { return server->idleConnectionCount() == 2; }));
    EXPECT_EQ(server->connectionCount(), 2U);

    HttpTestClient extra(server->port());
    EXPECT_EQ(extra.post(requestText("echo", "[3]", 3)).status, 200U);
    EXPECT_TRUE(first.closedByPeer());
    EXPECT_EQ(second.post(requestText("echo", "[4]", 4)).status, 200U);
    EXPECT_LE(server->connectionCount(), 2U);
}

TEST(ServerLimits, AtTheLimitWithEveryConnectionInARequestANewOneIsClosedAtOnce) {
    const auto server = startServer(ServerLimits{.maxConnections = 2});
    const std::string request = requestText("echo", "[5]", 5);
    const std::string head =
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(request.size()) + "\r\n";
    std::vector<std::unique_ptr<HttpTestClient>> busy;
    for (int i = 0; i < 2; ++i) {  // Each has its head accepted (100 Continue) and owes its body.
        busy.push_back(std::make_unique<HttpTestClient>(server->port()));
        ASSERT_FALSE(busy.back()->writeRaw(head + "Expect: 100-continue\r\n\r\n"));
        EXPECT_TRUE(busy.back()->readRawUntil("\r\n\r\n").starts_with("HTTP/1.1 100"));
    }

    HttpTestClient extra(server->port());
    ASSERT_TRUE(extra.connected());     // The kernel completes the handshake...
    EXPECT_TRUE(extra.closedByPeer());  // ...and the server closes it without a word.
    for (auto& client : busy) {         // The requests in flight are answered.
        ASSERT_FALSE(client->writeRaw(request));
        EXPECT_EQ(client->readReply().status, 200U);
    }
}

TEST(ServerLimits, IdleConnectionIsClosedAfterTheTimeout) {
    const auto server = startServer(ServerLimits{.idleTimeout = std::chrono::milliseconds(100)});
    HttpTestClient client(server->port());
    ASSERT_EQ(client.post(requestText("echo", "[]", 1)).status, 200U);
    EXPECT_TRUE(client.closedByPeer());  // Bounded by the client's own timeout of 10 s.
    EXPECT_TRUE(test::waitUntil([&] { return server->connectionCount() == 0; }));
}

TEST(ServerLimits, StopClosesConnectedClientsAndWaitsForRunningHandlers) {
    struct Gate {
        std::latch entered{1};
        std::promise<void> release;
        std::atomic<bool> finished{false};
    };
    auto gate = std::make_shared<Gate>();
    MethodTable methods = test::testMethods();
    ASSERT_TRUE(methods.add("block", [gate](const boost::json::value&) {
        gate->entered.count_down();
        gate->release.get_future().wait();
        gate->finished = true;
        return Result<boost::json::value>(boost::json::value("released"));
    }));
    auto server = startServer(ServerLimits{}, std::move(methods));
    const std::uint16_t port = server->port();

    HttpTestClient idle(port);  // Keep-alive connection between requests.
    ASSERT_EQ(idle.post(requestText("echo", "[]", 1)).status, 200U);
    HttpTestClient partial(port);  // Half a request head.
    ASSERT_FALSE(partial.writeRaw("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
    HttpTestClient busy(port);  // A request whose handler is running.
    ASSERT_FALSE(busy.writeRaw(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
        std::to_string(requestText("block", "[]", 9).size()) + "\r\n\r\n" +
        requestText("block", "[]", 9)));
    gate->entered.wait();

    std::thread stopper([&] { server->stop(); });
    gate->release.set_value();
    stopper.join();

    EXPECT_TRUE(gate->finished);
    EXPECT_EQ(server->connectionCount(), 0U);
    EXPECT_TRUE(idle.closedByPeer());
    EXPECT_TRUE(partial.closedByPeer());
    EXPECT_TRUE(busy.closedByPeer());
    HttpTestClient refused(port);
    EXPECT_FALSE(refused.connected());
    server.reset();  // The destructor after stop() is a no-op.
}

}  // namespace
}  // namespace gridledger::rpc::server_limits_test
