// The asking side of block sync on its own: a host holding a ledger in memory and three peers
// whose answers the test writes. An honest peer's blocks reach the ledger batch by batch and the
// core restarts once; an answer that does not verify changes nothing and the next peer is asked;
// silent peers are left one after the other until the sync gives up; an empty answer from the
// peer that made the node ask moves to the next; the next batch is asked for, and each batch's
// signatures prepared, before its blocks execute; an answer that runs past the block ending an
// epoch stops there and its peer is refused; only blocks beyond the lag are offered; claims of
// a later epoch ask each peer for a proof at most once per interval; only a verified epoch proof
// above the ledger starts a sync.
#include "sync_client.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "chain_builder.h"

namespace gridledger::node::sync_client_test {
namespace {

using testing::ChainBuilder;
using testing::kChainId;
using testing::TestCommittee;

constexpr std::uint64_t kCommitted = 10;
constexpr std::uint32_t kBatch = 4;

NodeId peerId(std::uint8_t tag) {
    std::array<std::uint8_t, 20> bytes{};
    bytes.fill(tag);
    return NodeId(bytes);
}

/** The node's side as a test sees it: a ledger in memory, the requests sent, the timers armed. */
class TestSyncHost final : public SyncHost {
  public:
    explicit TestSyncHost(const ChainBuilder& chain) : chain_(chain) {
        ledger.push_back(chain.at(0));
    }

    std::chrono::milliseconds now() const override { return clock; }
    std::uint64_t executedHeight() const override { return ledger.size() - 1; }
    Result<std::optional<codec::Block>> blockAt(std::uint64_t height) const override {
        if (height >= ledger.size()) {
            return std::optional<codec::Block>{};
        }
        return std::optional<codec::Block>{ledger[height]};
    }
    std::shared_ptr<const consensus::Committee> committee() const override {
        return std::make_shared<const consensus::Committee>(chain_.committee());
    }
    bool send(const NodeId& peer, p2p::Message message) override {
        if (message.kind == codec::MessageKind::kEpochProofRequest) {
            proofAsks.push_back(peer);
            return true;
        }
        auto request = codec::decodeSyncRequest(message.payload);
        EXPECT_TRUE(request.has_value());
        sent.emplace_back(peer, request.value_or(codec::SyncRequest{}));
        sentAtHeight.push_back(executedHeight());
        return true;
    }
    std::vector<NodeId> connectedPeers() const override { return peers; }
    void expireAfter(std::uint64_t seq, std::chrono::milliseconds /*delay*/,
                     std::string reason) override {
        timer = std::make_pair(seq, std::move(reason));
    }
    void prepare(std::span<const codec::Block> blocks) override {
        EXPECT_FALSE(blocks.empty());
        prepared.emplace_back(blocks.front().header.height, blocks.back().header.height);
        EXPECT_EQ(executedHeight() + 1, blocks.front().header.height) << "prepared after executing";
    }
    Result<bool> execute(const codec::Block& block,
                         const codec::QuorumCert& /*certifying*/) override {
        EXPECT_EQ(block.header.height, ledger.size());
        ledger.push_back(block);
        return block.header.height == epochEndHeight;
    }
    Status storeCommitProofs(const std::vector<HeightProof>& proofs) override {
        stored += proofs.size();
        return {};
    }
    void synced(std::size_t count) override { syncedBlocks += count; }
    void refused(const NodeId& peer, codec::MessageKind kind, const Error& /*error*/) override {
        refusals.push_back(peer);
        refusedKinds.push_back(kind);
    }
    void failed(const Error& error) override { failures.push_back(error); }
    void caughtUp() override { ++caughtUps; }

    std::chrono::milliseconds clock{0};
    std::vector<codec::Block> ledger;
    std::vector<NodeId> peers{peerId(1), peerId(2), peerId(3)};
    std::vector<std::pair<NodeId, codec::SyncRequest>> sent;
    /** The executed height when each request of `sent` left. */
    std::vector<std::uint64_t> sentAtHeight;
    /** (first, last) height of each batch prepared. */
    std::vector<std::pair<std::uint64_t, std::uint64_t>> prepared;
    /** The height whose execution ends the epoch (0: none). */
    std::uint64_t epochEndHeight = 0;
    std::vector<NodeId> proofAsks;
    std::optional<std::pair<std::uint64_t, std::string>> timer;
    std::size_t stored = 0;
    std::size_t syncedBlocks = 0;
    std::vector<NodeId> refusals;
    std::vector<codec::MessageKind> refusedKinds;
    std::vector<Error> failures;
    std::size_t caughtUps = 0;

