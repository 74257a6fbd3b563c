// Task records in state (docs/tasks.md "State"): the history of every transition with height,
// timestamp and actor, the exclusions, and the lists by consumer, provider and state.

#include <random>

#include <gtest/gtest.h>

#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/settlement.h>
#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::task_records_test {
namespace {

using testing::Chain;
using testing::shortEpochGenesis;

Address addr(std::uint8_t first) {
    std::array<std::uint8_t, 20> bytes{};
    bytes[0] = first;
    return Address{bytes};
}

Task sampleTask(const Address& consumer, std::uint64_t nonce) {
    Task task;
    task.id = taskIdOf(consumer, nonce);
    task.consumer = consumer;
    task.category = "ml_training";
    task.minGflops = 1'000'000;
    task.constraints = {"region == eu"};
    task.maxMinutes = 60;
    task.ratePerMinute = 15'000'000'000'000'000ULL;
    task.escrow = 900'000'000'000'000'000ULL;
    task.clock.escrowMinutes = 60;
    return task;
}

TEST(TaskRecords, EncodingRoundTripsAndRejectsTrailingBytes) {
    Task task = sampleTask(addr(1), 7);
    task.provider = addr(9);
    task.excluded = {addr(3), addr(4)};
    task.history = {
        {TaskState::kPending, TaskState::kAssigned, TaskTrigger::kAssign, 5, 1'000, Address{}}};
    auto decoded = decodeTask(encodeTask(task));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, task);
    auto bytes = encodeTask(task);
    bytes.push_back(0);
    EXPECT_EQ(decodeTask(bytes).error().code, ErrorCode::kCorrupt);
    EXPECT_NE(taskIdOf(addr(1), 7), taskIdOf(addr(1), 8));
    EXPECT_NE(taskIdOf(addr(1), 7), taskIdOf(addr(2), 7));
}

TEST(TaskRecords, TransitionsAreRecordedAndListed) {
    Chain chain(shortEpochGenesis(1, 0));
    StateLayer state(chain.tree(), chain.height());
    const Address consumer = addr(1);
    const Address first = addr(5);
    const Address second = addr(6);
    Task task = sampleTask(consumer, 0);
    ASSERT_TRUE(insertTask(state, task, {10, 100'000}));
    EXPECT_EQ(insertTask(state, task, {10, 100'000}).error().code, ErrorCode::kInvalidTask);
    task = **loadTask(state, task.id);
    EXPECT_EQ(task.clock.createdMs, 100'000U);
    EXPECT_EQ(*loadTasksByConsumer(state, consumer), std::vector<Hash256>{task.id});
    EXPECT_EQ(*loadTasksByState(state, TaskState::kPending), std::vector<Hash256>{task.id});

    // Assigned to `first`, which refuses: back to Pending with `first` excluded.
    ASSERT_TRUE(transitionTask(state, task, TaskTrigger::kAssign, {10, 100'000}, Address{}, first));
    ASSERT_TRUE(transitionTask(state, task, TaskTrigger::kRefuse, {11, 160'000}, first));
    EXPECT_EQ(task.excluded, std::vector<Address>{first});
    EXPECT_EQ(task.provider, Address{});
    EXPECT_EQ(task.clock.pendingSinceMs, 160'000U);
    // Then to `second`, which starts, submits and is accepted by the consumer.
    ASSERT_TRUE(
        transitionTask(state, task, TaskTrigger::kAssign, {11, 160'000}, Address{}, second));
    ASSERT_TRUE(transitionTask(state, task, TaskTrigger::kStart, {12, 220'000}, second));
    ASSERT_TRUE(transitionTask(state, task, TaskTrigger::kSubmitResult, {13, 280'000}, second));

    // A refused transition names both states and writes nothing.
    const Task before = task;
    auto refused = transitionTask(state, task, TaskTrigger::kCancel, {14, 300'000}, consumer);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidTaskTransition);
    EXPECT_NE(refused.error().message.find("from result_submitted to cancelled"),
              std::string::npos);
    EXPECT_EQ(task, before);
    EXPECT_EQ(**loadTask(state, task.id), before);

    ASSERT_TRUE(transitionTask(state, task, TaskTrigger::kAccept, {15, 340'000}, consumer));

    const Task stored = **loadTask(state, task.id);
    EXPECT_EQ(stored.state, TaskState::kSettled);
    const std::vector<TaskHistoryEntry> expected = {
        {TaskState::kPending, TaskState::kAssigned, TaskTrigger::kAssign, 10, 100'000, Address{}},
        {TaskState::kAssigned, TaskState::kPending, TaskTrigger::kRefuse, 11, 160'000, first},
        {TaskState::kPending, TaskState::kAssigned, TaskTrigger::kAssign, 11, 160'000, Address{}},
        {TaskState::kAssigned, TaskState::kRunning, TaskTrigger::kStart, 12, 220'000, second},
        {TaskState::kRunning, TaskState::kResultSubmitted, TaskTrigger::kSubmitResult, 13, 280'000,
         second},
        {TaskState::kResultSubmitted, TaskState::kSettled, TaskTrigger::kAccept, 15, 340'000,
         consumer},
    };
    EXPECT_EQ(stored.history, expected);
    EXPECT_EQ(stored.clock.startedMs, 220'000U);
    EXPECT_EQ(stored.clock.submittedMs, 280'000U);

    // Lists: the provider lists keep every task ever assigned; the state lists hold it once.
    EXPECT_EQ(*loadTasksByProvider(state, first), std::vector<Hash256>{task.id});
    EXPECT_EQ(*loadTasksByProvider(state, second), std::vector<Hash256>{task.id});
    EXPECT_EQ(*loadTasksByState(state, TaskState::kSettled), std::vector<Hash256>{task.id});
    for (auto s : {TaskState::kPending, TaskState::kAssigned, TaskState::kRunning,
                   TaskState::kResultSubmitted}) {
        EXPECT_TRUE(loadTasksByState(state, s)->empty()) << taskStateName(s);
    }
}

TEST(TaskRecords, OnlyThePartyOfARowMayFireIt) {
    Task task = sampleTask(addr(1), 0);
    task.provider = addr(5);
    const TaskTransition cancel{TaskState::kRunning, TaskTrigger::kCancel, TaskState::kCancelled,
                                TaskActor::kConsumer};
    const TaskTransition start{TaskState::kAssigned, TaskTrigger::kStart, TaskState::kRunning,
                               TaskActor::kProvider};
    const TaskTransition accept{TaskState::kResultSubmitted, TaskTrigger::kAccept,
                                TaskState::kSettled, TaskActor::kConsumerOrVerifier};
    const TaskTransition expire{TaskState::kPending, TaskTrigger::kAssignTimeout,
                                TaskState::kExpired, TaskActor::kSystem};
    EXPECT_TRUE(checkParty(task, cancel, addr(1), false));
    EXPECT_TRUE(checkParty(task, start, addr(5), false));
    EXPECT_TRUE(checkParty(task, accept, addr(1), false));
    EXPECT_TRUE(checkParty(task, accept, addr(7), true));  // a verifier
    for (const auto& [row, actor, verifier] :
         {std::tuple{cancel, addr(5), false}, std::tuple{start, addr(1), false},
          std::tuple{start, addr(6), true}, std::tuple{accept, addr(5), false},
          std::tuple{expire, addr(1), true}}) {
        auto status = checkParty(task, row, actor, verifier);
        ASSERT_FALSE(status) << triggerName(row.trigger);
        EXPECT_EQ(status.error().code, ErrorCode::kNotTaskParty);
        EXPECT_EQ(static_cast<int>(status.error().code), 121);
    }
}

// Conservation with escrow: over seeded random task lives (create, then a random path through the
// table to a terminal state, with random durations), Σ accounts + reward pool + Σ escrow of hot
// tasks never changes, and no balance goes negative (a refused escrow is refused whole).
TEST(TaskRecords, EscrowKeepsTotalDpsConstantOverRandomLives) {
    const Address consumer = addr(1);
    const std::array<Address, 3> providers{addr(5), addr(6), addr(7)};
    const u128 pool = u128{1'000'000'000'000'000'000ULL} * 1'000;
    auto genesis = shortEpochGenesis(1, pool);
    const u128 funds = u128{1'000'000'000'000'000'000ULL} * 50;  // 50 DPS
    genesis.accounts.push_back({consumer, funds});
    Chain chain(genesis);
    StateLayer state(chain.tree(), chain.height());

    std::vector<Hash256> all;
    auto total = [&] {
        u128 sum = (*loadTokenomics(state)).emission.rewardPool;
        sum += (*loadAccount(state, consumer)).balance;
        for (const auto& p : providers) {
            sum += (*loadAccount(state, p)).balance;
        }
        for (const auto& id : all) {
            sum += (**loadTask(state, id)).escrow;
        }
        return sum;
    };
    const u128 start = total();
    EXPECT_EQ(start, pool + funds);

    std::mt19937_64 rng(6006);
    std::uint64_t now = 1'000'000;
    for (std::uint64_t i = 0; i < 300; ++i) {
        Task task = sampleTask(consumer, i);
        task.maxMinutes = 1 + rng() % 120;
        task.escrow = task.ratePerMinute * task.maxMinutes;  // up to 1.8 DPS
        auto created = escrowTask(state, task, {i, now});
        if (!created) {
            EXPECT_EQ(created.error().code, ErrorCode::kInsufficientBalance);
            ASSERT_EQ(total(), start);
            continue;
        }
        all.push_back(task.id);
        task = **loadTask(state, task.id);
        const Address provider = providers[rng() % providers.size()];
        // Walk: maybe assign, maybe start, maybe submit, then end by a random terminal trigger
        // the table allows from where the walk stopped.
        const auto depth = rng() % 4;
        if (depth >= 1) {
            ASSERT_TRUE(
                transitionTask(state, task, TaskTrigger::kAssign, {i, now}, Address{}, provider));
        }
        if (depth >= 2) {
            ASSERT_TRUE(transitionTask(state, task, TaskTrigger::kStart, {i, now}, provider));
        }
        if (depth >= 3) {
            ASSERT_TRUE(
                transitionTask(state, task, TaskTrigger::kSubmitResult, {i, now}, provider));
        }
        std::vector<TaskTrigger> endings;
        for (const auto& row : taskTransitionTable()) {
            if (row.from == task.state && !isHot(row.to)) {
                endings.push_back(row.trigger);
            }
        }
        ASSERT_FALSE(endings.empty()) << taskStateName(task.state);
        const auto trigger = endings[rng() % endings.size()];
        const TaskUsage usage{(rng() % 200) * 60'000 + rng() % 60'000,
                              (rng() % 200) * 60'000 + rng() % 60'000};
        const u128 escrow = task.escrow;
        auto bill = endTask(state, task, trigger, {i, now}, consumer, usage);
        ASSERT_TRUE(bill) << bill.error().message;
        EXPECT_EQ(bill->toPool + bill->toProvider + bill->refund, escrow);
        EXPECT_EQ(task.escrow, 0U);
        ASSERT_EQ(total(), start) << "task " << i << " " << triggerName(trigger);
        now += 60'000;
    }
    // Ending a task twice is refused and moves nothing.
    Task ended = **loadTask(state, all.front());
    auto again = endTask(state, ended, TaskTrigger::kCancel, {999, now}, consumer, {});
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().code, ErrorCode::kInvalidTaskTransition);
    EXPECT_EQ(total(), start);
}

}  // namespace
}  // namespace gridledger::contracts::task_records_test
