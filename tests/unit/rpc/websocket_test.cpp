// The WebSocket endpoint of rpc::Server on a real socket: methods answer over /ws, subscriptions
// receive what the feed publishes in order, the limits hold, and a client that stops reading is
// dropped without holding up the others.

#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/dynamic_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>
#include <gridledger/rpc/subscriptions.h>

#include "support/ws_client.h"
#include "test_methods.h"

namespace gridledger::rpc {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using gridledger::testing::WsClient;
using test::requestText;

/** The status of a WebSocket upgrade request to `target`, sent over plain HTTP. */
unsigned upgradeStatus(std::uint16_t port, const std::string& target) {
    net::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::connection, "Upgrade");
    request.set(http::field::upgrade, "websocket");
    request.set(http::field::sec_websocket_version, "13");
    request.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
    http::write(socket, request);
    beast::flat_buffer buffer;
    http::response<http::dynamic_body> response;
    http::read(socket, buffer, response);
    return response.result_int();
}

/** The feed of the tests: one newHeads notification per height, `padding` bytes long. */
std::vector<Notification> headsAt(std::uint64_t height, std::size_t padding) {
    const std::string result = json::serialize(
        json::object{{"height", std::to_string(height)}, {"padding", std::string(padding, 'x')}});
    return {Notification{Topic::kNewHeads, result},
            Notification{Topic::kAttestations, R"({"kind":"attestation"})"}};
}

class WebSocketTest : public ::testing::Test {
  protected:
    void startServer(ServerLimits limits, std::size_t padding = 16) {
        MethodTable methods = test::testMethods();
        ASSERT_TRUE(addSubscriptionMethods(methods));
        ServerOptions options;
        options.limits = limits;
        options.feed = [padding](std::uint64_t height) -> Result<std::vector<Notification>> {
            return headsAt(height, padding);
        };
        server_ = std::make_unique<Server>(std::move(methods), std::move(options));
        const Status started = server_->start();
        ASSERT_TRUE(started) << started.error().message;
    }

    /** Waits until `ready` holds, at most 30 s. */
    template <typename Ready>
    bool eventually(Ready ready) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!ready()) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return true;
    }

    std::unique_ptr<Server> server_;
};

TEST_F(WebSocketTest, MethodsAnswerOverWebSocketAsOverHttp) {
    startServer(ServerLimits{});
    WsClient client(server_->port());
    const json::value echo = client.call(requestText("echo", R"(["hello"])", 1));
    EXPECT_EQ(echo.at("id"), 1);
    EXPECT_EQ(echo.at("result"), json::parse(R"(["hello"])"));
    const json::value batch = client.call("[" + requestText("echo", "[1]", 2) + "," +
                                          requestText("no_such", "[]", 3) + "]");
    ASSERT_EQ(batch.as_array().size(), 2U);
    EXPECT_EQ(batch.at(1).at("error").at("code"), kMethodNotFound);
    const json::value bad = client.call("{not json");
    EXPECT_EQ(bad.at("error").at("code"), kParseError);
    // Inside a batch, the connection's own chain_subscribe answers beside the shared methods,
    // and the subscription it made receives notifications.
    const json::value inBatch =
        client.call("[" + requestText("chain_subscribe", R"(["newHeads"])", 4) + "," +
                    requestText("echo", "[5]", 5) + "," +
                    requestText("chain_subscribe", R"(["noSuchTopic"])", 6) + "]");
    ASSERT_EQ(inBatch.as_array().size(), 3U) << json::serialize(inBatch);
    const json::value& subscribed = inBatch.at(0).at("result");
    ASSERT_TRUE(subscribed.is_string()) << json::serialize(inBatch);
    EXPECT_EQ(inBatch.at(1).at("result"), json::parse("[5]"));
    EXPECT_EQ(inBatch.at(2).at("error").at("code"), kInvalidParams);
    server_->publishExecuted(1);
    const json::value note = client.read();
    EXPECT_EQ(note.at("params").at("subscription"), subscribed);
    EXPECT_EQ(note.at("params").at("result").at("height"), "1");
}

TEST_F(WebSocketTest, SubscribersReceiveEveryPublishedHeightInOrder) {
    startServer(ServerLimits{});
    WsClient client(server_->port());
    const json::value subscribed =
        client.call(requestText("chain_subscribe", R"({"topic":"newHeads"})", 1));
    ASSERT_TRUE(subscribed.as_object().contains("result")) << json::serialize(subscribed);
    const std::string id(subscribed.at("result").as_string());
    EXPECT_EQ(id.size(), 18U);  // 0x and 16 hex digits
    constexpr std::uint64_t kHeights = 500;
    for (std::uint64_t h = 1; h <= kHeights; ++h) {
        server_->publishExecuted(h);
    }
    for (std::uint64_t h = 1; h <= kHeights; ++h) {
        const json::value note = client.read();
        ASSERT_EQ(note.at("method"), "chain_subscription");
        ASSERT_FALSE(note.as_object().contains("id"));
        ASSERT_EQ(note.at("params").at("subscription"), json::string(id));
        ASSERT_EQ(note.at("params").at("result").at("height"), json::string(std::to_string(h)));
    }
    const json::value gone =
        client.call(requestText("chain_unsubscribe", json::serialize(json::array{id}), 2));
    EXPECT_EQ(gone.at("result"), true);
    const json::value again =
        client.call(requestText("chain_unsubscribe", json::serialize(json::array{id}), 3));
    EXPECT_EQ(again.at("result"), false);
    // Unsubscribed: the next answer is the echo, not a notification.
    server_->publishExecuted(kHeights + 1);
    const json::value echo = client.call(requestText("echo", "[9]", 4));
    EXPECT_EQ(echo.at("id"), 4);
}