  private:
    const ChainBuilder& chain_;
};

class SyncClientTest : public ::testing::Test {
  protected:
    void SetUp() override { chain_.appendMany(kCommitted + 1); }

    /** What an honest peer answers to `request`: the blocks asked for up to the committed
     * height, with the commit proof of the last one. */
    codec::SyncResponse honestAnswer(const codec::SyncRequest& request) const {
        codec::SyncResponse response;
        response.headHeight = kCommitted;
        const std::uint64_t last =
            std::min<std::uint64_t>(kCommitted, request.fromHeight + request.maxBlocks - 1);
        for (std::uint64_t h = request.fromHeight; h <= last; ++h) {
            response.blocks.push_back(chain_.at(h));
        }
        response.proof = chain_.proofOf(last);
        return response;
    }

    ChainBuilder chain_{TestCommittee::create()};
    TestSyncHost host_{chain_};
    SyncClient client_{host_, std::string(kChainId), SyncLimits{kBatch, {}, 3},
                       spdlog::default_logger()};
};

TEST_F(SyncClientTest, AnHonestPeersBlocksReachTheLedgerBatchByBatchAndTheCoreRestartsOnce) {
    client_.start(peerId(1));
    for (int answers = 0; answers < 10 && client_.active(); ++answers) {
        ASSERT_FALSE(host_.sent.empty());
        const auto [peer, request] = host_.sent.back();
        EXPECT_EQ(peer, peerId(1));
        EXPECT_EQ(request.fromHeight, host_.executedHeight() + 1);
        client_.onResponse(peer, honestAnswer(request));
    }
    EXPECT_FALSE(client_.active());
    EXPECT_FALSE(client_.syncing());
    EXPECT_EQ(host_.executedHeight(), kCommitted);
    EXPECT_EQ(host_.syncedBlocks, kCommitted);
    EXPECT_EQ(host_.sent.size(), 3U);  // 4 + 4 + 2 blocks
    EXPECT_EQ(host_.caughtUps, 1U);
    EXPECT_GT(host_.stored, 0U);
    for (std::uint64_t h = 0; h <= kCommitted; ++h) {
        EXPECT_EQ(host_.ledger[h].id, chain_.at(h).id) << h;
    }
}

TEST_F(SyncClientTest, TheNextBatchIsAskedForAndEachBatchPreparedBeforeAnyOfItsBlocksExecutes) {
    client_.start(peerId(1));
    client_.onResponse(peerId(1), honestAnswer(host_.sent.back().second));
    // Blocks 1-4 verified: 5-8 were asked for while the ledger still stood at genesis.
    ASSERT_EQ(host_.sent.size(), 2U);
    EXPECT_EQ(host_.sent[1].second.fromHeight, 5U);
    EXPECT_EQ(host_.sentAtHeight[1], 0U);
    EXPECT_EQ(host_.executedHeight(), 4U);
    while (client_.active()) {
        client_.onResponse(peerId(1), honestAnswer(host_.sent.back().second));
    }
    EXPECT_EQ(host_.prepared,
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 4}, {5, 8}, {9, 10}}));
    EXPECT_EQ(host_.sentAtHeight, (std::vector<std::uint64_t>{0, 0, 4}));
    EXPECT_EQ(host_.executedHeight(), kCommitted);
    EXPECT_EQ(host_.caughtUps, 1U);
}

TEST_F(SyncClientTest, TheFirstRequestAsksForFewBlocksAndEachVerifiedAnswerDoublesTheNext) {
    SyncLimits limits{8, {}, 3};
    limits.firstBatchBlocks = 2;
    SyncClient client{host_, std::string(kChainId), limits, spdlog::default_logger()};
    client.start(peerId(1));
    while (client.active()) {
        client.onResponse(peerId(1), honestAnswer(host_.sent.back().second));
    }
    std::vector<std::uint32_t> asked;
    asked.reserve(host_.sent.size());
    for (const auto& [peer, request] : host_.sent) {
        asked.push_back(request.maxBlocks);
    }
    EXPECT_EQ(asked, (std::vector<std::uint32_t>{2, 4, 8}));
    EXPECT_EQ(host_.prepared,
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{1, 2}, {3, 6}, {7, 10}}));
    EXPECT_EQ(host_.executedHeight(), kCommitted);
}

