// Block sync: serveSync answers from a real RocksDB ledger holding a chain committed by a
// four-member committee; verifySyncResponse accepts what an honest peer serves and refuses every
// response that does not extend the requester's head with certified, proven blocks.

#include "block_sync.h"

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/p2p.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/p2p/options.h>
#include <gridledger/storage/kv_store.h>

#include "chain_builder.h"
#include "support/temp_dir.h"

namespace gridledger::node::block_sync_test {
namespace {

using testing::ChainBuilder;
using testing::kChainId;
using testing::TestCommittee;

/** A node's ledger in a temp dir: committed blocks, their certificates and commit proofs. */
class Ledger {
  public:
    Ledger() {
        store_ = storage::KvStore::open(dir_.path(), ledger::columnNames()).value();
        blocks_ = std::make_unique<ledger::BlockStore>(*store_);
    }

    [[nodiscard]] const ledger::BlockStore& blocks() const { return *blocks_; }

    /** Stores the block at `height` of `chain` as committed and executed. */
    void commit(const ChainBuilder& chain, std::uint64_t height) {
        commitBlock(chain.at(height), chain.certifyingQc(height));
    }

    /** Stores heights from..to of `chain` (inclusive) as committed and executed. */
    void commitRange(const ChainBuilder& chain, std::uint64_t from, std::uint64_t to) {
        for (std::uint64_t h = from; h <= to; ++h) {
            commit(chain, h);
        }
    }

    void commitBlock(const codec::Block& block, const codec::QuorumCert& certifying) {
        auto batch = store_->batch();
        const std::string tag = std::to_string(block.header.height);
        ASSERT_TRUE(
            blocks_->stageExecuted(batch, block, certifying, {}, {},
                                   ledger::ExecRoots{crypto::sha256(asBytes("state-" + tag)),
                                                     crypto::sha256(asBytes("results-" + tag))}));
        ASSERT_TRUE(store_->write(batch, false));
    }

    void storeProof(std::uint64_t height, const codec::CommitProof& proof) {
        auto batch = store_->batch();
        blocks_->stageCommitProof(batch, height, proof);
        ASSERT_TRUE(store_->write(batch, false));
    }

    /** Stores heights 0..to of `chain` with a commit proof at each of `proofHeights`. */
    void commitWithProofs(const ChainBuilder& chain, std::uint64_t to,
                          const std::vector<std::uint64_t>& proofHeights) {
        commitRange(chain, 0, to);
        for (auto h : proofHeights) {
            storeProof(h, chain.proofOf(h));
        }
    }

  private:
    gridledger::testing::TempDir dir_;
    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<ledger::BlockStore> blocks_;
};

std::vector<std::uint64_t> heights(std::uint64_t from, std::uint64_t to) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t h = from; h <= to; ++h) {
        out.push_back(h);
    }
    return out;
}

std::vector<std::uint64_t> heightsOf(const std::vector<codec::Block>& blocks) {
    std::vector<std::uint64_t> out;
    out.reserve(blocks.size());
    for (const auto& block : blocks) {
        out.push_back(block.header.height);
    }
    return out;
}

/** The response as a peer receives it: through the wire encoding. */
codec::SyncResponse overTheWire(const codec::SyncResponse& response) {
    auto decoded = codec::decodeSyncResponse(codec::encodeSyncResponse(response));
    EXPECT_TRUE(decoded) << decoded.error().message;
    return decoded ? std::move(*decoded) : codec::SyncResponse{};
}

/** The size of the P2P frame body that carries `response`. */
std::size_t frameBytes(const codec::SyncResponse& response) {
    return codec::encodeEnvelope(
               codec::Envelope{codec::NetMessage{codec::MessageKind::kSyncResponse,
                                                 codec::encodeSyncResponse(response)}})
        .size();
}

/** The committed height of the chains most tests serve (their tip is one above). */
constexpr std::uint64_t kCommittedHeight = 10;

class BlockSyncTest : public ::testing::Test {
  protected:
    void SetUp() override {
        chain_.appendMany(kCommitted + 1);  // the tip is the uncommitted child of the last one
    }

    codec::SyncResponse serve(const Ledger& ledger, std::uint64_t fromHeight,
                              std::uint32_t requestMax = 1000, std::uint64_t serverMax = 1000) {
        auto response =
            serveSync(ledger.blocks(), codec::SyncRequest{fromHeight, requestMax}, serverMax);
        EXPECT_TRUE(response) << response.error().message;
        return response ? std::move(*response) : codec::SyncResponse{};
    }

    /** An honest server's answer to a requester at `headHeight` of chain_, proofs everywhere. */
    codec::SyncResponse honestResponse(std::uint64_t headHeight) {
        if (!server_) {
            server_ = std::make_unique<Ledger>();
            server_->commitWithProofs(chain_, kCommitted, heights(1, kCommitted));
        }
        return overTheWire(serve(*server_, headHeight + 1));
    }

    Result<VerifiedBlocks> verifyAt(codec::SyncResponse response, std::uint64_t headHeight) {
        return verifySyncResponse(std::move(response), headHeight, chain_.at(headHeight).id,
                                  chain_.committee(), kChainId);
    }

