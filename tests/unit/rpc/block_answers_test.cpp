// The kept block_get answers' texts: least recently used dropped first, within the byte budget.

#include <string>

#include <gtest/gtest.h>

#include <gridledger/rpc/block_answers.h>

namespace gridledger::rpc::block_answers_test {
namespace {

/** An answer's text of `bytes` characters that tells `height`. */
std::string answer(std::uint64_t height, std::size_t bytes = 100) {
    std::string text = std::to_string(height);
    text.resize(bytes, ' ');
    return text;
}

TEST(BlockAnswers, FindsWhatItKeptByHeightAndForm) {
    BlockAnswers answers(1'000);
    answers.keep(7, false, answer(7));
    ASSERT_NE(answers.find(7, false), nullptr);
    EXPECT_EQ(*answers.find(7, false), answer(7));
    EXPECT_TRUE(answers.contains(7, false));
    EXPECT_EQ(answers.find(7, true), nullptr);
    EXPECT_FALSE(answers.contains(7, true));
    EXPECT_EQ(answers.find(8, false), nullptr);
    answers.keep(7, true, answer(70));
    EXPECT_EQ(*answers.find(7, true), answer(70));
    EXPECT_EQ(*answers.find(7, false), answer(7));
    EXPECT_EQ(answers.keptBytes(), 200U);
}

TEST(BlockAnswers, DropsTheLeastRecentlyUsedToStayWithinItsBudget) {
    BlockAnswers answers(300);
    answers.keep(1, false, answer(1));
    answers.keep(2, false, answer(2));
    answers.keep(3, false, answer(3));
    ASSERT_NE(answers.find(1, false), nullptr);  // 2 is now the least recently used
    EXPECT_TRUE(answers.contains(2, false));     // which contains() does not change
    answers.keep(4, false, answer(4, 150));      // needs 2 and then 3 gone
    EXPECT_EQ(answers.find(2, false), nullptr);
    EXPECT_EQ(answers.find(3, false), nullptr);
    EXPECT_NE(answers.find(1, false), nullptr);
    EXPECT_NE(answers.find(4, false), nullptr);
    EXPECT_EQ(answers.keptBytes(), 250U);
    EXPECT_EQ(answers.size(), 2U);
}

TEST(BlockAnswers, KeepsNothingLargerThanTheBudgetAndNothingTwice) {
    BlockAnswers answers(300);
    answers.keep(1, false, answer(1, 301));
    EXPECT_EQ(answers.find(1, false), nullptr);
    EXPECT_EQ(answers.keptBytes(), 0U);
    answers.keep(2, false, answer(2));
    answers.keep(2, false, answer(20));
    EXPECT_EQ(*answers.find(2, false), answer(2));
    EXPECT_EQ(answers.keptBytes(), 100U);
}

}  // namespace
}  // namespace gridledger::rpc::block_answers_test