TEST_F(SyncClientTest, AnAnswerRunningPastTheEndOfAnEpochStopsThereAndItsPeerIsRefused) {
    // Block 2 ends the epoch; blocks 3 and 4 of the same answer belong to no ledger, whatever
    // proves them, and no honest peer sends them.
    host_.epochEndHeight = 2;
    client_.start(peerId(1));
    client_.onResponse(peerId(1), honestAnswer(host_.sent.back().second));
    EXPECT_EQ(host_.executedHeight(), 2U);
    EXPECT_EQ(host_.refusals, std::vector<NodeId>{peerId(1)});
    EXPECT_EQ(host_.refusedKinds,
              std::vector<codec::MessageKind>{codec::MessageKind::kSyncResponse});
    // The next peer is asked from the first block of the new epoch.
    EXPECT_EQ(host_.sent.back().first, peerId(2));
    EXPECT_EQ(host_.sent.back().second.fromHeight, 3U);
    EXPECT_TRUE(client_.syncing());
}

TEST_F(SyncClientTest, AnAnswerThatEndsAnEpochIsTakenWholeAndTheSyncGoesOnWithItsPeer) {
    host_.epochEndHeight = 4;
    client_.start(peerId(1));
    client_.onResponse(peerId(1), honestAnswer(host_.sent.back().second));
    EXPECT_EQ(host_.executedHeight(), 4U);
    EXPECT_TRUE(host_.refusals.empty());
    EXPECT_EQ(host_.sent.back().first, peerId(1));
    EXPECT_EQ(host_.sent.back().second.fromHeight, 5U);
}

TEST_F(SyncClientTest, AnAnswerThatDoesNotVerifyChangesNothingAndTheNextPeerIsAsked) {
    client_.start(peerId(1));
    codec::SyncResponse forged = honestAnswer(host_.sent.back().second);
    forged.proof.reset();  // nothing shows the last block committed
    client_.onResponse(peerId(1), forged);
    EXPECT_EQ(host_.executedHeight(), 0U);
    ASSERT_EQ(host_.refusals.size(), 1U);
    EXPECT_EQ(host_.refusals[0], peerId(1));
    ASSERT_EQ(host_.sent.size(), 2U);
    EXPECT_EQ(host_.sent.back().first, peerId(2));
    EXPECT_FALSE(client_.syncing());
    EXPECT_EQ(host_.caughtUps, 0U);
}

TEST_F(SyncClientTest, SilentPeersAreLeftInTurnUntilTheSyncGivesUpWithoutTouchingTheLedger) {
    client_.start(peerId(2));
    std::vector<NodeId> asked{host_.sent.back().first};
    for (int expiries = 0; expiries < 10 && client_.active(); ++expiries) {
        ASSERT_TRUE(host_.timer.has_value());
        client_.expired(host_.timer->first, host_.timer->second);
        if (client_.active()) {
            asked.push_back(host_.sent.back().first);
        }
    }
    EXPECT_FALSE(client_.active());
    // Three failures in a row are allowed; the fourth ends the sync.
    EXPECT_EQ(asked, (std::vector<NodeId>{peerId(2), peerId(3), peerId(1), peerId(2)}));
    EXPECT_EQ(host_.executedHeight(), 0U);
    EXPECT_EQ(host_.caughtUps, 0U);
    EXPECT_TRUE(host_.failures.empty());
}

TEST_F(SyncClientTest, AStaleTimerOfAnAnsweredRequestChangesNothing) {
    client_.start(peerId(1));
    const std::uint64_t first = host_.timer->first;
    client_.onResponse(peerId(1), honestAnswer(host_.sent.back().second));
    ASSERT_TRUE(client_.active());
    const std::size_t sent = host_.sent.size();
    client_.expired(first, "no answer");
    EXPECT_EQ(host_.sent.size(), sent);  // the peer is not left
    EXPECT_TRUE(client_.isPeer(peerId(1)));
}

