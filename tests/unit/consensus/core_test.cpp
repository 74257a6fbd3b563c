// One core driven by hand: each test feeds events and checks the exact effects.
#include <functional>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/consensus/core.h>

#include "harness.h"

namespace gridledger::consensus::core_test {
namespace {

using namespace testing;

class CoreTest : public CoreFixture {
  protected:
    /** A block for `round` on `parent`, by the round's leader; `edit` may change the header. */
    codec::Block propose(std::uint64_t round, const codec::Block& parent,
                         const codec::QuorumCert& qc, std::vector<Bytes> txs = {},
                         const std::function<void(codec::BlockHeader&)>& edit = {}) {
        codec::BlockHeader h;
        h.epoch = 0;
        h.round = round;
        h.height = parent.header.height + 1;
        h.parentId = parent.id;
        h.qc = qc;
        h.author = keys_[committee_.leaderIndex(round)].publicKey();
        h.timestampMs = std::max(now_, parent.header.timestampMs + 1);
        const ExecRecord exec = genesisState();
        h.execStateRoot = exec.stateRoot;
        h.execResultsRoot = exec.resultsRoot;
        if (edit) {
            edit(h);
        }
        codec::Block block = codec::makeBlock(h, std::move(txs));
        const auto author = committee_.indexOf(h.author);
        KeySigner signer(keys_[author ? *author : 0]);
        signProposal(signer, kChainId, block);
        return block;
    }

    codec::QuorumCert qcOn(const codec::Block& block) {
        return signQc(committee_, keys_, block.header.round, block.id);
    }
};

std::vector<const SendVote*> votesIn(const Effects& effects) {
    return effectsOf<SendVote>(effects);
}

bool rejectedWith(const Effects& effects, ErrorCode code) {
    for (const auto* r : effectsOf<Rejected>(effects)) {
        if (r->error.code == code) {
            return true;
        }
    }
    return false;
}

TEST_F(CoreTest, IdleLeaderWaitsForTheIntervalButPayloadOrPendingTxsProposeAtOnce) {
    keys_ = testKeys(1);
    const Committee solo = Committee::create(kChainId, 0, genesis_.id, publicKeys(keys_)).value();
    committee_ = solo;
    Core core = makeCore(0, solo);

    auto effects = step(core, Start{});
    EXPECT_TRUE(effectsOf<BuildProposal>(effects).empty());
    auto timers = effectsOf<ScheduleTimer>(effects);
    ASSERT_EQ(timers.size(), 2U);
    EXPECT_EQ(timers[0]->kind, TimerKind::kRound);
    EXPECT_EQ(timers[0]->delayMs, 1000U);
    EXPECT_EQ(timers[1]->kind, TimerKind::kProposal);
    EXPECT_EQ(timers[1]->delayMs, 200U);

    effects = step(core, TimerFired{TimerKind::kProposal, 1});
    auto builds = effectsOf<BuildProposal>(effects);
    ASSERT_EQ(builds.size(), 1U);
    EXPECT_EQ(builds[0]->round, 1U);
    EXPECT_EQ(builds[0]->height, 1U);
    EXPECT_EQ(builds[0]->parentId, genesis_.id);
    EXPECT_EQ(builds[0]->execHeight, 0U);
    EXPECT_EQ(builds[0]->execStateRoot, genesisState().stateRoot);
    EXPECT_EQ(builds[0]->minTimestampMs, kGenesisTimeMs + 1);

    // The built block is persisted and voted for, then broadcast (one fsync covers the block and
    // the safety data before it leaves); the vote goes to self.
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    effects = step(core, ProposalBuilt{b1});
    ASSERT_EQ(effects.size(), 4U);
    EXPECT_TRUE(std::holds_alternative<PersistBlock>(effects[0]));
    EXPECT_TRUE(std::holds_alternative<PersistSafety>(effects[1]));
    EXPECT_TRUE(std::holds_alternative<Broadcast>(effects[2]));
    const SendVote vote = std::get<SendVote>(effects[3]);
    EXPECT_EQ(vote.to, keys_[0].publicKey());
    EXPECT_TRUE(rejectedWith(step(core, ProposalBuilt{b1}), ErrorCode::kInvalidArgument));

    // Its own vote is a QC: round 2 starts, and with nothing pending the leader idles again.
    effects = step(core, VoteReceived{vote.vote});
    EXPECT_EQ(core.currentRound(), 2U);
    EXPECT_TRUE(effectsOf<BuildProposal>(effects).empty());
    EXPECT_EQ(effectsOf<ScheduleTimer>(effects).back()->kind, TimerKind::kProposal);

    // The mempool fills: propose at once.
    effects = step(core, PayloadAvailable{});
    builds = effectsOf<BuildProposal>(effects);
    ASSERT_EQ(builds.size(), 1U);
    EXPECT_EQ(builds[0]->round, 2U);
    const codec::Block b2 = propose(2, b1, builds[0]->qc, {Bytes{1, 2, 3}});
    effects = step(core, ProposalBuilt{b2});
    effects = step(core, VoteReceived{votesIn(effects).at(0)->vote});
    // QC(b2) commits b1, and b2's transactions are pending: round 3 proposes at once.
    const auto commits = effectsOf<Commit>(effects);
    ASSERT_EQ(commits.size(), 1U);
    EXPECT_EQ(commits[0]->blocks.front()->id, b1.id);
    builds = effectsOf<BuildProposal>(effects);
    ASSERT_EQ(builds.size(), 1U);
    EXPECT_EQ(builds[0]->round, 3U);
}

TEST_F(CoreTest, AProposalWithABadExecRootIsRefusedAndAGoodOneGetsAVote) {
    const std::size_t voter = nonLeaderOf({1});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block bad = propose(1, genesis_, genesisQc(0, genesis_.id), {},
                                     [](codec::BlockHeader& h) { h.execStateRoot[0] ^= 1; });
    auto effects = step(core, ProposalReceived{bad});
    EXPECT_TRUE(votesIn(effects).empty());
    EXPECT_TRUE(rejectedWith(effects, ErrorCode::kInvalidBlock));
    EXPECT_TRUE(effectsOf<PersistBlock>(effects).empty());

    const codec::Block badResults =
        propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{9}},
                [](codec::BlockHeader& h) { h.execResultsRoot[3] ^= 1; });
    EXPECT_TRUE(votesIn(step(core, ProposalReceived{badResults})).empty());

