// The task lifecycle through real blocks (docs/tasks.md): every transition driven
// by a transaction or by block time, with the bill, the pool share, the provider's pay and the
// refund checked against amounts computed by hand, the history with heights and timestamps, and
// the provider's job counts.
//
// The chain: slots of 1 minute, epochs of 1 hour (no settlement in these tests, which end within
// the first hour), category "flat" priced at 10^12 per PFLOP/s per second, so a task of 1 PFLOP/s
// costs 6·10^13 per minute; pool_share 10 %.

#include <gtest/gtest.h>

#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::task_chain_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::kDps;
using testing::petaflopInventory;
using testing::testKey;

constexpr std::uint64_t kT0 = 1'000'000;
constexpr std::uint64_t kMin = 60'000;
constexpr std::uint64_t kPf = 1'000'000;         // 1 PFLOP/s in GFLOP/s
const u128 kRate = u128{60'000'000'000'000ULL};  // 6·10^13 per minute for 1 PFLOP/s

const crypto::SecretKey kP1 = testKey(20);  // region eu
const crypto::SecretKey kP2 = testKey(21);  // region us
const crypto::SecretKey kConsumer = testKey(40);
const crypto::SecretKey kVerifier = testKey(30);
const crypto::SecretKey kOutsider = testKey(41);

Genesis taskGenesis() {
    Genesis g = testing::shortEpochGenesis(3, 0);
    g.genesisTimeMs = kT0;
    g.tokenomics.slotMs = kMin;
    g.tokenomics.epochMs = 60 * kMin;
    g.powerIndex.categories[0].priceRate = u128{1'000'000'000'000ULL};
    g.tasks.claimTimeoutMs = 10 * kMin;
    g.tasks.assignTimeoutMs = 30 * kMin;
    g.tasks.verifyWindowMs = 20 * kMin;
    g.tasks.panicAfterSlots = 2;
    g.tasks.cancellationFeeMinutes = 5;
    auto us = petaflopInventory(4);
    us.labels = {{"region", "us"}};
    g.providers = {{addressOf(kP1), petaflopInventory(4)}, {addressOf(kP2), us}};
    g.accounts.push_back({addressOf(kConsumer), 10 * kDps});
    g.verifiers = {addressOf(kVerifier)};
    return g;
}

codec::Attest attestAt(std::uint64_t t, std::uint64_t devices) {
    const std::uint64_t g = (t - kT0) / kMin;
    return testing::petaflops(g / 60, g % 60, devices);
}

Hash256 taskOf(const codec::Receipt& receipt) {
    EXPECT_TRUE(receipt.success()) << reasonOf(receipt.code);
    EXPECT_FALSE(receipt.events.empty());
    if (receipt.events.empty()) {
        return {};
    }
    EXPECT_EQ(receipt.events[0].kind, "task_created");
    return *Hash256::fromHex(receipt.events[0].attributes.at(0).second);
}

class TaskChain : public ::testing::Test {
  protected:
    TaskChain() : c(taskGenesis()) {}
    explicit TaskChain(const Genesis& genesis) : c(genesis) {}

    Task task(const Hash256& id) { return **readTask(c.tree(), c.height(), id); }
    /** k's DPS from the task contract alone: without its fee float and the fees it paid. */
    u128 balance(const crypto::SecretKey& k) {
        const Address a = addressOf(k);
        return c.account(a).balance - c.floatLeft(a);
    }
    /** The reward pool without the fees paid into it. */
    u128 pool() { return c.tokenomics().emission.rewardPool - c.feesPaid(); }
    ProviderJobs jobs(const crypto::SecretKey& k) { return c.provider(addressOf(k))->jobs; }