    /** Expects `verified` refused with `code` by a message naming `height`. */
    static void expectRefusedAt(const Result<VerifiedBlocks>& verified, ErrorCode code,
                                std::uint64_t height) {
        ASSERT_FALSE(verified);
        EXPECT_EQ(verified.error().code, code) << verified.error().message;
        EXPECT_NE(verified.error().message.find("height " + std::to_string(height)),
                  std::string::npos)
            << verified.error().message;
    }

    static constexpr std::uint64_t kCommitted = kCommittedHeight;
    ChainBuilder chain_{TestCommittee::create()};
    std::unique_ptr<Ledger> server_;
};

// ---- BlockStore: commit proofs ----

TEST_F(BlockSyncTest, AStoredCommitProofReadsBackAsWrittenAndOthersAreAbsent) {
    Ledger ledger;
    ledger.commitRange(chain_, 0, 3);
    ledger.storeProof(3, chain_.proofOf(3));
    auto stored = ledger.blocks().commitProofAt(3);
    ASSERT_TRUE(stored) << stored.error().message;
    ASSERT_TRUE(stored->has_value());
    EXPECT_EQ((*stored)->childId, chain_.at(4).id);
    EXPECT_EQ((*stored)->childHeaderBytes, chain_.at(4).headerBytes);
    EXPECT_EQ((*stored)->childHeader, chain_.at(4).header);
    EXPECT_EQ((*stored)->commitQc, chain_.at(5).header.qc);
    for (std::uint64_t h : {0U, 1U, 2U, 4U}) {
        auto absent = ledger.blocks().commitProofAt(h);
        ASSERT_TRUE(absent);
        EXPECT_FALSE(absent->has_value()) << "height " << h;
    }
}

TEST_F(BlockSyncTest, AStoredProofThatNoLongerDecodesIsReportedAsCorrupt) {
    Ledger ledger;
    ledger.commitRange(chain_, 0, 3);
    codec::CommitProof broken = chain_.proofOf(3);
    broken.childHeaderBytes = {0xff, 0xff};
    ledger.storeProof(3, broken);
    auto stored = ledger.blocks().commitProofAt(3);
    ASSERT_FALSE(stored);
    EXPECT_EQ(stored.error().code, ErrorCode::kCorrupt);
    // Serving stops with that error rather than sending blocks without a proof.
    auto response = serveSync(ledger.blocks(), codec::SyncRequest{1, 10}, 10);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().code, ErrorCode::kCorrupt);
}

// ---- serveSync ----

TEST_F(BlockSyncTest, ServesEveryBlockFromTheRequestedHeightToTheHeadWithTheHeadsProof) {
    Ledger ledger;
    ledger.commitWithProofs(chain_, kCommitted, heights(1, kCommitted));
    const codec::SyncResponse response = serve(ledger, 4);
    EXPECT_EQ(response.headHeight, kCommitted);
    ASSERT_EQ(heightsOf(response.blocks), heights(4, kCommitted));
    for (const auto& block : response.blocks) {
        EXPECT_EQ(block.id, chain_.at(block.header.height).id);
        EXPECT_EQ(block.txs, chain_.at(block.header.height).txs);
        EXPECT_EQ(block.signature, chain_.at(block.header.height).signature);
    }
    ASSERT_TRUE(response.proof.has_value());
    EXPECT_EQ(response.proof->childId, chain_.at(kCommitted + 1).id);
    EXPECT_EQ(response.proof->childHeader.parentId, chain_.at(kCommitted).id);
}

TEST_F(BlockSyncTest, AnAnswerStopsAtTheLastBlockOfItsFirstBlocksEpoch) {
    // Heights 6.. belong to the next epoch (docs/protocol.md §12): the asker checks an answer
    // against one committee, so the block that ends the epoch (height 5) ends the answer.
    ChainBuilder chain{TestCommittee::create()};
    for (std::uint64_t h = 1; h <= kCommitted + 1; ++h) {
        chain.append({}, [h](codec::BlockHeader& header) {
            if (h > 5) {
                header.epoch += 1;
            }
        });
    }
    Ledger ledger;
    ledger.commitWithProofs(chain, kCommitted, heights(1, kCommitted));
    const codec::SyncResponse first = serve(ledger, 2);
    EXPECT_EQ(first.headHeight, kCommitted);
    EXPECT_EQ(heightsOf(first.blocks), heights(2, 5));
    ASSERT_TRUE(first.proof.has_value());
    EXPECT_EQ(first.proof->childHeader.parentId, chain.at(5).id);
    const codec::SyncResponse next = serve(ledger, 6);
    EXPECT_EQ(heightsOf(next.blocks), heights(6, kCommitted));
}

TEST_F(BlockSyncTest, CutsTheAnswerBackToTheHighestBlockWithAStoredProof) {
    Ledger ledger;
    ledger.commitWithProofs(chain_, kCommitted, {4, 7});
    codec::SyncResponse response = serve(ledger, 2);
    EXPECT_EQ(heightsOf(response.blocks), heights(2, 7));
    ASSERT_TRUE(response.proof.has_value());
    EXPECT_EQ(response.proof->childId, chain_.at(8).id);
    EXPECT_EQ(response.headHeight, kCommitted);

    // Limited to heights 2..6, the highest proven one is 4.
    response = serve(ledger, 2, 5);
    EXPECT_EQ(heightsOf(response.blocks), heights(2, 4));
    ASSERT_TRUE(response.proof.has_value());
    EXPECT_EQ(response.proof->childId, chain_.at(5).id);
}