    const codec::Block good = propose(1, genesis_, genesisQc(0, genesis_.id));
    effects = step(core, ProposalReceived{good});
    const auto votes = votesIn(effects);
    ASSERT_EQ(votes.size(), 1U);
    EXPECT_EQ(votes[0]->vote.blockId, good.id);
    EXPECT_EQ(votes[0]->to, committee_.leaderOf(2));
}

TEST_F(CoreTest, AnEquivocatingLeaderGetsAtMostOneVoteFromEachHonestCore) {
    const codec::Block a = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{'a'}});
    const codec::Block b = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{'b'}});
    ASSERT_NE(a.id, b.id);
    for (std::size_t i = 0; i < keys_.size(); ++i) {
        if (i == committee_.leaderIndex(1)) {
            continue;
        }
        SCOPED_TRACE(i);
        Core core = makeCore(i);
        (void)step(core, Start{});
        const bool aFirst = i % 2 == 0;
        auto first = step(core, ProposalReceived{aFirst ? a : b});
        auto second = step(core, ProposalReceived{aFirst ? b : a});
        EXPECT_EQ(votesIn(first).size(), 1U);
        EXPECT_TRUE(votesIn(second).empty());
        EXPECT_TRUE(rejectedWith(second, ErrorCode::kInvalidBlock));
        EXPECT_TRUE(effectsOf<PersistBlock>(second).empty());
        EXPECT_EQ(core.safetyData().lastVotedRound, 1U);
    }
}

TEST_F(CoreTest, AVoterBehindInExecutionHoldsTheProposalAndVotesOnceExecutedCatchesUp) {
    const std::size_t voter = nonLeaderOf({1, 2, 3});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{1}});
    const codec::Block b2 = propose(2, b1, qcOn(b1));
    const ExecRecord exec1 = executeBlock(genesisState(), b1);
    // The proposer of round 3 executed b1 (committed by QC(b2)) and says so.
    const codec::Block b3 = propose(3, b2, qcOn(b2), {}, [&](codec::BlockHeader& h) {
        h.execHeight = 1;
        h.execStateRoot = exec1.stateRoot;
        h.execResultsRoot = exec1.resultsRoot;
    });
    EXPECT_EQ(votesIn(step(core, ProposalReceived{b1})).size(), 1U);
    EXPECT_EQ(votesIn(step(core, ProposalReceived{b2})).size(), 1U);
    auto effects = step(core, ProposalReceived{b3});
    ASSERT_EQ(effectsOf<Commit>(effects).size(), 1U);
    EXPECT_EQ(effectsOf<Commit>(effects)[0]->blocks.back()->id, b1.id);
    EXPECT_TRUE(votesIn(effects).empty());
    EXPECT_EQ(core.safetyData().lastVotedRound, 2U);

    effects = step(core, Executed{1, exec1.stateRoot, exec1.resultsRoot});
    const auto votes = votesIn(effects);
    ASSERT_EQ(votes.size(), 1U);
    EXPECT_EQ(votes[0]->vote.blockId, b3.id);
    EXPECT_EQ(votes[0]->vote.round, 3U);
}

