// Liveness bugs the deterministic simulator (tests/sim) found, each reproduced on one core driven
// by hand. Every test fails on the core as it was before the fix.
#include <functional>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/consensus/core.h>

#include "harness.h"

namespace gridledger::consensus::sim_findings_test {
namespace {

using namespace testing;

class SimFindingsTest : public CoreFixture {
  protected:
    /** A block of `round` on `parent` by the round's leader, with an optional TC. */
    codec::Block propose(std::uint64_t round, const codec::Block& parent,
                         const codec::QuorumCert& qc,
                         const std::optional<codec::TimeoutCert>& tc = std::nullopt,
                         std::vector<Bytes> txs = {}) {
        codec::BlockHeader h;
        h.round = round;
        h.height = parent.header.height + 1;
        h.parentId = parent.id;
        h.qc = qc;
        h.tc = tc;
        h.author = keys_[committee_.leaderIndex(round)].publicKey();
        h.timestampMs = std::max(now_, parent.header.timestampMs + 1);
        h.execStateRoot = genesisState().stateRoot;
        h.execResultsRoot = genesisState().resultsRoot;
        codec::Block block = codec::makeBlock(h, std::move(txs));
        KeySigner signer(keys_[committee_.leaderIndex(round)]);
        signProposal(signer, kChainId, block);
        return block;
    }

    codec::QuorumCert qcOn(const codec::Block& block) {
        return signQc(committee_, keys_, block.header.round, block.id);
    }

    /** The TC of `round` signed by every member, each with the genesis QC as its highest. */
    codec::TimeoutCert tcOf(std::uint64_t round) {
        std::vector<codec::Timeout> timeouts;
        for (const auto& key : keys_) {
            KeySigner signer(key);
            timeouts.push_back(signTimeout(signer, kChainId, 0, round, genesisQc(0, genesis_.id)));
        }
        return buildTimeoutCert(committee_, timeouts).value();
    }
};

bool persists(const Effects& effects, const codec::Block& block) {
    for (const auto* e : effectsOf<PersistBlock>(effects)) {
        if (e->block->id == block.id) {
            return true;
        }
    }
    return false;
}

bool fetches(const Effects& effects, const Hash256& id) {
    for (const auto* e : effectsOf<Fetch>(effects)) {
        if (e->blockId == id) {
            return true;
        }
    }
    return false;
}

// Found by the simulator (n = 4, equivocation and twins scenarios, seeds 8 and 22): a validator
// cut off during a partition asked for a block, the request was lost, and after the partition
// healed it kept entering new rounds through TCs, so its current round's timer, the only one
// that retried fetches, never fired. It never caught up.
TEST_F(SimFindingsTest, ALostFetchIsAskedAgainWhenTheTimerOfARoundAlreadyLeftFires) {
    const std::size_t voter = nonLeaderOf({1, 2, 3, 4});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const codec::Block b2 = propose(2, b1, qcOn(b1));
    ASSERT_TRUE(fetches(step(core, ProposalReceived{b2}), b1.id));  // this request is lost

    // TCs move the validator on before any of its round timers fires.
    (void)step(core, TimeoutCertReceived{tcOf(2)});
    (void)step(core, TimeoutCertReceived{tcOf(3)});
    ASSERT_EQ(core.currentRound(), 4U);

    // The timer of round 2, left long ago, fires: the open fetch is asked again.
    EXPECT_TRUE(fetches(step(core, TimerFired{TimerKind::kRound, 2}), b1.id));
    // A proposal-interval timer does not retry fetches.
    EXPECT_FALSE(fetches(step(core, TimerFired{TimerKind::kProposal, 3}), b1.id));
    // Once the block arrives, nothing is asked for any more.
    (void)step(core, BlockFetched{b1});
    EXPECT_TRUE(effectsOf<Fetch>(step(core, TimerFired{TimerKind::kRound, 3})).empty());
}

// Found by the simulator (n = 4, equivocation, seed 8): a proposal that waited for its parent
// was released after the round had moved on and dropped as stale. A QC naming it had arrived
// meanwhile, but no fetch was asked for it (it was waiting), so the blocks above it waited
// forever and the validator never committed again.
TEST_F(SimFindingsTest, ACertifiedProposalReleasedAfterItsRoundIsKeptAndItsQcCounts) {
    const std::size_t voter = nonLeaderOf({1, 2, 3, 4});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const codec::Block b2 = propose(2, b1, qcOn(b1));
    const codec::Block b3 = propose(3, b2, qcOn(b2));
    ASSERT_TRUE(fetches(step(core, ProposalReceived{b2}), b1.id));
    // QC(b2) arrives with b3, while b2 waits: no fetch for b2.
    EXPECT_FALSE(fetches(step(core, ProposalReceived{b3}), b2.id));
    (void)step(core, TimeoutCertReceived{tcOf(3)});
    ASSERT_EQ(core.currentRound(), 4U);

    const Effects effects = step(core, BlockFetched{b1});
    EXPECT_TRUE(persists(effects, b1));
    EXPECT_TRUE(persists(effects, b2));  // certified: kept although its round is over
    EXPECT_EQ(core.highestQc().round, 2U);
    EXPECT_EQ(core.highestQc().blockId, b2.id);
    EXPECT_TRUE(effectsOf<SendVote>(effects).empty());  // a past round: no vote
}

// Found by the simulator (n = 7 and 10, twins, seeds 70 and 20): the two instances of a twinned
// leader proposed different blocks for one round. A validator took the one it could validate
// first; the other, released when its parent arrived, was refused as a second proposal of the
// round although a QC already certified it, and the chain above it could never be joined.
TEST_F(SimFindingsTest, ACertifiedBlockIsKeptEvenIfAnotherProposalOfItsRoundCameFirst) {
    const std::size_t voter = nonLeaderOf({1, 2, 3});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    (void)step(core, TimeoutCertReceived{tcOf(1)});
    ASSERT_EQ(core.currentRound(), 2U);
    // The leader of round 2 shows this validator one block (after TC(1), on genesis) ...
    const codec::Block other = propose(2, genesis_, genesisQc(0, genesis_.id), tcOf(1));
    ASSERT_EQ(effectsOf<SendVote>(step(core, ProposalReceived{other})).size(), 1U);
    // ... and the others another one (on b1), which they certify.
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const codec::Block b2 = propose(2, b1, qcOn(b1), std::nullopt, {Bytes{7}});
    const codec::Block b3 = propose(3, b2, qcOn(b2));
    ASSERT_TRUE(fetches(step(core, ProposalReceived{b2}), b1.id));
    (void)step(core, ProposalReceived{b3});

    const Effects effects = step(core, BlockFetched{b1});
    EXPECT_TRUE(persists(effects, b2));
    EXPECT_TRUE(persists(effects, b3));
    EXPECT_EQ(core.currentRound(), 3U);
    // b3 extends the certified b2 in the validator's round: it gets the vote.
    const auto votes = effectsOf<SendVote>(effects);
    ASSERT_EQ(votes.size(), 1U);
    EXPECT_EQ(votes[0]->vote.blockId, b3.id);
}

}  // namespace
}  // namespace gridledger::consensus::sim_findings_test
