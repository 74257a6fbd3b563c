// How a running node exposes its JSON-RPC: the cap on the bytes of one answer (against a real
// batch of list calls), the Host and Origin checks, the loopback admin listener and the bearer
// token, each with the real binary on 127.0.0.1. Measured figures are printed as "measured:".

#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

#include <boost/beast/http/field.hpp>
#include <gtest/gtest.h>

#include "support/node_process.h"
#include "support/ws_client.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc_exposure_test {
namespace {

namespace json = boost::json;
using rpc::test::expectRpcError;
using rpc::test::HttpTestClient;
using rpc::test::requestOf;
using Clock = std::chrono::steady_clock;
namespace http = boost::beast::http;

/** Sets the node.conf line `key = value` of a key that is unique in the file. */
void setConfig(const testing::NodeProcess& node, const std::string& key, const std::string& value) {
    const auto path = node.home() / "config" / "node.conf";
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    const std::regex line("(^|\n)" + key + " =[^\n]*");
    ASSERT_TRUE(std::regex_search(text.str(), line)) << key << " is not in node.conf";
    std::ofstream(path, std::ios::trunc)
        << std::regex_replace(text.str(), line, "$1" + key + " = " + value);
}

std::uint64_t headHeight(const testing::NodeProcess& node) {
    const auto head = node.call("chain_getHead", json::array{});
    return head ? std::stoull(std::string(head->at("height").as_string())) : 0;
}

/** A batch of `items` block_list calls of up to 1000 blocks each, ids 0.. */
std::string blocksListBatch(int items) {
    std::string batch = "[";
    for (int id = 0; id < items; ++id) {
        batch +=
            (id == 0 ? "" : ",") + rpc::test::requestText("block_list", R"({"limit":1000})", id);
    }
    return batch + "]";
}

/** A JSON-RPC POST of `method` without params. */
http::request<http::string_body> postOf(const std::string& method) {
    auto request = requestOf(http::verb::post, "/");
    request.set(http::field::content_type, "application/json");
    request.body() = rpc::test::requestText(method, "[]", 1);
    request.prepare_payload();
    return request;
}

rpc::test::HttpReply sendTo(std::uint16_t port, const http::request<http::string_body>& request) {
    HttpTestClient client(port);
    return client.send(request);
}

class RpcExposure : public ::testing::Test {
  protected:
    void TearDown() override { node_.stop(SIGTERM); }