TEST_F(CoreTest, InvalidBlocksAreRefusedWithoutTouchingTheSafetyData) {
    const std::size_t voter = nonLeaderOf({1, 2});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const auto qc0 = genesisQc(0, genesis_.id);
    const std::size_t notLeader = (committee_.leaderIndex(1) + 1) % keys_.size();
    const std::vector<std::pair<std::string, std::function<void(codec::BlockHeader&)>>> edits = {
        {"author does not lead the round",
         [&](codec::BlockHeader& h) { h.author = keys_[notLeader].publicKey(); }},
        {"timestamp beyond the drift", [&](codec::BlockHeader& h) { h.timestampMs = now_ + 2001; }},
        {"timestamp not after the parent",
         [&](codec::BlockHeader& h) { h.timestampMs = kGenesisTimeMs; }},
        {"height not parent + 1", [](codec::BlockHeader& h) { h.height = 2; }},
        {"exec height decreases or is uncommittable",
         [](codec::BlockHeader& h) { h.execHeight = 1; }},
        {"qc not certifying the parent",
         [](codec::BlockHeader& h) { h.qc.blockId = crypto::sha256(asBytes("elsewhere")); }},
    };
    for (const auto& [name, edit] : edits) {
        SCOPED_TRACE(name);
        const auto effects = step(core, ProposalReceived{propose(1, genesis_, qc0, {}, edit)});
        EXPECT_TRUE(votesIn(effects).empty());
        EXPECT_TRUE(rejectedWith(effects, ErrorCode::kInvalidBlock));
    }
    // A round that skips without a TC (round 2 on the genesis QC).
    const auto skip = step(core, ProposalReceived{propose(2, genesis_, qc0)});
    EXPECT_TRUE(votesIn(skip).empty());
    EXPECT_EQ(core.safetyData(), (SafetyData{0, 0, 0}));
    // The rule still lets the valid proposal through.
    EXPECT_EQ(votesIn(step(core, ProposalReceived{propose(1, genesis_, qc0)})).size(), 1U);
}

TEST_F(CoreTest, VotersRefuseAProposalAboveTheBlockLimitsAndVoteForOneAtThem) {
    Options options = testOptions();
    options.maxBlockTxs = 3;
    options.maxBlockBytes = 30;
    const auto qc0 = genesisQc(0, genesis_.id);
    const std::vector<std::pair<std::string, std::vector<Bytes>>> over = {
        {"four txs", {Bytes(5, 1), Bytes(5, 2), Bytes(5, 3), Bytes(5, 4)}},
        {"31 bytes", {Bytes(10, 1), Bytes(10, 2), Bytes(11, 3)}},
    };
    for (const auto& [name, txs] : over) {
        SCOPED_TRACE(name);
        Core core = makeCore(nonLeaderOf({1}), std::nullopt, options);
        (void)step(core, Start{});
        const auto effects = step(core, ProposalReceived{propose(1, genesis_, qc0, txs)});
        EXPECT_TRUE(votesIn(effects).empty());
        EXPECT_TRUE(rejectedWith(effects, ErrorCode::kInvalidBlock));
        EXPECT_TRUE(effectsOf<PersistBlock>(effects).empty());
    }
    Core core = makeCore(nonLeaderOf({1}), std::nullopt, options);
    (void)step(core, Start{});
    const auto atLimit = propose(1, genesis_, qc0, {Bytes(10, 1), Bytes(10, 2), Bytes(10, 3)});
    EXPECT_EQ(votesIn(step(core, ProposalReceived{atLimit})).size(), 1U);
}

TEST_F(CoreTest, WithAFixedBlockTimeVotersRefuseAnyTimestampButTheParentsPlusTheBlockTime) {
    Options options = testOptions();
    options.blockTimeMs = 1000;
    const std::size_t voter = nonLeaderOf({1});
    Core core = makeCore(voter, std::nullopt, options);
    (void)step(core, Start{});
    const auto qc0 = genesisQc(0, genesis_.id);
    // now_ is genesis + 1000: every stamp below lies within the drift; only the exact one passes.
    for (const std::uint64_t offset : {1ULL, 999ULL, 1001ULL, 2000ULL}) {
        SCOPED_TRACE(offset);
        const auto effects =
            step(core, ProposalReceived{propose(1, genesis_, qc0, {}, [&](codec::BlockHeader& h) {
                     h.timestampMs = kGenesisTimeMs + offset;
                 })});
        EXPECT_TRUE(votesIn(effects).empty());
        EXPECT_TRUE(rejectedWith(effects, ErrorCode::kInvalidBlock));
    }
    EXPECT_EQ(core.safetyData(), (SafetyData{0, 0, 0}));
    const auto exact = propose(
        1, genesis_, qc0, {}, [](codec::BlockHeader& h) { h.timestampMs = kGenesisTimeMs + 1000; });
    EXPECT_EQ(votesIn(step(core, ProposalReceived{exact})).size(), 1U);
}

