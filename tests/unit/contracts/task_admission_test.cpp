// What a task creation costs a consumer that never lets it run (docs/tasks.md "Admission"): the
// creation deposit locked beside the escrow and the part of it an expiry or an early cancel
// forfeits to the reward pool, and the cap on a consumer's pending tasks. Amounts are computed by
// hand from the genesis below.

#include <gtest/gtest.h>

#include <gridledger/contracts/task_contract.h>
#include <gridledger/contracts/tasks.h>
#include <gridledger/crypto/sha256.h>

#include "chain_harness.h"

namespace gridledger::contracts::task_admission_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::kDps;
using testing::petaflopInventory;
using testing::testKey;

constexpr std::uint64_t kT0 = 1'000'000;
constexpr std::uint64_t kMin = 60'000;
constexpr std::uint64_t kPf = 1'000'000;
const u128 kRate = u128{60'000'000'000'000ULL};  // 1 PFLOP/s of "flat" per minute
constexpr std::uint64_t kDeposit = 1'000'000'007;
constexpr std::uint64_t kForfeitBps = 2'500;
// floor(1 000 000 007 × 2 500 / 10 000) = 250 000 001 (remainder 7 500 / 10 000 dropped).
const u128 kForfeit = u128{250'000'001};
constexpr std::uint64_t kCap = 3;

const crypto::SecretKey kProvider = testKey(20);
const crypto::SecretKey kConsumer = testKey(40);

Genesis admissionGenesis() {
    Genesis g = testing::shortEpochGenesis(3, 0);
    g.genesisTimeMs = kT0;
    g.tokenomics.slotMs = kMin;
    g.tokenomics.epochMs = 60 * kMin;
    g.powerIndex.categories[0].priceRate = u128{1'000'000'000'000ULL};
    g.tasks.assignTimeoutMs = 30 * kMin;
    g.tasks.creationDeposit = kDeposit;
    g.tasks.depositForfeitBps = kForfeitBps;
    g.tasks.maxPendingPerConsumer = kCap;
    g.providers = {{addressOf(kProvider), petaflopInventory(4)}};
    g.accounts.push_back({addressOf(kConsumer), 10 * kDps});
    return g;
}

codec::Attest attestAt(std::uint64_t t) {
    const std::uint64_t slot = (t - kT0) / kMin;
    return testing::petaflops(slot / 60, slot % 60, 4);
}

class TaskAdmission : public ::testing::Test {
  protected:
    TaskAdmission() : c(admissionGenesis()) {}

    Task task(const Hash256& id) { return **readTask(c.tree(), c.height(), id); }
    /** The consumer's DPS without its fee float and the fees it paid. */
    u128 balance() {
        const Address a = addressOf(kConsumer);
        return c.account(a).balance - c.floatLeft(a);
    }
    u128 pool() { return c.tokenomics().emission.rewardPool - c.feesPaid(); }

    codec::Receipt create(std::uint64_t t, std::uint64_t minutes) {
        return c.run(t, kConsumer, codec::TaskCreate{"flat", kPf, {}, minutes, {}});
    }
    Hash256 created(std::uint64_t t, std::uint64_t minutes) {
        const auto receipt = create(t, minutes);
        EXPECT_TRUE(receipt.success()) << reasonOf(receipt.code);
        return receipt.events.empty() ? Hash256{}
                                      : *Hash256::fromHex(attr(receipt.events[0], "task"));
    }

    Chain c;
};

