// Provider reputation in matching through real blocks (docs/tokenomics.md "Provider reputation",
// docs/tasks.md "Matching"): two providers of equal power, one with a worse history, the better
// one matched first; the choice independent of the candidates' order and the same on a replay;
// decay by epoch lets an old bad history count less; governance changes the parameters. Every
// expected score is computed here from the documented formula, not by the code under test:
//   score = ⌊10 000 × (good + prior_jobs) / (good + prior_jobs + faults)⌋,
// good and faults halved once per half_life_epochs epochs since the last change.

#include <algorithm>

#include <gtest/gtest.h>

#include <gridledger/contracts/tasks.h>
#include <gridledger/crypto/sha256.h>

#include "chain_harness.h"

namespace gridledger::contracts::reputation_test {
namespace {

using testing::addressOf;
using testing::attr;
using testing::Chain;
using testing::eventsOf;
using testing::kDps;
using testing::kEpochMs;
using testing::kGenesisMs;
using testing::kSlotMs;
using testing::petaflopInventory;
using testing::testKey;

constexpr std::uint64_t kT0 = kGenesisMs;
constexpr std::uint64_t kPf = 1'000'000;  // 1 PFLOP/s in GFLOP/s
const crypto::SecretKey kGood = testKey(20);
const crypto::SecretKey kBad = testKey(21);
const crypto::SecretKey kVerifier = testKey(30);
const crypto::SecretKey kConsumer = testKey(40);

// The parameters of these tests, spelled out: one halving per epoch (epochs of 10 s).
constexpr std::uint64_t kHalfLife = 1;
constexpr std::uint64_t kPrior = 4;
constexpr std::uint64_t kFaultWeight = 4;
constexpr std::uint64_t kSlashWeight = 16;

/** The documented formula, by hand: counters already decayed. */
std::uint32_t expectedScore(std::uint64_t good, std::uint64_t faults,
                            std::uint64_t prior = kPrior) {
    return static_cast<std::uint32_t>(10'000 * (good + prior) / (good + prior + faults));
}

/** Both providers with 4 PFLOP/s each, the same labels and categories: equal power. */
Genesis reputationGenesis() {
    Genesis g = testing::shortEpochGenesis(3, 0);
    g.providers = {{addressOf(kGood), petaflopInventory(4)},
                   {addressOf(kBad), petaflopInventory(4)}};
    g.accounts.push_back({addressOf(kConsumer), 10 * kDps});
    g.verifiers = {addressOf(kVerifier)};
    g.reputation = ReputationParams{kHalfLife, kPrior, kFaultWeight, kSlashWeight};
    return g;
}

/** `key`'s attestation of 4 PFLOP/s for the slot of block time `t`. */
Bytes attestAt(Chain& c, const crypto::SecretKey& key, std::uint64_t t) {
    const std::uint64_t slot = (t - kT0) / kSlotMs;
    const std::uint64_t perEpoch = kEpochMs / kSlotMs;
    return c.tx(key, testing::petaflops(slot / perEpoch, slot % perEpoch, 4));
}

Hash256 createdTask(const codec::Receipt& receipt) {
    EXPECT_TRUE(receipt.success()) << reasonOf(receipt.code);
    const auto created = eventsOf(receipt.events, "task_created");
    EXPECT_EQ(created.size(), 1U);
    return created.empty() ? Hash256{} : *Hash256::fromHex(attr(created[0], "task"));
}

class Reputations : public ::testing::Test {
  protected:
    Reputations() : c(reputationGenesis()) {}

    Provider provider(const crypto::SecretKey& k) { return *c.provider(addressOf(k)); }
    Task task(const Hash256& id) { return **readTask(c.tree(), c.height(), id); }
    /** The score matching would use in a block at `t`. */
    std::uint32_t scoreAt(const crypto::SecretKey& k, std::uint64_t t) {
        return providerScore(c.params(), provider(k), t).score;
    }

    /**
     * kBad's bad history in epoch 0: a task only kBad is online for is assigned to it, kBad
     * refuses it (kFaultWeight points) and the consumer cancels it.
     */
    void refusalByBad() {
        auto created =
            c.block(kT0 + 100, {attestAt(c, kBad, kT0 + 100),
                                c.tx(kConsumer, codec::TaskCreate{"flat", kPf, {}, 10, {}})});
        const Hash256 id = createdTask(created.receipts.at(1));
        c.block(kT0 + 200, {});
        ASSERT_EQ(task(id).provider, addressOf(kBad));
        ASSERT_TRUE(c.run(kT0 + 300, kBad, codec::TaskRefuse{id}).success());
        ASSERT_TRUE(c.run(kT0 + 400, kConsumer, codec::TaskCancel{id}).success());
    }

    /** Both attest at `t` and the consumer creates `n` 1 PFLOP/s tasks; matched at t + 100. */
    std::vector<Hash256> tasksMatchedAt(std::uint64_t t, std::size_t n) {
        std::vector<Bytes> txs{attestAt(c, kGood, t), attestAt(c, kBad, t)};
        for (std::size_t i = 0; i < n; ++i) {
            txs.push_back(c.tx(kConsumer, codec::TaskCreate{"flat", kPf, {}, 10, {}}));
        }
        auto b = c.block(t, std::move(txs));
        std::vector<Hash256> ids;
        for (std::size_t i = 2; i < b.receipts.size(); ++i) {
            ids.push_back(createdTask(b.receipts[i]));
        }
        c.block(t + 100, {});
        return ids;
    }

    std::size_t assignedTo(const std::vector<Hash256>& ids, const crypto::SecretKey& k) {
        return static_cast<std::size_t>(std::count_if(ids.begin(), ids.end(), [&](const auto& id) {
            return task(id).provider == addressOf(k);
        }));
    }

    Chain c;
};

TEST_F(Reputations, OfTwoProvidersOfEqualPowerTheBetterScoreIsMatchedFirst) {
    refusalByBad();
    EXPECT_EQ(provider(kBad).jobs.refused, 1U);
    EXPECT_EQ(provider(kBad).reputation, (Reputation{0, kFaultWeight, 0}));
    EXPECT_EQ(scoreAt(kBad, kT0 + 2'000), expectedScore(0, 4));  // 5 000
    EXPECT_EQ(scoreAt(kGood, kT0 + 2'000), 10'000U);

    // Four tasks of 1 PFLOP/s: all fit kGood's 4 PFLOP/s, and every one goes to it.
    const auto first = tasksMatchedAt(kT0 + 2'000, 4);
    EXPECT_EQ(assignedTo(first, kGood), 4U);
    EXPECT_EQ(provider(kGood).jobs.assigned, 4U);
    // Reputation orders the eligible providers, it excludes none: kGood is full, kBad takes it.
    const auto fifth = tasksMatchedAt(kT0 + 3'000, 1);
    EXPECT_EQ(assignedTo(fifth, kBad), 1U);
}

TEST_F(Reputations, EqualScoresLeaveTheChoiceToTheHashRuleOverAddresses) {
    const auto ids = tasksMatchedAt(kT0 + 100, 4);
    std::vector<Address> sorted{addressOf(kGood), addressOf(kBad)};
    std::sort(sorted.begin(), sorted.end());
    for (const auto& id : ids) {
        // The documented rule, by hand: first 8 bytes of SHA-256("gridledger/task-match" ‖ id).
        crypto::Sha256 h;
        const Hash256 digest = h.update("gridledger/task-match").update(id.view()).finish();
        std::uint64_t pick = 0;
        for (std::size_t i = 0; i < 8; ++i) {
            pick = (pick << 8) | digest.data()[i];
        }
        EXPECT_EQ(task(id).provider, sorted[pick % 2]);
    }
}

TEST(ReputationMatching, TheChoiceDoesNotDependOnTheOrderOfTheCandidates) {
    std::vector<MatchCandidate> pool;
    const std::uint32_t scores[] = {9'000, 10'000, 5'000, 10'000};
    for (std::uint8_t i = 0; i < 4; ++i) {
        MatchCandidate candidate;
        candidate.provider = addressOf(testKey(static_cast<std::uint8_t>(60 + i)));
        candidate.admitted = true;
        candidate.online = true;
        candidate.categories = {"flat"};
        candidate.unassignedGflops = kPf;
        candidate.score = scores[i];
        pool.push_back(candidate);
    }
    std::sort(pool.begin(), pool.end(),
              [](const auto& a, const auto& b) { return a.provider < b.provider; });
    for (std::uint8_t n = 0; n < 16; ++n) {
        MatchRequest request;
        const Bytes seed{n};
        request.taskId = crypto::sha256(seed);
        request.category = "flat";
        request.minGflops = kPf;
        const auto expected = matchProvider(request, pool);
        ASSERT_TRUE(expected);
        auto permuted = pool;
        do {
            EXPECT_EQ(matchProvider(request, permuted), expected);
        } while (std::next_permutation(
            permuted.begin(), permuted.end(),
            [](const auto& a, const auto& b) { return a.provider < b.provider; }));
        const auto chosen = std::find_if(pool.begin(), pool.end(),
                                         [&](const auto& c) { return c.provider == *expected; });
        EXPECT_EQ(chosen->score, 10'000U);  // only the best score is ever drawn
    }
}

TEST_F(Reputations, DecayByEpochLetsAnOldBadHistoryCountLess) {
    refusalByBad();
    // The stored counters stay as of epoch 0; read at epoch k they are halved k times.
    for (std::uint64_t epoch = 0; epoch <= 3; ++epoch) {
        const std::uint64_t t = kT0 + epoch * kEpochMs + 500;
        EXPECT_EQ(scoreAt(kBad, t), expectedScore(0, kFaultWeight >> epoch)) << epoch;
    }
    EXPECT_EQ(expectedScore(0, 2), 6'666U);
    // Epoch 1: faults 2, score 6 666 < 10 000: kGood still takes every task.
    const auto inEpoch1 = tasksMatchedAt(kT0 + kEpochMs + 500, 4);
    EXPECT_EQ(assignedTo(inEpoch1, kGood), 4U);
    // Epoch 3: faults 0, both at 10 000: the hash rule draws between them again.
    c.block(kT0 + 3 * kEpochMs + 100, {});
    const auto inEpoch3 = tasksMatchedAt(kT0 + 3 * kEpochMs + 500, 4);
    EXPECT_GT(assignedTo(inEpoch3, kBad), 0U);
}

TEST_F(Reputations, ASlashAddsSlashWeightFaultPointsAndSettledJobsRaiseTheScore) {
    ASSERT_TRUE(c.run(kT0 + 100, kBad, testing::petaflops(0, 0, 4)).success());
    ASSERT_TRUE(
        c.run(kT0 + 200, kVerifier, codec::Challenge{addressOf(kBad), 0, 0, "", {}}).success());
    EXPECT_EQ(provider(kBad).reputation, (Reputation{0, kSlashWeight, 0}));
    EXPECT_EQ(scoreAt(kBad, kT0 + 300), expectedScore(0, 16));  // 2 000

    // kGood settles one job in epoch 1: good 1, and its score stays 10 000 (no faults).
    const auto ids = tasksMatchedAt(kT0 + kEpochMs + 100, 1);
    ASSERT_EQ(task(ids[0]).provider, addressOf(kGood));
    const auto t = kT0 + kEpochMs + 300;
    ASSERT_TRUE(c.run(t, kGood, codec::TaskStart{ids[0]}).success());
    ASSERT_TRUE(
        c.run(t + 100, kGood,
              codec::TaskSubmitResult{ids[0], Hash256::fromHex("0x" + std::string(64, 'a')).value(),
                                      "", 0, 100})
            .success());
    ASSERT_TRUE(c.run(t + 200, kConsumer, codec::TaskVerify{ids[0], true, "", {}}).success());
    EXPECT_EQ(provider(kGood).jobs.settled, 1U);
    EXPECT_EQ(provider(kGood).reputation, (Reputation{1, 0, 1}));
    // kBad's slash, read in epoch 1, is halved once: 8 points.
    EXPECT_EQ(scoreAt(kBad, t + 300), expectedScore(0, 8));  // 3 333
}

TEST_F(Reputations, GovernanceChangesTheParametersAndTheScoresFollow) {
    refusalByBad();
    c.pass(kT0 + 1'000, codec::SetParameter{"reputation.prior_jobs", "36"});
    EXPECT_EQ(parameterValue(c.params(), "reputation.prior_jobs"), "36");
    EXPECT_EQ(scoreAt(kBad, kT0 + 1'100), expectedScore(0, 4, 36));  // 9 000
    c.pass(kT0 + 1'200, codec::SetParameter{"reputation.half_life_epochs", "0"});
    EXPECT_EQ(scoreAt(kBad, kT0 + 5 * kEpochMs), expectedScore(0, 4, 36));  // no decay any more
    c.pass(kT0 + 1'300, codec::SetParameter{"reputation.fault_weight", "10"});
    EXPECT_EQ(c.params().reputation.faultWeight, 10U);

    // A prior of 0 would divide by zero for a newcomer: refused like any invalid parameter.
    ChainParams params = c.params();
    EXPECT_FALSE(withParameter(params, codec::SetParameter{"reputation.prior_jobs", "0"}));
    EXPECT_FALSE(withParameter(params, codec::SetParameter{"reputation.slash_weight", "1000001"}));
    EXPECT_FALSE(withParameter(params, codec::SetParameter{"reputation.nothing", "1"}));
}

TEST(ReputationRules, DecayInStepsEqualsDecayAtOnceAndCountersSaturateToZero) {
    const ReputationParams params{3, 4, 4, 16};
    const Reputation r{1'000, 640, 2};
    // Halvings fall on epochs 3, 6, 9: from 2 to 10 is three of them, however it is walked.
    const auto once = decayReputation(r, params, 10);
    EXPECT_EQ(once, (Reputation{125, 80, 10}));
    EXPECT_EQ(
        decayReputation(decayReputation(decayReputation(r, params, 4), params, 7), params, 10),
        once);
    EXPECT_EQ(decayReputation(r, params, 1), r);  // never backwards
    EXPECT_EQ(decayReputation(r, params, std::uint64_t{3} * 70), (Reputation{0, 0, 210}));
    EXPECT_EQ(decayReputation(r, ReputationParams{0, 4, 4, 16}, 1'000).faults, 640U);
    EXPECT_EQ(reputationScore(Reputation{}, params), 10'000U);
    EXPECT_EQ(reputationScore(Reputation{~std::uint64_t{0}, ~std::uint64_t{0}, 0}, params),
              expectedScore(0, 0) / 2);  // 5 000: no overflow at the counters' bound
    EXPECT_FALSE(addFaultPoints(Reputation{0, ~std::uint64_t{0}, 0}, params, 0, 1));
}

TEST(ReputationRules, TheWorkedExampleOfTheDocsHoldsStepByStep) {
    // docs/tokenomics.md "Provider reputation", with the default parameters.
    const ReputationParams params;
    ASSERT_EQ(params, (ReputationParams{4, 4, 4, 16}));
    Reputation r;
    for (int i = 0; i < 3; ++i) {
        r = *creditGoodJob(r, params, 2);
    }
    r = *addFaultPoints(r, params, 2, params.faultWeight);
    EXPECT_EQ(r, (Reputation{3, 4, 2}));
    EXPECT_EQ(reputationScore(r, params), 6'363U);
    r = *addFaultPoints(r, params, 5, params.slashWeight);
    EXPECT_EQ(r, (Reputation{1, 18, 5}));
    EXPECT_EQ(reputationScore(r, params), 2'173U);
    EXPECT_EQ(reputationScore(decayReputation(r, params, 9), params), 3'076U);
    EXPECT_EQ(reputationScore(decayReputation(r, params, 13), params), 5'000U);
    EXPECT_EQ(decayReputation(r, params, 21).faults, 1U);
    EXPECT_EQ(reputationScore(decayReputation(r, params, 25), params), 10'000U);
}

TEST_F(Reputations, AReplayOfTheBlocksGivesTheSameRootsAndTheSameAssignments) {
    refusalByBad();
    const auto ids = tasksMatchedAt(kT0 + 2'000, 4);
    tasksMatchedAt(kT0 + 3 * kEpochMs + 500, 4);
    Chain second(reputationGenesis());
    for (const auto& block : c.blocksRun()) {
        auto done = second.executor().executeAndCommit(block, codec::QuorumCert{}, nullptr);
        ASSERT_TRUE(done) << done.error().message;
        EXPECT_EQ(done->roots, **c.blocks().rootsAt(block.header.height)) << block.header.height;
    }
    for (const auto& id : ids) {
        EXPECT_EQ((**readTask(second.tree(), second.height(), id)).provider, task(id).provider);
    }
    EXPECT_EQ(*second.provider(addressOf(kBad)), provider(kBad));
}

}  // namespace
}  // namespace gridledger::contracts::reputation_test