TEST_F(BlockSyncTest, ReachesPastTheLimitToTheFirstProvenBlock) {
    Ledger ledger;
    ledger.commitWithProofs(chain_, kCommitted, {9});
    // Asked for 5 blocks from height 1, none of 1..5 has a proof: the answer goes on to 9, the
    // first proven height, rather than answer nothing (which would end the requester's sync).
    const codec::SyncResponse response = serve(ledger, 1, 5);
    EXPECT_EQ(heightsOf(response.blocks), heights(1, 9));
    ASSERT_TRUE(response.proof.has_value());
    EXPECT_EQ(response.proof->childId, chain_.at(10).id);
    EXPECT_EQ(overTheWire(response).blocks.size(), 9U);
}

TEST_F(BlockSyncTest, GivesNoBlocksWhenNoneInReachHasAProof) {
    Ledger ledger;
    ledger.commitWithProofs(chain_, kCommitted, {});
    const codec::SyncResponse response = serve(ledger, 1, 5);
    EXPECT_TRUE(response.blocks.empty());
    EXPECT_FALSE(response.proof.has_value());
    EXPECT_EQ(response.headHeight, kCommitted);
    // An empty answer is a valid payload.
    EXPECT_TRUE(overTheWire(response).blocks.empty());
}

TEST_F(BlockSyncTest, TakesTheSmallerOfItsOwnAndTheRequestsBlockLimit) {
    Ledger ledger;
    ledger.commitWithProofs(chain_, kCommitted, heights(1, kCommitted));
    EXPECT_EQ(heightsOf(serve(ledger, 3, 1000, 4).blocks), heights(3, 6));
    EXPECT_EQ(heightsOf(serve(ledger, 3, 2, 1000).blocks), heights(3, 4));
    EXPECT_EQ(heightsOf(serve(ledger, 3, 1, 1).blocks), heights(3, 3));
    EXPECT_TRUE(serve(ledger, 3, 0, 1000).blocks.empty());
    EXPECT_TRUE(serve(ledger, 3, 1000, 0).blocks.empty());
}

TEST_F(BlockSyncTest, NeverServesMoreThanKMaxSyncBlocks) {
    ChainBuilder longChain{TestCommittee::create()};
    const std::uint64_t committed = codec::kMaxSyncBlocks + 3;
    longChain.appendMany(committed + 1);
    Ledger ledger;
    ledger.commitWithProofs(longChain, committed, heights(1, committed));
    const auto response =
        serveSync(ledger.blocks(), codec::SyncRequest{1, std::numeric_limits<std::uint32_t>::max()},
                  std::numeric_limits<std::uint64_t>::max());
    ASSERT_TRUE(response) << response.error().message;
    ASSERT_EQ(response->blocks.size(), codec::kMaxSyncBlocks);
    ASSERT_TRUE(response->proof.has_value());
    EXPECT_EQ(response->blocks.back().header.height, codec::kMaxSyncBlocks);
    EXPECT_EQ(response->proof->childId, longChain.at(codec::kMaxSyncBlocks + 1).id);
    // What it serves is accepted by the receiving side's limit.
    EXPECT_EQ(overTheWire(*response).blocks.size(), codec::kMaxSyncBlocks);
}

TEST_F(BlockSyncTest, StopsBeforeTheBlockThatWouldPassTheByteBudget) {
    // Blocks of one 3 MiB transaction: two blocks hold 6 MiB plus headers, within the 8 MiB
    // budget; a third would bring 9 MiB, so the answer holds two.
    constexpr std::size_t kTxBytes = std::size_t{3} << 20U;
    static_assert(2 * kTxBytes + 4096 <= kMaxSyncResponseBytes);
    static_assert(3 * kTxBytes > kMaxSyncResponseBytes);
    ChainBuilder bigChain{TestCommittee::create()};
    for (int i = 0; i < 6; ++i) {
        bigChain.append({Bytes(kTxBytes, static_cast<std::uint8_t>(i))});
    }
    Ledger ledger;
    ledger.commitWithProofs(bigChain, 5, heights(1, 5));
    const codec::SyncResponse response = serve(ledger, 1);
    EXPECT_EQ(heightsOf(response.blocks), heights(1, 2));
    ASSERT_TRUE(response.proof.has_value());
    EXPECT_EQ(response.proof->childId, bigChain.at(3).id);
    EXPECT_LE(frameBytes(response), p2p::Limits{}.maxFrameBytes);
}

TEST_F(BlockSyncTest, EveryAnswerFitsOneFrameForBlocksUpToTheCodecLimit) {
    // Block 1 holds 7 MiB, under the budget; block 2 holds 12 MiB (a valid block: below
    // codec::kMaxBlockBytes, and it fits a frame on its own). Together they would not fit one
    // P2P frame, so block 2 waits for the next answer, which holds it alone.
    constexpr std::size_t kMiB = std::size_t{1} << 20U;
    static_assert(12 * kMiB < codec::kMaxBlockBytes);
    ChainBuilder bigChain{TestCommittee::create()};
    bigChain.append({Bytes(7 * kMiB, 0x07)});
    bigChain.append({Bytes(12 * kMiB, 0x0c)});
    bigChain.append({Bytes{0x01}});
    bigChain.append();
    ASSERT_GT(7 * kMiB + 12 * kMiB, p2p::Limits{}.maxFrameBytes);
    Ledger ledger;
    ledger.commitWithProofs(bigChain, 3, heights(1, 3));
    const codec::SyncResponse first = serve(ledger, 1);
    EXPECT_EQ(heightsOf(first.blocks), heights(1, 1));
    EXPECT_LE(frameBytes(first), p2p::Limits{}.maxFrameBytes);
    const codec::SyncResponse second = serve(ledger, 2);
    EXPECT_EQ(heightsOf(second.blocks), heights(2, 2));
    EXPECT_LE(frameBytes(second), p2p::Limits{}.maxFrameBytes);
}