TEST_F(WebSocketTest, SubscriptionLimitsAndBadTopicsAreRefused) {
    ServerLimits limits;
    limits.maxSubscriptions = 2;
    startServer(limits);
    WsClient client(server_->port());
    for (int i = 0; i < 2; ++i) {
        const json::value ok =
            client.call(requestText("chain_subscribe", R"(["attestations"])", i));
        EXPECT_TRUE(ok.as_object().contains("result")) << json::serialize(ok);
    }
    const json::value third = client.call(requestText("chain_subscribe", R"(["newHeads"])", 3));
    EXPECT_EQ(third.at("error").at("code"), kLimitExceeded);
    EXPECT_EQ(third.at("error").at("data").at("reason"), "too_many_subscriptions");
    const json::value unknown = client.call(requestText("chain_subscribe", R"(["blocks"])", 4));
    EXPECT_EQ(unknown.at("error").at("code"), kInvalidParams);
    const json::value missing = client.call(requestText("chain_subscribe", "[]", 5));
    EXPECT_EQ(missing.at("error").at("code"), kInvalidParams);
}

TEST_F(WebSocketTest, UpgradesAreLimitedAndOnlyOnTheWsPath) {
    ServerLimits limits;
    limits.maxWsConnections = 1;
    startServer(limits);
    EXPECT_EQ(upgradeStatus(server_->port(), "/other"), 404U);
    WsClient first(server_->port());
    ASSERT_TRUE(eventually([&] { return server_->webSocketCount() == 1; }));
    EXPECT_EQ(upgradeStatus(server_->port(), "/ws"), 503U);
}

TEST_F(WebSocketTest, AClientThatStopsReadingIsDroppedAndOthersKeepTheirStream) {
    ServerLimits limits;
    limits.maxSendBufferBytes = std::size_t{64} * 1024;
    startServer(limits, std::size_t{8} * 1024);
    WsClient slow(server_->port(), 4096);
    WsClient good(server_->port());
    for (WsClient* client : {&slow, &good}) {
        const json::value ok = client->call(requestText("chain_subscribe", R"(["newHeads"])", 1));
        ASSERT_TRUE(ok.as_object().contains("result"));
    }
    // 8 KiB per height: the slow client's kernel buffers and its 64 KiB queue fill well within
    // the heights published here, while the good client reads each one.
    std::uint64_t height = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (server_->slowClientsDropped() == 0 && std::chrono::steady_clock::now() < deadline) {
        server_->publishExecuted(++height);
        const json::value note = good.read();
        ASSERT_EQ(note.at("params").at("result").at("height"),
                  json::string(std::to_string(height)));
    }
    EXPECT_EQ(server_->slowClientsDropped(), 1U);
    EXPECT_TRUE(eventually([&] { return server_->webSocketCount() == 1; }));
    for (int i = 0; i < 3; ++i) {
        server_->publishExecuted(++height);
        EXPECT_EQ(good.read().at("params").at("result").at("height"),
                  json::string(std::to_string(height)));
    }
    std::cout << "slow client dropped after " << height - 3 << " heights of 8 KiB\n";
}

TEST(SubscriptionMethods, AnswerUnavailableOverHttp) {
    MethodTable methods;
    ASSERT_TRUE(addSubscriptionMethods(methods));
    for (const std::string name : {"chain_subscribe", "chain_unsubscribe"}) {
        const auto answer = (*methods.find(name))(json::array{json::string("newHeads")});
        ASSERT_FALSE(answer);
        EXPECT_EQ(answer.error().code, ErrorCode::kUnavailable);
    }
}

TEST(SubscriptionTopics, NamesRoundTripAndUnknownNamesAreRefused) {
    for (const std::string_view name :
         {"newHeads", "taskTransitions", "attestations", "epochSettlements"}) {
        const auto topic = topicNamed(name);
        ASSERT_TRUE(topic) << name;
        EXPECT_EQ(topicName(*topic), name);
    }
    EXPECT_FALSE(topicNamed("newheads"));
    EXPECT_FALSE(topicNamed(""));
}

}  // namespace
}  // namespace gridledger::rpc