TEST_F(CoreTest, WithAFixedBlockTimeTheLeaderAsksForExactlyTheParentsPlusTheBlockTime) {
    keys_ = testKeys(1);
    const Committee solo = Committee::create(kChainId, 0, genesis_.id, publicKeys(keys_)).value();
    committee_ = solo;
    Options options = testOptions();
    options.blockTimeMs = 1000;
    Core core = makeCore(0, solo, options);
    (void)step(core, Start{});
    auto effects = step(core, PayloadAvailable{});
    auto builds = effectsOf<BuildProposal>(effects);
    ASSERT_EQ(builds.size(), 1U);
    EXPECT_EQ(builds[0]->minTimestampMs, kGenesisTimeMs + 1000);
    EXPECT_EQ(builds[0]->maxTimestampMs, kGenesisTimeMs + 1000);
    // A block built with the clock's stamp instead does not match the request.
    const auto clockStamped = propose(1, genesis_, builds[0]->qc, {}, [](codec::BlockHeader& h) {
        h.timestampMs = kGenesisTimeMs + 1500;
    });
    EXPECT_TRUE(rejectedWith(step(core, ProposalBuilt{clockStamped}), ErrorCode::kInvalidBlock));
}

TEST_F(CoreTest, AProposalOnAnUnknownParentFetchesItThenVotes) {
    const std::size_t voter = nonLeaderOf({1, 2});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const codec::Block b2 = propose(2, b1, qcOn(b1));

    // An unrequested block is ignored.
    EXPECT_TRUE(effectsOf<PersistBlock>(step(core, BlockFetched{b1})).empty());

    auto effects = step(core, ProposalReceived{b2});
    const auto fetches = effectsOf<Fetch>(effects);
    ASSERT_EQ(fetches.size(), 1U);
    EXPECT_EQ(fetches[0]->blockId, b1.id);
    EXPECT_EQ(fetches[0]->hint, b2.header.author);
    EXPECT_TRUE(votesIn(effects).empty());

    effects = step(core, BlockFetched{b1});
    const auto persisted = effectsOf<PersistBlock>(effects);
    ASSERT_EQ(persisted.size(), 2U);
    EXPECT_EQ(persisted[0]->block->id, b1.id);
    EXPECT_EQ(persisted[1]->block->id, b2.id);
    const auto votes = votesIn(effects);
    ASSERT_EQ(votes.size(), 1U);
    EXPECT_EQ(votes[0]->vote.blockId, b2.id);
    EXPECT_EQ(core.currentRound(), 2U);
}

TEST_F(CoreTest, AMemberForwardsTheQcItFormsToTheNextLeaderWhichMovesOnWithIt) {
    const std::size_t member = nonLeaderOf({1, 2});
    const std::size_t leader = committee_.leaderIndex(2);
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const auto voteOf = [&](std::size_t i) {
        KeySigner signer(keys_[i]);
        return signVote(signer, kChainId, 0, 1, b1.id);
    };
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
        if (i != member && i != leader) {
            others.push_back(i);
        }
    }
    ASSERT_EQ(others.size(), 2U);

    // The member forms the QC from its own vote and two others, and sends it to round 2's leader.
    Core core = makeCore(member);
    (void)step(core, Start{});
    (void)step(core, VoteReceived{votesIn(step(core, ProposalReceived{b1})).at(0)->vote});
    EXPECT_TRUE(effectsOf<ForwardQc>(step(core, VoteReceived{voteOf(others[0])})).empty());
    const Effects formed = step(core, VoteReceived{voteOf(others[1])});
    const auto forwarded = effectsOf<ForwardQc>(formed);
    ASSERT_EQ(forwarded.size(), 1U);
    EXPECT_EQ(forwarded[0]->to, committee_.leaderOf(2));
    EXPECT_EQ(forwarded[0]->qc.blockId, b1.id);
    EXPECT_EQ(forwarded[0]->qc.round, 1U);
    EXPECT_TRUE(verifyQuorumCert(forwarded[0]->qc, committee_, kChainId).has_value());
    EXPECT_EQ(core.currentRound(), 2U);

    // The leader, which has only its own vote, enters round 2 on the forwarded QC and proposes
    // on it; a leader that forms the QC itself forwards it to no one.
    Core next = makeCore(leader);
    (void)step(next, Start{});
    (void)step(next, VoteReceived{votesIn(step(next, ProposalReceived{b1})).at(0)->vote});
    EXPECT_EQ(next.currentRound(), 1U);
    (void)step(next, QcReceived{forwarded[0]->qc});
    EXPECT_EQ(next.currentRound(), 2U);
    const Effects proposing = step(next, PayloadAvailable{});
    const auto builds = effectsOf<BuildProposal>(proposing);
    ASSERT_EQ(builds.size(), 1U);
    EXPECT_EQ(builds[0]->qc, forwarded[0]->qc);

    Core formsItself = makeCore(leader);
    (void)step(formsItself, Start{});
    (void)step(formsItself,
               VoteReceived{votesIn(step(formsItself, ProposalReceived{b1})).at(0)->vote});
    Effects effects = step(formsItself, VoteReceived{voteOf(others[0])});
    const auto more = step(formsItself, VoteReceived{voteOf(others[1])});
    effects.insert(effects.end(), more.begin(), more.end());
    EXPECT_EQ(formsItself.currentRound(), 2U);
    EXPECT_TRUE(effectsOf<ForwardQc>(effects).empty());
}

