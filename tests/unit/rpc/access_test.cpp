// Who may use a listener (AccessPolicy): the Host check against DNS rebinding, the Origin check
// against cross-site WebSocket hijacking, the bearer token, and the admin-only methods. First the
// rules alone, then a server on a real socket answering refused requests with 403 or 401 before
// any method runs or any WebSocket upgrade.

#include <memory>
#include <string>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/access.h>
#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>

#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc::access_test {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using test::expectRpcError;
using test::HttpReply;
using test::HttpTestClient;
using test::requestOf;
using test::requestText;

TEST(AccessRules, HostMustNameTheLocalMachineTheListenAddressOrAnAllowedName) {
    const AccessPolicy none;
    for (const char* host : {"localhost", "localhost:8545", "LOCALHOST:1", "127.0.0.1",
                             "127.0.0.1:8545", "[::1]", "[::1]:8545", ""}) {
        EXPECT_TRUE(hostAllowed(host, none, "127.0.0.1")) << host;
    }
    // A rebinding page's own name, or a look-alike of a loopback name.
    for (const char* host :
         {"evil.example", "evil.example:8545", "localhost.evil.example", "127.0.0.1.evil.example",
          "127.0.0.2", "[::2]:8545", "::1", "localhost:port", "[::1", "[::1]x"}) {
        EXPECT_FALSE(hostAllowed(host, none, "127.0.0.1")) << host;
    }
    EXPECT_TRUE(hostAllowed("10.0.0.5:8545", none, "10.0.0.5"));
    EXPECT_FALSE(hostAllowed("10.0.0.5:8545", none, "0.0.0.0"));
    const AccessPolicy named{.allowedHosts = {"node.example.org"}};
    EXPECT_TRUE(hostAllowed("Node.Example.org:443", named, "0.0.0.0"));
    EXPECT_FALSE(hostAllowed("other.example.org", named, "0.0.0.0"));
    EXPECT_TRUE(hostAllowed("anything.example", AccessPolicy{.allowedHosts = {"*"}}, ""));
}

TEST(AccessRules, OriginWhenPresentMustBeLocalOrAllowed) {
    const AccessPolicy none;
    for (const char* origin : {"", "http://localhost", "http://localhost:3000",
                               "https://127.0.0.1:8443", "http://[::1]:8080", "HTTP://LOCALHOST"}) {
        EXPECT_TRUE(originAllowed(origin, none)) << origin;
    }
    for (const char* origin :
         {"https://evil.example", "http://localhost.evil.example", "null", "file://",
          "ws://localhost", "http://127.0.0.1.evil.example:80", "http://"}) {
        EXPECT_FALSE(originAllowed(origin, none)) << origin;
    }
    const AccessPolicy app{.allowedOrigins = {"https://wallet.example.org"}};
    EXPECT_TRUE(originAllowed("https://wallet.example.org", app));
    EXPECT_FALSE(originAllowed("https://wallet.example.org:8443", app));
    EXPECT_FALSE(originAllowed("http://wallet.example.org", app));
    EXPECT_TRUE(originAllowed("https://any.example", AccessPolicy{.allowedOrigins = {"*"}}));
}

TEST(AccessRules, BearerTokenMustMatchExactly) {
    EXPECT_TRUE(authorized("", AccessPolicy{}));
    const AccessPolicy policy{.bearerToken = "s3cret-token"};
    EXPECT_TRUE(authorized("Bearer s3cret-token", policy));
    EXPECT_TRUE(authorized("bearer s3cret-token", policy));
    for (const char* header :
         {"", "Bearer", "Bearer ", "Bearer s3cret-toke", "Bearer s3cret-tokenX",
          "Bearer S3CRET-TOKEN", "Basic s3cret-token", "s3cret-token"}) {
        EXPECT_FALSE(authorized(header, policy)) << header;
    }
}

http::request<http::string_body> postRequest(const std::string& host = "127.0.0.1") {
    auto request = requestOf(http::verb::post, "/", host);
    request.set(http::field::content_type, "application/json");
    request.body() = requestText("echo", "[1]", 1);
    request.prepare_payload();
    return request;
}

class AccessServer : public ::testing::Test {
  protected:
    void start(AccessPolicy access, std::vector<std::string> adminOnly = {}) {
        server_ = std::make_unique<Server>(
            test::testMethods(),
            ServerOptions{.access = std::move(access), .adminOnlyMethods = std::move(adminOnly)});
        const Status started = server_->start();
        ASSERT_TRUE(started) << started.error().message;
    }

    HttpReply send(const http::request<http::string_body>& request) {
        HttpTestClient client(server_->port());
        return client.send(request);
    }

    std::unique_ptr<Server> server_;
};

