// The serving budget: a peer's requests are answered while its budget holds no debt, wait when
// it does (a few of them), and are refused past that.

#include "serving_budget.h"

#include <gtest/gtest.h>

namespace gridledger::node::serving_budget_test {
namespace {

using Clock = ServingBudget::Clock;
using Verdict = ServingBudget::Verdict;

NodeId peerOf(std::uint8_t n) {
    NodeId id;
    id[0] = n;
    return id;
}

ServingBudget::Limits smallLimits() {
    ServingBudget::Limits limits;
    limits.blocksPerSecond = 100;
    limits.blocksBurst = 100;
    limits.bytesPerSecond = 1'000'000;
    limits.bytesBurst = 1'000'000;
    limits.maxWaiting = 2;
    return limits;
}

TEST(ServingBudget, AnsweredRequestsAreChargedToTheAskerAndMakeItsNextOnesWait) {
    ServingBudget budget(smallLimits());
    const Clock::time_point t0{};
    ASSERT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kServe);
    budget.charge(peerOf(1), 150, 1'000, t0);  // 50 blocks in debt: 500 ms at 100 blocks/s
    const auto waiting = budget.admit(peerOf(1), t0);
    EXPECT_EQ(waiting.verdict, Verdict::kWait);
    EXPECT_EQ(waiting.wait, std::chrono::milliseconds(500));
    // Another peer's budget is its own.
    EXPECT_EQ(budget.admit(peerOf(2), t0).verdict, Verdict::kServe);
    // Once the debt is repaid the waiting request is served.
    budget.resumed(peerOf(1));
    EXPECT_EQ(budget.admit(peerOf(1), t0 + std::chrono::milliseconds(500)).verdict,
              Verdict::kServe);
}

TEST(ServingBudget, APeerAskingFasterThanItsBudgetIsRefusedPastTheWaitingRequests) {
    ServingBudget budget(smallLimits());
    const Clock::time_point t0{};
    budget.charge(peerOf(1), 0, 2'000'000, t0);  // 1 s of bytes in debt
    EXPECT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kWait);
    EXPECT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kWait);
    EXPECT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kRefuse);
    budget.resumed(peerOf(1));  // one waiting request is taken up: room for another
    EXPECT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kWait);
}

TEST(ServingBudget, ARequestThatFindsNothingStillCostsOneBlock) {
    ServingBudget budget(smallLimits());
    const Clock::time_point t0{};
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kServe) << i;
        budget.charge(peerOf(1), 0, 10, t0);
    }
    budget.charge(peerOf(1), 0, 10, t0);
    EXPECT_EQ(budget.admit(peerOf(1), t0).verdict, Verdict::kWait);
}

}  // namespace
}  // namespace gridledger::node::serving_budget_test
