#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/params.h>

namespace gridledger::rpc::params_test {
namespace {

const std::string kHash = "0x" + std::string(64, 'a');

TEST(RpcParams, ReadsPositionalAndNamedParamsAlike) {
    const boost::json::value positional = boost::json::parse(R"(["0xab", "42", true])");
    const boost::json::value named =
        boost::json::parse(R"({"data": "0xab", "height": "42", "full": true})");
    for (const boost::json::value* params : {&positional, &named}) {
        auto data = requireHex(*params, 0, "data");
        ASSERT_TRUE(data) << data.error().message;
        EXPECT_EQ(*data, Bytes{0xab});
        auto height = requireU64Decimal(*params, 1, "height");
        ASSERT_TRUE(height);
        EXPECT_EQ(*height, 42U);
        auto full = requireBool(*params, 2, "full");
        ASSERT_TRUE(full);
        EXPECT_TRUE(*full);
    }
}

TEST(RpcParams, MissingParamIsAnInvalidParamsErrorNamingIt) {
    const boost::json::value params = boost::json::parse("[]");
    auto hash = requireString(params, 0, "hash");
    ASSERT_FALSE(hash);
    EXPECT_EQ(hash.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(rpcCodeOf(hash.error().code), kInvalidParams);
    EXPECT_EQ(hash.error().message, "param 0 \"hash\": missing");

    const boost::json::value none;  // A request without "params".
    EXPECT_FALSE(requireString(none, 0, "hash"));
    const boost::json::value null = boost::json::parse("[null]");
    EXPECT_FALSE(requireString(null, 0, "hash"));
}

TEST(RpcParams, WrongTypesAreRejectedWithTheParamName) {
    const boost::json::value params = boost::json::parse(R"([1, "x", 3, 4])");
    auto text = requireString(params, 0, "label");
    ASSERT_FALSE(text);
    EXPECT_EQ(text.error().message, "param 0 \"label\": expected a string");
    EXPECT_FALSE(requireBool(params, 1, "full"));
    EXPECT_FALSE(requireObject(params, 2, "filter"));
    EXPECT_FALSE(requireArray(params, 3, "ids"));
    EXPECT_FALSE(requireU64Decimal(params, 2, "height"));  // A JSON number, not a decimal string.
}

TEST(RpcParams, HexKeepsTheParserCode) {
    const boost::json::value params = boost::json::parse(R"(["abcd", "0xabc", "0x00"])");
    EXPECT_EQ(requireHex(params, 0, "data").error().code, ErrorCode::kBadHex);
    EXPECT_EQ(requireHex(params, 1, "data").error().code, ErrorCode::kBadHex);
    auto hash = requireFixedHex<32>(params, 2, "hash");
    ASSERT_FALSE(hash);
    EXPECT_EQ(hash.error().code, ErrorCode::kBadLength);
    EXPECT_NE(hash.error().message.find("\"hash\""), std::string::npos);

    const boost::json::value good = boost::json::parse("[\"" + kHash + "\"]");
    auto parsed = requireFixedHex<32>(good, 0, "hash");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->hex(), kHash);
}

TEST(RpcParams, DecimalsRejectSignsLeadingZerosAndOverflow) {
    const boost::json::value params = boost::json::parse(
        R"(["-1", "01", "18446744073709551616", "340282366920938463463374607431768211455"])");
    EXPECT_EQ(requireU64Decimal(params, 0, "n").error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(requireU64Decimal(params, 1, "n").error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(requireU64Decimal(params, 2, "n").error().code, ErrorCode::kOverflow);
    auto max = requireU128Decimal(params, 3, "amount");
    ASSERT_TRUE(max);
    EXPECT_TRUE(*max == ~u128{0});
}

TEST(RpcParams, OptionalParamsAreAbsentWhenMissingOrNull) {
    const boost::json::value params = boost::json::parse(R"(["0x01", null])");
    auto first = optionalHex(params, 0, "data");
    ASSERT_TRUE(first);
    ASSERT_TRUE(first->has_value());
    auto second = optionalU64Decimal(params, 1, "height");
    ASSERT_TRUE(second);
    EXPECT_FALSE(second->has_value());
    auto third = optionalBool(params, 2, "full");
    ASSERT_TRUE(third);
    EXPECT_FALSE(third->has_value());
    auto fourth = optionalString(params, 3, "label");
    ASSERT_TRUE(fourth);
    EXPECT_FALSE(fourth->has_value());
    // Present but of the wrong type is still an error.
    EXPECT_FALSE(optionalBool(params, 0, "full"));
}

TEST(RpcParams, UintNumberIsBounded) {
    const boost::json::value params = boost::json::parse(R"([10, 1001, -1, 1.5])");
    auto limit = requireUintNumber(params, 0, "limit", 1000);
    ASSERT_TRUE(limit);
    EXPECT_EQ(*limit, 10U);
    EXPECT_FALSE(requireUintNumber(params, 1, "limit", 1000));
    EXPECT_FALSE(requireUintNumber(params, 2, "limit", 1000));
    EXPECT_FALSE(requireUintNumber(params, 3, "limit", 1000));
}

TEST(RpcParams, ExpectOnlyRefusesExtraPositionalAndUnknownNamedParams) {
    EXPECT_TRUE(expectOnly(boost::json::value(), {"hash"}));
    EXPECT_TRUE(expectOnly(boost::json::parse(R"(["a"])"), {"hash"}));
    EXPECT_TRUE(expectOnly(boost::json::parse(R"({"hash": "a"})"), {"hash", "full"}));
    auto extra = expectOnly(boost::json::parse(R"(["a", "b"])"), {"hash"});
    ASSERT_FALSE(extra);
    EXPECT_EQ(extra.error().code, ErrorCode::kInvalidArgument);
    auto unknown = expectOnly(boost::json::parse(R"({"hsah": "a"})"), {"hash"});
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message, "unknown param \"hsah\"");
}

}  // namespace
}  // namespace gridledger::rpc::params_test
