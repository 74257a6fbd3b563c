// The runner's own reading of the effect contract (docs/protocol.md §8), with one validator and a
// host that records every call: where an epoch ends (by the runner's execution or by block sync's),
// what a held validator performs, what a failed write stops, and a crash in the middle of a step.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace gridledger::consensus::testing::runner_test {
namespace {

/** A lone validator's host: a ledger with fake execution, timers fired by the test. */
class RecordingAdaptor final : public Adaptor {
  public:
    explicit RecordingAdaptor(const codec::Block& genesis) {
        ledger.push_back(genesis);
        executed.push_back(genesisState());
    }

    std::uint64_t nowMs() override { return now; }
    Status persistSafety(const SafetyData& data) override {
        ++safetyWrites;
        if (failSafety) {
            return fail(ErrorCode::kStorage, "disk full");
        }
        safety = data;
        return {};
    }
    Status persistBlock(const BlockPtr& block) override {
        blocks[block->id] = *block;
        return {};
    }
    Status persistQc(const codec::QuorumCert& qc) override {
        certified.insert(qc.blockId);
        syncIfDue();
        return {};
    }
    /**
     * Block sync executes the block at syncEndsEpochAt once it is certified and extends the
     * ledger, which ends the ledger's epoch before the core commits that block.
     */
    void syncIfDue() {
        for (const auto& id : certified) {
            const auto block = blocks.find(id);
            if (syncEndsEpochAt && block != blocks.end() &&
                block->second.header.height == *syncEndsEpochAt &&
                ledger.size() == *syncEndsEpochAt &&
                block->second.header.parentId == ledger.back().id) {
                ledger.push_back(block->second);
                executed.push_back(executeBlock(executed.back(), block->second));
                ++epoch;
                return;
            }
        }
    }
    Status persistTc(const codec::TimeoutCert& /*tc*/) override { return {}; }
    void broadcast(const Broadcast& /*message*/) override { ++broadcasts; }
    void sendVote(const codec::Vote& vote, const PubKey& /*nextLeader*/) override {
        votes.push_back(vote);
    }
    void schedule(const ScheduleTimer& timer) override {
        timers.emplace(std::make_pair(now + timer.delayMs, serial++),
                       TimerFired{timer.kind, timer.round});
    }
    void forwardQc(const codec::QuorumCert& /*qc*/, const PubKey& /*nextLeader*/) override {}
    void fetch(const Fetch& /*request*/) override {}
    ProposalPayload collectTxs(const BuildProposal& /*request*/) override {
        ++proposals;
        return {};
    }
    std::uint64_t executedHeight() override { return ledger.size() - 1; }
    std::uint64_t ledgerEpoch() override { return epoch; }
    Result<Execution> execute(const codec::Block& block,
                              const codec::QuorumCert& /*certifying*/) override {
        EXPECT_EQ(block.header.height, ledger.size());
        EXPECT_EQ(block.header.parentId, ledger.back().id);
        ledger.push_back(block);
        executed.push_back(executeBlock(executed.back(), block));
        Execution done{executed.back(), std::nullopt};
        syncIfDue();
        if (endEpochAt == block.header.height) {
            done.nextValidators = nextValidators;
            ++epoch;
        }
        return done;
    }
    void failed(const Error& error) override { failures.push_back(error); }
    std::size_t onStep(const Event& /*event*/, const Effects& effects) override {
        ++steps;
        if (cutNextStepAfter && !effects.empty()) {
            const std::size_t cut = *cutNextStepAfter;
            cutNextStepAfter.reset();
            lastCutStep = effects;
            return cut;
        }
        return effects.size();
    }

    std::uint64_t now = kGenesisTimeMs + 1000;
    std::vector<codec::Block> ledger;
    std::vector<ExecRecord> executed;
    SafetyData safety;
    std::size_t safetyWrites = 0;
    bool failSafety = false;
    std::size_t broadcasts = 0;
    std::size_t proposals = 0;
    std::size_t steps = 0;
    std::vector<codec::Vote> votes;
    std::vector<Error> failures;
    std::map<std::pair<std::uint64_t, std::uint64_t>, TimerFired> timers;
    std::uint64_t serial = 0;
    std::optional<std::uint64_t> endEpochAt;
    std::vector<PubKey> nextValidators;
    std::uint64_t epoch = 0;
    std::map<Hash256, codec::Block> blocks;
    std::set<Hash256> certified;
    std::optional<std::uint64_t> syncEndsEpochAt;
    std::optional<std::size_t> cutNextStepAfter;
    Effects lastCutStep;
};

class RunnerTest : public ::testing::Test {
  protected:
    RunnerTest() { runner_.reset(makeCore()); }

    Core makeCore() {
        return Core::create(testOptions(),
                            RecoveryData::genesis(committee_, genesis_, genesisState()),
                            std::make_unique<KeySigner>(key_))
            .value();
    }

    /** Fires due timers in time order until `done` holds or `limit` timers fired. */
    void runTimers(const std::function<bool()>& done, std::size_t limit = 200) {
        for (std::size_t k = 0; k < limit && !done() && !host_.timers.empty(); ++k) {
            const auto it = host_.timers.begin();
            host_.now = std::max(host_.now, it->first.first);
            const TimerFired timer = it->second;
            host_.timers.erase(it);
            runner_.deliver(timer);
        }
    }

