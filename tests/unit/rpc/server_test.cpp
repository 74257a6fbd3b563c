#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <gridledger/crypto/sha256.h>
#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>

#include "support/tx_frames.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc::server_test {
namespace {

using test::expectRpcError;
using test::HttpReply;
using test::HttpTestClient;
using test::requestText;

class ServerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        server_ = std::make_unique<Server>(test::testMethods(), ServerOptions{});
        const Status started = server_->start();
        ASSERT_TRUE(started) << started.error().message;
        ASSERT_NE(server_->port(), 0);
    }

    std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, AnswersARequestOverHttp) {
    HttpTestClient client(server_->port());
    ASSERT_TRUE(client.connected());
    const HttpReply reply = client.post(requestText("echo", R"(["hello"])", 1));
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.status, 200U);
    EXPECT_EQ(reply.contentType, "application/json");
    const boost::json::value json = reply.json();
    EXPECT_EQ(json.at("jsonrpc"), "2.0");
    EXPECT_EQ(json.at("id"), 1);
    EXPECT_EQ(json.at("result"), boost::json::parse(R"(["hello"])"));
}

TEST_F(ServerTest, EachStandardErrorArrivesWithItsCodeAndReason) {
    HttpTestClient client(server_->port());
    expectRpcError(client.post(R"({"jsonrpc":"2.0","id":1,"method")").json(), kParseError,
                   "parse_error");
    expectRpcError(client.post(R"(["not an object"])").json().at(0), kInvalidRequest,
                   "invalid_request");
    expectRpcError(client.post(R"({"id":1,"method":"echo"})").json(), kInvalidRequest,
                   "bad_jsonrpc_version");
    expectRpcError(client.post(R"({"jsonrpc":"2.0","id":[1],"method":"echo"})").json(),
                   kInvalidRequest, "bad_id");
    expectRpcError(client.post(requestText("no_such_method", "[]", 2)).json(), kMethodNotFound,
                   "method_not_found");
    expectRpcError(client.post(requestText("hash", R"(["0x1"])", 3)).json(), kInvalidParams,
                   "bad_hex");
    expectRpcError(client.post(requestText("throws", "[]", 4)).json(), kInternalError, "internal");
    expectRpcError(client.post(requestText("fail_with", "[26]", 5)).json(), kTransactionRejected,
                   "duplicate_tx");
}

TEST_F(ServerTest, InvalidUtf8IsAParseError) {
    HttpTestClient client(server_->port());
    const HttpReply reply =
        client.post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xfe\"]}");
    EXPECT_EQ(reply.status, 200U);
    expectRpcError(reply.json(), kParseError, "invalid_utf8");
}

TEST_F(ServerTest, HandlerExceptionIsContainedAndTheServerKeepsServing) {
    HttpTestClient client(server_->port());
    expectRpcError(client.post(requestText("throws", "[]", 1)).json(), kInternalError, "internal");
    const HttpReply after = client.post(requestText("echo", "[2]", 2));
    EXPECT_EQ(after.json().at("result"), boost::json::parse("[2]"));
}

TEST_F(ServerTest, MixedBatchGetsOneArrayWithoutTheNotification) {
    HttpTestClient client(server_->port());
    const HttpReply reply = client.post(R"([
        {"jsonrpc":"2.0","id":1,"method":"echo","params":{"k":"v"}},
        {"jsonrpc":"2.0","method":"echo","params":["ignored"]},
        {"jsonrpc":"2.0","id":"two","method":"fail_with","params":[22]},
        {"jsonrpc":"2.0","id":3,"method":"missing"},
        17
    ])");
    ASSERT_EQ(reply.status, 200U);
    const boost::json::value json = reply.json();
    ASSERT_TRUE(json.is_array()) << reply.body;
    ASSERT_EQ(json.as_array().size(), 4U);
    EXPECT_EQ(json.at(0).at("result"), boost::json::parse(R"({"k":"v"})"));
    EXPECT_EQ(json.at(1).at("id"), "two");
    expectRpcError(json.at(1), kTransactionRejected, "nonce_too_low");
    EXPECT_EQ(json.at(2).at("id"), 3);
    expectRpcError(json.at(2), kMethodNotFound, "method_not_found");
    EXPECT_TRUE(json.at(3).at("id").is_null());
    expectRpcError(json.at(3), kInvalidRequest, "invalid_request");
}