TEST_F(BlockSyncTest, ServesOneBlockLargerThanTheByteBudget) {
    ChainBuilder bigChain{TestCommittee::create()};
    bigChain.append({Bytes(kMaxSyncResponseBytes + 1, 0x11)});
    bigChain.append({Bytes{0x01}});
    bigChain.append();
    Ledger ledger;
    ledger.commitWithProofs(bigChain, 2, {1, 2});
    const codec::SyncResponse response = serve(ledger, 1);
    EXPECT_EQ(heightsOf(response.blocks), heights(1, 1));
    ASSERT_TRUE(response.proof.has_value());
    EXPECT_EQ(response.proof->childId, bigChain.at(2).id);
}

TEST_F(BlockSyncTest, GivesNoBlocksFromHeightZeroOrAboveTheHead) {
    Ledger ledger;
    ledger.commitWithProofs(chain_, kCommitted, heights(1, kCommitted));
    for (std::uint64_t from : {std::uint64_t{0}, kCommitted + 1, kCommitted + 100}) {
        const codec::SyncResponse response = serve(ledger, from);
        EXPECT_TRUE(response.blocks.empty()) << "from " << from;
        EXPECT_FALSE(response.proof.has_value()) << "from " << from;
        EXPECT_EQ(response.headHeight, kCommitted);
    }
}

TEST_F(BlockSyncTest, AnEmptyLedgerAnswersWithNoBlocksAndHeadHeightZero) {
    Ledger ledger;
    const codec::SyncResponse response = serve(ledger, 1);
    EXPECT_TRUE(response.blocks.empty());
    EXPECT_EQ(response.headHeight, 0U);
}

