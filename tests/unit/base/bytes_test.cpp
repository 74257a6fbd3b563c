#include <cstdint>
#include <limits>
#include <random>
#include <string>

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

TEST(Amount, DecimalIsRightAcrossTheSixtyFourBitAndNineteenDigitBoundaries) {
    const u128 u64Max = std::numeric_limits<std::uint64_t>::max();
    const u128 tenTo19 = u128{10'000'000'000'000'000'000ULL};
    EXPECT_EQ(toDecimal(0), "0");
    EXPECT_EQ(toDecimal(tenTo19 - 1), "9999999999999999999");
    EXPECT_EQ(toDecimal(tenTo19), "10000000000000000000");
    EXPECT_EQ(toDecimal(tenTo19 + 1), "10000000000000000001");
    EXPECT_EQ(toDecimal(u64Max), "18446744073709551615");
    EXPECT_EQ(toDecimal(u64Max + 1), "18446744073709551616");
    EXPECT_EQ(toDecimal(tenTo19 * tenTo19), "1" + std::string(38, '0'));
    EXPECT_EQ(toDecimal(tenTo19 * tenTo19 - 1), std::string(38, '9'));
    EXPECT_EQ(toDecimal(tenTo19 * tenTo19 + 7), "1" + std::string(37, '0') + "7");
    // Values of every size read back as themselves.
    std::mt19937_64 rng(3);
    for (int i = 0; i < 2000; ++i) {
        const u128 value = ((u128{rng()} << 64U) | rng()) >> (rng() % 128);
        const auto parsed = parseU128(toDecimal(value));
        ASSERT_TRUE(parsed) << toDecimal(value);
        EXPECT_TRUE(*parsed == value) << toDecimal(value);
    }
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