TEST_F(ServerTest, NotificationsOnlyGetAnEmptyNoContentReply) {
    HttpTestClient client(server_->port());
    const HttpReply single = client.post(R"({"jsonrpc":"2.0","method":"echo"})");
    EXPECT_EQ(single.status, 204U);
    EXPECT_TRUE(single.body.empty());
    const HttpReply batch = client.post(R"([{"jsonrpc":"2.0","method":"echo"}])");
    EXPECT_EQ(batch.status, 204U);
}

TEST_F(ServerTest, EmptyBatchIsOneInvalidRequest) {
    HttpTestClient client(server_->port());
    expectRpcError(client.post("[]").json(), kInvalidRequest, "empty_batch");
}

TEST_F(ServerTest, KeepAliveServesManyRequestsOnOneConnection) {
    HttpTestClient client(server_->port());
    for (int i = 0; i < 5; ++i) {
        const HttpReply reply = client.post(requestText("echo", "[" + std::to_string(i) + "]", i));
        ASSERT_FALSE(reply.ec) << "request " << i << ": " << reply.ec.message();
        EXPECT_TRUE(reply.keepAlive);
        EXPECT_EQ(reply.json().at("id"), i);
        EXPECT_EQ(server_->connectionCount(), 1U);
    }
}

TEST_F(ServerTest, ConnectionCloseIsHonoured) {
    HttpTestClient client(server_->port());
    const HttpReply reply = client.post(requestText("echo", "[]", 1), "application/json", false);
    EXPECT_EQ(reply.status, 200U);
    EXPECT_FALSE(reply.keepAlive);
    EXPECT_TRUE(client.closedByPeer());
}

TEST_F(ServerTest, LivezAnswersOk) {
    HttpTestClient client(server_->port());
    const HttpReply reply = client.get("/livez");
    EXPECT_EQ(reply.status, 200U);
    EXPECT_EQ(reply.body, "ok\n");
}

TEST(ServerReadiness, ReadyzAnswersWhatTheNodeSaysAtEachCall) {
    std::atomic<bool> halted{false};
    ServerOptions options;
    options.readiness = [&halted]() -> std::optional<std::string> {
        if (halted.load()) {
            return "halted: diverged at height=7";
        }
        return std::nullopt;
    };
    Server server(test::testMethods(), options);
    ASSERT_TRUE(server.start());
    HttpTestClient client(server.port());
    const HttpReply ready = client.get("/readyz");
    EXPECT_EQ(ready.status, 200U);
    EXPECT_EQ(ready.body, "ready\n");
    halted.store(true);
    const HttpReply notReady = client.get("/readyz");
    EXPECT_EQ(notReady.status, 503U);
    EXPECT_EQ(notReady.body, "not ready: halted: diverged at height=7\n");
    EXPECT_EQ(client.get("/livez").status, 200U) << "a halted node is still alive";
    EXPECT_EQ(client.get("/readyz", boost::beast::http::verb::post).status, 405U);
}

TEST_F(ServerTest, WrongPathMethodOrContentTypeIsRefusedWithAReason) {
    HttpTestClient client(server_->port());
    const HttpReply path = client.get("/nowhere");
    EXPECT_EQ(path.status, 404U);
    expectRpcError(path.json(), kInvalidRequest, "path_not_found");

    const HttpReply method = client.get("/");
    EXPECT_EQ(method.status, 405U);
    EXPECT_EQ(method.allow, "POST");
    expectRpcError(method.json(), kInvalidRequest, "http_method_not_allowed");

    const HttpReply type = client.post(requestText("echo", "[]", 1), "text/plain");
    EXPECT_EQ(type.status, 415U);
    expectRpcError(type.json(), kInvalidRequest, "bad_content_type");

    const HttpReply charset =
        client.post(requestText("echo", "[]", 1), "Application/JSON; charset=utf-8");
    EXPECT_EQ(charset.status, 200U);
}

/** A `POST /txs` body of these texts. */
std::string txFrames(const std::vector<std::string>& txs) {
    std::vector<ByteView> views;
    views.reserve(txs.size());
    for (const auto& tx : txs) {
        views.push_back(asBytes(tx));
    }
    return gridledger::testing::txFrames(views);
}