TEST_F(BlockSyncTest, AMissingBlockBelowTheExecutedHeightIsReportedAsCorrupt) {
    Ledger ledger;
    ledger.commitRange(chain_, 0, 4);
    ledger.commitRange(chain_, 6, kCommitted);
    ledger.storeProof(kCommitted, chain_.proofOf(kCommitted));
    const auto response = serveSync(ledger.blocks(), codec::SyncRequest{1, 100}, 100);
    ASSERT_FALSE(response);
    EXPECT_EQ(response.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(response.error().message.find("block 5 "), std::string::npos)
        << response.error().message;
}

// ---- verifySyncResponse ----

TEST_F(BlockSyncTest, AnHonestAnswerVerifiesWithEachBlocksCertificate) {
    auto verified = verifyAt(honestResponse(4), 4);
    ASSERT_TRUE(verified) << verified.error().message;
    ASSERT_EQ(heightsOf(verified->blocks), heights(5, kCommitted));
    ASSERT_EQ(verified->certs.size(), verified->blocks.size());
    for (std::size_t i = 0; i < verified->blocks.size(); ++i) {
        const std::uint64_t h = verified->blocks[i].header.height;
        EXPECT_EQ(verified->blocks[i].id, chain_.at(h).id);
        EXPECT_EQ(verified->certs[i].blockId, chain_.at(h).id) << "height " << h;
        EXPECT_EQ(verified->certs[i].round, chain_.at(h).header.round) << "height " << h;
    }
    EXPECT_EQ(verified->proof.childId, chain_.at(kCommitted + 1).id);
}

TEST_F(BlockSyncTest, ARequesterAtGenesisCatchesUpBatchByBatchAndCanServeInTurn) {
    Ledger server;
    server.commitWithProofs(chain_, kCommitted, heights(1, kCommitted));
    Ledger requester;
    requester.commit(chain_, 0);
    std::uint64_t head = 0;
    int rounds = 0;
    while (true) {
        const codec::SyncResponse response = overTheWire(serve(server, head + 1, 3));
        if (response.blocks.empty()) {
            break;
        }
        auto verified =
            verifySyncResponse(response, head, chain_.at(head).id, chain_.committee(), kChainId);
        ASSERT_TRUE(verified) << verified.error().message;
        for (std::size_t i = 0; i < verified->blocks.size(); ++i) {
            requester.commitBlock(verified->blocks[i], verified->certs[i]);
        }
        head = verified->blocks.back().header.height;
        requester.storeProof(head, verified->proof);
        ASSERT_LT(++rounds, 10);
    }
    EXPECT_EQ(head, kCommitted);
    EXPECT_EQ(rounds, 4);  // 10 blocks, 3 at a time
    for (std::uint64_t h = 1; h <= kCommitted; ++h) {
        auto block = requester.blocks().blockAt(h);
        ASSERT_TRUE(block && *block);
        EXPECT_EQ((*block)->id, chain_.at(h).id);
        auto cert = requester.blocks().certAt(h);
        ASSERT_TRUE(cert && *cert);
        EXPECT_EQ(**cert, chain_.certifyingQc(h));
    }
    // The requester holds the proofs of 3, 6, 9 and 10 and serves up to the highest it reaches.
    auto served = serveSync(requester.blocks(), codec::SyncRequest{2, 100}, 100);
    ASSERT_TRUE(served);
    EXPECT_EQ(heightsOf(served->blocks), heights(2, kCommitted));
    auto again = verifyAt(overTheWire(*served), 1);
    EXPECT_TRUE(again) << again.error().message;
}

// A faulty peer serves [..., R, C] where R ended the epoch and C, of the same epoch, never
// entered any ledger; C's proof verifies. The batch must stop at R, and no proof above R stays.
TEST_F(BlockSyncTest, ABatchStopsRightAfterTheBlockThatEndedTheEpoch) {
    auto verified = verifyAt(honestResponse(4), 4);
    ASSERT_TRUE(verified) << verified.error().message;
    const std::uint64_t endsEpoch = 7;
    std::vector<std::uint64_t> executed;
    const auto applied = applySyncedBlocks(
        *verified, [&](const codec::Block& block, const codec::QuorumCert& cert) -> Result<bool> {
            EXPECT_EQ(cert.blockId, block.id);
            executed.push_back(block.header.height);
            return block.header.height == endsEpoch;
        });
    ASSERT_TRUE(applied);
    EXPECT_EQ(*applied, 3U);
    EXPECT_EQ(executed, heights(5, endsEpoch));
    const auto proofs = syncedCommitProofs(*verified, *applied);
    for (const auto& proof : proofs) {
        EXPECT_LE(proof.height, endsEpoch);
    }

    const auto all = applySyncedBlocks(
        *verified,
        [](const codec::Block&, const codec::QuorumCert&) -> Result<bool> { return false; });
    ASSERT_TRUE(all);
    EXPECT_EQ(*all, verified->blocks.size());
    const auto allProofs = syncedCommitProofs(*verified, *all);
    ASSERT_FALSE(allProofs.empty());
    EXPECT_EQ(allProofs.back().height, kCommitted) << "the batch's own proof comes last";
}

TEST_F(BlockSyncTest, AnExecutionErrorStopsTheBatchAndIsReturned) {
    auto verified = verifyAt(honestResponse(4), 4);
    ASSERT_TRUE(verified);
    std::size_t calls = 0;
    const auto applied = applySyncedBlocks(
        *verified, [&](const codec::Block&, const codec::QuorumCert&) -> Result<bool> {
            ++calls;
            return fail(ErrorCode::kStorage, "disk full");
        });
    ASSERT_FALSE(applied);
    EXPECT_EQ(applied.error().code, ErrorCode::kStorage);
    EXPECT_EQ(calls, 1U);
}

TEST_F(BlockSyncTest, RefusesAnEmptyResponse) {
    auto verified = verifyAt(codec::SyncResponse{}, 4);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::kInvalidBlock);
}

TEST_F(BlockSyncTest, RefusesAGapInHeights) {
    codec::SyncResponse response = honestResponse(4);
    response.blocks.erase(response.blocks.begin() + 2);  // drops height 7
    expectRefusedAt(verifyAt(std::move(response), 4), ErrorCode::kInvalidBlock, 7);
}

TEST_F(BlockSyncTest, RefusesAResponseStartingAboveTheRequestersHead) {
    // The server answers as if asked from height 7; the requester is at 4 and needs 5 first.
    expectRefusedAt(verifyAt(honestResponse(6), 4), ErrorCode::kInvalidBlock, 5);
}

TEST_F(BlockSyncTest, RefusesAResponseStartingAtOrBelowTheRequestersHead) {
    expectRefusedAt(verifyAt(honestResponse(3), 4), ErrorCode::kInvalidBlock, 5);
    expectRefusedAt(verifyAt(honestResponse(4), 5), ErrorCode::kInvalidBlock, 6);
}

TEST_F(BlockSyncTest, RefusesBlocksOfAnotherChainThatDoNotExtendTheHead) {
    // A fork of chain_ after height 4, certified by the same committee.
    ChainBuilder fork = chain_.truncated(4);
    fork.appendMany(kCommitted - 4 + 1, "fork");
    ASSERT_NE(fork.at(5).id, chain_.at(5).id);
    Ledger forkServer;
    forkServer.commitWithProofs(fork, kCommitted, heights(1, kCommitted));
    const codec::SyncResponse forkAnswer = overTheWire(serve(forkServer, 6));
    // The fork's block 6 does not extend chain_'s block 5.
    expectRefusedAt(verifyAt(forkAnswer, 5), ErrorCode::kInvalidBlock, 6);
    // From the fork point the fork's answer verifies: the check is linkage, not the source.
    EXPECT_TRUE(verifyAt(overTheWire(serve(forkServer, 5)), 4));
}

TEST_F(BlockSyncTest, RefusesABlockOfAnotherChainSplicedIntoTheResponse) {
    ChainBuilder fork = chain_.truncated(6);
    fork.appendMany(2, "fork");
    codec::SyncResponse response = honestResponse(4);
    response.blocks[3] = fork.at(8);  // height 8, certified, but its parent is fork's 7
    expectRefusedAt(verifyAt(std::move(response), 4), ErrorCode::kInvalidBlock, 8);
}

