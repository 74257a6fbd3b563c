// The cap on the bytes of one answer (ServerLimits::maxResponseBytes): a single answer above it
// becomes a -32016 response_too_large error with its id; in a batch the response that would cross
// it and every request after it get that error, and those after it do not run.

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/server.h>

#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc::response_limit_test {
namespace {

namespace json = boost::json;
using test::expectRpcError;
using test::requestText;

/** `echo` and `chunk` (returns a 300-character string and counts its calls). */
MethodTable countingMethods(const std::shared_ptr<std::atomic<int>>& calls) {
    MethodTable methods = test::testMethods();
    const Status added = methods.add("chunk", [calls](const json::value&) -> Result<json::value> {
        ++*calls;
        return json::value(std::string(300, 'c'));
    });
    EXPECT_TRUE(added);
    return methods;
}

std::string echoOf(std::size_t characters, int id) {
    return requestText("echo", "[\"" + std::string(characters, 'x') + "\"]", id);
}

TEST(ResponseLimit, SingleAnswerAboveTheCapBecomesResponseTooLargeWithItsId) {
    const Dispatcher dispatcher(test::testMethods(), ServerLimits{.maxResponseBytes = 1000});
    const std::optional<std::string> answer = dispatcher.handle(echoOf(2000, 7));
    ASSERT_TRUE(answer);
    EXPECT_LE(answer->size(), 1000U);
    const json::value response = json::parse(*answer);
    expectRpcError(response, kResponseTooLarge, "response_too_large");
    EXPECT_EQ(response.at("id"), 7);
    const std::string message(response.at("error").at("message").as_string());
    EXPECT_NE(message.find("1000 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("rpc.max_response_bytes"), std::string::npos) << message;
}

TEST(ResponseLimit, AnswerOfExactlyTheCapIsServedAndOneByteMoreIsNot) {
    const std::string expected =
        R"({"jsonrpc":"2.0","id":1,"result":[")" + std::string(500, 'x') + R"("]})";
    const Dispatcher exact(test::testMethods(), ServerLimits{.maxResponseBytes = expected.size()});
    EXPECT_EQ(exact.handle(echoOf(500, 1)), expected);
    const Dispatcher below(test::testMethods(),
                           ServerLimits{.maxResponseBytes = expected.size() - 1});
    expectRpcError(json::parse(*below.handle(echoOf(500, 1))), kResponseTooLarge,
                   "response_too_large");
}

TEST(ResponseLimit, BatchEntriesPastTheCapAreReplacedAndTheRestDoNotRun) {
    const auto calls = std::make_shared<std::atomic<int>>(0);
    const Dispatcher dispatcher(countingMethods(calls), ServerLimits{.maxResponseBytes = 1000});
    std::string batch = "[";
    for (int id = 0; id < 10; ++id) {
        batch += (id == 0 ? "" : ",") + requestText("chunk", "[]", id);
    }
    batch += "," + std::string(R"({"jsonrpc":"2.0","method":"chunk"})") + "]";
    const std::optional<std::string> answer = dispatcher.handle(batch);
    ASSERT_TRUE(answer);
    const json::value responses = json::parse(*answer);
    ASSERT_TRUE(responses.is_array());
    // Each answer is about 340 bytes: two fit in 1000, the third crosses the cap.
    ASSERT_EQ(responses.as_array().size(), 10U) << "the notification gets no entry";
    for (int id = 0; id < 10; ++id) {
        const json::value& entry = responses.at(static_cast<std::size_t>(id));
        EXPECT_EQ(entry.at("id"), id);
        if (id < 2) {
            EXPECT_EQ(entry.at("result"), json::value(std::string(300, 'c')));
        } else {
            expectRpcError(entry, kResponseTooLarge, "response_too_large");
        }
    }
    EXPECT_EQ(calls->load(), 3) << "only the requests up to the one that crossed the cap ran";
    // The results stay within the cap; the error entries past it are small and bounded.
    EXPECT_LE(answer->size(), 1000U + 10 * 200U);
}

TEST(ResponseLimit, ServerAnswersAnOversizedResultWithTheErrorOverHttp) {
    Server server(test::testMethods(), ServerOptions{.limits = {.maxResponseBytes = 4096}});
    ASSERT_TRUE(server.start());
    test::HttpTestClient client(server.port());
    const test::HttpReply big = client.post(echoOf(8192, 3));
    EXPECT_EQ(big.status, 200U);
    EXPECT_LE(big.body.size(), 4096U);
    expectRpcError(big.json(), kResponseTooLarge, "response_too_large");
    EXPECT_EQ(big.json().at("id"), 3);
    // The connection stays usable, and a small answer passes.
    EXPECT_EQ(client.post(echoOf(10, 4)).json().at("result"),
              json::parse("[\"" + std::string(10, 'x') + "\"]"));
}

}  // namespace
}  // namespace gridledger::rpc::response_limit_test