TEST(ServerRawTxs, EachFrameGetsItsHashAndReasonInOrderAndBadFramingIsRefused) {
    std::vector<std::string> seen;
    std::size_t settled = 0;
    ServerOptions options;
    options.submitRaw = [&seen](std::span<const ByteView> raws) {
        std::vector<Result<Hash256>> out;
        for (const ByteView raw : raws) {
            seen.emplace_back(raw.begin(), raw.end());
            if (raw[0] == 'x') {
                out.emplace_back(std::unexpected(Error{ErrorCode::kNonceGap, "too far ahead"}));
            } else {
                out.emplace_back(crypto::sha256(raw));
            }
        }
        return out;
    };
    options.settle = [&settled] {
        ++settled;
        return Status{};
    };
    Server server(test::testMethods(), options);
    ASSERT_TRUE(server.start());
    HttpTestClient client(server.port());
    const auto post = [&client](std::string body, const std::string& type) {
        auto request = test::requestOf(boost::beast::http::verb::post, "/txs");
        request.set(boost::beast::http::field::content_type, type);
        request.body() = std::move(body);
        request.prepare_payload();
        return client.send(request);
    };

    const HttpReply reply =
        post(txFrames({"abc", "xyz", std::string(300, 'q')}), "application/octet-stream");
    ASSERT_EQ(reply.status, 200U) << reply.body;
    EXPECT_EQ(reply.contentType, "application/octet-stream");
    EXPECT_EQ(seen, (std::vector<std::string>{"abc", "xyz", std::string(300, 'q')}));
    EXPECT_EQ(settled, 1U) << "the answer waits for what was admitted to be durable";
    const auto hashOf = [](const std::string& text) {
        const Hash256 hash = crypto::sha256(asBytes(text));
        return std::string(reinterpret_cast<const char*>(hash.data()), Hash256::size());
    };
    const std::string gap = "nonce_gap";
    EXPECT_EQ(reply.body, hashOf("abc") + std::string(1, '\0') + hashOf("xyz") +
                              std::string(1, static_cast<char>(gap.size())) + gap +
                              hashOf(std::string(300, 'q')) + std::string(1, '\0'));

    seen.clear();
    const std::string truncated = txFrames({"abc"}).substr(0, 5);
    for (const std::string& body : {truncated, std::string("\0\0\0\0", 4), std::string(3, '\0')}) {
        const HttpReply refused = post(body, "application/octet-stream");
        EXPECT_EQ(refused.status, 400U);
        expectRpcError(refused.json(), kInvalidParams, "bad_tx_frame");
    }
    EXPECT_TRUE(seen.empty()) << "nothing of a badly framed body is submitted";

    const HttpReply type = post(txFrames({"abc"}), "application/json");
    EXPECT_EQ(type.status, 415U);
    expectRpcError(type.json(), kInvalidRequest, "bad_content_type");
    EXPECT_EQ(client.get("/txs").status, 405U);
}

