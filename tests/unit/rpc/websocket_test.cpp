// The WebSocket endpoint of rpc::Server on a real socket: methods answer over /ws, subscriptions
// receive what the feed publishes in order, the limits hold, and a client that stops reading is
// dropped without holding up the others.

#include <array>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/dynamic_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>
#include <gridledger/rpc/subscriptions.h>

#include "support/ws_client.h"
#include "test_methods.h"

namespace gridledger::rpc::websocket_test {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using gridledger::testing::WsClient;
using test::batchText;
using test::requestText;

/** Writes a WebSocket upgrade request to `target` on `socket`, over plain HTTP. */
void writeUpgradeRequest(tcp::socket& socket, const std::string& target) {
    http::request<http::empty_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::connection, "Upgrade");
    request.set(http::field::upgrade, "websocket");
    request.set(http::field::sec_websocket_version, "13");
    request.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
    http::write(socket, request);
}

/** The status of a WebSocket upgrade request to `target`, sent over plain HTTP. */
unsigned upgradeStatus(std::uint16_t port, const std::string& target) {
    net::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    writeUpgradeRequest(socket, target);
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
    void startServer(ServerLimits limits, std::size_t padding = 16,
                     std::chrono::milliseconds notifyInterval = {}) {
        MethodTable methods = test::testMethods();
        ASSERT_TRUE(addSubscriptionMethods(methods));
        ServerOptions options;
        options.limits = limits;
        options.notifyInterval = notifyInterval;
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
    const json::value batch =
        client.call(batchText({requestText("echo", "[1]", 2), requestText("no_such", "[]", 3)}));
    ASSERT_EQ(batch.as_array().size(), 2U);
    EXPECT_EQ(batch.at(1).at("error").at("code"), kMethodNotFound);
    const json::value bad = client.call("{not json");
    EXPECT_EQ(bad.at("error").at("code"), kParseError);
    // Inside a batch, the connection's own chain_subscribe answers beside the shared methods,
    // and the subscription it made receives notifications.
    const json::value inBatch = client.call(batchText(
        {requestText("chain_subscribe", R"(["newHeads"])", 4), requestText("echo", "[5]", 5),
         requestText("chain_subscribe", R"(["noSuchTopic"])", 6)}));
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

// Heights arrive in the order announced, also when they are not consecutive (a node that
// started from a snapshot announces from there) and announced faster than they are sent.
TEST_F(WebSocketTest, HeightsArriveInTheOrderAnnounced) {
    startServer(ServerLimits{});
    WsClient client(server_->port());
    const std::string id = client.subscribe("newHeads", 1);
    ASSERT_FALSE(id.empty());
    const std::vector<std::uint64_t> announced{900, 901, 7, 1'000'000, 902};
    for (int round = 0; round < 50; ++round) {
        for (const std::uint64_t height : announced) {
            server_->publishExecuted(height);
        }
    }
    for (int round = 0; round < 50; ++round) {
        for (const std::uint64_t height : announced) {
            const json::value note = client.read();
            ASSERT_EQ(note.at("params").at("subscription"), json::string(id));
            ASSERT_EQ(note.at("params").at("result").at("height"),
                      json::string(std::to_string(height)));
        }
    }
}

// With a notify interval, heights announced within it of the last fan-out wait for the next one
// and arrive all together, in the order announced; none arrives before the interval has passed.
TEST_F(WebSocketTest, HeightsAnnouncedWithinTheIntervalLeaveTogetherAtItsEnd) {
    constexpr std::chrono::milliseconds kInterval{300};
    startServer(ServerLimits{}, 16, kInterval);
    WsClient client(server_->port());
    const std::string id = client.subscribe("newHeads", 1);
    ASSERT_FALSE(id.empty());
    const auto heightOf = [](const json::value& note) {
        return std::string(note.at("params").at("result").at("height").as_string());
    };
    for (int round = 0; round < 3; ++round) {
        // The first height of a round fans out at once: the last fan-out is an interval old.
        std::this_thread::sleep_for(kInterval);
        const auto announced = std::chrono::steady_clock::now();
        server_->publishExecuted(900);
        EXPECT_EQ(heightOf(client.read()), "900");
        // These come within the interval: the next fan-out, at least kInterval after the one
        // that carried 900, carries all of them.
        const std::vector<std::uint64_t> rest{901, 7, 1'000'000, 902};
        for (const std::uint64_t height : rest) {
            server_->publishExecuted(height);
        }
        for (const std::uint64_t height : rest) {
            const json::value note = client.read();
            ASSERT_EQ(note.at("params").at("subscription"), json::string(id));
            ASSERT_EQ(heightOf(note), std::to_string(height));
        }
        EXPECT_GE(std::chrono::steady_clock::now() - announced, kInterval);
    }
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

/**
 * A client's masked text frame of `payload` (RFC 6455 §5.2), below 64 KiB, with a zero masking
 * key.
 */
std::string maskedTextFrame(std::string_view payload) {
    std::string frame{'\x81'};
    if (payload.size() < 126) {
        frame += static_cast<char>(0x80 | payload.size());
    } else {
        frame += static_cast<char>(0x80 | 126);
        frame += static_cast<char>(payload.size() >> 8U);
        frame += static_cast<char>(payload.size() & 0xffU);
    }
    frame.append(4, '\0');  // XOR with a zero key leaves the payload as it is
    frame.append(payload);
    return frame;
}

/** Reads one server frame from `socket`: its first byte, length field bytes and payload. */
struct RawFrame {
    unsigned char first = 0;
    std::vector<unsigned char> lengthField;
    std::string payload;
};
RawFrame readRawFrame(tcp::socket& socket) {
    RawFrame frame;
    std::array<unsigned char, 2> head{};
    net::read(socket, net::buffer(head));
    frame.first = head[0];
    EXPECT_EQ(head[1] & 0x80U, 0U) << "a server frame is not masked";
    std::size_t length = head[1] & 0x7fU;
    frame.lengthField.push_back(head[1]);
    const std::size_t extended = length == 126 ? 2 : length == 127 ? 8 : 0;
    if (extended > 0) {
        std::vector<unsigned char> bytes(extended);
        net::read(socket, net::buffer(bytes));
        length = 0;
        for (const unsigned char byte : bytes) {
            length = length << 8U | byte;
            frame.lengthField.push_back(byte);
        }
    }
    frame.payload.resize(length);
    net::read(socket, net::buffer(frame.payload));
    return frame;
}

// RFC 6455 §5.2: a payload of 0–125 bytes has its length in the second byte, 126–65,535 bytes
// 126 and two bytes, above that 127 and eight bytes, big-endian. Read byte by byte from the
// socket, without a WebSocket library, across notifications written back to back.
TEST_F(WebSocketTest, FramesCarryEachLengthFormOfTheProtocolByteForByte) {
    constexpr std::size_t kPadding = 70'000;  // a notification above 65,535 bytes
    startServer(ServerLimits{}, kPadding);
    net::io_context io;
    tcp::socket socket(io);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server_->port()));
    writeUpgradeRequest(socket, "/ws");
    beast::flat_buffer buffer;
    http::response_parser<http::empty_body> upgrade;
    upgrade.skip(true);  // a 101 answer has no body; the frames follow it
    http::read_header(socket, buffer, upgrade);
    ASSERT_EQ(upgrade.get().result_int(), 101U);
    ASSERT_EQ(buffer.size(), 0U);

    // 7-bit length: the answer to a short request.
    net::write(socket, net::buffer(maskedTextFrame(requestText("echo", "[1]", 1))));
    const RawFrame echo = readRawFrame(socket);
    EXPECT_EQ(echo.first, 0x81U);  // FIN, text
    ASSERT_EQ(echo.lengthField.size(), 1U);
    EXPECT_EQ(echo.lengthField[0], echo.payload.size());
    EXPECT_EQ(json::parse(echo.payload).at("result"), json::parse("[1]"));

    // 16-bit length: the answer to chain_subscribe padded with a long id.
    const std::string longId(300, '7');
    net::write(
        socket,
        net::buffer(maskedTextFrame(R"({"jsonrpc":"2.0","id":")" + longId +
                                    R"(","method":"chain_subscribe","params":["newHeads"]})")));
    const RawFrame subscribed = readRawFrame(socket);
    ASSERT_EQ(subscribed.lengthField.size(), 3U);
    EXPECT_EQ(subscribed.lengthField[0], 126U);
    EXPECT_EQ(std::size_t{subscribed.lengthField[1]} << 8U | subscribed.lengthField[2],
              subscribed.payload.size());
    EXPECT_EQ(json::parse(subscribed.payload).at("id"), json::string(longId));

    // 64-bit length, several notifications published at once and read back to back.
    constexpr std::uint64_t kHeights = 20;
    for (std::uint64_t h = 1; h <= kHeights; ++h) {
        server_->publishExecuted(h);
    }
    for (std::uint64_t h = 1; h <= kHeights; ++h) {
        const RawFrame note = readRawFrame(socket);
        EXPECT_EQ(note.first, 0x81U);
        ASSERT_EQ(note.lengthField.size(), 9U);
        EXPECT_EQ(note.lengthField[0], 127U);
        std::size_t length = 0;
        for (std::size_t i = 1; i < 9; ++i) {
            length = length << 8U | note.lengthField[i];
        }
        EXPECT_EQ(length, note.payload.size());
        EXPECT_GT(length, 65'535U);
        const json::value parsed = json::parse(note.payload);
        ASSERT_EQ(parsed.at("params").at("result").at("height"), json::string(std::to_string(h)));
    }
}

TEST_F(WebSocketTest, PingsArePongedAndACloseIsAnsweredBeforeTheConnectionEnds) {
    startServer(ServerLimits{});
    net::io_context io;
    beast::websocket::stream<tcp::socket> ws(io);
    ws.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server_->port()));
    ws.handshake("127.0.0.1", "/ws");
    std::vector<std::string> pongs;
    ws.control_callback([&](beast::websocket::frame_type kind, beast::string_view payload) {
        if (kind == beast::websocket::frame_type::pong) {
            pongs.emplace_back(payload);
        }
    });
    ws.ping("are you there");
    ws.write(net::buffer(requestText("chain_subscribe", R"(["newHeads"])", 1)));
    beast::flat_buffer buffer;
    ws.read(buffer);  // the pong comes first, then the answer
    ASSERT_EQ(pongs, std::vector<std::string>{"are you there"});
    EXPECT_TRUE(
        json::parse(beast::buffers_to_string(buffer.data())).as_object().contains("result"));
    ASSERT_TRUE(eventually([&] { return server_->webSocketCount() == 1; }));
    // A clean close: the node answers with its own close frame; close() reads until it comes
    // and fails when the connection ends without it.
    beast::error_code ec;
    ws.close(beast::websocket::close_code::normal, ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(eventually([&] { return server_->webSocketCount() == 0; }));
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
}  // namespace gridledger::rpc::websocket_test
