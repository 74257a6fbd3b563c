// The task lifecycle of docs/tasks.md. Every expected figure is worked out by
// hand in the comment next to it; none is computed by the code under test.
//
// The worked task: category price C = 2.5 · 10^14 base units per PFLOP/s per second (0.9 DPS per
// PFLOP/s-hour), 1 PFLOP/s = 10^6 corrected GFLOP/s, so the rate is
//   2.5 · 10^14 × 10^6 × 60 / 10^6 = 1.5 · 10^16 base units per minute (0.015 DPS),
// and a maximum duration of 60 minutes escrows 60 × 1.5 · 10^16 = 9 · 10^17 (0.9 DPS).
// pool_share = 1 000 bps (10 %), the pool starts at 10^21 and the converted counter at 0.

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/contracts/genesis.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/task_lifecycle.h>

namespace gridledger::contracts::task_lifecycle_test {
namespace {

using enum TaskState;
using T = TaskTrigger;
using A = TaskActor;

constexpr u128 kRate = 15'000'000'000'000'000ULL;                   // 1.5 · 10^16 per minute
constexpr u128 kEscrow = 900'000'000'000'000'000ULL;                // 9 · 10^17: 60 minutes
constexpr u128 kPool = u128{1'000'000'000'000'000'000ULL} * 1'000;  // 10^21
constexpr std::uint64_t kMin = 60'000;

Address addr(std::uint8_t first) {
    std::array<std::uint8_t, 20> bytes{};
    bytes[0] = first;
    return Address{bytes};
}

TEST(TaskLifecycle, RateAndEscrowOfOnePflopsForAnHour) {
    auto rate = taskRatePerMinute(u128{250'000'000'000'000ULL}, 1'000'000);
    ASSERT_TRUE(rate);
    EXPECT_EQ(*rate, kRate);
    auto escrow = taskEscrow(kRate, 60);
    ASSERT_TRUE(escrow);
    EXPECT_EQ(*escrow, kEscrow);
    EXPECT_EQ(taskEscrow(~u128{0}, 2).error().code, ErrorCode::kOverflow);
}

/** One allowed transition and what it does to the worked task's escrow. */
struct AllowedRow {
    TaskTransition transition;
    TaskUsage usage;
    std::uint64_t minutes;
    u128 toPool;
    u128 toProvider;
    u128 refund;
};

// The whole table of docs/tasks.md, written out by hand (not read from the code). Non-terminal
// rows bill nothing and keep the escrow (refund 0 means "not ended": the escrow stays held).
const std::vector<AllowedRow>& allowedRows() {
    static const std::vector<AllowedRow> rows = {
        // Matching assigns: nothing billed, escrow held.
        {{kPending, T::kAssign, kAssigned, A::kSystem}, {}, 0, 0, 0, 0},
        // Never assigned within assign_timeout: full refund 9 · 10^17.
        {{kPending, T::kAssignTimeout, kExpired, A::kSystem}, {}, 0, 0, 0, kEscrow},
        // Cancel before Running: full refund.
        {{kPending, T::kCancel, kCancelled, A::kConsumer}, {}, 0, 0, 0, kEscrow},
        {{kAssigned, T::kStart, kRunning, A::kProvider}, {}, 0, 0, 0, 0},
        {{kAssigned, T::kRefuse, kPending, A::kProvider}, {}, 0, 0, 0, 0},
        {{kAssigned, T::kClaimTimeout, kPending, A::kSystem}, {}, 0, 0, 0, 0},
        // Cancel while Assigned (not yet Running): full refund, even with a clock running.
        {{kAssigned, T::kCancel, kCancelled, A::kConsumer}, {0, 5 * kMin}, 0, 0, 0, kEscrow},
        // The result is billed at the verdict, not at submission.
        {{kRunning, T::kSubmitResult, kResultSubmitted, A::kProvider},
         {45 * kMin, 50 * kMin},
         0,
         0,
         0,
         0},
        // Failure reported after 20 min (25 elapsed): min(20, 25) = 20 min × 1.5 · 10^16
        // = 3 · 10^17; pool 10 % = 3 · 10^16, provider 2.7 · 10^17, refund 9 − 3 = 6 · 10^17.
        {{kRunning, T::kReportFailure, kFailed, A::kProvider},
         {20 * kMin, 25 * kMin},
         20,
         30'000'000'000'000'000ULL,
         270'000'000'000'000'000ULL,
         600'000'000'000'000'000ULL},
        // Out of credits: the whole 9 · 10^17; pool 9 · 10^16, provider 8.1 · 10^17, refund 0.
        {{kRunning, T::kOutOfCredits, kOutOfCredits, A::kSystem},
         {0, 60 * kMin},
         kBillAll,
         90'000'000'000'000'000ULL,
         810'000'000'000'000'000ULL,
         0},
        // Panicked: nothing billed, full refund, whatever ran.
        {{kRunning, T::kPanic, kPanicked, A::kSystem}, {0, 40 * kMin}, 0, 0, 0, kEscrow},
        // Cancel while Running after 30.5 min: floor(30.5) = 30 + 5 fee = 35 min = 5.25 · 10^17;
        // pool 5.25 · 10^16, provider 4.725 · 10^17, refund 9 − 5.25 = 3.75 · 10^17.
        {{kRunning, T::kCancel, kCancelled, A::kConsumer},
         {0, 30 * kMin + 30'000},
         35,
         52'500'000'000'000'000ULL,
         472'500'000'000'000'000ULL,
         375'000'000'000'000'000ULL},
        // Accepted: reported 45 min of 50 elapsed → 45 × 1.5 · 10^16 = 6.75 · 10^17; pool
        // 6.75 · 10^16, provider 6.075 · 10^17, refund 2.25 · 10^17.
        {{kResultSubmitted, T::kAccept, kSettled, A::kConsumerOrVerifier},
         {45 * kMin, 50 * kMin},
         45,
         67'500'000'000'000'000ULL,
         607'500'000'000'000'000ULL,
         225'000'000'000'000'000ULL},
        // No verdict in verify_window: accepted. The provider reported 70 min but only 58 ran
        // on chain: 58 × 1.5 · 10^16 = 8.7 · 10^17; pool 8.7 · 10^16, provider 7.83 · 10^17,
        // refund 3 · 10^16.
        {{kResultSubmitted, T::kVerifyTimeout, kSettled, A::kSystem},
         {70 * kMin, 58 * kMin},
         58,
         87'000'000'000'000'000ULL,
         783'000'000'000'000'000ULL,
         30'000'000'000'000'000ULL},
        // Rejected: provider unpaid, full refund.
        {{kResultSubmitted, T::kReject, kRejected, A::kConsumerOrVerifier},
         {45 * kMin, 50 * kMin},
         0,
         0,
         0,
         kEscrow},
    };
    return rows;
}

TEST(TaskLifecycle, TheTableIsExactlyTheDesignTable) {
    const auto table = taskTransitionTable();
    ASSERT_EQ(table.size(), allowedRows().size());
    for (std::size_t i = 0; i < table.size(); ++i) {
        EXPECT_EQ(table[i], allowedRows()[i].transition) << "row " << i;
    }
}

TEST(TaskLifecycle, EveryAllowedTransitionBillsAndRefundsAsWorkedByHand) {
    TokenomicsParams params;  // pool_share 1 000 bps
    EmissionState before;
    before.rewardPool = kPool;
    const TaskParams taskParams;  // cancellation fee 5 minutes
    for (const auto& row : allowedRows()) {
        const auto& t = row.transition;
        const std::string name = std::string(taskStateName(t.from)) + " -" +
                                 std::string(triggerName(t.trigger)) + "-> " +
                                 std::string(taskStateName(t.to));
        auto checked = checkTrigger(t.from, t.trigger);
        ASSERT_TRUE(checked) << name;
        EXPECT_EQ(*checked, t) << name;
        EXPECT_EQ(targetOf(t.trigger), t.to) << name;
        EXPECT_TRUE(checkTransition(t.from, t.to)) << name;
        EXPECT_TRUE(isHot(t.from)) << name;

        const auto minutes = billedMinutes(t, row.usage, taskParams);
        EXPECT_EQ(minutes, row.minutes) << name;
        if (isHot(t.to)) {
            EXPECT_EQ(minutes, 0U) << name << ": a hot state keeps the escrow";
            continue;
        }
        auto bill = billTask(params, before, kEscrow, kRate, minutes);
        ASSERT_TRUE(bill) << name;
        EXPECT_EQ(bill->toPool, row.toPool) << name;
        EXPECT_EQ(bill->toProvider, row.toProvider) << name;
        EXPECT_EQ(bill->refund, row.refund) << name;
        EXPECT_EQ(bill->charged, row.toPool + row.toProvider) << name;
        EXPECT_EQ(bill->emission.rewardPool, kPool + row.toPool) << name;
    }
}

TEST(TaskLifecycle, EveryOtherTransitionIsRefusedNamingBothStates) {
    int refused = 0;
    for (std::uint8_t f = 0; f < kTaskStateCount; ++f) {
        for (std::uint8_t t = 0; t < kTaskStateCount; ++t) {
            const auto from = static_cast<TaskState>(f);
            const auto to = static_cast<TaskState>(t);
            const bool allowed =
                std::any_of(allowedRows().begin(), allowedRows().end(), [&](const auto& row) {
                    return row.transition.from == from && row.transition.to == to;
                });
            auto status = checkTransition(from, to);
            if (allowed) {
                EXPECT_TRUE(status);
                continue;
            }
            ++refused;
            ASSERT_FALSE(status);
            EXPECT_EQ(status.error().code, ErrorCode::kInvalidTaskTransition);
            EXPECT_EQ(static_cast<int>(status.error().code), 120);
            const std::string expected = "from " + std::string(taskStateName(from)) + " to " +
                                         std::string(taskStateName(to));
            EXPECT_NE(status.error().message.find(expected), std::string::npos)
                << status.error().message;
        }
    }
    // 11 × 11 pairs minus the 13 distinct allowed (from, to) pairs (Assigned → Pending and
    // ResultSubmitted → Settled have two triggers each).
    EXPECT_EQ(refused, 121 - 13);
}

TEST(TaskLifecycle, EveryTriggerOutsideTheTableIsRefused) {
    int refused = 0;
    for (std::uint8_t f = 0; f < kTaskStateCount; ++f) {
        for (std::uint8_t g = 0; g <= static_cast<std::uint8_t>(T::kCancel); ++g) {
            const auto from = static_cast<TaskState>(f);
            const auto trigger = static_cast<TaskTrigger>(g);
            const bool allowed =
                std::any_of(allowedRows().begin(), allowedRows().end(), [&](const auto& row) {
                    return row.transition.from == from && row.transition.trigger == trigger;
                });
            auto row = checkTrigger(from, trigger);
            if (allowed) {
                EXPECT_TRUE(row);
                continue;
            }
            ++refused;
            ASSERT_FALSE(row);
            EXPECT_EQ(row.error().code, ErrorCode::kInvalidTaskTransition);
            const std::string expected = "from " + std::string(taskStateName(from)) + " to " +
                                         std::string(taskStateName(targetOf(trigger)));
            EXPECT_NE(row.error().message.find(expected), std::string::npos) << row.error().message;
        }
    }
    EXPECT_EQ(refused, 11 * 13 - 15);
    // Spot checks of the refusals that matter most.
    EXPECT_FALSE(checkTrigger(kSettled, T::kCancel));          // a settled task cannot be cancelled
    EXPECT_FALSE(checkTrigger(kResultSubmitted, T::kCancel));  // nor one awaiting a verdict
    EXPECT_FALSE(checkTrigger(kPending, T::kStart));           // nor started unassigned
    EXPECT_FALSE(checkTrigger(kRunning, T::kRefuse));          // refusing is too late once running
    EXPECT_FALSE(checkTrigger(kRunning, T::kAccept));          // no verdict without a result
}

TEST(TaskLifecycle, TopUpOnlyWhileHot) {
    for (std::uint8_t s = 0; s < kTaskStateCount; ++s) {
        const auto state = static_cast<TaskState>(s);
        auto status = checkTopUp(state);
        // Hot: Pending(0), Assigned(1), Running(2), ResultSubmitted(3).
        if (s <= 3) {
            EXPECT_TRUE(status) << taskStateName(state);
        } else {
            ASSERT_FALSE(status);
            EXPECT_EQ(status.error().code, ErrorCode::kInvalidTaskTransition);
        }
    }
}

TEST(TaskLifecycle, BillingNeverExceedsTheEscrow) {
    TokenomicsParams params;
    EmissionState before;
    // Cancel while Running after 58 min: 58 + 5 = 63 min = 9.45 · 10^17 > 9 · 10^17, so the
    // whole escrow is charged: pool 9 · 10^16, provider 8.1 · 10^17, refund 0.
    const TaskTransition cancel{kRunning, T::kCancel, kCancelled, A::kConsumer};
    const auto minutes = billedMinutes(cancel, {0, 58 * kMin}, TaskParams{});
    EXPECT_EQ(minutes, 63U);
    auto bill = billTask(params, before, kEscrow, kRate, minutes);
    ASSERT_TRUE(bill);
    EXPECT_EQ(bill->charged, kEscrow);
    EXPECT_EQ(bill->toPool, u128{90'000'000'000'000'000ULL});
    EXPECT_EQ(bill->refund, 0U);
    // A rate × minutes beyond 128 bits is above any escrow: charged = escrow.
    auto huge = billTask(params, before, kEscrow, ~u128{0}, kBillAll);
    ASSERT_TRUE(huge);
    EXPECT_EQ(huge->charged, kEscrow);
}

TEST(TaskLifecycle, ConservationOverRandomBills) {
    // Seeded, so a failure reproduces: escrow = pool + provider + refund and the pool grows by
    // exactly its share, for every escrow, rate and duration.
    std::mt19937_64 rng(20261122);
    TokenomicsParams params;
    for (int i = 0; i < 5'000; ++i) {
        EmissionState before;
        before.rewardPool = rng();
        before.convertedGfl = rng() % 1'000'000'000'000ULL;
        params.poolShareBps = static_cast<std::uint32_t>(rng() % 10'001);
        const u128 rate = rng() % 1'000'000'000'000'000'000ULL;
        const u128 escrow = (u128{rng()} << 32) ^ rng();
        const std::uint64_t minutes = rng() % 4 == 0 ? kBillAll : rng() % 100'000;
        auto bill = billTask(params, before, escrow, rate, minutes);
        ASSERT_TRUE(bill) << "iteration " << i;
        ASSERT_EQ(bill->toPool + bill->toProvider + bill->refund, escrow) << "iteration " << i;
        ASSERT_LE(bill->charged, escrow);
        ASSERT_EQ(bill->emission.rewardPool, before.rewardPool + bill->toPool);
        ASSERT_LE(bill->emission.convertedGfl, before.convertedGfl);
    }
}

TEST(TaskLifecycle, LabelConstraintsParseAndMatch) {
    const std::vector<codec::Label> labels = {
        {"gpus", "8"}, {"region", "eu"}, {"tier", "gold"}};  // sorted by key
    struct Case {
        const char* text;
        bool matches;
    };
    const std::vector<Case> cases = {
        {"region == eu", true},
        {"region == us", false},
        {"region != us", true},
        {"region != eu", false},
        {"gpus >= 8", true},
        {"gpus > 8", false},
        {"gpus <= 8", true},
        {"gpus < 9", true},
        {"gpus < 8", false},
        {"tier in silver,gold", true},
        {"tier in silver,bronze", false},
        {"zone != x", false},    // a missing key satisfies nothing, not even !=
        {"region >= 1", false},  // "eu" is not a number: ordering fails
    };
    for (const auto& c : cases) {
        auto constraint = parseLabelConstraint(c.text);
        ASSERT_TRUE(constraint) << c.text;
        EXPECT_EQ(satisfies(labels, *constraint), c.matches) << c.text;
    }
    for (const char* bad :
         {"region", "region ==", "== eu", "region ~= eu", "gpus >= many", "region  == eu"}) {
        auto constraint = parseLabelConstraint(bad);
        ASSERT_FALSE(constraint) << bad;
        EXPECT_EQ(constraint.error().code, ErrorCode::kInvalidTask) << bad;
        EXPECT_EQ(static_cast<int>(constraint.error().code), 122);
    }
}

MatchCandidate candidate(std::uint8_t id, std::string region, std::uint64_t gflops) {
    MatchCandidate c;
    c.provider = addr(id);
    c.admitted = true;
    c.online = true;
    c.labels = {{"region", std::move(region)}};
    c.categories = {"ml_training"};
    c.unassignedGflops = gflops;
    return c;
}

TEST(TaskLifecycle, MatchingFiltersAndBreaksTiesByTheTaskHash) {
    MatchRequest request;
    request.taskId = Hash256{};
    request.category = "ml_training";
    request.minGflops = 1'000'000;
    request.constraints = {*parseLabelConstraint("region == eu")};

    std::vector<MatchCandidate> all = {
        candidate(1, "eu", 2'000'000), candidate(2, "us", 2'000'000),  // wrong region
        candidate(3, "eu", 500'000),                                   // too small
        candidate(4, "eu", 1'000'000), candidate(5, "eu", 9'000'000)};
    all.push_back(candidate(6, "eu", 9'000'000));
    all.back().online = false;  // not attested in this or the previous slot
    all.push_back(candidate(7, "eu", 9'000'000));
    all.back().admitted = false;  // suspended
    all.push_back(candidate(8, "eu", 9'000'000));
    all.back().categories = {"hpc"};  // does not serve the category

    // Eligible: 1, 4, 5 (sorted). The pick depends only on the task id and the eligible set.
    const auto picked = matchProvider(request, all);
    ASSERT_TRUE(picked);
    EXPECT_TRUE(*picked == addr(1) || *picked == addr(4) || *picked == addr(5));
    std::vector<MatchCandidate> reversed(all.rbegin(), all.rend());
    EXPECT_EQ(matchProvider(request, reversed), picked);

    // Excluding whoever was picked moves the task to another eligible provider.
    request.excluded = {*picked};
    const auto next = matchProvider(request, all);
    ASSERT_TRUE(next);
    EXPECT_NE(*next, *picked);

    request.excluded = {addr(1), addr(4), addr(5)};
    EXPECT_FALSE(matchProvider(request, all));

    // Over many task ids every eligible provider gets some: the hash spreads ties.
    request.excluded.clear();
    std::vector<Address> seen;
    for (std::uint8_t i = 0; i < 64; ++i) {
        std::array<std::uint8_t, 32> id{};
        id[0] = i;
        request.taskId = Hash256{id};
        seen.push_back(*matchProvider(request, all));
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    EXPECT_EQ(seen, (std::vector<Address>{addr(1), addr(4), addr(5)}));
}

TEST(TaskLifecycle, TimeoutsFallDueAtBlockTimes) {
    const TaskParams p;  // claim 10 min, assign 1 day, verify 1 day, panic after 2 slots
    const std::uint64_t slot = 3'600'000;
    const std::uint64_t t0 = 1'000'000;
    const std::uint64_t day = 86'400'000;

    TaskClock pending{kPending, t0, t0, 0, 0, 0, 60, 0};
    EXPECT_EQ(dueTimeout(pending, p, slot, t0 + day - 1), std::nullopt);
    EXPECT_EQ(dueTimeout(pending, p, slot, t0 + day), T::kAssignTimeout);

    TaskClock assigned{kAssigned, t0, t0, t0 + 5, 0, 0, 60, 0};
    EXPECT_EQ(dueTimeout(assigned, p, slot, t0 + 5 + 10 * kMin - 1), std::nullopt);
    EXPECT_EQ(dueTimeout(assigned, p, slot, t0 + 5 + 10 * kMin), T::kClaimTimeout);

    TaskClock submitted{kResultSubmitted, t0, t0, t0, t0, t0 + 7, 60, 0};
    EXPECT_EQ(dueTimeout(submitted, p, slot, t0 + 7 + day - 1), std::nullopt);
    EXPECT_EQ(dueTimeout(submitted, p, slot, t0 + 7 + day), T::kVerifyTimeout);

    // Running with 60 escrowed minutes from t0: out of credits at t0 + 3 600 000. The provider
    // last attested so that its unattested time starts at t0: panic at t0 + 2 slots = t0 +
    // 7 200 000, later, so out of credits comes first.
    TaskClock running{kRunning, t0, t0, t0, t0, 0, 60, t0};
    EXPECT_EQ(dueTimeout(running, p, slot, t0 + 60 * kMin - 1), std::nullopt);
    EXPECT_EQ(dueTimeout(running, p, slot, t0 + 60 * kMin), T::kOutOfCredits);
    // With 180 escrowed minutes (out of credits at t0 + 10 800 000) panic comes first.
    running.escrowMinutes = 180;
    EXPECT_EQ(dueTimeout(running, p, slot, t0 + 2 * slot - 1), std::nullopt);
    EXPECT_EQ(dueTimeout(running, p, slot, t0 + 2 * slot), T::kPanic);
    // On a tie (120 minutes = 2 slots) panic wins: the consumer is refused no refund.
    running.escrowMinutes = 120;
    EXPECT_EQ(dueTimeout(running, p, slot, t0 + 2 * slot), T::kPanic);

    for (auto terminal :
         {kSettled, kRejected, kFailed, kCancelled, kOutOfCredits, kPanicked, kExpired}) {
        TaskClock done{terminal, 0, 0, 0, 0, 0, 0, 0};
        EXPECT_EQ(dueTimeout(done, p, slot, ~std::uint64_t{0}), std::nullopt);
    }
    EXPECT_TRUE(p.validate());
    EXPECT_FALSE((TaskParams{0, 1, 1, 1, 0}.validate()));
}

TEST(TaskLifecycle, TheDueTimeIsTheFirstBlockTimeAtWhichATimeoutFires) {
    std::mt19937_64 rng(4242);
    const TaskState hot[] = {kPending, kAssigned, kRunning, kResultSubmitted};
    for (int i = 0; i < 5'000; ++i) {
        TaskParams p;
        p.claimTimeoutMs = 1 + rng() % 1'000'000;
        p.assignTimeoutMs = 1 + rng() % 1'000'000;
        p.verifyWindowMs = 1 + rng() % 1'000'000;
        p.panicAfterSlots = 1 + rng() % 5;
        const std::uint64_t slot = 1 + rng() % 100'000;
        const std::uint64_t t0 = 1 + rng() % 10'000'000;
        TaskClock clock{hot[rng() % 4],
                        t0,
                        t0,
                        t0 + rng() % 1'000,
                        t0 + rng() % 1'000,
                        t0 + rng() % 1'000,
                        rng() % 200,
                        t0 + rng() % 500'000};
        const auto at = timeoutDueAt(clock, p, slot);
        ASSERT_TRUE(at);
        EXPECT_TRUE(dueTimeout(clock, p, slot, *at)) << i;
        EXPECT_FALSE(dueTimeout(clock, p, slot, *at - 1)) << i;
    }
    for (auto terminal :
         {kSettled, kRejected, kFailed, kCancelled, kOutOfCredits, kPanicked, kExpired}) {
        EXPECT_EQ(timeoutDueAt(TaskClock{terminal, 0, 0, 0, 0, 0, 0, 0}, TaskParams{}, 1),
                  std::nullopt);
    }
}

TEST(TaskLifecycle, TaskParametersAreStoredGovernableAndInGenesis) {
    ChainParams params;
    params.index = defaultPowerIndex();
    params.tasks.claimTimeoutMs = 120'000;
    auto decoded = decodeParams(encodeParams(params));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->tasks, params.tasks);

    auto changed = withParameter(params, {"tasks.verify_window_ms", "3600000"});
    ASSERT_TRUE(changed);
    EXPECT_EQ(changed->tasks.verifyWindowMs, 3'600'000U);
    EXPECT_EQ(parameterValue(*changed, "tasks.verify_window_ms"), "3600000");
    EXPECT_EQ(parameterValue(*changed, "tasks.cancellation_fee_minutes"), "5");
    auto zero = withParameter(params, {"tasks.panic_after_slots", "0"});
    ASSERT_FALSE(zero);
    EXPECT_EQ(zero.error().code, ErrorCode::kInvalidProposal);
    ASSERT_TRUE(withParameter(params, {"tasks.cancellation_fee_minutes", "0"}));

    Genesis genesis;
    genesis.tasks.assignTimeoutMs = 7'200'000;
    auto text = genesisToJson(genesis);
    EXPECT_NE(text.find("\"assign_timeout_ms\":\"7200000\""), std::string::npos) << text;
}

}  // namespace
}  // namespace gridledger::contracts::task_lifecycle_test
