// Hostile requests against a running node (issue 6): a 100 MB body, 100,000-deep nesting, a
// 10,000-item batch, a thousand idle connections, invalid UTF-8 and unknown methods. Each gets its
// JSON-RPC error (or the HTTP status where no JSON-RPC answer fits), and the node keeps serving and
// committing. Measured times and sizes are printed as "measured:" lines.

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/json/object.hpp>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gridledger/codec/tx.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc_hostile_test {
namespace {

namespace json = boost::json;
namespace net = boost::asio;
namespace http = boost::beast::http;
using rpc::test::expectRpcError;
using rpc::test::HttpTestClient;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kHundredMb = std::size_t{100} << 20;

long long msSince(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string request(std::string_view method, std::string_view params, int id) {
    return rpc::test::requestText(method, params, id);
}

/** What a client got when it sent a whole request in one write while reading the answer. */
struct BulkReply {
    unsigned status = 0;
    json::value body;
    std::size_t written = 0;  // request bytes the node took before it closed the connection
    boost::beast::error_code writeEc;
};

/** Writes `raw` (a complete HTTP request) and reads the response at the same time. */
BulkReply sendWhileReading(std::uint16_t port, const std::string& raw) {
    net::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    stream.expires_after(std::chrono::seconds(60));
    BulkReply reply;
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    net::async_write(stream.socket(), net::buffer(raw),
                     [&reply](boost::beast::error_code ec, std::size_t n) {
                         reply.writeEc = ec;
                         reply.written = n;
                     });
    http::async_read(stream, buffer, response, [&](boost::beast::error_code ec, std::size_t) {
        if (!ec) {
            reply.status = response.result_int();
            boost::system::error_code parseEc;
            reply.body = json::parse(response.body(), parseEc);
        }
    });
    io.run();
    return reply;
}

/** A TCP connection that sends nothing: a raw socket so that a thousand stay cheap. */
class IdleSocket {
  public:
    explicit IdleSocket(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connected_ =
            fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    }
    ~IdleSocket() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    IdleSocket(const IdleSocket&) = delete;
    IdleSocket& operator=(const IdleSocket&) = delete;

    [[nodiscard]] bool connected() const { return connected_; }
    /** True once the node has closed its end (a read sees end-of-stream or a reset). */
    [[nodiscard]] bool closedByNode() {
        if (closed_) {
            return true;
        }
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) {
            char byte = 0;
            closed_ = ::recv(fd_, &byte, 1, MSG_DONTWAIT) <= 0;
        }
        return closed_;
    }

  private:
    int fd_;
    bool connected_ = false;
    bool closed_ = false;
};

class RpcHostile : public ::testing::Test {
  protected:
    /** Starts the node, first setting `rpc.max_connections` when given. */
    void startNode(std::optional<std::size_t> maxConnections = std::nullopt) {
        if (maxConnections) {
            const auto config = node_.home() / "config" / "node.conf";
            std::stringstream text;
            text << std::ifstream(config).rdbuf();
            std::ofstream(config, std::ios::trunc)
                << std::regex_replace(text.str(), std::regex("max_connections = [0-9]+"),
                                      "max_connections = " + std::to_string(*maxConnections));
        }
        node_.start();
        startHeight_ = height();
    }
    void TearDown() override { node_.stop(SIGTERM); }

    std::uint64_t height() {
        auto head = node_.call("chain_getHead", json::array{});
        EXPECT_TRUE(head) << head.error().message;
        return head ? std::stoull(std::string(head->at("height").as_string())) : 0;
    }

    json::value post(const std::string& body) {
        HttpTestClient client(node_.port());
        const auto reply = client.post(body);
        EXPECT_FALSE(reply.ec) << reply.ec.message();
        EXPECT_EQ(reply.status, 200U);
        return reply.json();
    }

    /** The node still answers a normal request on a new connection, and still commits blocks. */
    void expectServing() {
        ASSERT_TRUE(node_.running());
        auto status = node_.call("node_getStatus", json::array{});
        ASSERT_TRUE(status) << status.error().message;
        const std::uint64_t before = height();
        EXPECT_TRUE(rpc::test::waitUntil([&] { return height() > before; },
                                         std::chrono::milliseconds(30'000)))
            << "no block committed after the hostile requests";
    }

    testing::NodeProcess node_;
    std::uint64_t startHeight_ = 0;
};

TEST_F(RpcHostile, HundredMegabyteBodyGets413BeforeItIsReadAndTheNodeKeepsServing) {
    startNode();
    const std::string head =
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
    std::string withLength = head + "Content-Length: " + std::to_string(kHundredMb) + "\r\n\r\n";
    withLength.append(kHundredMb, ' ');
    auto start = Clock::now();
    const BulkReply sized = sendWhileReading(node_.port(), withLength);
    std::cout << "measured: 100 MB body with Content-Length: HTTP " << sized.status << " after "
              << msSince(start) << " ms; the node took " << sized.written
              << " bytes of the request before closing (" << sized.writeEc.message() << ")\n";
    EXPECT_EQ(sized.status, 413U);
    expectRpcError(sized.body, -32005, "body_too_large");
    EXPECT_TRUE(sized.writeEc);  // the node closed the connection rather than read 100 MB
    EXPECT_LT(sized.written, kHundredMb / 4);

    // The same 100 MB as chunks, so that no length announces it.
    std::string chunked = head + "Transfer-Encoding: chunked\r\n\r\n";
    const std::size_t chunk = std::size_t{1} << 20;
    for (std::size_t sent = 0; sent < kHundredMb; sent += chunk) {
        chunked += "100000\r\n";
        chunked.append(chunk, ' ');
        chunked += "\r\n";
    }
    chunked += "0\r\n\r\n";
    start = Clock::now();
    const BulkReply streamed = sendWhileReading(node_.port(), chunked);
    std::cout << "measured: 100 MB chunked body: HTTP " << streamed.status << " after "
              << msSince(start) << " ms; the node took " << streamed.written << " bytes ("
              << streamed.writeEc.message() << ")\n";
    EXPECT_EQ(streamed.status, 413U);
    expectRpcError(streamed.body, -32005, "body_too_large");
    EXPECT_TRUE(streamed.writeEc);
    EXPECT_LT(streamed.written, kHundredMb / 4);
    expectServing();
}

TEST_F(RpcHostile, HundredThousandDeepNestingIsRefusedWithoutParsingIt) {
    startNode();
    const std::size_t depth = 100'000;
    auto start = Clock::now();
    expectRpcError(post(std::string(depth, '[') + std::string(depth, ']')), -32005, "too_deep");
    expectRpcError(post(R"({"jsonrpc":"2.0","id":1,"method":"node_getStatus","params":)" +
                        std::string(depth, '[') + std::string(depth, ']') + "}"),
                   -32005, "too_deep");
    std::string objects;
    for (std::size_t i = 0; i < depth; ++i) {
        objects += R"({"a":)";
    }
    objects += "1" + std::string(depth, '}');
    expectRpcError(post(objects), -32005, "too_deep");
    // Unbalanced: the depth is reached long before the missing ends are.
    expectRpcError(post(std::string(depth, '[')), -32005, "too_deep");
    std::cout << "measured: four 100,000-deep documents refused in " << msSince(start) << " ms\n";
    expectServing();
}

TEST_F(RpcHostile, TenThousandItemBatchGetsOneErrorAndRunsNoneOfItsRequests) {
    startNode();
    // Item 0 is a valid transfer: were any item of the batch run, it would commit.
    const auto dev = *node::Home(node_.home()).loadKey("dev");
    Address to;
    to[0] = 0x42;
    const auto tx = codec::signTx(codec::TxBody{"gridledger-dev", dev.publicKey(), 0, 50'000,
                                                codec::Transfer{to, u128{7}}, testing::kDevFee},
                                  dev, testing::signingDomainOfHome(node_.home()));
    std::string batch = "[" + request("tx_submit", "[\"" + toHex(tx.raw) + "\"]", 0);
    for (int i = 1; i < 10'000; ++i) {
        batch += "," + request("node_getStatus", "[]", i);
    }
    batch += "]";
    const auto start = Clock::now();
    const json::value reply = post(batch);
    std::cout << "measured: 10,000-item batch (" << batch.size() << " bytes) refused in "
              << msSince(start) << " ms\n";
    ASSERT_TRUE(reply.is_object()) << "one error, not an array of 10,000";
    expectRpcError(reply, -32005, "batch_too_large");
    EXPECT_TRUE(reply.at("id").is_null());
    expectServing();  // a block or more later, the transfer is still unknown
    const auto lookup = node_.call("tx_get", json::array{json::string(tx.hash.hex())});
    ASSERT_FALSE(lookup);
    EXPECT_NE(lookup.error().message.find("not_found"), std::string::npos)
        << lookup.error().message;
}

TEST_F(RpcHostile, ThousandIdleConnectionsNeitherLockOutClientsNorStayOpenForever) {
    startNode();  // rpc.max_connections = 1024 by default
    std::vector<std::unique_ptr<IdleSocket>> idle;
    for (int i = 0; i < 1'000; ++i) {
        idle.push_back(std::make_unique<IdleSocket>(node_.port()));
        ASSERT_TRUE(idle.back()->connected()) << i;
    }
    const auto start = Clock::now();
    expectRpcError(post(request("no_such_method", "[]", 1)), -32601, "method_not_found");
    auto status = node_.call("node_getStatus", json::array{});
    ASSERT_TRUE(status) << "a new client is locked out: " << status.error().message;
    std::cout << "measured: with 1,000 idle connections open, a new client was answered in "
              << msSince(start) << " ms\n";
    // The idle timeout (30 s, docs/rpc.md §4) closes every one of them.
    const auto allClosed = [&] {
        return std::ranges::all_of(idle, [](auto& socket) { return socket->closedByNode(); });
    };
    EXPECT_TRUE(rpc::test::waitUntil(allClosed, std::chrono::milliseconds(45'000)));
    std::cout << "measured: the 1,000 idle connections were closed by the node " << msSince(start)
              << " ms after they opened\n";
    expectServing();
}

TEST_F(RpcHostile, IdleConnectionsBeyondTheLimitAreClosedAndEvictedForNewClients) {
    constexpr std::size_t kLimit = 100;
    startNode(kLimit);
    std::vector<std::unique_ptr<IdleSocket>> idle;
    for (int i = 0; i < 1'000; ++i) {
        idle.push_back(std::make_unique<IdleSocket>(node_.port()));
        ASSERT_TRUE(idle.back()->connected()) << i;  // the kernel's handshake; the node decides
    }
    const auto countClosed = [&] {
        return static_cast<std::size_t>(
            std::ranges::count_if(idle, [](auto& socket) { return socket->closedByNode(); }));
    };
    const auto start = Clock::now();
    EXPECT_TRUE(rpc::test::waitUntil([&] { return countClosed() >= 1'000 - kLimit; },
                                     std::chrono::milliseconds(10'000)));
    std::cout << "measured: rpc.max_connections = " << kLimit << ": " << countClosed()
              << " of 1,000 idle connections closed within " << msSince(start) << " ms\n";
    // The limit is full of idle connections, yet a new client is served: the longest idle
    // connection makes room. (Its slot is free again once the client leaves, so later clients
    // need no eviction.)
    auto status = node_.call("node_getStatus", json::array{});
    ASSERT_TRUE(status) << "a new client is locked out: " << status.error().message;
    EXPECT_TRUE(rpc::test::waitUntil([&] { return countClosed() == 1'000 - kLimit + 1; }));
    for (int i = 0; i < 5; ++i) {
        status = node_.call("node_getStatus", json::array{});
        ASSERT_TRUE(status) << "a new client is locked out: " << status.error().message;
    }
    expectServing();
}

TEST_F(RpcHostile, InvalidUtf8GetsParseErrorsWhereverItIs) {
    startNode();
    const std::string bad[] = {
        "\xc3\x28",          // a lead byte without its continuation
        "\xc0\xaf",          // an overlong '/'
        "\xed\xa0\x80",      // a UTF-16 surrogate
        "\xf4\x90\x80\x80",  // beyond U+10FFFF
        "\xff",              // never valid
        "\xe2\x82",          // truncated at the end of the string
    };
    for (const std::string& bytes : bad) {
        SCOPED_TRACE(toHex(asBytes(bytes)));
        expectRpcError(post(request("node_getStatus", "[\"" + bytes + "\"]", 1)), -32700,
                       "invalid_utf8");
        expectRpcError(post(request("node_" + bytes, "[]", 2)), -32700, "invalid_utf8");
        expectRpcError(post(R"({"jsonrpc":"2.0","id":")" + bytes + R"(","method":"x"})"), -32700,
                       "invalid_utf8");
        expectRpcError(post("[" + request("node_getStatus", "[]", 3) + ",\"" + bytes + "\"]"),
                       -32700, "invalid_utf8");
    }
    // Valid multi-byte text is no error: it reaches the method (which does not exist).
    expectRpcError(post(request("node_\xc3\xa9tat", "[]", 4)), -32601, "method_not_found");
    expectServing();
}

TEST_F(RpcHostile, UnknownMethodsGetMethodNotFoundAndNotificationsOfThemNoAnswer) {
    startNode();
    for (const std::string& name :
         {std::string("no_such_method"), std::string("chain_noSuchMethod"),
          std::string("../etc/passwd"), std::string("NODE_STATUS"), std::string(""),
          std::string(100'000, 'm')}) {
        const json::value reply = post(request(name, "[]", 5));
        expectRpcError(reply, -32601, "method_not_found");
        EXPECT_EQ(reply.at("id"), 5);
        // The name is echoed at most in part: a 100 KB name does not come back.
        EXPECT_LT(reply.at("error").at("message").as_string().size(), 200U);
    }
    HttpTestClient client(node_.port());
    const auto notification = client.post(R"({"jsonrpc":"2.0","method":"no_such_method"})");
    EXPECT_EQ(notification.status, 204U);
    EXPECT_TRUE(notification.body.empty());
    const json::value mixed = post("[" + request("no_such_method", "[]", 1) + "," +
                                   request("node_getStatus", "[]", 2) + "]");
    ASSERT_TRUE(mixed.is_array());
    ASSERT_EQ(mixed.as_array().size(), 2U);
    expectRpcError(mixed.as_array()[0], -32601, "method_not_found");
    EXPECT_TRUE(mixed.as_array()[1].as_object().contains("result"));
    expectServing();
}

}  // namespace
}  // namespace gridledger::rpc_hostile_test