    std::uint64_t height() const { return host_.ledger.size() - 1; }

    crypto::SecretKey key_ = testKey(0);
    codec::Block genesis_ = genesisBlock();
    Committee committee_ = Committee::create(kChainId, 0, genesis_.id, {key_.publicKey()}).value();
    RecordingAdaptor host_{genesis_};
    Runner runner_{host_, std::string(kChainId), std::make_unique<KeySigner>(key_)};
};

TEST_F(RunnerTest, ALoneValidatorCommitsThroughItsOwnLoopedBackVotes) {
    runner_.deliver(Start{});
    runTimers([&] { return height() >= 5; });
    ASSERT_GE(height(), 5U);
    EXPECT_GE(host_.votes.size(), 5U);
    // Each executed height was reported back to the core as Executed.
    EXPECT_EQ(runner_.core().executedHeight(), height());
    for (std::size_t h = 1; h < host_.ledger.size(); ++h) {
        EXPECT_EQ(host_.ledger[h].header.author, key_.publicKey());
        EXPECT_TRUE(verifyProposal(host_.ledger[h], committee_, kChainId).has_value());
    }
}

TEST_F(RunnerTest, NothingAboveTheBlockThatEndedTheEpochIsExecutedAndTheCoreMovesOn) {
    host_.endEpochAt = 3;
    host_.nextValidators = {key_.publicKey()};
    runner_.deliver(Start{});
    runTimers([&] { return height() >= 6; });
    ASSERT_GE(height(), 6U);
    for (std::size_t h = 1; h <= 3; ++h) {
        EXPECT_EQ(host_.ledger[h].header.epoch, 0U) << "height " << h;
    }
    // Epoch 0's blocks above height 3 were never executed: the next block is epoch 1's, on the
    // reconfiguration block.
    EXPECT_EQ(host_.ledger[4].header.epoch, 1U);
    EXPECT_EQ(host_.ledger[4].header.parentId, host_.ledger[3].id);
    EXPECT_EQ(runner_.core().committee().epoch(), 1U);
    EXPECT_EQ(runner_.core().committee().seedBlockId(), host_.ledger[3].id);
}

TEST_F(RunnerTest, ABlockTheCoreCommitsAboveAnEpochEndThatSyncExecutedIsNeverExecuted) {
    // Block sync executed block 3, which ended epoch 0, while the core was still in epoch 0;
    // the core goes on committing epoch 0's blocks above it until it is rebuilt.
    host_.syncEndsEpochAt = 3;
    runner_.deliver(Start{});
    runTimers([&] { return runner_.core().committedRoot().header.height >= 6; });
    ASSERT_GE(runner_.core().committedRoot().header.height, 6U);
    EXPECT_EQ(runner_.core().committee().epoch(), 0U);
    // Nothing above the end of the epoch reached the ledger.
    EXPECT_EQ(height(), 3U);
    EXPECT_TRUE(host_.failures.empty());
}

TEST_F(RunnerTest, AHeldValidatorWritesNoSafetyDataAndSignsNothingUntilReleased) {
    runner_.holdSignatures(true);
    runner_.deliver(Start{});
    runTimers([] { return false; }, 20);
    EXPECT_EQ(host_.safetyWrites, 0U);
    EXPECT_EQ(host_.proposals, 0U);
    EXPECT_EQ(host_.broadcasts, 0U);
    EXPECT_TRUE(host_.votes.empty());
    EXPECT_EQ(height(), 0U);

    runner_.holdSignatures(false);
    runner_.reset(makeCore());
    runner_.deliver(Start{});
    runTimers([&] { return height() >= 2; });
    EXPECT_GE(height(), 2U);
    EXPECT_GT(host_.safetyWrites, 0U);
}

TEST_F(RunnerTest, AFailedSafetyWriteStopsTheRunnerBeforeTheVoteLeaves) {
    host_.failSafety = true;
    runner_.deliver(Start{});
    runTimers([&] { return !host_.failures.empty(); });
    ASSERT_EQ(host_.failures.size(), 1U);
    EXPECT_EQ(host_.failures[0].code, ErrorCode::kStorage);
    EXPECT_TRUE(runner_.stopped());
    EXPECT_TRUE(host_.votes.empty());
    // A stopped runner delivers nothing more.
    const std::size_t steps = host_.steps;
    runner_.deliver(TimerFired{TimerKind::kRound, 1});
    EXPECT_EQ(host_.steps, steps);
    EXPECT_EQ(host_.safetyWrites, 1U);
}

TEST_F(RunnerTest, AStepCutShortPerformsItsPrefixAndStops) {
    runner_.deliver(Start{});
    runTimers([&] { return height() >= 2; });
    ASSERT_GE(height(), 2U);
    // The next step dies before its first effect: nothing of it is performed.
    const std::size_t votes = host_.votes.size();
    const std::size_t safetyWrites = host_.safetyWrites;
    host_.cutNextStepAfter = 0;
    runTimers([&] { return runner_.stopped(); });
    ASSERT_TRUE(runner_.stopped());
    EXPECT_FALSE(host_.lastCutStep.empty());
    EXPECT_EQ(host_.votes.size(), votes);
    EXPECT_EQ(host_.safetyWrites, safetyWrites);
    EXPECT_TRUE(host_.failures.empty());  // a crash, not a failure
}

}  // namespace
}  // namespace gridledger::consensus::testing::runner_test