TEST_F(BlockSyncTest, RefusesABlockWithAForgedQc) {
    // A chain whose block 7 carries a QC on block 6 with one signature byte changed; every
    // block still names its parent and the blocks after 7 are validly certified.
    ChainBuilder forged{TestCommittee::create()};
    forged.appendMany(6);
    forged.append({}, [](codec::BlockHeader& header) { header.qc.signatures[0][10] ^= 0x01; });
    forged.appendMany(kCommitted - 7 + 1);
    Ledger server;
    server.commitWithProofs(forged, kCommitted, heights(1, kCommitted));
    const codec::SyncResponse response = overTheWire(serve(server, 5));
    auto verified = verifySyncResponse(response, 4, forged.at(4).id, forged.committee(), kChainId);
    expectRefusedAt(verified, ErrorCode::kInvalidCertificate, 7);
}

/**
 * Builds blocks 1..6, a block 7 changed by `adjust` before it is signed, and blocks certified on
 * top of it up to index kCommittedHeight + 1; then verifies, as a requester at height 4, the
 * response of blocks 5..kCommittedHeight (by position in the chain) with the last one's proof.
 */
Result<VerifiedBlocks> verifyChainWithAdjustedBlock7(
    const std::function<void(const ChainBuilder&, codec::BlockHeader&)>& adjust) {
    ChainBuilder adjusted{TestCommittee::create()};
    adjusted.appendMany(6);
    adjusted.append({}, [&](codec::BlockHeader& header) { adjust(adjusted, header); });
    adjusted.appendMany(kCommittedHeight - 7 + 1);
    codec::SyncResponse response;
    for (std::uint64_t i = 5; i <= kCommittedHeight; ++i) {
        response.blocks.push_back(adjusted.at(i));
    }
    response.proof = adjusted.proofOf(kCommittedHeight);
    response.headHeight = kCommittedHeight;
    return verifySyncResponse(overTheWire(response), 4, adjusted.at(4).id, adjusted.committee(),
                              kChainId);
}

TEST_F(BlockSyncTest, RefusesACertifiedBlockThatClaimsAnotherHeight) {
    // Block 7 says it is at height 9; it names block 6 as parent and every QC is valid.
    expectRefusedAt(verifyChainWithAdjustedBlock7(
                        [](const ChainBuilder&, codec::BlockHeader& h) { h.height = 9; }),
                    ErrorCode::kInvalidBlock, 7);
}

TEST_F(BlockSyncTest, RefusesABlockWhoseParentIsNotTheBlockItsQcCertifies) {
    // Block 7 carries a valid QC on block 6 but names block 5 as its parent.
    expectRefusedAt(
        verifyChainWithAdjustedBlock7(
            [](const ChainBuilder& chain, codec::BlockHeader& h) { h.parentId = chain.at(5).id; }),
        ErrorCode::kInvalidBlock, 7);
}

TEST_F(BlockSyncTest, RefusesABlockWhoseQcCertifiesAnotherBlockThanItsParent) {
    // Block 7 names block 6 as parent but carries the valid QC on block 5.
    expectRefusedAt(
        verifyChainWithAdjustedBlock7(
            [](const ChainBuilder& chain, codec::BlockHeader& h) { h.qc = chain.certifyingQc(5); }),
        ErrorCode::kInvalidBlock, 7);
}

TEST_F(BlockSyncTest, RefusesAQcSignedByNonMembers) {
    const TestCommittee outsiders = [] {
        std::vector<crypto::SecretKey> keys;
        std::vector<PubKey> members;
        for (std::size_t i = 0; i < 4; ++i) {
            keys.push_back(testing::testKey(i, "outsider"));
            members.push_back(keys.back().publicKey());
        }
        const codec::Block genesis = testing::genesisBlock();
        return TestCommittee{
            keys, genesis, consensus::Committee::create(kChainId, 0, genesis.id, members).value()};
    }();
    // The same genesis, but blocks certified by an outside committee: block 1 carries the
    // genesis QC, block 2 the first QC signed by outsiders.
    ChainBuilder outside{outsiders};
    outside.appendMany(kCommitted + 1);
    Ledger server;
    server.commitWithProofs(outside, kCommitted, heights(1, kCommitted));
    auto verified = verifySyncResponse(overTheWire(serve(server, 1)), 0, chain_.at(0).id,
                                       chain_.committee(), kChainId);
    expectRefusedAt(verified, ErrorCode::kInvalidCertificate, 2);
}

TEST_F(BlockSyncTest, RefusesBlocksOfAnotherEpoch) {
    auto nextEpoch =
        consensus::Committee::create(kChainId, 1, chain_.at(0).id, chain_.committee().members());
    ASSERT_TRUE(nextEpoch);
    auto verified = verifySyncResponse(honestResponse(4), 4, chain_.at(4).id, *nextEpoch, kChainId);
    expectRefusedAt(verified, ErrorCode::kInvalidBlock, 5);
}

TEST_F(BlockSyncTest, RefusesCertificatesOfAnotherChainId) {
    auto verified = verifySyncResponse(honestResponse(4), 4, chain_.at(4).id, chain_.committee(),
                                       "another-chain");
    expectRefusedAt(verified, ErrorCode::kInvalidCertificate, 5);
}

