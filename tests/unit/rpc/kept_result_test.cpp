// A method's kept results (rpc::KeptResult): the dispatcher answers them as JSON text without
// running the handler, byte for byte as the handler's result would be answered, within the
// answer's size cap, and runs the handler for every request they do not cover.

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>

#include "unit/rpc/http_test_client.h"
#include "unit/rpc/test_methods.h"

namespace gridledger::rpc::kept_result_test {
namespace {

namespace json = boost::json;
using test::expectRpcError;

/** `doc`'s result for params [n]: an object with text that JSON must escape. */
json::value docOf(const json::value& params) {
    return json::object{{"n", params.as_array().at(0)}, {"text", "quote \" slash \\ tab \t é"}};
}

struct Calls {
    std::atomic<int> handler = 0;
    std::atomic<int> kept = 0;
};

/**
 * The test methods and `doc`, whose results for an even n are kept when `withKept` (what
 * serialising docOf() gives), counting the calls of its handler and of its kept results.
 */
MethodTable docMethods(const std::shared_ptr<Calls>& calls, bool withKept) {
    MethodTable methods = test::testMethods();
    KeptResult kept;
    if (withKept) {
        kept = [calls](const json::value& params) -> std::shared_ptr<const std::string> {
            ++calls->kept;
            if (params.as_array().at(0).as_int64() % 2 != 0) {
                return nullptr;
            }
            return std::make_shared<const std::string>(json::serialize(docOf(params)));
        };
    }
    const Status added = methods.add(
        "doc",
        [calls](const json::value& params) -> Result<json::value> {
            ++calls->handler;
            return docOf(params);
        },
        std::move(kept));
    EXPECT_TRUE(added);
    return methods;
}

std::string docRequest(std::string_view id, int n) {
    return R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":"doc","params":[)" +
           std::to_string(n) + "]}";
}

TEST(KeptResult, IsAnsweredByteForByteAsTheHandlersResultWithoutRunningIt) {
    const auto keptCalls = std::make_shared<Calls>();
    const auto plainCalls = std::make_shared<Calls>();
    const Dispatcher kept(docMethods(keptCalls, true), ServerLimits{});
    const Dispatcher plain(docMethods(plainCalls, false), ServerLimits{});
    int requests = 0;
    for (const std::string_view id : {"1", R"("a \"quoted\" id")", "null", "-7", "2.5"}) {
        const std::string request = docRequest(id, 4);
        const std::optional<std::string> answer = kept.handle(request);
        ASSERT_TRUE(answer);
        EXPECT_EQ(answer, plain.handle(request)) << id;
        EXPECT_EQ(json::parse(*answer).at("result"), docOf(json::array{4})) << *answer;
        ++requests;
    }
    EXPECT_EQ(keptCalls->handler.load(), 0);
    EXPECT_EQ(keptCalls->kept.load(), requests);
    EXPECT_EQ(plainCalls->handler.load(), requests);

    // In a batch, beside answers the handlers give.
    const std::string batch = test::batchText(
        {docRequest("1", 2), docRequest("2", 3), test::requestText("echo", "[5]", 3)});
    EXPECT_EQ(kept.handle(batch), plain.handle(batch));
    EXPECT_EQ(keptCalls->handler.load(), 1) << "only the odd n, which is not kept, ran";
}

TEST(KeptResult, RequestsItDoesNotCoverRunTheHandler) {
    const auto calls = std::make_shared<Calls>();
    const Dispatcher dispatcher(docMethods(calls, true), ServerLimits{});
    const std::optional<std::string> odd = dispatcher.handle(docRequest("1", 3));
    ASSERT_TRUE(odd);
    EXPECT_EQ(json::parse(odd.value()).at("result"), docOf(json::array{3}));
    EXPECT_EQ(calls->handler.load(), 1);

    // A notification asks for no answer: its handler runs as for any method, nothing is read.
    EXPECT_FALSE(dispatcher.handle(R"({"jsonrpc":"2.0","method":"doc","params":[2]})"));
    EXPECT_EQ(calls->handler.load(), 2);
    EXPECT_EQ(calls->kept.load(), 1);
}

TEST(KeptResult, AboveTheCapIsResponseTooLargeAndWhatFollowsDoesNotRun) {
    const auto calls = std::make_shared<Calls>();
    const std::size_t one = Dispatcher(docMethods(calls, true), ServerLimits{})
                                .handle(docRequest("1", 2))
                                .value()
                                .size();
    // Room for the first answer in the batch ("[" and "]" around it), not for a second.
    const Dispatcher dispatcher(docMethods(calls, true),
                                ServerLimits{.maxResponseBytes = one + 2 + one / 2});
    const std::string batch =
        test::batchText({docRequest("1", 2), docRequest("2", 4), docRequest("3", 5)});
    const std::optional<std::string> answer = dispatcher.handle(batch);
    ASSERT_TRUE(answer);
    const json::value answers = json::parse(answer.value());
    ASSERT_EQ(answers.as_array().size(), 3U);
    EXPECT_EQ(answers.at(0).at("result"), docOf(json::array{2}));
    for (std::size_t i = 1; i < 3; ++i) {
        expectRpcError(answers.at(i), kResponseTooLarge, "response_too_large");
        EXPECT_EQ(answers.at(i).at("id"), static_cast<std::int64_t>(i + 1));
    }
    EXPECT_EQ(calls->handler.load(), 0) << "the odd n past the cap did not run";

    const Dispatcher small(docMethods(calls, true), ServerLimits{.maxResponseBytes = one - 1});
    const json::value single = json::parse(small.handle(docRequest("9", 2)).value());
    expectRpcError(single, kResponseTooLarge, "response_too_large");
    EXPECT_EQ(single.at("id"), 9);
}

}  // namespace
}  // namespace gridledger::rpc::kept_result_test