    /** Waits until the chain has at least `height` blocks. */
    void waitForHeight(std::uint64_t height) {
        ASSERT_TRUE(rpc::test::waitUntil([&] { return headHeight(node_) >= height; },
                                         std::chrono::milliseconds(60'000)))
            << "the node did not reach height " << height;
    }

    testing::NodeProcess node_;
};

TEST_F(RpcExposure, BatchOfListsOverTheResponseCapIsCutWithResponseTooLarge) {
    constexpr std::size_t kCap = std::size_t{256} * 1024;
    setConfig(node_, "max_response_bytes", std::to_string(kCap));
    node_.start();
    waitForHeight(20);

    HttpTestClient client(node_.port());
    const auto start = Clock::now();
    const auto reply = client.post(blocksListBatch(100));
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    ASSERT_EQ(reply.status, 200U);
    const json::value answer = reply.json();
    ASSERT_TRUE(answer.is_array()) << reply.body.substr(0, 300);
    ASSERT_EQ(answer.as_array().size(), 100U);
    std::size_t served = 0;
    for (std::size_t i = 0; i < 100; ++i) {
        const json::value& entry = answer.at(i);
        EXPECT_EQ(entry.at("id"), static_cast<std::int64_t>(i));
        if (entry.as_object().contains("result")) {
            EXPECT_EQ(served, i) << "results come first, then only errors";
            ++served;
        } else {
            expectRpcError(entry, -32016, "response_too_large");
        }
    }
    std::cout << "measured: a batch of 100 block_list (limit 1000) at height " << headHeight(node_)
              << " with max_response_bytes " << kCap << ": " << reply.body.size()
              << " bytes answered in " << ms << " ms, " << served << " results, " << 100 - served
              << " response_too_large\n";
    EXPECT_GE(served, 1U);
    EXPECT_LT(served, 100U);
    EXPECT_LE(reply.body.size(), kCap + std::size_t{100} * 200);

    // One list alone that fits is still served, on the same connection.
    const json::value single =
        client.post(rpc::test::requestText("block_list", R"({"limit":5})", 1)).json();
    EXPECT_TRUE(single.as_object().contains("result"));
}

TEST_F(RpcExposure, ForeignOriginAndRebindingHostGet403WhileNonBrowserClientsKeepWorking) {
    setConfig(node_, "allowed_origins", "https://wallet.example.org");
    node_.start();
    const auto hijack = sendTo(node_.port(), rpc::test::websocketUpgrade("https://evil.example"));
    EXPECT_EQ(hijack.status, 403U);
    expectRpcError(hijack.json(), -32600, "forbidden_origin");
    EXPECT_EQ(
        sendTo(node_.port(), rpc::test::websocketUpgrade("https://wallet.example.org")).status,
        101U);
    EXPECT_EQ(sendTo(node_.port(), rpc::test::websocketUpgrade("http://localhost:3000")).status,
              101U);

    // DNS rebinding: the page's own name in Host, on a POST and on an upgrade.
    auto rebound = postOf("chain_getHead");
    rebound.set(http::field::host, "evil.example:" + std::to_string(node_.port()));
    const auto refused = sendTo(node_.port(), rebound);
    EXPECT_EQ(refused.status, 403U);
    expectRpcError(refused.json(), -32600, "forbidden_host");
    auto reboundUpgrade = rpc::test::websocketUpgrade("");
    reboundUpgrade.set(http::field::host, "evil.example");
    EXPECT_EQ(sendTo(node_.port(), reboundUpgrade).status, 403U);

    // Clients that are not browsers send no Origin: the CLI's client and a WebSocket client.
    EXPECT_TRUE(node_.call("chain_getHead", json::array{}));
    testing::WsClient ws(node_.port());
    const json::value head = ws.call(rpc::test::requestText("chain_getHead", "[]", 9));
    EXPECT_TRUE(head.as_object().contains("result")) << json::serialize(head);
}

TEST_F(RpcExposure, NodePeersIsServedOnTheLoopbackAdminListenerOnly) {
    node_.start();
    const auto onPublic = node_.call("node_getPeers", json::array{});
    ASSERT_FALSE(onPublic);
    EXPECT_NE(onPublic.error().message.find("admin_only"), std::string::npos)
        << onPublic.error().message;
    const json::value answer = sendTo(node_.port(), postOf("node_getPeers")).json();
    expectRpcError(answer, -32601, "admin_only");

    const auto onAdmin = node_.callAdmin("node_getPeers", json::array{});
    ASSERT_TRUE(onAdmin) << onAdmin.error().message;
    EXPECT_TRUE(onAdmin->at("items").as_array().empty());  // a single dev node has no peers
    // The admin listener serves the chain methods too, and checks Host like the public one.
    EXPECT_TRUE(node_.callAdmin("chain_getHead", json::array{}));
    auto rebound = postOf("node_getPeers");
    rebound.set(http::field::host, "evil.example");
    EXPECT_EQ(sendTo(node_.adminPort(), rebound).status, 403U);
}

TEST_F(RpcExposure, AdminListenerOnANonLoopbackAddressIsRefusedAtStart) {
    setConfig(node_, "admin_address", "0.0.0.0");
    const auto log = node_.home().parent_path() / "refused.log";
    testing::Process process(node_.bin(), {"start", "--home", node_.home().string()}, log);
    ASSERT_TRUE(
        rpc::test::waitUntil([&] { return !process.running(); }, std::chrono::milliseconds(20'000)))
        << "the node started with a non-loopback admin address";
    std::stringstream text;
    text << std::ifstream(log).rdbuf();
    EXPECT_NE(text.str().find("rpc.admin_address must be a loopback address"), std::string::npos)
        << text.str();
}

TEST_F(RpcExposure, AdminPortZeroDisablesTheAdminListener) {
    setConfig(node_, "admin_port", "0");
    node_.start();
    EXPECT_FALSE(HttpTestClient(node_.adminPort()).connected());
    EXPECT_TRUE(node_.call("chain_getHead", json::array{}));
}

TEST_F(RpcExposure, TokenGuardsThePublicListenerAndTheCliSendsIt) {
    const std::string token = "6f1c0e55b0d94f8aa1e2b3c4d5e6f708";
    std::ofstream(node_.home() / "config" / "rpc.token") << token << "\n";
    setConfig(node_, "auth_token_file", "config/rpc.token");
    node_.setRpcToken(token);
    node_.start();

    const auto missing = sendTo(node_.port(), postOf("chain_getHead"));
    EXPECT_EQ(missing.status, 401U);
    expectRpcError(missing.json(), -32600, "unauthorized");
    auto wrong = postOf("chain_getHead");
    wrong.set(http::field::authorization, "Bearer " + token.substr(0, 31) + "0");
    EXPECT_EQ(sendTo(node_.port(), wrong).status, 401U);
    EXPECT_EQ(sendTo(node_.port(), rpc::test::websocketUpgrade("")).status, 401U);
    auto right = postOf("chain_getHead");
    right.set(http::field::authorization, "Bearer " + token);
    EXPECT_EQ(sendTo(node_.port(), right).status, 200U);
    auto upgrade = rpc::test::websocketUpgrade("");
    upgrade.set(http::field::authorization, "Bearer " + token);
    EXPECT_EQ(sendTo(node_.port(), upgrade).status, 101U);
    EXPECT_EQ(sendTo(node_.port(), requestOf(http::verb::get, "/livez")).status, 200U);
    // The admin listener is loopback only and asks for no token.
    EXPECT_TRUE(node_.callAdmin("node_getPeers", json::array{}));

    // The CLI reads the token named by the home's config...
    const auto [queried, queryOut] = node_.cli({"query", "account", "dev"});
    EXPECT_EQ(queried, 0) << queryOut;
    const auto [sent, sentOut] =
        node_.cli({"tx", "transfer", "--from", "dev", "--to", "0x" + std::string(40, '7'),
                   "--amount", "1", "--wait"});
    EXPECT_EQ(sent, 0) << sentOut;
    // ...never sends it to an endpoint named by --rpc, which needs --rpc-token-file.
    const std::string endpoint = "127.0.0.1:" + std::to_string(node_.port());
    const auto [bare, bareOut] = node_.cli({"query", "account", "dev", "--rpc", endpoint});
    EXPECT_NE(bare, 0);
    EXPECT_NE(bareOut.find("unauthorized"), std::string::npos) << bareOut;
    const auto [flagged, flaggedOut] =
        node_.cli({"query", "account", "dev", "--rpc", endpoint, "--rpc-token-file",
                   (node_.home() / "config" / "rpc.token").string()});
    EXPECT_EQ(flagged, 0) << flaggedOut;
}

}  // namespace
}  // namespace gridledger::rpc_exposure_test