TEST_F(BlockSyncTest, RefusesAResponseWithoutAProof) {
    codec::SyncResponse response = honestResponse(4);
    response.proof.reset();
    auto verified = verifyAt(std::move(response), 4);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::kInvalidBlock);
}

TEST_F(BlockSyncTest, RefusesTheProofOfAnEarlierBlock) {
    codec::SyncResponse response = honestResponse(4);
    response.proof = chain_.proofOf(kCommitted - 1);
    expectRefusedAt(verifyAt(std::move(response), 4), ErrorCode::kInvalidCertificate, kCommitted);
}

TEST_F(BlockSyncTest, RefusesAProofWhoseLastBlockWasDropped) {
    // The blocks end at 9 but the proof is that of 10.
    codec::SyncResponse response = honestResponse(4);
    response.blocks.pop_back();
    expectRefusedAt(verifyAt(std::move(response), 4), ErrorCode::kInvalidCertificate,
                    kCommitted - 1);
}

TEST_F(BlockSyncTest, RefusesAProofWithAForgedCommitQc) {
    codec::SyncResponse response = honestResponse(4);
    response.proof->commitQc.signatures[2][40] ^= 0x04;
    expectRefusedAt(verifyAt(std::move(response), 4), ErrorCode::kInvalidCertificate, kCommitted);
}

TEST_F(BlockSyncTest, RefusesAProofWhoseChildIsOfAFork) {
    // The fork's block 11 follows chain_'s block 10 by height and round but not by parent.
    ChainBuilder fork = chain_.truncated(kCommitted - 1);
    fork.appendMany(3, "fork");
    codec::SyncResponse response = honestResponse(4);
    response.proof = fork.proofOf(kCommitted);
    expectRefusedAt(verifyAt(std::move(response), 4), ErrorCode::kInvalidCertificate, kCommitted);
}

}  // namespace
}  // namespace gridledger::node::block_sync_test

namespace gridledger::node::block_sync_test {
namespace {

TEST(ChainedCommitProofs, EachBlockIsProvenByASuccessorInTheNextRound) {
    testing::ChainBuilder chain{testing::TestCommittee::create()};
    chain.appendMany(3);  // heights 1..3 in rounds 1..3
    // Height 4 comes after a timed-out round: round 5, so it does not prove height 3.
    chain.append({}, [](codec::BlockHeader& h) { h.round = 5; });
    chain.append({}, [](codec::BlockHeader& h) { h.round = 6; });
    chain.append({}, [](codec::BlockHeader& h) { h.round = 7; });
    std::vector<const codec::Block*> blocks;
    std::vector<const codec::QuorumCert*> certs;
    for (std::uint64_t h = 1; h <= 6; ++h) {
        blocks.push_back(&chain.at(h));
        certs.push_back(&chain.certifyingQc(h));
    }
    const auto proofs = chainedCommitProofs(blocks, certs);
    // 1 by 2, 2 by 3, 4 by 5, 5 by 6; not 3 (its successor is two rounds later), not 6 (last).
    std::vector<std::uint64_t> proven;
    for (const auto& p : proofs) {
        proven.push_back(p.height);
        EXPECT_TRUE(consensus::verifyCommitProof(chain.at(p.height), p.proof, chain.committee(),
                                                 testing::kChainId))
            << "height " << p.height;
    }
    EXPECT_EQ(proven, (std::vector<std::uint64_t>{1, 2, 4, 5}));
}

TEST(EpochEndProofs, TheBlockThatEndedAnEpochIsServedWhenItsSuccessorIsNotInTheNextRound) {
    testing::ChainBuilder chain{testing::TestCommittee::create()};
    chain.appendMany(6);  // heights 1..6 in rounds 1..6; R = 6 ends the epoch
    // The round after R timed out: R's successor C (height 7) is in round 8, and C's child D
    // (round 9) commits C and R in one Commit {R, C} whose commitQc certifies D.
    chain.append({}, [](codec::BlockHeader& h) { h.round = 8; });
    chain.append({}, [](codec::BlockHeader& h) { h.round = 9; });
    const std::vector<const codec::Block*> committed{&chain.at(6), &chain.at(7)};
    const std::vector<const codec::QuorumCert*> certs{&chain.certifyingQc(6),
                                                      &chain.certifyingQc(7)};
    // R's successor does not prove it...
    for (const auto& p : chainedCommitProofs(committed, certs)) {
        EXPECT_NE(p.height, 6U);
    }
    // ...the proof through the rest of the commit does.
    auto proof = commitProofInCommit(committed, 0, chain.at(8).headerBytes, chain.certifyingQc(8));
    ASSERT_TRUE(proof) << proof.error().message;
    ASSERT_EQ(proof->path.size(), 1U);
    EXPECT_EQ(proof->path.front().id, chain.at(7).id);
    EXPECT_TRUE(
        consensus::verifyCommitProof(chain.at(6), *proof, chain.committee(), testing::kChainId));

    // A ledger that ends the epoch at R (1..5 proven by their successors, R by that proof)
    // serves R, and a node at any height below R verifies it, with R's own certificate.
    Ledger server;
    server.commitRange(chain, 0, 6);
    for (std::uint64_t h = 1; h <= 5; ++h) {
        server.storeProof(h, chain.proofOf(h));
    }
    server.storeProof(6, *proof);
    for (const std::uint64_t head : {0U, 3U, 5U}) {
        auto response = serveSync(server.blocks(), codec::SyncRequest{head + 1, 1000}, 1000);
        ASSERT_TRUE(response) << response.error().message;
        EXPECT_EQ(heightsOf(response->blocks), heights(head + 1, 6)) << "from " << head;
        auto verified = verifySyncResponse(overTheWire(*response), head, chain.at(head).id,
                                           chain.committee(), testing::kChainId);
        ASSERT_TRUE(verified) << verified.error().message;
        EXPECT_EQ(verified->certs.back(), chain.at(7).header.qc);
        // What the syncing node stores lets it serve R in turn.
        const auto stored = syncedCommitProofs(*verified, verified->blocks.size());
        ASSERT_FALSE(stored.empty());
        EXPECT_EQ(stored.back().height, 6U);
        EXPECT_EQ(stored.back().proof.path.size(), 1U);
    }
}

TEST(EpochEndProofs, AnEpochProofNamesTheBlockThatEndedTheEpochAndVerifiesAgainstItsCommittee) {
    testing::ChainBuilder chain{testing::TestCommittee::create()};
    chain.appendMany(6);
    chain.append({}, [](codec::BlockHeader& h) { h.round = 8; });
    chain.append({}, [](codec::BlockHeader& h) { h.round = 9; });
    const std::vector<const codec::Block*> committed{&chain.at(6), &chain.at(7)};
    Ledger server;
    server.commitRange(chain, 0, 6);
    server.storeProof(
        6,
        commitProofInCommit(committed, 0, chain.at(8).headerBytes, chain.certifyingQc(8)).value());
    server.storeProof(5, chain.proofOf(5));

    auto served = epochProofOf(server.blocks(), chain.at(6));
    ASSERT_TRUE(served && *served);
    auto proof = codec::decodeEpochProof(codec::encodeEpochProof(**served));  // over the wire
    ASSERT_TRUE(proof) << proof.error().message;
    EXPECT_EQ(proof->reconfig.id, chain.at(6).id);
    EXPECT_EQ(proof->reconfig.header.height, 6U);
    auto verified = verifyEpochProof(*proof, chain.committee(), testing::kChainId);
    EXPECT_TRUE(verified) << verified.error().message;

    // The committee of another epoch cannot check it: the asker is no longer (or not yet) there.
    auto nextEpoch = consensus::Committee::create(testing::kChainId, 1, chain.at(6).id,
                                                  chain.committee().members());
    ASSERT_TRUE(nextEpoch);
    auto other = verifyEpochProof(*proof, *nextEpoch, testing::kChainId);
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code, ErrorCode::kWrongEpoch);