TEST_F(CoreTest, AMemberThatMissedTheProposalAsksAVoterOnceFPlusOneVotedAndVotesForIt) {
    const std::size_t member = nonLeaderOf({1});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    std::vector<std::size_t> voters;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
        if (i != member) {
            voters.push_back(i);
        }
    }
    const auto voteOf = [&](std::size_t i, std::uint64_t round, const Hash256& id) {
        KeySigner signer(keys_[i]);
        return signVote(signer, kChainId, 0, round, id);
    };
    Core core = makeCore(member);
    (void)step(core, Start{});

    // f = 1 vote proves nothing; f + 1 do: the member asks the last voter for the block.
    EXPECT_TRUE(effectsOf<Fetch>(step(core, VoteReceived{voteOf(voters[0], 1, b1.id)})).empty());
    const Effects asked = step(core, VoteReceived{voteOf(voters[1], 1, b1.id)});
    const auto fetches = effectsOf<Fetch>(asked);
    ASSERT_EQ(fetches.size(), 1U);
    EXPECT_EQ(fetches[0]->blockId, b1.id);
    EXPECT_EQ(fetches[0]->hint, keys_[voters[1]].publicKey());

    // The fetched proposal is voted for as if it had arrived itself.
    const Effects fetched = step(core, BlockFetched{b1});
    const auto votes = votesIn(fetched);
    ASSERT_EQ(votes.size(), 1U);
    EXPECT_EQ(votes[0]->vote.blockId, b1.id);
    EXPECT_EQ(votes[0]->to, committee_.leaderOf(2));

    // A member that timed out the round has nothing to vote for: it asks for nothing.
    Core timedOut = makeCore(member);
    (void)step(timedOut, Start{});
    (void)step(timedOut, TimerFired{TimerKind::kRound, 1});
    (void)step(timedOut, VoteReceived{voteOf(voters[0], 1, b1.id)});
    EXPECT_TRUE(
        effectsOf<Fetch>(step(timedOut, VoteReceived{voteOf(voters[1], 1, b1.id)})).empty());
}

TEST_F(CoreTest, ATimedOutRoundSignsOneTimeoutAndAQuorumOfTimeoutsMovesOnWithBackoff) {
    const std::size_t self = nonLeaderOf({1});
    Core core = makeCore(self);
    (void)step(core, Start{});
    auto effects = step(core, TimerFired{TimerKind::kRound, 1});
    ASSERT_GE(effects.size(), 3U);
    const PersistSafety persisted = std::get<PersistSafety>(effects[0]);
    EXPECT_EQ(persisted.data.lastVotedRound, 1U);
    const codec::Timeout sent = std::get<codec::Timeout>(std::get<Broadcast>(effects[1]).message);
    EXPECT_EQ(sent.round, 1U);
    EXPECT_EQ(sent.highQc, genesisQc(0, genesis_.id));
    EXPECT_TRUE(verifyTimeout(sent, committee_, kChainId).has_value());

    // The timer fires again: the same timeout is re-sent, nothing new is signed.
    effects = step(core, TimerFired{TimerKind::kRound, 1});
    EXPECT_TRUE(effectsOf<PersistSafety>(effects).empty());
    ASSERT_EQ(effectsOf<Broadcast>(effects).size(), 1U);
    EXPECT_EQ(std::get<codec::Timeout>(effectsOf<Broadcast>(effects)[0]->message), sent);

    // Having timed out round 1, it no longer votes in it.
    EXPECT_TRUE(
        votesIn(step(core, ProposalReceived{propose(1, genesis_, genesisQc(0, genesis_.id))}))
            .empty());

    std::size_t received = 0;
    for (std::size_t i = 0; i < keys_.size() && received < 2; ++i) {
        if (i == self) {
            continue;
        }
        KeySigner signer(keys_[i]);
        effects = step(
            core, TimeoutReceived{signTimeout(signer, kChainId, 0, 1, genesisQc(0, genesis_.id))});
        ++received;
    }
    ASSERT_EQ(effectsOf<PersistTc>(effects).size(), 1U);
    EXPECT_EQ(core.currentRound(), 2U);
    EXPECT_EQ(effectsOf<ScheduleTimer>(effects).front()->delayMs, 1200U);
    if (committee_.leaderIndex(2) == self) {
        const auto builds = effectsOf<BuildProposal>(effects);
        ASSERT_EQ(builds.size(), 1U);  // a round entered through a TC proposes at once
        ASSERT_TRUE(builds[0]->tc.has_value());
    }
}

