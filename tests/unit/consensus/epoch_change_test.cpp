// The epoch change of one core, driven by hand (docs/protocol.md §12): a lone validator commits a
// few blocks, is told that a committed block changed the validator set, and continues in the next
// epoch from that block at round 1; messages of the old epoch are refused; recovery accepts the
// seed block as root.
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace gridledger::consensus::testing::epoch_change_test {
namespace {

/** One core and a minimal driver: builds, loops votes back, commits, executes, runs timers. */
class LoneDriver {
  public:
    explicit LoneDriver(const crypto::SecretKey& key) : key_(key), genesis_(genesisBlock()) {
        auto committee = Committee::create(kChainId, 0, genesis_.id, {key.publicKey()}).value();
        ledger_.push_back(genesis_);
        executed_.push_back(genesisState());
        core_.emplace(Core::create(testOptions(),
                                   RecoveryData::genesis(committee, genesis_, genesisState()),
                                   std::make_unique<KeySigner>(key))
                          .value());
    }

    /** Delivers `body` and everything it leads to, until `height` is committed (or 1000 steps). */
    void runUntilHeight(std::uint64_t height, EventBody first = Start{}) {
        queue_.push_back(std::move(first));
        for (int steps = 0; steps < 1000 && !queue_.empty() && ledger_.size() <= height; ++steps) {
            EventBody body = std::move(queue_.front());
            queue_.pop_front();
            perform(core_->step(Event{nowMs_, body}));
        }
    }

    /** Delivers queued events until the core has executed `height` (or 1000 steps). */
    void drainUntilExecuted(std::uint64_t height) {
        for (int steps = 0; steps < 1000 && !queue_.empty() && core_->executedHeight() < height;
             ++steps) {
            EventBody body = std::move(queue_.front());
            queue_.pop_front();
            perform(core_->step(Event{nowMs_, body}));
        }
    }

    /** One step, its effects performed; returns them. */
    Effects deliver(EventBody body) {
        Effects effects = core_->step(Event{nowMs_, std::move(body)});
        perform(effects);
        return effects;
    }

    Core& core() { return *core_; }
    const std::vector<codec::Block>& ledger() const { return ledger_; }
    const std::vector<ExecRecord>& executed() const { return executed_; }
    /** The epoch the driver's ledger is in (it stops appending above a reconfiguration block). */
    std::optional<std::uint64_t> stopAt;

  private:
    void perform(const Effects& effects) {
        for (const auto& effect : effects) {
            if (const auto* build = std::get_if<BuildProposal>(&effect)) {
                codec::BlockHeader h;
                h.epoch = build->epoch;
                h.round = build->round;
                h.height = build->height;
                h.parentId = build->parentId;
                h.qc = build->qc;
                h.tc = build->tc;
                h.author = key_.publicKey();
                nowMs_ += 10;
                h.timestampMs = std::max(nowMs_, build->minTimestampMs);
                h.execHeight = build->execHeight;
                h.execStateRoot = build->execStateRoot;
                h.execResultsRoot = build->execResultsRoot;
                codec::Block block = codec::makeBlock(h, {});
                KeySigner signer(key_);
                signProposal(signer, kChainId, block);
                queue_.push_back(ProposalBuilt{block});
            } else if (const auto* vote = std::get_if<SendVote>(&effect)) {
                queue_.push_back(VoteReceived{vote->vote});
            } else if (const auto* timer = std::get_if<ScheduleTimer>(&effect)) {
                if (timer->kind == TimerKind::kProposal) {
                    queue_.push_back(TimerFired{timer->kind, timer->round});
                }
            } else if (const auto* commit = std::get_if<Commit>(&effect)) {
                for (const auto& block : commit->blocks) {
                    if (stopAt && ledger_.size() > *stopAt) {
                        break;
                    }
                    if (block->header.height == ledger_.size()) {
                        ledger_.push_back(*block);
                        executed_.push_back(executeBlock(executed_.back(), *block));
                        const ExecRecord& rec = executed_.back();
                        queue_.push_back(Executed{rec.height, rec.stateRoot, rec.resultsRoot});
                    }
                }
            }
        }
    }

    crypto::SecretKey key_;
    codec::Block genesis_;
    std::optional<Core> core_;
    std::vector<codec::Block> ledger_;
    std::vector<ExecRecord> executed_;
    std::deque<EventBody> queue_;
    std::uint64_t nowMs_ = kGenesisTimeMs;
};

TEST(EpochChange, TheNextEpochStartsAtRoundOneFromTheReconfigurationBlock) {
    const auto keys = testKeys(2);
    LoneDriver driver(keys[0]);
    driver.stopAt = 4;  // the block at height 4 changes the validator set
    driver.runUntilHeight(4);
    ASSERT_EQ(driver.ledger().size(), 5U);
    const codec::Block reconfig = driver.ledger()[4];
    ASSERT_EQ(reconfig.header.epoch, 0U);
    ASSERT_GT(reconfig.header.round, 1U);
    // Let the core take the Executed reports first, as the driver must.
    driver.drainUntilExecuted(4);
    ASSERT_EQ(driver.core().executedHeight(), 4U);

    const Effects effects = driver.deliver(EpochChange{reconfig, {keys[0].publicKey()}});
    const auto persisted = effectsOf<PersistSafety>(effects);
    ASSERT_EQ(persisted.size(), 1U);
    EXPECT_EQ(persisted[0]->data, (SafetyData{1, 0, 0}));
    EXPECT_EQ(driver.core().committee().epoch(), 1U);
    EXPECT_EQ(driver.core().committee().seedBlockId(), reconfig.id);
    EXPECT_EQ(driver.core().currentRound(), 1U);
    EXPECT_EQ(driver.core().committedRoot().id, reconfig.id);
    EXPECT_EQ(driver.core().highestQc(), genesisQc(1, reconfig.id));

    // The lone member keeps the chain going in epoch 1 on top of the reconfiguration block.
    driver.stopAt.reset();
    driver.runUntilHeight(8, PayloadAvailable{});
    ASSERT_GE(driver.ledger().size(), 9U);
    const codec::BlockHeader& first = driver.ledger()[5].header;
    EXPECT_EQ(first.epoch, 1U);
    EXPECT_EQ(first.round, 1U);
    EXPECT_EQ(first.parentId, reconfig.id);
    EXPECT_EQ(first.qc, genesisQc(1, reconfig.id));
    EXPECT_EQ(first.execHeight, 4U);  // the seed block's own height, at once
    EXPECT_EQ(first.execStateRoot, driver.executed()[4].stateRoot);
    for (std::size_t h = 6; h < driver.ledger().size(); ++h) {
        EXPECT_EQ(driver.ledger()[h].header.epoch, 1U);
    }
}

// The next committee and its leaders must not depend on the block that ends the epoch: its
// proposer chooses that block's id (timestamp, transactions) and could try ids until the next
// committee suits it. Two different reconfiguration blocks give the same next seeds.
TEST(EpochChange, TheNextEpochsSeedDoesNotDependOnTheBlockThatEndsTheEpoch) {
    const auto keys = testKeys(2);
    std::vector<Committee> next;
    std::vector<Hash256> ends;
    for (const std::uint64_t height : {4U, 5U}) {
        LoneDriver driver(keys[0]);
        driver.stopAt = height;
        driver.runUntilHeight(height);
        driver.drainUntilExecuted(height);
        const codec::Block reconfig = driver.ledger()[height];
        (void)driver.deliver(EpochChange{reconfig, {keys[0].publicKey(), keys[1].publicKey()}});
        ASSERT_EQ(driver.core().committee().epoch(), 1U);
        next.push_back(driver.core().committee());
        ends.push_back(reconfig.id);
    }
    ASSERT_NE(ends[0], ends[1]);
    EXPECT_EQ(next[0].seedBlockId(), ends[0]);
    EXPECT_EQ(next[1].seedBlockId(), ends[1]);
    EXPECT_EQ(next[0].epochSeed(), next[1].epochSeed());
    EXPECT_EQ(next[0].leaderSeed(), next[1].leaderSeed());
    const Hash256 epoch0 = epochSeedOf(kChainId, genesisBlock().id, 0);
    EXPECT_EQ(next[0].epochSeed(), nextEpochSeed(kChainId, 0, epoch0));
    EXPECT_EQ(next[0].epochSeed(), epochSeedOf(kChainId, genesisBlock().id, 1));
    for (std::uint64_t round = 1; round <= 20; ++round) {
        EXPECT_EQ(next[0].leaderIndex(round), next[1].leaderIndex(round)) << round;
    }
}

TEST(EpochChange, MessagesOfTheOldEpochAreRefused) {
    const auto keys = testKeys(2);
    LoneDriver driver(keys[0]);
    driver.stopAt = 3;
    driver.runUntilHeight(3);
    driver.drainUntilExecuted(3);
    const codec::Block reconfig = driver.ledger()[3];
    // Epoch 1 has two members, so nothing certifies its blocks without the second one.
    (void)driver.deliver(EpochChange{reconfig, {keys[0].publicKey(), keys[1].publicKey()}});
    ASSERT_EQ(driver.core().committee().size(), 2U);

    KeySigner signer(keys[0]);
    const codec::Vote oldVote = signVote(signer, kChainId, 0, 1, reconfig.id);
    const Effects onVote = driver.deliver(VoteReceived{oldVote});
    ASSERT_EQ(effectsOf<Rejected>(onVote).size(), 1U);
    EXPECT_EQ(effectsOf<Rejected>(onVote)[0]->error.code, ErrorCode::kInvalidArgument);

    const codec::Timeout oldTimeout =
        signTimeout(signer, kChainId, 0, 2, genesisQc(0, driver.ledger()[0].id));
    const Effects onTimeout = driver.deliver(TimeoutReceived{oldTimeout});
    EXPECT_EQ(effectsOf<Rejected>(onTimeout).size(), 1U);
    EXPECT_TRUE(effectsOf<PersistSafety>(onTimeout).empty());

    // A block of the old epoch (the reconfiguration block's child would be one) is refused too.
    codec::BlockHeader h = reconfig.header;
    h.round += 1;
    h.height += 1;
    h.parentId = reconfig.id;
    h.timestampMs += 1;
    codec::Block stale = codec::makeBlock(h, {});
    signProposal(signer, kChainId, stale);
    const Effects onBlock = driver.deliver(ProposalReceived{stale});
    ASSERT_EQ(effectsOf<Rejected>(onBlock).size(), 1U);
    EXPECT_EQ(effectsOf<Rejected>(onBlock)[0]->error.code, ErrorCode::kInvalidBlock);
    EXPECT_TRUE(effectsOf<SendVote>(onBlock).empty());
    EXPECT_EQ(driver.core().safetyData(), (SafetyData{1, 0, 0}));
}

TEST(EpochChange, ABlockNotCommittedAndExecutedCannotEndTheEpoch) {
    const auto keys = testKeys(1);
    LoneDriver driver(keys[0]);
    driver.runUntilHeight(2);
    driver.drainUntilExecuted(2);
    codec::Block future = driver.ledger()[2];
    future.header.height = 50;
    const Effects effects = driver.deliver(EpochChange{future, {keys[0].publicKey()}});
    ASSERT_EQ(effectsOf<Rejected>(effects).size(), 1U);
    EXPECT_EQ(driver.core().committee().epoch(), 0U);
    // An empty validator list is refused as well, and the epoch stays.
    const Effects empty = driver.deliver(EpochChange{driver.ledger()[1], {}});
    ASSERT_EQ(effectsOf<Rejected>(empty).size(), 1U);
    EXPECT_EQ(driver.core().committee().epoch(), 0U);
}

TEST(EpochChange, RecoveryAcceptsTheSeedBlockAsRootWithTheGenesisQcOfItsEpoch) {
    const auto keys = testKeys(2);
    LoneDriver driver(keys[0]);
    driver.runUntilHeight(3);
    const codec::Block seed = driver.ledger()[3];
    const Committee next =
        Committee::create(kChainId, 1, seed.id, {keys[0].publicKey(), keys[1].publicKey()}).value();
    RecoveryData data{next,         SafetyData{0, 9, 8},  // of the old epoch: read as {1, 0, 0}
                      seed,         genesisQc(1, seed.id),  {}, {},
                      std::nullopt, {driver.executed()[3]}, {}, std::nullopt};
    auto core = Core::create(testOptions(), data, std::make_unique<KeySigner>(keys[0]));
    ASSERT_TRUE(core.has_value()) << core.error().message;
    EXPECT_EQ(core->currentRound(), 1U);
    EXPECT_EQ(core->safetyData(), (SafetyData{1, 0, 0}));

    // The same root with a QC of the old epoch, or of a block that is not the seed, is refused.
    data.rootQc = genesisQc(0, seed.id);
    EXPECT_FALSE(Core::create(testOptions(), data, std::make_unique<KeySigner>(keys[0])));
    data.rootQc = genesisQc(1, seed.id);
    data.root = driver.ledger()[2];
    data.rootQc = genesisQc(1, data.root.id);
    EXPECT_FALSE(Core::create(testOptions(), data, std::make_unique<KeySigner>(keys[0])));
    // Safety data of a later epoch than the committee's cannot be right.
    data.root = seed;
    data.rootQc = genesisQc(1, seed.id);
    data.safety = SafetyData{2, 0, 0};
    EXPECT_FALSE(Core::create(testOptions(), data, std::make_unique<KeySigner>(keys[0])));
}

}  // namespace
}  // namespace gridledger::consensus::testing::epoch_change_test