    // A made-up height on R's header with R's id: the id is not the header's hash.
    codec::EpochProof claimed = *proof;
    claimed.reconfig.header.height = 60;
    claimed.reconfig.headerBytes = codec::encodeHeader(claimed.reconfig.header);
    auto forged = verifyEpochProof(claimed, chain.committee(), testing::kChainId);
    ASSERT_FALSE(forged);
    EXPECT_EQ(forged.error().code, ErrorCode::kInvalidBlock);
    // Another block's header with R's proof: the proof does not prove it.
    claimed = *proof;
    claimed.reconfig =
        codec::ProofHeader{chain.at(5).header, chain.at(5).headerBytes, chain.at(5).id};
    forged = verifyEpochProof(claimed, chain.committee(), testing::kChainId);
    ASSERT_FALSE(forged);
    EXPECT_EQ(forged.error().code, ErrorCode::kInvalidCertificate);
    // A block without a stored proof is not served.
    auto unproven = epochProofOf(server.blocks(), chain.at(4));
    ASSERT_TRUE(unproven);
    EXPECT_FALSE(*unproven);
}

TEST(EpochEndProofs, TheLastBlockOfEachEpochIsFoundInTheLedger) {
    // Epoch 0 up to height 3, epoch 1 from 4 to 6, epoch 2 from 7 to 9.
    testing::ChainBuilder chain{testing::TestCommittee::create()};
    for (std::uint64_t h = 1; h <= 9; ++h) {
        chain.append({}, [h](codec::BlockHeader& header) { header.epoch = (h - 1) / 3; });
    }
    Ledger ledger;
    ledger.commitRange(chain, 0, 9);
    const auto lastOf = [&](std::uint64_t epoch, std::uint64_t executed) {
        auto found = lastBlockOfEpoch(ledger.blocks(), epoch, executed);
        EXPECT_TRUE(found) << found.error().message;
        return found && *found ? std::optional<std::uint64_t>{(*found)->header.height}
                               : std::nullopt;
    };
    EXPECT_EQ(lastOf(0, 9), 3U);
    EXPECT_EQ(lastOf(1, 9), 6U);
    EXPECT_EQ(lastOf(2, 9), 9U);
    EXPECT_EQ(lastOf(3, 9), std::nullopt);  // no block of epoch 3
    EXPECT_EQ(lastOf(1, 5), 5U);            // what a ledger executed up to 5 holds of epoch 1
    EXPECT_EQ(lastOf(0, 0), 0U);            // the genesis block alone
    EXPECT_EQ(lastOf(2, 6), std::nullopt);
}

}  // namespace
}  // namespace gridledger::node::block_sync_test