TEST_F(CoreTest, FPlusOneTimeoutsMakeALaggardTimeOutBeforeItsTimer) {
    const std::size_t self = nonLeaderOf({1});
    Core core = makeCore(self);
    (void)step(core, Start{});
    std::vector<std::size_t> others;
    for (std::size_t i = 0; i < keys_.size(); ++i) {
        if (i != self) {
            others.push_back(i);
        }
    }
    KeySigner first(keys_[others[0]]);
    auto effects =
        step(core, TimeoutReceived{signTimeout(first, kChainId, 0, 1, genesisQc(0, genesis_.id))});
    EXPECT_TRUE(effectsOf<Broadcast>(effects).empty());
    KeySigner second(keys_[others[1]]);
    effects =
        step(core, TimeoutReceived{signTimeout(second, kChainId, 0, 1, genesisQc(0, genesis_.id))});
    // Two timeouts (f + 1) plus its own make a quorum of three: the TC forms right away, and
    // the core shares it with members that may have missed some timeouts.
    const auto sent = effectsOf<Broadcast>(effects);
    ASSERT_EQ(sent.size(), 2U);
    EXPECT_EQ(std::get<codec::Timeout>(sent[0]->message).author, keys_[self].publicKey());
    const auto& tc = std::get<codec::TimeoutCert>(sent[1]->message);
    EXPECT_EQ(tc.round, 1U);
    EXPECT_TRUE(verifyTimeoutCert(tc, committee_, kChainId).has_value());
    EXPECT_EQ(effectsOf<PersistTc>(effects).size(), 1U);
    EXPECT_EQ(core.currentRound(), 2U);
}

TEST_F(CoreTest, ARestartedCoreNeverVotesAgainInTheRoundItVotedIn) {
    const std::size_t voter = nonLeaderOf({1});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block a = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{'a'}});
    const codec::Block b = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{'b'}});
    const auto effects = step(core, ProposalReceived{a});
    ASSERT_EQ(votesIn(effects).size(), 1U);
    const SafetyData persisted = effectsOf<PersistSafety>(effects).back()->data;

    RecoveryData data = RecoveryData::genesis(committee_, genesis_, genesisState());
    data.safety = persisted;
    data.blocks = {*effectsOf<PersistBlock>(effects).front()->block};
    auto restarted =
        Core::create(testOptions(), data, std::make_unique<KeySigner>(keys_[voter])).value();
    (void)step(restarted, Start{});
    EXPECT_EQ(restarted.currentRound(), 1U);
    // The second proposal is new to the restarted core: only the safety rule stands in the way.
    const auto second = step(restarted, ProposalReceived{b});
    EXPECT_TRUE(votesIn(second).empty());
    EXPECT_TRUE(rejectedWith(second, ErrorCode::kNotSafeToVote));
    EXPECT_TRUE(votesIn(step(restarted, ProposalReceived{a})).empty());
    // It may still time the round out.
    EXPECT_EQ(effectsOf<PersistSafety>(step(restarted, TimerFired{TimerKind::kRound, 1})).size(),
              1U);
}

TEST_F(CoreTest, ArbitraryInputIsRefusedOrIgnoredNeverACrash) {
    const std::size_t self = nonLeaderOf({1});
    Core core = makeCore(self);
    (void)step(core, Start{});
    const auto outsider = testKey(99);
    KeySigner outsiderSigner(outsider);
    EXPECT_TRUE(rejectedWith(
        step(core, VoteReceived{signVote(outsiderSigner, kChainId, 0, 1, genesis_.id)}),
        ErrorCode::kInvalidArgument));
    codec::Timeout huge;
    huge.round = UINT64_MAX;
    huge.author = keys_[0].publicKey();
    EXPECT_TRUE(rejectedWith(step(core, TimeoutReceived{huge}), ErrorCode::kInvalidArgument));
    const auto extreme = propose(1, genesis_, genesisQc(0, genesis_.id), {}, [](auto& h) {
        h.round = UINT64_MAX;
        h.qc.round = UINT64_MAX - 1;
        h.height = UINT64_MAX;
    });
    EXPECT_TRUE(rejectedWith(step(core, ProposalReceived{extreme}), ErrorCode::kInvalidBlock));
    EXPECT_TRUE(rejectedWith(step(core, ProposalBuilt{genesis_}), ErrorCode::kInvalidArgument));
    EXPECT_TRUE(rejectedWith(step(core, Executed{5, {}, {}}), ErrorCode::kInvalidArgument));
    EXPECT_TRUE(step(core, TimerFired{TimerKind::kRound, 77}).empty());
    codec::Block empty;
    EXPECT_TRUE(step(core, BlockFetched{empty}).empty());
    // Still sound afterwards.
    EXPECT_EQ(core.currentRound(), 1U);
    EXPECT_EQ(votesIn(step(core, ProposalReceived{propose(1, genesis_, genesisQc(0, genesis_.id))}))
                  .size(),
              1U);
}