TEST_F(AccessServer, WebSocketUpgradeFromAForeignOriginGets403BeforeTheUpgrade) {
    start(AccessPolicy{});
    const HttpReply foreign = send(test::websocketUpgrade("https://evil.example"));
    EXPECT_EQ(foreign.status, 403U);
    expectRpcError(foreign.json(), kInvalidRequest, "forbidden_origin");
    EXPECT_EQ(server_->webSocketCount(), 0U);
    // A local page and a client that sends no Origin (not a browser) still upgrade.
    EXPECT_EQ(send(test::websocketUpgrade("http://localhost:3000")).status, 101U);
    EXPECT_EQ(send(test::websocketUpgrade("")).status, 101U);
}

TEST_F(AccessServer, ConfiguredOriginIsAdmittedAndStarAdmitsAny) {
    start(AccessPolicy{.allowedOrigins = {"https://wallet.example.org"}});
    EXPECT_EQ(send(test::websocketUpgrade("https://wallet.example.org")).status, 101U);
    EXPECT_EQ(send(test::websocketUpgrade("https://evil.example")).status, 403U);
    server_.reset();
    start(AccessPolicy{.allowedOrigins = {"*"}});
    EXPECT_EQ(send(test::websocketUpgrade("https://evil.example")).status, 101U);
}

TEST_F(AccessServer, ForeignHostGets403OnPostAndOnUpgrade) {
    start(AccessPolicy{});
    const HttpReply rebound = send(postRequest("evil.example:8545"));
    EXPECT_EQ(rebound.status, 403U);
    expectRpcError(rebound.json(), kInvalidRequest, "forbidden_host");
    auto upgrade = test::websocketUpgrade("");
    upgrade.set(http::field::host, "evil.example");
    EXPECT_EQ(send(upgrade).status, 403U);
    EXPECT_EQ(server_->webSocketCount(), 0U);

    // A Host of bytes that are not UTF-8 is refused with an answer that still parses.
    const HttpReply binary = send(postRequest("evil\xff\xfe.example"));
    EXPECT_EQ(binary.status, 403U);
    EXPECT_TRUE(isValidUtf8(binary.body)) << binary.body;
    expectRpcError(binary.json(), kInvalidRequest, "forbidden_host");

    EXPECT_EQ(send(postRequest("localhost:8545")).status, 200U);
    EXPECT_EQ(send(postRequest("[::1]:1")).status, 200U);
    // The probes answer whatever the Host: they tell nothing but whether the node runs.
    EXPECT_EQ(send(requestOf(http::verb::get, "/livez", "evil.example")).status, 200U);
}

TEST_F(AccessServer, ForeignOriginOnAPostIsRefusedToo) {
    start(AccessPolicy{});
    auto request = postRequest();
    request.set(http::field::origin, "https://evil.example");
    const HttpReply reply = send(request);
    EXPECT_EQ(reply.status, 403U);
    expectRpcError(reply.json(), kInvalidRequest, "forbidden_origin");
}

TEST_F(AccessServer, TokenIsRequiredOnEveryRequestAndUpgrade) {
    start(AccessPolicy{.bearerToken = "s3cret-token"});
    const HttpReply missing = send(postRequest());
    EXPECT_EQ(missing.status, 401U);
    expectRpcError(missing.json(), kInvalidRequest, "unauthorized");
    auto wrong = postRequest();
    wrong.set(http::field::authorization, "Bearer s3cret-tokeX");
    EXPECT_EQ(send(wrong).status, 401U);
    EXPECT_EQ(send(test::websocketUpgrade("")).status, 401U);
    EXPECT_EQ(server_->webSocketCount(), 0U);

    auto right = postRequest();
    right.set(http::field::authorization, "Bearer s3cret-token");
    const HttpReply served = send(right);
    EXPECT_EQ(served.status, 200U);
    EXPECT_EQ(served.json().at("result"), json::parse("[1]"));
    auto upgrade = test::websocketUpgrade("");
    upgrade.set(http::field::authorization, "Bearer s3cret-token");
    EXPECT_EQ(send(upgrade).status, 101U);
    EXPECT_EQ(send(requestOf(http::verb::get, "/readyz")).status, 200U);
}

TEST_F(AccessServer, AdminOnlyMethodAnswersMethodNotFoundWithReasonAdminOnly) {
    start(AccessPolicy{}, {"node_getPeers"});
    HttpTestClient client(server_->port());
    const json::value admin = client.post(requestText("node_getPeers", "[]", 4)).json();
    expectRpcError(admin, kMethodNotFound, "admin_only");
    EXPECT_EQ(admin.at("id"), 4);
    expectRpcError(client.post(requestText("nothing_here", "[]", 5)).json(), kMethodNotFound,
                   "method_not_found");
}

}  // namespace
}  // namespace gridledger::rpc::access_test