    /** Creates a 1 PFLOP/s task of `minutes` at `t`; kP1 attests in the same block if `attest`. */
    Hash256 create(std::uint64_t t, std::uint64_t minutes,
                   std::vector<std::string> constraints = {}, bool attest = true) {
        std::vector<Bytes> txs;
        if (attest) {
            txs.push_back(c.tx(kP1, attestAt(t, 4)));
        }
        txs.push_back(
            c.tx(kConsumer, codec::TaskCreate{"flat", kPf, std::move(constraints), minutes, {}}));
        auto b = c.block(t, std::move(txs));
        for (const auto& r : b.receipts) {
            EXPECT_TRUE(r.success()) << reasonOf(r.code);
        }
        return taskOf(b.receipts.back());
    }

    /** One block per slot from `from` to `to` (exclusive) in which kP1 attests. */
    void attestEverySlot(std::uint64_t from, std::uint64_t to) {
        for (std::uint64_t t = from; t < to; t += kMin) {
            EXPECT_TRUE(c.run(t, kP1, attestAt(t, 4)).success());
        }
    }

    /** A task created at kT0+1 s, assigned to kP1 at kT0+2 s, started at kT0+3 s. */
    Hash256 running(std::uint64_t minutes) {
        const Hash256 id = create(kT0 + 1'000, minutes);
        auto assigned = c.block(kT0 + 2'000, {});
        EXPECT_TRUE(assigned.systemReceipt);
        EXPECT_TRUE(c.run(kT0 + 3'000, kP1, codec::TaskStart{id}).success());
        EXPECT_EQ(task(id).state, TaskState::kRunning);
        return id;
    }

    Chain c;
};

TEST_F(TaskChain, CreateAssignStartResultAcceptSettlesWithTheHandComputedBill) {
    const u128 before = balance(kConsumer);
    const Hash256 id = create(kT0 + 1'000, 60);
    EXPECT_EQ(balance(kConsumer), before - 60 * kRate);  // escrow 3.6·10^15
    EXPECT_EQ(task(id).escrow, u128{3'600'000'000'000'000ULL});
    EXPECT_EQ(task(id).state, TaskState::kPending);

    // Matching runs before the next block's transactions: kP1 is the only online provider.
    auto b = c.block(kT0 + 2'000, {});
    ASSERT_TRUE(b.systemReceipt);
    ASSERT_EQ(b.systemReceipt->events.size(), 1U);
    const auto& assign = b.systemReceipt->events[0];
    EXPECT_EQ(assign.kind, "task_transition");
    EXPECT_EQ(attr(assign, "trigger"), "assign");
    EXPECT_EQ(attr(assign, "provider"), addressOf(kP1).hex());
    EXPECT_EQ(attr(assign, "actor"), "system");
    EXPECT_EQ(task(id).provider, addressOf(kP1));

    EXPECT_TRUE(c.run(kT0 + 3'000, kP1, codec::TaskStart{id}).success());
    attestEverySlot(kT0 + kMin, kT0 + 50 * kMin);
    // 50 minutes after the start, a result of 45 reported minutes.
    Hash256 resultHash;
    resultHash[0] = 7;
    auto submitted = c.run(kT0 + 3'000 + 50 * kMin, kP1,
                           codec::TaskSubmitResult{id, resultHash, "s3://out", 0, 45 * kMin});
    ASSERT_TRUE(submitted.success()) << reasonOf(submitted.code);
    EXPECT_EQ(attr(submitted.events.at(0), "to"), "result_submitted");
    EXPECT_EQ(task(id).resultHash, resultHash);
    EXPECT_EQ(balance(kP1), u128{0});  // a result alone moves no DPS

    auto accepted = c.run(kT0 + 55 * kMin, kConsumer, codec::TaskVerify{id, true, "ok", {}});
    ASSERT_TRUE(accepted.success()) << reasonOf(accepted.code);
    // 45 minutes × 6·10^13 = 2.7·10^15: 2.7·10^14 to the pool, 2.43·10^15 to kP1, 9·10^14 back.
    const auto& settled = accepted.events.at(0);
    EXPECT_EQ(attr(settled, "to"), "settled");
    EXPECT_EQ(attr(settled, "minutes"), "45");
    EXPECT_EQ(attr(settled, "charged"), "2700000000000000");
    EXPECT_EQ(attr(settled, "to_pool"), "270000000000000");
    EXPECT_EQ(attr(settled, "to_provider"), "2430000000000000");
    EXPECT_EQ(attr(settled, "refund"), "900000000000000");
    EXPECT_EQ(balance(kP1), u128{2'430'000'000'000'000ULL});
    EXPECT_EQ(pool(), u128{270'000'000'000'000ULL});
    EXPECT_EQ(balance(kConsumer), before - u128{2'700'000'000'000'000ULL});

    const Task done = task(id);
    EXPECT_EQ(done.state, TaskState::kSettled);
    EXPECT_EQ(done.escrow, u128{0});
    ASSERT_EQ(done.history.size(), 4U);
    EXPECT_EQ(done.history[0].trigger, TaskTrigger::kAssign);
    EXPECT_EQ(done.history[0].height, 2U);
    EXPECT_EQ(done.history[0].timestampMs, kT0 + 2'000);
    EXPECT_EQ(done.history[0].actor, Address{});
    EXPECT_EQ(done.history[1].trigger, TaskTrigger::kStart);
    EXPECT_EQ(done.history[1].timestampMs, kT0 + 3'000);
    EXPECT_EQ(done.history[1].actor, addressOf(kP1));
    EXPECT_EQ(done.history[2].trigger, TaskTrigger::kSubmitResult);
    EXPECT_EQ(done.history[3].trigger, TaskTrigger::kAccept);
    EXPECT_EQ(done.history[3].timestampMs, kT0 + 55 * kMin);
    EXPECT_EQ(done.history[3].actor, addressOf(kConsumer));
    const ProviderJobs j = jobs(kP1);
    EXPECT_EQ(j.assigned, 1U);
    EXPECT_EQ(j.started, 1U);
    EXPECT_EQ(j.settled, 1U);
    EXPECT_EQ(j.rejected + j.failed + j.refused, 0U);
}

TEST_F(TaskChain, TheVerdictBillsTheRunUpToTheResultNotTheWaitForTheVerdict) {
    const Hash256 id = running(60);
    attestEverySlot(kT0 + kMin, kT0 + 10 * kMin);
    Hash256 h;
    h[0] = 1;
    // Reported 40 minutes, but the result came 10 minutes after the start: 10 minutes billed.
    ASSERT_TRUE(
        c.run(kT0 + 3'000 + 10 * kMin, kP1, codec::TaskSubmitResult{id, h, "", 0, 40 * kMin})
            .success());
    auto accepted = c.run(kT0 + 25 * kMin, kVerifier, codec::TaskVerify{id, true, "", {}});
    ASSERT_TRUE(accepted.success()) << reasonOf(accepted.code);
    EXPECT_EQ(attr(accepted.events.at(0), "minutes"), "10");
    EXPECT_EQ(balance(kP1), 10 * kRate - 10 * kRate / 10);
}

TEST_F(TaskChain, RejectionByAVerifierRefundsInFullAndLeavesTheProviderUnpaid) {
    const u128 before = balance(kConsumer);
    const Hash256 id = running(60);
    Hash256 h;
    h[0] = 2;
    ASSERT_TRUE(c.run(kT0 + 30'000, kP1, codec::TaskSubmitResult{id, h, "", 1, kMin}).success());
    auto rejected =
        c.run(kT0 + 40'000, kVerifier, codec::TaskVerify{id, false, "wrong output", {}});
    ASSERT_TRUE(rejected.success()) << reasonOf(rejected.code);
    EXPECT_EQ(attr(rejected.events.at(0), "to"), "rejected");
    EXPECT_EQ(attr(rejected.events.at(0), "reason"), "wrong output");
    EXPECT_EQ(balance(kConsumer), before);
    EXPECT_EQ(balance(kP1), u128{0});
    EXPECT_EQ(pool(), u128{0});
    EXPECT_EQ(jobs(kP1).rejected, 1U);
}

TEST_F(TaskChain, NoVerdictWithinTheWindowSettlesByBlockTime) {
    const Hash256 id = running(60);
    attestEverySlot(kT0 + kMin, kT0 + 5 * kMin);
    Hash256 h;
    h[0] = 3;
    const std::uint64_t submittedAt = kT0 + 3'000 + 5 * kMin;
    ASSERT_TRUE(c.run(submittedAt, kP1, codec::TaskSubmitResult{id, h, "", 0, 4 * kMin}).success());
    // The window is 20 minutes: nothing one ms before, settled at its end.
    auto quiet = c.block(submittedAt + 20 * kMin - 1, {});
    EXPECT_FALSE(quiet.systemReceipt);
    auto due = c.block(submittedAt + 20 * kMin, {});
    ASSERT_TRUE(due.systemReceipt);
    const auto& e = due.systemReceipt->events.at(0);
    EXPECT_EQ(attr(e, "trigger"), "verify_timeout");
    EXPECT_EQ(attr(e, "minutes"), "4");
    EXPECT_EQ(balance(kP1), 4 * kRate - 4 * kRate / 10);
    EXPECT_EQ(task(id).state, TaskState::kSettled);
    EXPECT_EQ(task(id).history.back().actor, Address{});
}

TEST_F(TaskChain, FailureBillsTheReportedDurationCappedByTheElapsedTime) {
    const u128 before = balance(kConsumer);
    const Hash256 id = running(60);
    attestEverySlot(kT0 + kMin, kT0 + 20 * kMin);
    // Reported 25 minutes after 20 minutes and 30 s of running: 20 minutes billed.
    auto failed = c.run(kT0 + 3'000 + 20 * kMin + 30'000, kP1,
                        codec::TaskReportFailure{id, 137, "oom", 25 * kMin});
    ASSERT_TRUE(failed.success()) << reasonOf(failed.code);
    EXPECT_EQ(attr(failed.events.at(0), "to"), "failed");
    EXPECT_EQ(attr(failed.events.at(0), "minutes"), "20");
    EXPECT_EQ(attr(failed.events.at(0), "charged"), "1200000000000000");
    EXPECT_EQ(balance(kP1), u128{1'080'000'000'000'000ULL});
    EXPECT_EQ(pool(), u128{120'000'000'000'000ULL});
    EXPECT_EQ(balance(kConsumer), before - u128{1'200'000'000'000'000ULL});
    EXPECT_EQ(jobs(kP1).failed, 1U);
}

TEST_F(TaskChain, CancelWhileRunningBillsElapsedMinutesPlusTheFee) {
    const u128 before = balance(kConsumer);
    const Hash256 id = running(60);
    attestEverySlot(kT0 + kMin, kT0 + 30 * kMin);
    // 30.5 minutes after the start: 30 + 5 = 35 minutes = 2.1·10^15.
    auto cancelled = c.run(kT0 + 3'000 + 30 * kMin + 30'000, kConsumer, codec::TaskCancel{id});
    ASSERT_TRUE(cancelled.success()) << reasonOf(cancelled.code);
    EXPECT_EQ(attr(cancelled.events.at(0), "minutes"), "35");
    EXPECT_EQ(balance(kP1), u128{1'890'000'000'000'000ULL});
    EXPECT_EQ(pool(), u128{210'000'000'000'000ULL});
    EXPECT_EQ(balance(kConsumer), before - u128{2'100'000'000'000'000ULL});
    EXPECT_EQ(task(id).state, TaskState::kCancelled);
    EXPECT_EQ(jobs(kP1).cancelled, 1U);
}

TEST_F(TaskChain, CancelBeforeRunningRefundsInFull) {
    const u128 before = balance(kConsumer);
    const Hash256 pending = create(kT0 + 1'000, 30, {"region == mars"});  // never matches
    const Hash256 assigned = create(kT0 + 1'500, 30, {}, false);
    c.block(kT0 + 2'000, {});
    EXPECT_EQ(task(pending).state, TaskState::kPending);
    EXPECT_EQ(task(assigned).state, TaskState::kAssigned);
    EXPECT_TRUE(c.run(kT0 + 3'000, kConsumer, codec::TaskCancel{pending}).success());
    EXPECT_TRUE(c.run(kT0 + 4'000, kConsumer, codec::TaskCancel{assigned}).success());
    EXPECT_EQ(balance(kConsumer), before);
    EXPECT_EQ(task(pending).state, TaskState::kCancelled);
    EXPECT_EQ(task(assigned).state, TaskState::kCancelled);
    EXPECT_EQ(balance(kP1), u128{0});
}

TEST_F(TaskChain, RefusalSendsTheTaskBackAndTheNextMatchSkipsTheRefuser) {
    const Hash256 id = create(kT0 + 1'000, 30);
    c.block(kT0 + 2'000, {c.tx(kP2, attestAt(kT0 + 2'000, 4))});  // kP2 online from now
    ASSERT_EQ(task(id).provider, addressOf(kP1));                 // kP2 was not online yet
    auto refused = c.run(kT0 + 3'000, kP1, codec::TaskRefuse{id});
    ASSERT_TRUE(refused.success()) << reasonOf(refused.code);
    EXPECT_EQ(attr(refused.events.at(0), "to"), "pending");
    EXPECT_EQ(attr(refused.events.at(0), "excluded"), addressOf(kP1).hex());
    EXPECT_EQ(task(id).excluded, std::vector<Address>{addressOf(kP1)});
    auto b = c.block(kT0 + 4'000, {});
    ASSERT_TRUE(b.systemReceipt);
    EXPECT_EQ(task(id).provider, addressOf(kP2));
    EXPECT_EQ(jobs(kP1).refused, 1U);
    EXPECT_EQ(jobs(kP2).assigned, 1U);
}

TEST_F(TaskChain, LabelConstraintsAndCapacityDecideTheMatch) {
    // Both online; "region == us" only fits kP2, and 3 PFLOP/s no longer fits kP1 after a first
    // task took 2 of its 4.
    c.block(kT0 + 500, {c.tx(kP2, attestAt(kT0 + 500, 4))});
    const Hash256 us = create(kT0 + 1'000, 10, {"region == us"});
    auto b =
        c.block(kT0 + 1'500,
                {c.tx(kConsumer, codec::TaskCreate{"flat", 2 * kPf, {"region == eu"}, 10, {}})});
    EXPECT_EQ(task(us).provider, addressOf(kP2));
    const Hash256 eu = taskOf(b.receipts.at(0));
    c.block(kT0 + 2'000,
            {c.tx(kConsumer, codec::TaskCreate{"flat", 3 * kPf, {"region in eu,asia"}, 10, {}})});
    EXPECT_EQ(task(eu).provider, addressOf(kP1));
    const auto ids = *readTasksByState(c.tree(), c.height(), TaskState::kPending);
    ASSERT_EQ(ids.size(), 1U);
    c.block(kT0 + 2'500, {});
    EXPECT_EQ(task(ids[0]).state, TaskState::kPending);  // kP1 has 2 PFLOP/s left
}

TEST_F(TaskChain, ClaimTimeoutReturnsTheTaskAndAssignTimeoutExpiresItWithAFullRefund) {
    const u128 before = balance(kConsumer);
    const Hash256 id = create(kT0 + 1'000, 30);
    c.block(kT0 + 2'000, {});
    EXPECT_EQ(task(id).state, TaskState::kAssigned);
    EXPECT_FALSE(c.block(kT0 + 2'000 + 10 * kMin - 1, {}).systemReceipt);
    auto timedOut = c.block(kT0 + 2'000 + 10 * kMin, {});
    ASSERT_TRUE(timedOut.systemReceipt);
    EXPECT_EQ(attr(timedOut.systemReceipt->events.at(0), "trigger"), "claim_timeout");
    EXPECT_EQ(task(id).state, TaskState::kPending);  // kP1 excluded, kP2 offline
    EXPECT_EQ(jobs(kP1).claimTimeouts, 1U);
    // 30 minutes after creation (not after the return to pending) it expires.
    EXPECT_FALSE(c.block(kT0 + 1'000 + 30 * kMin - 1, {}).systemReceipt);
    auto expired = c.block(kT0 + 1'000 + 30 * kMin, {});
    ASSERT_TRUE(expired.systemReceipt);
    EXPECT_EQ(attr(expired.systemReceipt->events.at(0), "trigger"), "assign_timeout");
    EXPECT_EQ(attr(expired.systemReceipt->events.at(0), "refund"), "1800000000000000");
    EXPECT_EQ(task(id).state, TaskState::kExpired);
    EXPECT_EQ(balance(kConsumer), before);
}

TEST_F(TaskChain, OutOfCreditsBillsTheWholeEscrowAndATopUpPushesItBack) {
    const u128 before = balance(kConsumer);
    const Hash256 id = running(10);
    attestEverySlot(kT0 + kMin, kT0 + 8 * kMin);
    auto topUp = c.run(kT0 + 8 * kMin, kConsumer, codec::TaskTopUp{id, 5});
    ASSERT_TRUE(topUp.success()) << reasonOf(topUp.code);
    EXPECT_EQ(attr(topUp.events.at(0), "added"), "300000000000000");
    EXPECT_EQ(task(id).escrow, 15 * kRate);
    EXPECT_EQ(task(id).maxMinutes, 15U);
    attestEverySlot(kT0 + 9 * kMin, kT0 + 15 * kMin);
    // Started at kT0+3 s: 10 minutes are past, 15 are not yet.
    EXPECT_EQ(task(id).state, TaskState::kRunning);
    auto out = c.block(kT0 + 3'000 + 15 * kMin, {c.tx(kP1, attestAt(kT0 + 15 * kMin + 3'000, 4))});
    ASSERT_TRUE(out.systemReceipt);
    EXPECT_EQ(attr(out.systemReceipt->events.at(0), "trigger"), "out_of_credits");
    EXPECT_EQ(attr(out.systemReceipt->events.at(0), "refund"), "0");
    EXPECT_EQ(balance(kP1), 15 * kRate - 15 * kRate / 10);
    EXPECT_EQ(balance(kConsumer), before - 15 * kRate);  // 10 minutes escrowed + 5 topped up
    EXPECT_EQ(jobs(kP1).outOfCredits, 1U);
}

TEST_F(TaskChain, AProviderThatStopsAttestingPanicsTheTaskWithAFullRefund) {
    const u128 before = balance(kConsumer);
    const Hash256 id = running(60);
    // Last attestation: slot 0 (at kT0+1 s). Unattested from slot 1 (kT0+60 s): panic 2 slots
    // later.
    EXPECT_FALSE(c.block(kT0 + 3 * kMin - 1, {}).systemReceipt);
    EXPECT_EQ(task(id).clock.unattestedSinceMs, kT0 + kMin);
    auto panicked = c.block(kT0 + 3 * kMin, {});
    ASSERT_TRUE(panicked.systemReceipt);
    EXPECT_EQ(attr(panicked.systemReceipt->events.at(0), "trigger"), "panic");
    EXPECT_EQ(task(id).state, TaskState::kPanicked);
    EXPECT_EQ(balance(kConsumer), before);
    EXPECT_EQ(jobs(kP1).panicked, 1U);
}

TEST_F(TaskChain, TaskListsFollowEveryTransition) {
    const Hash256 id = create(kT0 + 1'000, 30);
    auto listed = [&](TaskState s) {
        const auto ids = *readTasksByState(c.tree(), c.height(), s);
        return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    EXPECT_TRUE(listed(TaskState::kPending));
    c.block(kT0 + 2'000, {});
    EXPECT_FALSE(listed(TaskState::kPending));
    EXPECT_TRUE(listed(TaskState::kAssigned));
    EXPECT_EQ(*readTasksByProvider(c.tree(), c.height(), addressOf(kP1)), std::vector<Hash256>{id});
    EXPECT_EQ(*readTasksByConsumer(c.tree(), c.height(), addressOf(kConsumer)),
              std::vector<Hash256>{id});
}

/** Matching with a budget of two Pending tasks per block. */
class TaskMatchingBudget : public TaskChain {
  protected:
    TaskMatchingBudget() : TaskChain(budgetGenesis()) {}

    static Genesis budgetGenesis() {
        Genesis g = taskGenesis();
        g.tasks.matchScanPerBlock = 2;
        return g;
    }

    /** Creates one 0.1 PFLOP/s task per constraint list in one block at `t`, kP1 attesting. */
    std::vector<Hash256> createAll(std::uint64_t t,
                                   const std::vector<std::vector<std::string>>& constraints) {
        std::vector<Bytes> txs{c.tx(kP1, attestAt(t, 4))};
        for (const auto& list : constraints) {
            txs.push_back(c.tx(kConsumer, codec::TaskCreate{"flat", kPf / 10, list, 1, {}}));
        }
        auto b = c.block(t, std::move(txs));
        std::vector<Hash256> ids;
        for (std::size_t i = 1; i < b.receipts.size(); ++i) {
            ids.push_back(taskOf(b.receipts[i]));
        }
        return ids;
    }

    std::vector<Hash256> pending() {
        return *readTasksByState(c.tree(), c.height(), TaskState::kPending);
    }
};

TEST_F(TaskMatchingBudget, EachBlockLooksAtTwoPendingTasksResumingAfterTheLastOneItLookedAt) {
    createAll(kT0 + 1'000, {{}, {}, {}, {}, {}});
    const std::vector<Hash256> ids = pending();  // in id order, the order matching reads them
    ASSERT_EQ(ids.size(), 5U);
    // kP1 could take all five; each block assigns the next two in id order.
    for (std::size_t block = 0; block < 3; ++block) {
        c.block(kT0 + 2'000 + block * 1'000, {});
        for (std::size_t i = 0; i < ids.size(); ++i) {
            EXPECT_EQ(task(ids[i]).state,
                      i < 2 * (block + 1) ? TaskState::kAssigned : TaskState::kPending)
                << "task " << i << " after block " << block;
        }
    }
}

TEST_F(TaskMatchingBudget, TasksNoProviderCanTakeDelayButNeverStarveAMatchableOne) {
    // Six tasks only a provider in asia could take, then one that kP1 can take.
    const std::vector<std::vector<std::string>> asia(6, {"region == asia"});
    createAll(kT0 + 1'000, asia);
    const Hash256 matchable = createAll(kT0 + 1'500, {{}}).at(0);
    // Seven Pending tasks looked at two per block: every one is looked at within four blocks.
    std::uint64_t t = kT0 + 2'000;
    for (int block = 0; block < 4 && task(matchable).state == TaskState::kPending; ++block) {
        c.block(t, {c.tx(kP1, attestAt(t, 4))});
        t += 1'000;
    }
    EXPECT_EQ(task(matchable).state, TaskState::kAssigned);
    EXPECT_EQ(pending().size(), 6U);
    // The scan wraps around: a task created later is reached too.
    const Hash256 later = createAll(t, {{}}).at(0);
    for (int block = 0; block < 4 && task(later).state == TaskState::kPending; ++block) {
        t += 1'000;
        c.block(t, {c.tx(kP1, attestAt(t, 4))});
    }
    EXPECT_EQ(task(later).state, TaskState::kAssigned);
}

}  // namespace
}  // namespace gridledger::contracts::task_chain_test