TEST_F(CoreTest, CreateRefusesInconsistentOptionsAndRecoveryData) {
    const auto genesisData = [&] {
        return RecoveryData::genesis(committee_, genesis_, genesisState());
    };
    const auto signer = [&] { return std::make_unique<KeySigner>(keys_[0]); };
    Options slowIdle = testOptions();
    slowIdle.emptyBlockIntervalMs = slowIdle.t0Ms;
    EXPECT_FALSE(Core::create(slowIdle, genesisData(), signer()).has_value());
    Options noChain = testOptions();
    noChain.chainId.clear();
    EXPECT_FALSE(Core::create(noChain, genesisData(), signer()).has_value());
    EXPECT_FALSE(Core::create(testOptions(), genesisData(), nullptr).has_value());

    auto wrongQc = genesisData();
    wrongQc.rootQc.blockId = crypto::sha256(asBytes("not the root"));
    EXPECT_FALSE(Core::create(testOptions(), wrongQc, signer()).has_value());
    auto wrongEpoch = genesisData();
    wrongEpoch.safety.epoch = 1;
    EXPECT_FALSE(Core::create(testOptions(), wrongEpoch, signer()).has_value());
    auto noExec = genesisData();
    noExec.executed.clear();
    EXPECT_FALSE(Core::create(testOptions(), noExec, signer()).has_value());
    auto execAhead = genesisData();
    execAhead.executed.push_back(ExecRecord{3, {}, {}});
    EXPECT_FALSE(Core::create(testOptions(), execAhead, signer()).has_value());
}

TEST_F(CoreTest, ANonMemberFollowsWithoutVotingOrTimingOut) {
    keys_.push_back(testKey(50));
    Core observer = makeCore(4);
    (void)step(observer, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    auto effects = step(observer, ProposalReceived{b1});
    EXPECT_EQ(effectsOf<PersistBlock>(effects).size(), 1U);
    EXPECT_TRUE(votesIn(effects).empty());
    EXPECT_TRUE(effectsOf<PersistSafety>(step(observer, TimerFired{TimerKind::kRound, 1})).empty());
}

/** A deliberately weakened rule, as a simulator would inject: never votes, always times out. */
class RefuseAllVotes final : public SafetyRules {
  public:
    std::expected<SafetyData, SafetyError> decideVote(const SafetyData& data,
                                                      const VoteRequest& request) const override {
        return std::unexpected<SafetyError>(NotSafeToVote{
            NotSafeToVote::Clause::kNotExtendingCertificate, request.epoch, request.round,
            request.qcRound, request.tcRound, request.tcHighestHqcRound, data.lastVotedRound});
    }
    std::expected<SafetyData, SafetyError> decideTimeout(
        const SafetyData& data, const TimeoutRequest& request) const override {
        SafetyData next = data;
        next.lastVotedRound = request.round;
        return next;
    }
};

TEST_F(CoreTest, TheInjectedSafetyRulesDecideEveryVote) {
    const std::size_t voter = nonLeaderOf({1});
    auto core =
        Core::create(testOptions(), RecoveryData::genesis(committee_, genesis_, genesisState()),
                     std::make_unique<KeySigner>(keys_[voter]), std::make_unique<RefuseAllVotes>())
            .value();
    (void)step(core, Start{});
    const auto effects =
        step(core, ProposalReceived{propose(1, genesis_, genesisQc(0, genesis_.id))});
    EXPECT_EQ(effectsOf<PersistBlock>(effects).size(), 1U);
    EXPECT_TRUE(votesIn(effects).empty());
    EXPECT_TRUE(effectsOf<PersistSafety>(effects).empty());
    EXPECT_TRUE(rejectedWith(effects, ErrorCode::kNotSafeToVote));
}

TEST_F(CoreTest, AProposalOfAnEarlierRoundIsNeitherStoredNorVotedFor) {
    const std::size_t voter = nonLeaderOf({1, 2});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const codec::Block b2 = propose(2, b1, qcOn(b1));
    // b2 arrives first via b1 fetched: the core is in round 2 when a rival round-1 block shows up.
    (void)step(core, ProposalReceived{b2});
    (void)step(core, BlockFetched{b1});
    ASSERT_EQ(core.currentRound(), 2U);
    const codec::Block rival = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{7}});
    const auto effects = step(core, ProposalReceived{rival});
    EXPECT_TRUE(effectsOf<PersistBlock>(effects).empty());
    EXPECT_TRUE(votesIn(effects).empty());
}

