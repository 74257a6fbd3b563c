// The list cursors (docs/rpc.md, "Lists"): a cursor round-trips, and a changed character, another
// filter, a cut or padded text, or a text of another shape is refused as malformed.

#include <gtest/gtest.h>

#include <gridledger/rpc/cursor.h>

namespace gridledger::rpc::cursor_test {
namespace {

constexpr std::string_view kFilter = "tasks_list|state|pending";

TEST(Cursor, RoundTripsHeightAndPosition) {
    const Cursor cursor{77, Bytes{0x00, 0xff, 0x10, 0x20}};
    const std::string text = encodeCursor(kFilter, cursor);
    auto back = decodeCursor(kFilter, text);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, cursor);

    const Cursor longest{UINT64_MAX, Bytes(kMaxCursorPosition, 0xab)};
    auto backLongest = decodeCursor(kFilter, encodeCursor(kFilter, longest));
    ASSERT_TRUE(backLongest) << backLongest.error().message;
    EXPECT_EQ(*backLongest, longest);

    const Cursor empty{0, {}};
    auto backEmpty = decodeCursor(kFilter, encodeCursor(kFilter, empty));
    ASSERT_TRUE(backEmpty) << backEmpty.error().message;
    EXPECT_EQ(*backEmpty, empty);
}

TEST(Cursor, KnownEncodingStaysTheSame) {
    // The layout documented in cursor.h: 0x01, the height, 8 filter bytes, length, position, check.
    const std::string text = encodeCursor(kFilter, Cursor{5, Bytes{0xaa}});
    ASSERT_EQ(text.size(), 2 + 2 * (1 + 8 + 8 + 1 + 1 + 8));
    EXPECT_EQ(text.substr(0, 20), "0x010000000000000005");
    EXPECT_EQ(text.substr(36, 4), "01aa");
}

TEST(Cursor, EveryChangedCharacterIsRefused) {
    const std::string text = encodeCursor(kFilter, Cursor{12345, Bytes{1, 2, 3, 4, 5, 6, 7, 8}});
    for (std::size_t i = 2; i < text.size(); ++i) {
        std::string changed = text;
        changed[i] = changed[i] == '0' ? '1' : '0';
        auto decoded = decodeCursor(kFilter, changed);
        ASSERT_FALSE(decoded) << "a change at " << i << " was accepted";
        EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
    }
}

TEST(Cursor, AnotherFilterIsRefused) {
    const std::string text = encodeCursor(kFilter, Cursor{3, Bytes{9}});
    auto other = decodeCursor("tasks_list|state|running", text);
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code, ErrorCode::kMalformed);
    EXPECT_NE(other.error().message.find("another list"), std::string::npos);
}

TEST(Cursor, OtherShapesAreRefused) {
    const std::string text = encodeCursor(kFilter, Cursor{3, Bytes{9, 9}});
    for (const std::string& bad :
         {std::string(), std::string("0x"), std::string("cursor"), text.substr(0, text.size() - 2),
          text + "00", text.substr(2), std::string("0x02") + text.substr(4), std::string(4096, 'f'),
          std::string("0x") + std::string(400, '0')}) {
        auto decoded = decodeCursor(kFilter, bad);
        ASSERT_FALSE(decoded) << "accepted \"" << bad << "\"";
        EXPECT_EQ(decoded.error().code, ErrorCode::kMalformed);
    }
}

}  // namespace
}  // namespace gridledger::rpc::cursor_test