TEST(ServerRawTxs, ABodyOfManyReadsArrivesWholeAndTheRequestsBehindItAreServed) {
    std::vector<std::string> seen;
    ServerOptions options;
    options.submitRaw = [&seen](std::span<const ByteView> raws) {
        std::vector<Result<Hash256>> out;
        for (const ByteView raw : raws) {
            seen.emplace_back(raw.begin(), raw.end());
            out.emplace_back(crypto::sha256(raw));
        }
        return out;
    };
    options.settle = [] { return Status{}; };
    Server server(test::testMethods(), options);
    ASSERT_TRUE(server.start());
    HttpTestClient client(server.port());

    // 1,000 transactions of 170 bytes: a body of 174,000 bytes, several times the room a body is
    // read with, sent in pieces, with the next request written right behind its last byte.
    std::vector<std::string> txs;
    for (std::size_t i = 0; i < 1'000; ++i) {
        txs.push_back(std::to_string(i) + std::string(170 - std::to_string(i).size(), 'q'));
    }
    const std::string body = txFrames(txs);
    ASSERT_EQ(body.size(), 174'000U);
    const std::string echo = requestText("echo", "[7]", 7);
    const std::string stream =
        "POST /txs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body +
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(echo.size()) + "\r\n\r\n" + echo;
    for (std::size_t at = 0; at < stream.size(); at += 50'000) {
        ASSERT_FALSE(client.writeRaw(std::string_view(stream).substr(at, 50'000)));
    }

    const HttpReply txsReply = client.readReply();
    ASSERT_EQ(txsReply.status, 200U) << txsReply.body;
    EXPECT_EQ(txsReply.body.size(), txs.size() * (Hash256::size() + 1));
    EXPECT_EQ(seen, txs);
    const HttpReply echoReply = client.readReply();
    ASSERT_EQ(echoReply.status, 200U) << echoReply.body;
    EXPECT_EQ(echoReply.json().at("result"), boost::json::parse("[7]"));
    const HttpReply after = client.post(requestText("echo", "[8]", 8));
    ASSERT_EQ(after.status, 200U) << after.body;
    EXPECT_EQ(after.json().at("result"), boost::json::parse("[8]"));
    EXPECT_EQ(server.connectionCount(), 1U);
}

TEST_F(ServerTest, TxsIsNotServedWithoutASubmitter) {
    HttpTestClient client(server_->port());
    const HttpReply reply = client.get("/txs", boost::beast::http::verb::post);
    EXPECT_EQ(reply.status, 404U);
    expectRpcError(reply.json(), kInvalidRequest, "path_not_found");
}

TEST_F(ServerTest, ExpectContinueGetsAGoAheadBeforeTheBody) {
    HttpTestClient client(server_->port());
    const std::string body = requestText("echo", "[1]", 1);
    ASSERT_FALSE(
        client.writeRaw("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        "Expect: 100-continue\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n"));
    EXPECT_EQ(client.readRawUntil("\r\n\r\n").rfind("HTTP/1.1 100 Continue\r\n", 0), 0U);
    ASSERT_FALSE(client.writeRaw(body));
    const HttpReply reply = client.readReply();
    EXPECT_EQ(reply.status, 200U);
    EXPECT_EQ(reply.json().at("result"), boost::json::parse("[1]"));
}

TEST(ServerLifecycle, StartTwiceAndBindingATakenPortFail) {
    Server first(test::testMethods(), ServerOptions{});
    ASSERT_TRUE(first.start());
    const Status again = first.start();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);

    Server second(test::testMethods(), ServerOptions{.port = first.port()});
    const Status taken = second.start();
    ASSERT_FALSE(taken);
    EXPECT_EQ(taken.error().code, ErrorCode::kIo);

    Server bad(test::testMethods(), ServerOptions{.address = "not-an-ip"});
    const Status invalid = bad.start();
    ASSERT_FALSE(invalid);
    EXPECT_EQ(invalid.error().code, ErrorCode::kConfig);
}

/** The niceness of each thread of this process named `name` (from /proc/self/task). */
std::vector<int> nicenessOfThreadsNamed(const std::string& name) {
    std::vector<int> out;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        std::ifstream commFile(task.path() / "comm");
        std::string comm;
        std::getline(commFile, comm);
        if (comm != name) {
            continue;
        }
        std::ifstream statFile(task.path() / "stat");
        const std::string stat((std::istreambuf_iterator<char>(statFile)), {});
        const std::size_t nameEnd = stat.rfind(')');
        if (nameEnd == std::string::npos) {
            continue;  // the thread ended between the two reads
        }
        // Fields after the parenthesised name: state is field 3, niceness field 19.
        std::istringstream fields(stat.substr(nameEnd + 2));
        std::string field;
        for (int i = 3; i <= 19 && fields >> field; ++i) {
        }
        out.push_back(std::stoi(field));
    }
    return out;
}

TEST(ServerThreads, IoThreadsAreNamedAndRunAsMuchNicerAsAsked) {
    const int base = ::getpriority(PRIO_PROCESS, 0);
    Server server(test::testMethods(), ServerOptions{.ioThreads = 3, .ioNice = 4});
    ASSERT_TRUE(server.start());
    std::vector<int> nice;
    test::waitUntil([&nice] {
        nice = nicenessOfThreadsNamed("gl-rpc");
        return nice.size() >= 3;
    });
    ASSERT_EQ(nice.size(), 3U);
    for (const int n : nice) {
        EXPECT_EQ(n, std::min(base + 4, 19));
    }
    server.stop();
    // A joined thread's /proc entry goes a moment after the join returns: the kernel wakes the
    // joiner before it releases the task.
    EXPECT_TRUE(test::waitUntil([] { return nicenessOfThreadsNamed("gl-rpc").empty(); }));

    for (const int bad : {-1, 20}) {
        Server refused(test::testMethods(), ServerOptions{.ioNice = bad});
        const Status started = refused.start();
        ASSERT_FALSE(started);
        EXPECT_EQ(started.error().code, ErrorCode::kConfig);
    }
}

TEST(ServerLifecycle, ANegativeNotifyIntervalIsRefused) {
    ServerOptions negative;
    negative.notifyInterval = std::chrono::milliseconds(-1);
    Server refused(test::testMethods(), std::move(negative));
    const Status started = refused.start();
    ASSERT_FALSE(started);
    EXPECT_EQ(started.error().code, ErrorCode::kConfig);
}

}  // namespace
}  // namespace gridledger::rpc::server_test