TEST_F(CoreTest, ARestartedLoneValidatorResumesWithoutWaitingForItsTimer) {
    keys_ = testKeys(1);
    committee_ = Committee::create(kChainId, 0, genesis_.id, publicKeys(keys_)).value();
    Core core = makeCore(0);
    (void)step(core, Start{});
    (void)step(core, TimerFired{TimerKind::kProposal, 1});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id));
    const auto effects = step(core, ProposalBuilt{b1});
    const SafetyData persisted = effectsOf<PersistSafety>(effects).at(0)->data;
    const auto restart = [&](const RecoveryData& data) {
        return Core::create(testOptions(), data, std::make_unique<KeySigner>(keys_[0])).value();
    };

    // Killed after PersistBlock: the block is on disk, the vote was never protected nor sent.
    RecoveryData afterBlock = RecoveryData::genesis(committee_, genesis_, genesisState());
    afterBlock.blocks = {b1};
    Core first = restart(afterBlock);
    auto resumed = step(first, Start{});
    const auto votes = votesIn(resumed);
    ASSERT_EQ(votes.size(), 1U);
    EXPECT_EQ(votes[0]->vote.blockId, b1.id);
    EXPECT_TRUE(effectsOf<BuildProposal>(resumed).empty());  // never a second block in round 1

    // Killed after PersistSafety: the vote died in the loopback queue; round 1 can never be
    // certified, so the lone validator times it out at once and proposes in round 2 with the TC.
    RecoveryData afterSafety = afterBlock;
    afterSafety.safety = persisted;
    Core second = restart(afterSafety);
    resumed = step(second, Start{});
    EXPECT_TRUE(votesIn(resumed).empty());
    EXPECT_EQ(effectsOf<PersistTc>(resumed).size(), 1U);
    EXPECT_EQ(second.currentRound(), 2U);
    const auto builds = effectsOf<BuildProposal>(resumed);
    ASSERT_EQ(builds.size(), 1U);
    ASSERT_TRUE(builds[0]->tc.has_value());
    EXPECT_EQ(builds[0]->tc->round, 1U);
    EXPECT_EQ(builds[0]->parentId, genesis_.id);  // b1 was never certified: extend the hqc
}

TEST_F(CoreTest, AnExecHeightTheChainDoesNotProveCommittedIsRefusedRatherThanHeld) {
    const std::size_t voter = nonLeaderOf({1, 3, 4});
    Core core = makeCore(voter);
    (void)step(core, Start{});
    const codec::Block b1 = propose(1, genesis_, genesisQc(0, genesis_.id), {Bytes{1}});
    // Round 2 timed out; b2 extends b1 through TC(2), so QC(b2) does not commit b1.
    std::vector<codec::Timeout> timeouts;
    for (const auto& key : keys_) {
        KeySigner signer(key);
        timeouts.push_back(signTimeout(signer, kChainId, 0, 2, qcOn(b1)));
    }
    const auto tc2 = buildTimeoutCert(committee_, timeouts).value();
    const codec::Block b2 =
        propose(3, b1, qcOn(b1), {}, [&](codec::BlockHeader& h) { h.tc = tc2; });
    const ExecRecord exec1 = executeBlock(genesisState(), b1);
    const auto claimB1 = [&](codec::BlockHeader& h) {
        h.execHeight = 1;
        h.execStateRoot = exec1.stateRoot;
        h.execResultsRoot = exec1.resultsRoot;
    };
    EXPECT_EQ(votesIn(step(core, ProposalReceived{b1})).size(), 1U);
    EXPECT_EQ(votesIn(step(core, ProposalReceived{b2})).size(), 1U);
    // b3 claims b1 executed, which nothing on its chain commits: refused, not held.
    const codec::Block b3 = propose(4, b2, qcOn(b2), {}, claimB1);
    auto effects = step(core, ProposalReceived{b3});
    EXPECT_TRUE(effectsOf<Commit>(effects).empty());
    EXPECT_TRUE(rejectedWith(effects, ErrorCode::kInvalidBlock));
    EXPECT_TRUE(votesIn(effects).empty());
    // The honest b3 keeps exec height 0. It directly extends b2, so the QC on it will commit b2
    // and b1, and only a child of b3 may name b1's roots.
    const codec::Block good3 = propose(4, b2, qcOn(b2));
    EXPECT_EQ(votesIn(step(core, ProposalReceived{good3})).size(), 1U);
}

}  // namespace
}  // namespace gridledger::consensus::core_test
