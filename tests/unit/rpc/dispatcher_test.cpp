#include <optional>
#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/dispatcher.h>
#include <gridledger/rpc/errors.h>

#include "unit/rpc/test_methods.h"

namespace gridledger::rpc::dispatcher_test {
namespace {

class DispatcherTest : public ::testing::Test {
  protected:
    /** The parsed response to `payload`; null when the dispatcher answers nothing. */
    boost::json::value call(std::string_view payload) {
        std::optional<std::string> response = dispatcher_.handle(payload);
        return response ? boost::json::parse(*response) : boost::json::value();
    }

    /** Asserts an error response with `code` and `reason`. */
    static void expectError(const boost::json::value& response, std::int32_t code,
                            std::string_view reason) {
        ASSERT_TRUE(response.is_object()) << boost::json::serialize(response);
        EXPECT_EQ(response.at("jsonrpc"), "2.0");
        EXPECT_EQ(response.at("error").at("code"), code) << boost::json::serialize(response);
        EXPECT_EQ(test::textOf(response.at("error").at("data").at("reason")), reason)
            << boost::json::serialize(response);
        EXPECT_FALSE(response.as_object().contains("result"));
    }

    ServerLimits limits_{.maxBatchItems = 3, .maxJsonDepth = 8};
    Dispatcher dispatcher_{test::testMethods(), limits_};
};

TEST_F(DispatcherTest, SuccessEchoesTheIdAndResult) {
    const boost::json::value response =
        call(R"({"jsonrpc":"2.0","id":"a-1","method":"echo","params":[1,"x"]})");
    EXPECT_EQ(response.at("id"), "a-1");
    EXPECT_EQ(response.at("result"), boost::json::parse(R"([1,"x"])"));
    EXPECT_FALSE(response.as_object().contains("error"));
}

TEST_F(DispatcherTest, AbsentParamsReachTheHandlerAsNull) {
    const boost::json::value response = call(R"({"jsonrpc":"2.0","id":7,"method":"echo"})");
    EXPECT_EQ(response.at("id"), 7);
    EXPECT_TRUE(response.at("result").is_null());
}

TEST_F(DispatcherTest, MalformedJsonAndInvalidUtf8AreParseErrors) {
    expectError(call(R"({"jsonrpc":"2.0",)"), kParseError, "parse_error");
    expectError(call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xff\"]}"),
                kParseError, "invalid_utf8");
    expectError(call("\xc0\xaf"), kParseError, "invalid_utf8");  // Overlong '/'.
    EXPECT_TRUE(call(R"({"jsonrpc":"2.0",)").at("id").is_null());
}

TEST_F(DispatcherTest, AnIdThatCannotBeEchoedAsJsonIsRefusedWithANullId) {
    // 1e99999 parses as an infinite double, which no JSON text can carry: echoed, it would make
    // the whole answer unreadable, the other answers of a batch included.
    const std::optional<std::string> one =
        dispatcher_.handle(R"({"jsonrpc":"2.0","id":1e99999,"method":"echo"})");
    ASSERT_TRUE(one.has_value());
    boost::system::error_code ec;
    const boost::json::value parsed = boost::json::parse(*one, ec);
    ASSERT_FALSE(ec) << *one;
    expectError(parsed, kInvalidRequest, "bad_id");
    EXPECT_TRUE(parsed.at("id").is_null());

    const std::optional<std::string> batch = dispatcher_.handle(
        R"([{"jsonrpc":"2.0","id":-1e99999,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}])");
    ASSERT_TRUE(batch.has_value());
    const boost::json::value answers = boost::json::parse(*batch, ec);
    ASSERT_FALSE(ec) << *batch;
    ASSERT_EQ(answers.as_array().size(), 2U);
    expectError(answers.at(0), kInvalidRequest, "bad_id");
    EXPECT_EQ(answers.at(1).at("id"), 2);
    // A large finite number is still an id, echoed as it came.
    EXPECT_EQ(call(R"({"jsonrpc":"2.0","id":1e300,"method":"echo"})").at("id"), 1e300);
}

TEST_F(DispatcherTest, Utf8ValidatorAcceptsAllPlanesAndRejectsSurrogates) {
    EXPECT_TRUE(isValidUtf8("plain ascii"));
    EXPECT_TRUE(isValidUtf8("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
    EXPECT_FALSE(isValidUtf8("\xed\xa0\x80"));                           // U+D800
    EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80"));                       // > U+10FFFF
    EXPECT_FALSE(isValidUtf8("\xe2\x82"));                               // Truncated.
}

TEST_F(DispatcherTest, StructurallyInvalidRequestsAreInvalidRequest) {
    expectError(call("42"), kInvalidRequest, "invalid_request");
    expectError(call(R"({"id":1,"method":"echo"})"), kInvalidRequest, "bad_jsonrpc_version");
    expectError(call(R"({"jsonrpc":"1.0","id":1,"method":"echo"})"), kInvalidRequest,
                "bad_jsonrpc_version");
    expectError(call(R"({"jsonrpc":"2.0","id":{},"method":"echo"})"), kInvalidRequest, "bad_id");
    expectError(call(R"({"jsonrpc":"2.0","id":true,"method":"echo"})"), kInvalidRequest, "bad_id");
    expectError(call(R"({"jsonrpc":"2.0","id":1,"method":5})"), kInvalidRequest, "bad_method");
    expectError(call(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":"x"})"), kInvalidRequest,
                "bad_params");
    // The id is echoed when it is itself valid.
    EXPECT_EQ(call(R"({"jsonrpc":"1.0","id":9,"method":"echo"})").at("id"), 9);
}

TEST_F(DispatcherTest, UnknownMethodIsMethodNotFound) {
    const boost::json::value response = call(test::requestText("nope_nothing", "[]", 3));
    expectError(response, kMethodNotFound, "method_not_found");
    EXPECT_EQ(response.at("id"), 3);
}

TEST_F(DispatcherTest, HandlerErrorsAreMappedThroughTheTable) {
    const auto failWith = [this](ErrorCode code) {
        return call(
            test::requestText("fail_with", "[" + std::to_string(static_cast<int>(code)) + "]", 1));
    };
    expectError(failWith(ErrorCode::kBadHex), kInvalidParams, "bad_hex");
    expectError(failWith(ErrorCode::kNonceTooLow), kTransactionRejected, "nonce_too_low");
    expectError(failWith(ErrorCode::kNotFound), kResourceNotFound, "not_found");
    expectError(failWith(ErrorCode::kMempoolFull), kLimitExceeded, "mempool_full");
    expectError(failWith(ErrorCode::kUnavailable), kResourceUnavailable, "unavailable");
    expectError(failWith(ErrorCode::kStorage), kInternalError, "storage");
    expectError(failWith(ErrorCode::kInvalidBlock), -32010, "invalid_block");
    EXPECT_EQ(failWith(ErrorCode::kNonceTooLow).at("error").at("message"), "requested failure");
}

TEST_F(DispatcherTest, ParamsHelperErrorsAreInvalidParams) {
    expectError(call(test::requestText("hash", R"(["0x12"])", 1)), kInvalidParams, "bad_length");
    expectError(call(test::requestText("hash", R"({"hash":"zz"})", 1)), kInvalidParams, "bad_hex");
    expectError(call(test::requestText("hash", "[]", 1)), kInvalidParams, "invalid_argument");
}

TEST_F(DispatcherTest, HandlerExceptionBecomesInternalErrorWithoutItsText) {
    const boost::json::value response = call(test::requestText("throws", "[]", 5));
    expectError(response, kInternalError, "internal");
    EXPECT_EQ(response.at("id"), 5);
    EXPECT_EQ(response.at("error").at("message"), "internal error");
}

TEST_F(DispatcherTest, NotificationsGetNoResponseEvenWhenTheyFail) {
    EXPECT_FALSE(dispatcher_.handle(R"({"jsonrpc":"2.0","method":"echo","params":[1]})"));
    EXPECT_FALSE(dispatcher_.handle(R"({"jsonrpc":"2.0","method":"throws"})"));
    EXPECT_FALSE(dispatcher_.handle(R"({"jsonrpc":"2.0","method":"missing"})"));
}

TEST_F(DispatcherTest, BatchAnswersEachRequestInOrderAndSkipsNotifications) {
    const boost::json::value response = call(R"([
        {"jsonrpc":"2.0","id":1,"method":"echo","params":["a"]},
        {"jsonrpc":"2.0","method":"echo","params":["notification"]},
        {"jsonrpc":"2.0","id":2,"method":"fail_with","params":[40]}
    ])");
    ASSERT_TRUE(response.is_array());
    ASSERT_EQ(response.as_array().size(), 2U);
    EXPECT_EQ(response.at(0).at("id"), 1);
    EXPECT_EQ(response.at(0).at("result"), boost::json::parse(R"(["a"])"));
    expectError(response.at(1), kResourceNotFound, "not_found");
    EXPECT_EQ(response.at(1).at("id"), 2);
}

TEST_F(DispatcherTest, BatchOfInvalidItemsAnswersEachWithInvalidRequest) {
    const boost::json::value response = call("[1, 2]");
    ASSERT_TRUE(response.is_array());
    ASSERT_EQ(response.as_array().size(), 2U);
    expectError(response.at(0), kInvalidRequest, "invalid_request");
    expectError(response.at(1), kInvalidRequest, "invalid_request");
}

TEST_F(DispatcherTest, BatchOfNotificationsOnlyGetsNoResponse) {
    EXPECT_FALSE(dispatcher_.handle(R"([{"jsonrpc":"2.0","method":"echo"},
                                        {"jsonrpc":"2.0","method":"echo"}])"));
}

TEST_F(DispatcherTest, EmptyBatchIsOneInvalidRequest) {
    expectError(call("[]"), kInvalidRequest, "empty_batch");
}

TEST_F(DispatcherTest, BatchAboveTheLimitIsOneLimitError) {
    const std::string item = test::requestText("echo", "[]", 1);
    const boost::json::value atLimit = call(test::batchText({item, item, item}));
    ASSERT_TRUE(atLimit.is_array());
    EXPECT_EQ(atLimit.as_array().size(), 3U);
    expectError(call(test::batchText({item, item, item, item})), kLimitExceeded, "batch_too_large");
}

TEST_F(DispatcherTest, NestingBeyondTheDepthLimitIsRefused) {
    // The request object is level 1 and "params" level 2: 6 more arrays make 8 levels.
    const auto nested = [](int levels) {
        return std::string(static_cast<std::size_t>(levels), '[') +
               std::string(static_cast<std::size_t>(levels), ']');
    };
    const boost::json::value atLimit = call(test::requestText("echo", "[" + nested(6) + "]", 1));
    EXPECT_TRUE(atLimit.as_object().contains("result")) << boost::json::serialize(atLimit);
    expectError(call(test::requestText("echo", "[" + nested(7) + "]", 1)), kLimitExceeded,
                "too_deep");
}

TEST(DispatcherSettle, RunsOncePerPayloadAfterItsHandlersAndAFailureReplacesTheAnswer) {
    int settled = 0;
    bool fails = false;
    const Dispatcher dispatcher(test::testMethods(), ServerLimits{}, {}, [&]() -> Status {
        ++settled;
        if (fails) {
            return fail(ErrorCode::kStorage, "disk full");
        }
        return {};
    });
    const std::string batch = R"([{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},)"
                              R"({"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}])";
    const auto answered = dispatcher.handle(batch);
    ASSERT_TRUE(answered);
    EXPECT_EQ(boost::json::parse(*answered).as_array().size(), 2U);
    EXPECT_EQ(settled, 1);

    fails = true;
    const auto refused = dispatcher.handle(batch);
    ASSERT_TRUE(refused);
    const boost::json::value error = boost::json::parse(*refused);
    ASSERT_TRUE(error.is_object()) << *refused;
    EXPECT_EQ(error.at("error").at("code"), kInternalError);
    EXPECT_EQ(test::textOf(error.at("error").at("data").at("reason")), "not_durable");
    EXPECT_NE(test::textOf(error.at("error").at("message")).find("disk full"), std::string::npos);
    EXPECT_EQ(settled, 2);
    // A notification gets no answer, failed settle or not.
    EXPECT_FALSE(dispatcher.handle(R"({"jsonrpc":"2.0","method":"echo","params":[3]})"));
    EXPECT_EQ(settled, 3);
}

}  // namespace
}  // namespace gridledger::rpc::dispatcher_test
