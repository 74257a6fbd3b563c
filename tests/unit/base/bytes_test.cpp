#include <gtest/gtest.h>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>

namespace gridledger::bytes_test {
namespace {

TEST(Hex, RoundTripsLowerCaseWithPrefix) {
    const Bytes bytes{0x00, 0x01, 0xab, 0xff};
    EXPECT_EQ(toHex(bytes), "0x0001abff");
    auto back = fromHex("0x0001ABff");
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, bytes);
}

TEST(Hex, RejectsMissingPrefixOddLengthAndBadDigits) {
    EXPECT_EQ(fromHex("0001").error().code, ErrorCode::kBadHex);
    EXPECT_EQ(fromHex("0x001").error().code, ErrorCode::kBadHex);
    EXPECT_EQ(fromHex("0x0g").error().code, ErrorCode::kBadHex);
    EXPECT_EQ(Hash256::fromHex("0x00").error().code, ErrorCode::kBadLength);
}

TEST(Amount, DecimalRoundTripsAtTheLimits) {
    const u128 max = ~u128{0};
    EXPECT_EQ(toDecimal(max), "340282366920938463463374607431768211455");
    auto parsed = parseU128("340282366920938463463374607431768211455");
    ASSERT_TRUE(parsed);
    EXPECT_TRUE(*parsed == max);
    EXPECT_EQ(parseU128("340282366920938463463374607431768211456").error().code,
              ErrorCode::kOverflow);
    EXPECT_EQ(parseU128("01").error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(parseU128("-1").error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(parseU64("18446744073709551616").error().code, ErrorCode::kOverflow);
}

TEST(Amount, CheckedArithmeticRefusesToWrap) {
    const u128 max = ~u128{0};
    EXPECT_FALSE(checkedAdd(max, u128{1}));
    EXPECT_FALSE(checkedSub(u128{1}, u128{2}));
    EXPECT_FALSE(checkedMul(max, u128{2}));
    EXPECT_TRUE(checkedAdd(max - 1, u128{1}));
    EXPECT_FALSE(checkedAdd(std::uint64_t{UINT64_MAX}, std::uint64_t{1}));
}

TEST(Amount, BigEndianEncodingSortsLikeTheNumbers) {
    Bytes a;
    Bytes b;
    appendU128(a, u128{255});
    appendU128(b, u128{256});
    EXPECT_LT(a, b);
    auto back = readU128(b);
    ASSERT_TRUE(back);
    EXPECT_TRUE(*back == u128{256});
}

}  // namespace
}  // namespace gridledger::bytes_test