TEST_F(SyncClientTest, AnEmptyAnswerFromThePeerThatMadeTheNodeAskMovesToTheNextPeer) {
    // Peer 1 signed a block claiming height 500 and then has nothing to show.
    client_.offer(peerId(1), 500, 0);
    ASSERT_EQ(host_.sent.size(), 1U);
    client_.onResponse(peerId(1), codec::SyncResponse{{}, std::nullopt, 1'000'000});
    ASSERT_TRUE(client_.active());
    ASSERT_EQ(host_.sent.size(), 2U);
    EXPECT_EQ(host_.sent.back().first, peerId(2));
    // Peer 2 holds the chain: its blocks reach the ledger.
    for (int answers = 0; answers < 10 && client_.active(); ++answers) {
        client_.onResponse(peerId(2), honestAnswer(host_.sent.back().second));
    }
    EXPECT_EQ(host_.executedHeight(), kCommitted);
    EXPECT_EQ(host_.caughtUps, 1U);
    EXPECT_TRUE(host_.refusals.empty());
}

TEST_F(SyncClientTest, OnlyABlockBeyondTheLagIsOfferedToSyncAndOneSyncRunsAtATime) {
    const SyncLimits limits;
    EXPECT_FALSE(client_.farAhead(limits.lagBlocks, 0));
    EXPECT_TRUE(client_.farAhead(limits.lagBlocks + 1, 0));
    EXPECT_FALSE(client_.farAhead(5, 10));
    client_.offer(peerId(1), limits.lagBlocks, 0);
    EXPECT_FALSE(client_.active());
    EXPECT_TRUE(host_.sent.empty());
    client_.offer(peerId(1), limits.lagBlocks + 1, 0);
    EXPECT_TRUE(client_.isPeer(peerId(1)));
    client_.offer(peerId(2), 1'000, 0);
    EXPECT_TRUE(client_.isPeer(peerId(1)));
    EXPECT_EQ(host_.sent.size(), 1U);
}

TEST_F(SyncClientTest, ClaimsOfALaterEpochAskEachPeerForAProofAtMostOncePerInterval) {
    const SyncLimits limits;
    client_.onLaterEpoch(peerId(1));
    client_.onLaterEpoch(peerId(1));  // a peer that keeps claiming is asked once
    client_.onLaterEpoch(peerId(2));  // and does not take the turn of another
    EXPECT_EQ(host_.proofAsks, (std::vector<NodeId>{peerId(1), peerId(2)}));
    host_.clock += limits.epochProofInterval;
    client_.onLaterEpoch(peerId(1));
    EXPECT_EQ(host_.proofAsks.size(), 3U);
    EXPECT_FALSE(client_.active());  // a claim never starts a sync
    EXPECT_TRUE(host_.sent.empty());
}

TEST_F(SyncClientTest, OnlyAVerifiedEpochProofAboveTheLedgerStartsASync) {
    const codec::Block& block = chain_.at(kCommitted - 1);
    codec::EpochProof proof{codec::ProofHeader{block.header, block.headerBytes, block.id},
                            chain_.proofOf(kCommitted - 1)};
    codec::EpochProof forged = proof;
    forged.proof.commitQc.signatures.at(0)[0] ^= 1U;
    client_.onEpochProof(peerId(3), forged);
    EXPECT_EQ(host_.refusals, std::vector<NodeId>{peerId(3)});
    EXPECT_EQ(host_.refusedKinds, std::vector<codec::MessageKind>{codec::MessageKind::kEpochProof});
    EXPECT_FALSE(client_.active());
    client_.onEpochProof(peerId(2), proof);
    EXPECT_TRUE(client_.isPeer(peerId(2)));
    ASSERT_EQ(host_.sent.size(), 1U);
    EXPECT_EQ(host_.sent.back().second.fromHeight, 1U);
}

TEST_F(SyncClientTest, AnEpochProofAtOrBelowTheLedgerStartsNothing) {
    const codec::Block& block = chain_.at(0);
    // Genesis: the ledger already holds it (a proof of nothing new).
    codec::EpochProof proof{codec::ProofHeader{block.header, block.headerBytes, block.id},
                            chain_.proofOf(0)};
    client_.onEpochProof(peerId(1), proof);
    EXPECT_FALSE(client_.active());
    EXPECT_TRUE(host_.refusals.empty());
}

}  // namespace
}  // namespace gridledger::node::sync_client_test
