// Checked results through real blocks (docs/tasks.md "Redundant tasks", "Spot checks"): k
// providers run one job and the majority result is paid while the minority and the missing
// results are slashed; a tie waits for a verifier; a settled result may be spot-checked by one
// verifier and decided by another, an upheld check refunding the consumer from the slash. Every
// amount is computed by hand from the parameters below.
//
// The chain: slots of 1 minute, epochs of 1 hour, category "flat" priced so that a task of
// 1 PFLOP/s costs 6·10^13 per minute, pool_share 10 %; every provider bonds 1 DPS and a slash
// takes 10 % of the bond (half burned, a quarter to the challenger, a quarter to the pool).

#include <algorithm>

#include <gtest/gtest.h>

#include <gridledger/contracts/spot_checks.h>
#include <gridledger/contracts/stake.h>
#include <gridledger/contracts/task_groups.h>
#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::checked_results_test {
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
const u128 kRate = u128{60'000'000'000'000ULL};      // per minute for 1 PFLOP/s
const u128 kSlash = kDps / 10;                       // 10 % of a 1 DPS bond
const u128 kBond = u128{10'000'000'000'000'000ULL};  // the spot-check bond, 0.01 DPS

const crypto::SecretKey kP1 = testKey(20);
const crypto::SecretKey kP2 = testKey(21);
const crypto::SecretKey kP3 = testKey(22);
const crypto::SecretKey kConsumer = testKey(40);
const crypto::SecretKey kV1 = testKey(30);  // the challenger
const crypto::SecretKey kV2 = testKey(31);  // the one who decides
const crypto::SecretKey kOutsider = testKey(41);

const Hash256 kGood{{0xaa}};
const Hash256 kBad{{0xbb}};

Genesis checkedGenesis() {
    Genesis g = testing::shortEpochGenesis(3, 0);
    g.genesisTimeMs = kT0;
    g.tokenomics.slotMs = kMin;
    g.tokenomics.epochMs = 60 * kMin;
    g.powerIndex.categories[0].priceRate = u128{1'000'000'000'000ULL};
    g.tasks.claimTimeoutMs = 10 * kMin;
    g.tasks.assignTimeoutMs = 30 * kMin;
    g.tasks.verifyWindowMs = 20 * kMin;
    g.tasks.panicAfterSlots = 50;  // the runs below do not attest while running
    g.tasks.spotCheckWindowMs = 60 * kMin;
    g.tasks.spotCheckVerdictMs = 10 * kMin;
    g.tasks.spotCheckBond = 10'000'000'000'000'000;
    g.stake.providerBond = kDps;
    g.stake.slashBps = 1'000;
    g.stake.slashBurnBps = 5'000;
    g.stake.slashChallengerBps = 2'500;
    g.stake.slashPoolBps = 2'500;
    for (const auto& p : {kP1, kP2, kP3}) {
        g.providers.push_back({addressOf(p), petaflopInventory(4)});
        g.accounts.push_back({addressOf(p), kDps});  // the bond
    }
    g.accounts.push_back({addressOf(kConsumer), 10 * kDps});
    g.accounts.push_back({addressOf(kV1), kDps});
    g.accounts.push_back({addressOf(kV2), kDps});
    // kP2 is a verifier too: a party to a task may not decide it.
    g.verifiers = {addressOf(kV1), addressOf(kV2), addressOf(kP2)};
    std::sort(g.verifiers.begin(), g.verifiers.end());
    return g;
}

codec::Attest attestAt(std::uint64_t t) {
    const std::uint64_t g = (t - kT0) / kMin;
    return testing::petaflops(g / 60, g % 60, 4);
}

codec::TaskCreate job(std::uint32_t replicas) {
    return codec::TaskCreate{"flat", kPf, {}, 60, {}, replicas};
}

codec::TaskSubmitResult result(const Hash256& id, const Hash256& hash) {
    return codec::TaskSubmitResult{id, hash, "s3://out", 0, 10 * kMin};
}

const codec::Event* find(const std::vector<codec::Event>& events, std::string_view kind,
                         std::size_t nth = 0) {
    for (const auto& e : events) {
        if (e.kind == kind && nth-- == 0) {
            return &e;
        }
    }
    return nullptr;
}

class CheckedResults : public ::testing::Test {
  protected:
    CheckedResults() : c(checkedGenesis()) {}

    Task task(const Hash256& id) { return **readTask(c.tree(), c.height(), id); }
    TaskGroup group(const Hash256& id) { return **readTaskGroup(c.tree(), c.height(), id); }
    u128 net(const crypto::SecretKey& k) {
        const Address a = addressOf(k);
        return c.account(a).balance - c.floatLeft(a);
    }
    u128 bond(const crypto::SecretKey& k) { return c.provider(addressOf(k))->bond; }
    u128 pool() { return c.tokenomics().emission.rewardPool - c.feesPaid(); }
    const crypto::SecretKey& keyOf(const Address& a) {
        for (const auto* k : {&kP1, &kP2, &kP3}) {
            if (addressOf(*k) == a) {
                return *k;
            }
        }
        ADD_FAILURE() << "no provider " << a.hex();
        return kOutsider;
    }

    /**
     * At kT0+1 s the providers in `online` attest and the consumer creates a task of `replicas`
     * replicas; at kT0+2 s matching assigns them; at kT0+3 s each assigned provider starts its
     * replica. Returns the group id (the task id for one replica).
     */
    Hash256 startGroup(std::uint32_t replicas, const std::vector<crypto::SecretKey>& online) {
        std::vector<Bytes> txs;
        txs.reserve(online.size() + 1);
        for (const auto& p : online) {
            txs.push_back(c.tx(p, attestAt(kT0 + 1'000)));
        }
        txs.push_back(c.tx(kConsumer, job(replicas)));
        auto b = c.block(kT0 + 1'000, std::move(txs));
        const auto& created = b.receipts.back();
        EXPECT_TRUE(created.success()) << reasonOf(created.code);
        const codec::Event* groupEvent = find(created.events, "task_group_created");
        const Hash256 id = groupEvent != nullptr
                               ? *Hash256::fromHex(attr(*groupEvent, "group"))
                               : *Hash256::fromHex(attr(created.events[0], "task"));
        c.block(kT0 + 2'000, {});
        std::vector<Bytes> starts;
        for (std::uint32_t i = 0; i < std::max(replicas, 1U); ++i) {
            const Hash256 rid = replicas > 1 ? replicaIdOf(id, i) : id;
            const Task t = task(rid);
            if (t.state == TaskState::kAssigned) {
                starts.push_back(c.tx(keyOf(t.provider), codec::TaskStart{rid}));
            }
        }
        for (const auto& r : c.block(kT0 + 3'000, std::move(starts)).receipts) {
            EXPECT_TRUE(r.success()) << reasonOf(r.code);
        }
        return id;
    }

    /** Replica i's provider submits `hash` at kT0 + 11 min + i ms. */
    codec::Receipt submit(const Hash256& group, std::uint32_t i, const Hash256& hash) {
        const Hash256 rid = replicaIdOf(group, i);
        return c.run(kT0 + 11 * kMin + i, keyOf(task(rid).provider), result(rid, hash));
    }

    Chain c;
};

TEST_F(CheckedResults, ThreeReplicasGoToThreeProvidersEachWithItsOwnEscrow) {
    const u128 before = net(kConsumer);
    const Hash256 g = startGroup(3, {kP1, kP2, kP3});
    EXPECT_EQ(net(kConsumer), before - u128{3} * 60 * kRate);
    const TaskGroup record = group(g);
    ASSERT_EQ(record.replicas.size(), 3U);
    EXPECT_EQ(record.state, GroupState::kOpen);
    std::set<Address> providers;
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(record.replicas[i], replicaIdOf(g, i));
        const Task t = task(replicaIdOf(g, i));
        EXPECT_EQ(t.group, g);
        EXPECT_EQ(t.state, TaskState::kRunning);
        EXPECT_TRUE(t.escrow == 60 * kRate);
        providers.insert(t.provider);
    }
    EXPECT_EQ(providers.size(), 3U);
}

TEST_F(CheckedResults, WithTwoProvidersOnlineTheThirdReplicaWaitsForAThird) {
    const Hash256 g = startGroup(3, {kP1, kP2});
    std::size_t pending = 0;
    for (std::uint32_t i = 0; i < 3; ++i) {
        pending += task(replicaIdOf(g, i)).state == TaskState::kPending ? 1U : 0U;
    }
    EXPECT_EQ(pending, 1U);  // neither kP1 nor kP2 may hold two replicas of one job
    ASSERT_TRUE(c.run(kT0 + 4'000, kP3, attestAt(kT0 + 4'000)).success());
    c.block(kT0 + 5'000, {});
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_NE(task(replicaIdOf(g, i)).state, TaskState::kPending);
    }
}

TEST_F(CheckedResults, TheMajorityIsPaidTheMinorityRefundedAndItsProviderSlashed) {
    const Hash256 g = startGroup(3, {kP1, kP2, kP3});
    const Address minority = task(replicaIdOf(g, 2)).provider;
    const u128 consumer = net(kConsumer);
    const u128 pool0 = pool();
    ASSERT_TRUE(submit(g, 0, kGood).success());
    ASSERT_TRUE(submit(g, 1, kGood).success());
    EXPECT_EQ(group(g).state, GroupState::kOpen);  // the third is still running
    const auto last = submit(g, 2, kBad);
    ASSERT_TRUE(last.success()) << reasonOf(last.code);

    const codec::Event* resolved = find(last.events, "task_group_resolved");
    ASSERT_NE(resolved, nullptr);
    EXPECT_EQ(attr(*resolved, "outcome"), "majority");
    EXPECT_EQ(attr(*resolved, "result_hash"), kGood.hex());
    EXPECT_EQ(attr(*resolved, "decided_by"), "system");
    const codec::Event* slash = find(last.events, "provider_slashed");
    ASSERT_NE(slash, nullptr);
    EXPECT_EQ(attr(*slash, "provider"), minority.hex());
    EXPECT_EQ(attr(*slash, "task"), replicaIdOf(g, 2).hex());

    const TaskGroup record = group(g);
    EXPECT_EQ(record.state, GroupState::kResolved);
    EXPECT_EQ(record.outcome, GroupOutcome::kMajority);
    EXPECT_EQ(record.upheldHash, kGood);
    EXPECT_EQ(task(replicaIdOf(g, 0)).state, TaskState::kSettled);
    EXPECT_EQ(task(replicaIdOf(g, 1)).state, TaskState::kSettled);
    EXPECT_EQ(task(replicaIdOf(g, 2)).state, TaskState::kRejected);
    // All three results stay on record.
    EXPECT_EQ(task(replicaIdOf(g, 2)).resultHash, kBad);

    // Each majority replica bills 10 minutes of 60 (started at 3 s, result at 11 min): the
    // consumer gets 50 minutes back from each and the whole minority escrow.
    EXPECT_TRUE(net(kConsumer) == consumer + u128{2} * 50 * kRate + 60 * kRate);
    // The pool takes 10 % of both bills, and of the slash, with no challenger, the challenger's
    // quarter besides its own: 10^17 − 5·10^16 burned.
    EXPECT_TRUE(pool() == pool0 + 2 * (10 * kRate / 10) + (kSlash - kSlash / 2));
    EXPECT_TRUE(bond(keyOf(minority)) == kDps - kSlash);
    EXPECT_TRUE(readStakeTotals(c.tree(), c.height())->burned == kSlash / 2);
    for (std::uint32_t i = 0; i < 2; ++i) {
        const Address a = task(replicaIdOf(g, i)).provider;
        EXPECT_TRUE(bond(keyOf(a)) == kDps);
        EXPECT_EQ(c.provider(a)->jobs.settled, 1U);
    }
    EXPECT_EQ(c.provider(minority)->jobs.rejected, 1U);
}

TEST_F(CheckedResults, AReplicaThatFailedIsSlashedWhenTheOthersAgree) {
    const Hash256 g = startGroup(3, {kP1, kP2, kP3});
    const Hash256 failing = replicaIdOf(g, 1);
    const Address failer = task(failing).provider;
    ASSERT_TRUE(submit(g, 0, kGood).success());
    ASSERT_TRUE(c.run(kT0 + 5 * kMin, keyOf(failer),
                      codec::TaskReportFailure{failing, 137, "oom", 4 * kMin})
                    .success());
    EXPECT_FALSE(bond(keyOf(failer)) < kDps);  // nothing is decided while one still runs
    const auto last = submit(g, 2, kGood);
    ASSERT_TRUE(last.success());
    EXPECT_EQ(group(g).outcome, GroupOutcome::kMajority);
    EXPECT_TRUE(bond(keyOf(failer)) == kDps - kSlash);
    EXPECT_EQ(task(failing).state, TaskState::kFailed);
}

TEST_F(CheckedResults, ATieWaitsForAVerifierWhoseVerdictPaysTheUpheldResult) {
    const Hash256 g = startGroup(2, {kP1, kP2});
    ASSERT_TRUE(submit(g, 0, kGood).success());
    const auto tie = submit(g, 1, kBad);
    ASSERT_TRUE(tie.success());
    const codec::Event* tied = find(tie.events, "task_group_tied");
    ASSERT_NE(tied, nullptr);
    EXPECT_EQ(attr(*tied, "results"), "2");
    EXPECT_EQ(attr(*tied, "verdict_due_ms"), std::to_string(kT0 + 11 * kMin + 1 + 20 * kMin));
    EXPECT_EQ(group(g).state, GroupState::kTied);

    const Hash256 r0 = replicaIdOf(g, 0);
    const auto t = kT0 + 12 * kMin;
    // Neither one replica's verdict, nor the consumer's on the group, nor a provider's of one of
    // its replicas (kP2 holds the verifier role), nor one that names no submitted result.
    EXPECT_EQ(c.run(t, kConsumer, codec::TaskVerify{r0, true, "", {}}).code,
              ErrorCode::kRedundantTask);
    EXPECT_EQ(c.run(t, kConsumer, codec::TaskVerify{g, true, "", kGood}).code,
              ErrorCode::kNotVerifier);
    EXPECT_EQ(c.run(t, kP2, codec::TaskVerify{g, true, "", kGood}).code, ErrorCode::kNotTaskParty);
    EXPECT_EQ(c.run(t, kV1, codec::TaskVerify{g, true, "", Hash256{{0xcc}}}).code,
              ErrorCode::kRedundantTask);  // nobody submitted that result
    EXPECT_EQ(c.run(t, kV1, codec::TaskVerify{g, true, "", {}}).code, ErrorCode::kRedundantTask);

    const Address loser = task(replicaIdOf(g, 1)).provider;
    const u128 verifier = net(kV1);
    const u128 pool0 = pool();
    const auto verdict = c.run(t, kV1, codec::TaskVerify{g, true, "reran it", kGood});
    ASSERT_TRUE(verdict.success()) << reasonOf(verdict.code);
    const codec::Event* resolved = find(verdict.events, "task_group_resolved");
    ASSERT_NE(resolved, nullptr);
    EXPECT_EQ(attr(*resolved, "outcome"), "verdict");
    EXPECT_EQ(attr(*resolved, "decided_by"), addressOf(kV1).hex());
    EXPECT_EQ(attr(*resolved, "reason"), "reran it");
    EXPECT_EQ(task(r0).state, TaskState::kSettled);
    EXPECT_EQ(task(replicaIdOf(g, 1)).state, TaskState::kRejected);
    EXPECT_TRUE(bond(keyOf(loser)) == kDps - kSlash);
    // The verifier gains nothing by its verdict: the challenger's quarter goes to the pool, with
    // the pool's share of the paid replica's bill.
    EXPECT_TRUE(net(kV1) == verifier);
    EXPECT_TRUE(pool() == pool0 + (kSlash - kSlash / 2) + 10 * kRate / 10);
    // A decided group takes no second verdict.
    EXPECT_EQ(c.run(t + 1, kV2, codec::TaskVerify{g, false, "", {}}).code,
              ErrorCode::kRedundantTask);
}

TEST_F(CheckedResults, ATieWithoutAVerdictSettlesEveryResultWhenTheWindowEnds) {
    const Hash256 g = startGroup(2, {kP1, kP2});
    ASSERT_TRUE(submit(g, 0, kGood).success());
    ASSERT_TRUE(submit(g, 1, kBad).success());
    const u128 consumer = net(kConsumer);
    c.block(kT0 + 11 * kMin + 1 + 20 * kMin - 1, {});
    EXPECT_EQ(group(g).state, GroupState::kTied);
    auto b = c.block(kT0 + 11 * kMin + 1 + 20 * kMin, {});
    ASSERT_TRUE(b.systemReceipt);
    const codec::Event* resolved = find(b.systemReceipt->events, "task_group_resolved");
    ASSERT_NE(resolved, nullptr);
    EXPECT_EQ(attr(*resolved, "outcome"), "lapsed");
    EXPECT_EQ(find(b.systemReceipt->events, "provider_slashed"), nullptr);
    EXPECT_EQ(task(replicaIdOf(g, 0)).state, TaskState::kSettled);
    EXPECT_EQ(task(replicaIdOf(g, 1)).state, TaskState::kSettled);
    EXPECT_TRUE(net(kConsumer) == consumer + u128{2} * 50 * kRate);
}

TEST_F(CheckedResults, RefusalsOfTheRedundantShapeCarryTheirCodes) {
    EXPECT_EQ(c.run(kT0 + 1'000, kConsumer, job(6)).code, ErrorCode::kInvalidTask);  // max 5
    const Hash256 single = startGroup(1, {kP1});
    ASSERT_TRUE(c.run(kT0 + 11 * kMin, kP1, result(single, kGood)).success());
    EXPECT_EQ(c.run(kT0 + 12 * kMin, kConsumer, codec::TaskVerify{single, true, "", kGood}).code,
              ErrorCode::kRedundantTask);
    EXPECT_TRUE(
        c.run(kT0 + 12 * kMin, kConsumer, codec::TaskVerify{single, true, "", {}}).success());
}

TEST_F(CheckedResults, AnOpenGroupTakesNoVerdict) {
    const Hash256 g = startGroup(3, {kP1, kP2, kP3});
    EXPECT_EQ(c.run(kT0 + 4'000, kV1, codec::TaskVerify{g, true, "", kGood}).code,
              ErrorCode::kRedundantTask);
}

// ---- Spot checks ----

class SpotChecks : public CheckedResults {
  protected:
    /** A single task on kP1, settled by the consumer at kT0 + 12 min, billed 10 minutes. */
    Hash256 settled() {
        const Hash256 id = startGroup(1, {kP1});
        EXPECT_TRUE(c.run(kT0 + 11 * kMin, kP1, result(id, kGood)).success());
        EXPECT_TRUE(
            c.run(kT0 + 12 * kMin, kConsumer, codec::TaskVerify{id, true, "", {}}).success());
        EXPECT_TRUE(task(id).charged == 10 * kRate);
        return id;
    }
    static codec::TaskSpotCheck check(const Hash256& id) {
        return codec::TaskSpotCheck{id, "reran: different output", Hash256{{0xee}}};
    }
};

TEST_F(SpotChecks, AnUpheldCheckSlashesTheProviderAndRefundsTheConsumerFromTheSlash) {
    const Hash256 id = settled();
    const u128 v1 = net(kV1);
    const auto opened = c.run(kT0 + 20 * kMin, kV1, check(id));
    ASSERT_TRUE(opened.success()) << reasonOf(opened.code);
    EXPECT_EQ(opened.events[0].kind, "task_spot_check_opened");
    EXPECT_TRUE(net(kV1) == v1 - kBond);
    // The challenger may not decide its own check, nor the consumer or the provider.
    EXPECT_EQ(c.run(kT0 + 21 * kMin, kV1, codec::TaskSpotCheckVerdict{id, true, ""}).code,
              ErrorCode::kNotTaskParty);

    const u128 consumer = net(kConsumer);
    const u128 pool0 = pool();
    const auto decided =
        c.run(kT0 + 21 * kMin, kV2, codec::TaskSpotCheckVerdict{id, true, "confirmed"});
    ASSERT_TRUE(decided.success()) << reasonOf(decided.code);
    const codec::Event* slash = find(decided.events, "provider_slashed");
    ASSERT_NE(slash, nullptr);
    // The task charged 6·10^14; the slash is 10^17: the consumer gets the whole charge back and
    // the rest is split: half burned, a quarter to the challenger, a quarter to the pool.
    const u128 refund = 10 * kRate;
    const u128 rest = kSlash - refund;
    EXPECT_EQ(attr(*slash, "refund"), toDecimal(refund));
    EXPECT_EQ(attr(*slash, "refund_to"), addressOf(kConsumer).hex());
    EXPECT_TRUE(net(kConsumer) == consumer + refund);
    EXPECT_TRUE(net(kV1) == v1 + rest / 4);  // its bond back, and the challenger's quarter
    EXPECT_TRUE(pool() == pool0 + (rest - rest / 2 - rest / 4));
    EXPECT_TRUE(bond(kP1) == kDps - kSlash);
    const SpotCheck record = **readSpotCheck(c.tree(), c.height(), id);
    EXPECT_EQ(record.state, SpotCheckState::kUpheld);
    EXPECT_EQ(record.decidedBy, addressOf(kV2));
    EXPECT_TRUE(loadOpenSpotChecks(StateLayer(c.tree(), c.height()))->empty());
}

TEST_F(SpotChecks, ARejectedCheckPaysItsBondToTheProvider) {
    const Hash256 id = settled();
    ASSERT_TRUE(c.run(kT0 + 20 * kMin, kV1, check(id)).success());
    const u128 provider = net(kP1);
    ASSERT_TRUE(c.run(kT0 + 21 * kMin, kV2, codec::TaskSpotCheckVerdict{id, false, "same output"})
                    .success());
    EXPECT_TRUE(net(kP1) == provider + kBond);
    EXPECT_TRUE(bond(kP1) == kDps);
    EXPECT_EQ((*readSpotCheck(c.tree(), c.height(), id))->state, SpotCheckState::kRejected);
}

TEST_F(SpotChecks, ACheckWithoutAVerdictLapsesAndPaysItsBondToTheProvider) {
    const Hash256 id = settled();
    ASSERT_TRUE(c.run(kT0 + 20 * kMin, kV1, check(id)).success());
    const u128 provider = net(kP1);
    c.block(kT0 + 30 * kMin - 1, {});
    EXPECT_EQ((*readSpotCheck(c.tree(), c.height(), id))->state, SpotCheckState::kOpen);
    auto b = c.block(kT0 + 30 * kMin, {});
    ASSERT_TRUE(b.systemReceipt);
    const codec::Event* decided = find(b.systemReceipt->events, "task_spot_check_decided");
    ASSERT_NE(decided, nullptr);
    EXPECT_EQ(attr(*decided, "outcome"), "lapsed");
    EXPECT_EQ(attr(*decided, "decided_by"), "system");
    EXPECT_TRUE(net(kP1) == provider + kBond);
    EXPECT_EQ(c.run(kT0 + 31 * kMin, kV2, codec::TaskSpotCheckVerdict{id, true, ""}).code,
              ErrorCode::kNoSpotCheck);
}

TEST_F(SpotChecks, RefusalsCarryTheirCodes) {
    const Hash256 id = settled();
    EXPECT_EQ(c.run(kT0 + 13 * kMin, kOutsider, check(id)).code, ErrorCode::kNotVerifier);
    EXPECT_EQ(c.run(kT0 + 13 * kMin, kV1, check(Hash256{{9}})).code, ErrorCode::kTaskNotFound);
    EXPECT_EQ(c.run(kT0 + 13 * kMin, kV2, codec::TaskSpotCheckVerdict{id, true, ""}).code,
              ErrorCode::kNoSpotCheck);
    // The window: 60 minutes from the settlement at kT0 + 12 min.
    EXPECT_EQ(c.run(kT0 + 72 * kMin + 1, kV1, check(id)).code, ErrorCode::kSpotCheckClosed);
}

TEST_F(SpotChecks, OneCheckPerTaskAndOnlyOfASettledResult) {
    const Hash256 id = settled();
    ASSERT_TRUE(c.run(kT0 + 20 * kMin, kV1, check(id)).success());
    EXPECT_EQ(c.run(kT0 + 20 * kMin + 1, kV2, check(id)).code, ErrorCode::kSpotCheckClosed);

    // A second task, still running on kP1, cannot be spot-checked.
    ASSERT_TRUE(c.run(kT0 + 20 * kMin + 2, kP1, attestAt(kT0 + 20 * kMin)).success());
    const auto created = c.run(kT0 + 20 * kMin + 3, kConsumer, job(1));
    ASSERT_TRUE(created.success());
    const Hash256 other = *Hash256::fromHex(attr(created.events[0], "task"));
    c.block(kT0 + 20 * kMin + 4, {});
    ASSERT_TRUE(c.run(kT0 + 20 * kMin + 5, kP1, codec::TaskStart{other}).success());
    EXPECT_EQ(c.run(kT0 + 20 * kMin + 6, kV1, check(other)).code, ErrorCode::kSpotCheckClosed);
}

}  // namespace
}  // namespace gridledger::contracts::checked_results_test