TEST_F(TaskAdmission, CreationLocksTheDepositBesideTheEscrow) {
    const u128 before = balance();
    const auto receipt = create(kT0 + 1'000, 10);
    ASSERT_TRUE(receipt.success()) << reasonOf(receipt.code);
    EXPECT_EQ(attr(receipt.events.at(0), "deposit"), "1000000007");
    EXPECT_EQ(balance(), before - 10 * kRate - kDeposit);
    const Hash256 id = *Hash256::fromHex(attr(receipt.events.at(0), "task"));
    EXPECT_EQ(task(id).deposit, u128{kDeposit});
    EXPECT_EQ(task(id).escrow, 10 * kRate);
}

TEST_F(TaskAdmission, CancelWhilePendingForfeitsTheShareToThePool) {
    const u128 before = balance();
    const u128 poolBefore = pool();
    const Hash256 id = created(kT0 + 1'000, 10);
    const auto cancel = c.run(kT0 + 2'000, kConsumer, codec::TaskCancel{id});
    ASSERT_TRUE(cancel.success()) << reasonOf(cancel.code);
    EXPECT_EQ(attr(cancel.events.at(0), "deposit_forfeit"), "250000001");
    EXPECT_EQ(balance(), before - kForfeit);
    EXPECT_EQ(pool(), poolBefore + kForfeit);
    EXPECT_EQ(task(id).deposit, 0U);
}

TEST_F(TaskAdmission, ExpiryForfeitsTheShareToThePool) {
    const u128 before = balance();
    const u128 poolBefore = pool();
    const Hash256 id = created(kT0 + 1'000, 10);
    const auto expired = c.block(kT0 + 1'000 + 30 * kMin, {});
    ASSERT_TRUE(expired.systemReceipt);
    EXPECT_EQ(attr(expired.systemReceipt->events.at(0), "trigger"), "assign_timeout");
    EXPECT_EQ(task(id).state, TaskState::kExpired);
    EXPECT_EQ(balance(), before - kForfeit);
    EXPECT_EQ(pool(), poolBefore + kForfeit);
}

TEST_F(TaskAdmission, ATaskThatRunsToItsVerdictReturnsTheWholeDeposit) {
    const u128 before = balance();
    const Hash256 id = created(kT0 + 1'000, 10);
    EXPECT_TRUE(c.run(kT0 + kMin, kProvider, attestAt(kT0 + kMin)).success());
    ASSERT_TRUE(c.block(kT0 + kMin + 1, {}).systemReceipt);  // matched
    EXPECT_TRUE(c.run(kT0 + kMin + 2, kProvider, codec::TaskStart{id}).success());
    const Hash256 result = crypto::sha256(asBytes("out"));
    EXPECT_TRUE(c.run(kT0 + 3 * kMin + 30'000, kProvider,
                      codec::TaskSubmitResult{id, result, "s3://out", 0, 3 * kMin})
                    .success());
    const auto verdict = c.run(kT0 + 5 * kMin, kConsumer, codec::TaskVerify{id, true, "ok", {}});
    ASSERT_TRUE(verdict.success()) << reasonOf(verdict.code);
    EXPECT_EQ(attr(verdict.events.at(0), "deposit_forfeit"), "0");
    // Billed 2 whole minutes (run from kT0+1 min+2 ms to kT0+3.5 min, reported 3): deposit back.
    EXPECT_EQ(balance(), before - 2 * kRate);
    EXPECT_EQ(task(id).deposit, 0U);
}

TEST_F(TaskAdmission, ACancelAfterAssignmentReturnsTheWholeDeposit) {
    const u128 before = balance();
    const Hash256 id = created(kT0 + 1'000, 10);
    EXPECT_TRUE(c.run(kT0 + kMin, kProvider, attestAt(kT0 + kMin)).success());
    ASSERT_TRUE(c.block(kT0 + kMin + 1, {}).systemReceipt);
    ASSERT_EQ(task(id).state, TaskState::kAssigned);
    ASSERT_TRUE(c.run(kT0 + kMin + 2, kConsumer, codec::TaskCancel{id}).success());
    EXPECT_EQ(balance(), before);
}

TEST_F(TaskAdmission, OneTaskBeyondThePendingCapIsRefusedWithItsOwnCode) {
    std::vector<Hash256> ids;
    for (std::uint64_t i = 0; i < kCap; ++i) {
        ids.push_back(created(kT0 + 1'000 + i, 10));
    }
    EXPECT_EQ(*loadPendingCount(StateLayer(c.tree(), c.height()), addressOf(kConsumer)), kCap);
    const u128 before = balance();
    const auto refused = create(kT0 + 2'000, 10);
    EXPECT_EQ(refused.code, ErrorCode::kTooManyPendingTasks);
    EXPECT_EQ(reasonOf(refused.code), "too_many_pending_tasks");
    EXPECT_EQ(balance(), before);  // nothing locked; only the fee was paid
    // A pending task that leaves Pending makes room for one more.
    ASSERT_TRUE(c.run(kT0 + 3'000, kConsumer, codec::TaskCancel{ids[0]}).success());
    EXPECT_EQ(*loadPendingCount(StateLayer(c.tree(), c.height()), addressOf(kConsumer)), kCap - 1);
    EXPECT_TRUE(create(kT0 + 4'000, 10).success());
}

TEST_F(TaskAdmission, AssignedTasksDoNotCountAgainstTheCap) {
    std::vector<Hash256> ids;
    for (std::uint64_t i = 0; i < kCap; ++i) {
        ids.push_back(created(kT0 + 1'000 + i, 1));
    }
    EXPECT_TRUE(c.run(kT0 + kMin, kProvider, attestAt(kT0 + kMin)).success());
    ASSERT_TRUE(c.block(kT0 + kMin + 1, {}).systemReceipt);  // all three fit the 4 PFLOP/s
    EXPECT_EQ(*loadPendingCount(StateLayer(c.tree(), c.height()), addressOf(kConsumer)), 0U);
    EXPECT_TRUE(create(kT0 + kMin + 2, 1).success());
}

TEST(TaskAdmissionParams, DepositForfeitCapAndMatchingScanAreGovernableAndChecked) {
    ChainParams valid;
    valid.index = defaultPowerIndex();
    const auto deposit = withParameter(valid, codec::SetParameter{"tasks.creation_deposit", "42"});
    ASSERT_TRUE(deposit);
    EXPECT_EQ(deposit->tasks.creationDeposit, 42U);
    EXPECT_EQ(parameterValue(*deposit, "tasks.creation_deposit"), "42");
    EXPECT_TRUE(withParameter(valid, codec::SetParameter{"tasks.deposit_forfeit_bps", "10000"}));
    EXPECT_FALSE(withParameter(valid, codec::SetParameter{"tasks.deposit_forfeit_bps", "10001"}));
    EXPECT_TRUE(withParameter(valid, codec::SetParameter{"tasks.max_pending_per_consumer", "1"}));
    EXPECT_FALSE(withParameter(valid, codec::SetParameter{"tasks.max_pending_per_consumer", "0"}));
    const auto scan = withParameter(valid, codec::SetParameter{"tasks.match_scan_per_block", "7"});
    ASSERT_TRUE(scan);
    EXPECT_EQ(scan->tasks.matchScanPerBlock, 7U);
    EXPECT_FALSE(withParameter(valid, codec::SetParameter{"tasks.match_scan_per_block", "0"}));
    ChainParams params;
    params.tasks.creationDeposit = 7;
    params.tasks.depositForfeitBps = 1;
    params.tasks.maxPendingPerConsumer = 9;
    params.tasks.matchScanPerBlock = 11;
    const auto decoded = decodeParams(encodeParams(params));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->tasks, params.tasks);
}

TEST(TaskAdmissionParams, OnlyExpiryAndCancelWhilePendingForfeit) {
    for (const auto& row : taskTransitionTable()) {
        const bool forfeits = row.to == TaskState::kExpired ||
                              (row.to == TaskState::kCancelled && row.from == TaskState::kPending);
        EXPECT_EQ(forfeitedDeposit(row, 10'000, 2'500), forfeits ? 2'500U : 0U)
            << triggerName(row.trigger) << " from " << taskStateName(row.from);
    }
    // The largest deposit at the largest share: floor without overflow.
    const u128 max = ~u128{0};
    const TaskTransition expire{TaskState::kPending, TaskTrigger::kAssignTimeout,
                                TaskState::kExpired, TaskActor::kSystem};
    EXPECT_EQ(forfeitedDeposit(expire, max, 10'000), max);
    EXPECT_EQ(forfeitedDeposit(expire, max, 5'000), max / 2);
}

}  // namespace
}  // namespace gridledger::contracts::task_admission_test
