// The JSON log lines: how a message splits into text and key=value fields, and JSON quoting.

#include "log_format.h"

#include <gtest/gtest.h>

namespace gridledger::node::log_format_test {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

TEST(LogFormat, SplitsTheTextFromTheKeyValueFieldsInOrder) {
    const auto parts = splitLogFields("rpc listening address=127.0.0.1:8545 token=none");
    EXPECT_EQ(parts.message, "rpc listening");
    EXPECT_EQ(parts.fields, (Fields{{"address", "127.0.0.1:8545"}, {"token", "none"}}));
}

TEST(LogFormat, AWordAfterAFieldBelongsToThatFieldsValue) {
    const auto parts = splitLogFields("stopping: reason=io detail=cannot write the block");
    EXPECT_EQ(parts.message, "stopping:");
    EXPECT_EQ(parts.fields, (Fields{{"reason", "io"}, {"detail", "cannot write the block"}}));
}

TEST(LogFormat, AMessageWithoutFieldsIsAllText) {
    const auto parts = splitLogFields("keys are stored unencrypted: validator, node (dev chain)");
    EXPECT_EQ(parts.message, "keys are stored unencrypted: validator, node (dev chain)");
    EXPECT_TRUE(parts.fields.empty());
}

TEST(LogFormat, OnlyAKeyOfLettersDigitsUnderscoresAndDotsMakesAField) {
    const auto parts = splitLogFields("a=b c 1x=2 =3 sync.lag=4");
    EXPECT_EQ(parts.message, "");
    EXPECT_EQ(parts.fields, (Fields{{"a", "b c 1x=2 =3"}, {"sync.lag", "4"}}));
    EXPECT_EQ(splitLogFields("").message, "");
    EXPECT_EQ(splitLogFields("x==y").fields, (Fields{{"x", "=y"}}));
}

TEST(LogFormat, QuotesEscapeQuotesBackslashesAndControlCharacters) {
    EXPECT_EQ(jsonQuoted("plain"), "\"plain\"");
    EXPECT_EQ(jsonQuoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
    EXPECT_EQ(jsonQuoted("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
    EXPECT_EQ(jsonQuoted(std::string("nul\0bell\a", 9)), "\"nul\\u0000bell\\u0007\"");
}

}  // namespace
}  // namespace gridledger::node::log_format_test
