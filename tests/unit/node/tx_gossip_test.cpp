// Transaction gossip: the batches for a peer hold every queued transaction except the peer's own,
// in order, cut so that each batch passes the receiver's TxBatch limits; the outbox hands out
// what was queued, oldest first, once.

#include "tx_gossip.h"

#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/p2p.h>
#include <gridledger/codec/tx.h>

namespace gridledger::node::tx_gossip_test {
namespace {

NodeId peerId(std::uint8_t tag) {
    NodeId id;
    id[0] = tag;
    id[19] = tag;
    return id;
}

Bytes txNamed(const std::string& name) {
    return {name.begin(), name.end()};
}

/** The transactions of `batches`, concatenated. */
std::vector<Bytes> flatten(const std::vector<codec::TxBatch>& batches) {
    std::vector<Bytes> out;
    for (const auto& batch : batches) {
        out.insert(out.end(), batch.txs.begin(), batch.txs.end());
    }
    return out;
}

std::vector<std::size_t> sizesOf(const std::vector<codec::TxBatch>& batches) {
    std::vector<std::size_t> out;
    out.reserve(batches.size());
    for (const auto& batch : batches) {
        out.push_back(batch.txs.size());
    }
    return out;
}

const NodeId kAlice = peerId(1);
const NodeId kBob = peerId(2);
const NodeId kCarol = peerId(3);

TEST(BatchesFor, SkipsThePeersOwnTransactionsAndKeepsTheOrder) {
    const std::vector<OutgoingTx> txs{
        {txNamed("client-1"), std::nullopt},
        {txNamed("alice-1"), kAlice},
        {txNamed("bob-1"), kBob},
        {txNamed("alice-2"), kAlice},
        {txNamed("client-2"), std::nullopt},
        {txNamed("carol-1"), kCarol},
    };
    EXPECT_EQ(flatten(batchesFor(txs, kAlice)),
              (std::vector<Bytes>{txNamed("client-1"), txNamed("bob-1"), txNamed("client-2"),
                                  txNamed("carol-1")}));
    EXPECT_EQ(flatten(batchesFor(txs, kBob)),
              (std::vector<Bytes>{txNamed("client-1"), txNamed("alice-1"), txNamed("alice-2"),
                                  txNamed("client-2"), txNamed("carol-1")}));
    // A peer that sent none of them gets all of them, in one batch.
    const auto all = batchesFor(txs, peerId(9));
    ASSERT_EQ(all.size(), 1U);
    EXPECT_EQ(all[0].txs.size(), txs.size());
}

TEST(BatchesFor, GivesNoBatchWhenNothingIsLeftForThePeer) {
    EXPECT_TRUE(batchesFor({}, kAlice).empty());
    const std::vector<OutgoingTx> alicesOwn{{txNamed("a1"), kAlice}, {txNamed("a2"), kAlice}};
    EXPECT_TRUE(batchesFor(alicesOwn, kAlice).empty());
}

TEST(BatchesFor, CutsEveryKMaxTxBatchTransactions) {
    std::vector<OutgoingTx> txs;
    std::vector<Bytes> expected;
    for (std::size_t i = 0; i < 2 * codec::kMaxTxBatch + 3; ++i) {
        txs.push_back({txNamed("tx-" + std::to_string(i)), std::nullopt});
        expected.push_back(txs.back().raw);
    }
    const auto batches = batchesFor(txs, kAlice);
    EXPECT_EQ(sizesOf(batches),
              (std::vector<std::size_t>{codec::kMaxTxBatch, codec::kMaxTxBatch, 3}));
    EXPECT_EQ(flatten(batches), expected);
}

TEST(BatchesFor, SkippedTransactionsDoNotCountTowardsABatch) {
    // Bob's own transactions interleave the others; he gets the kMaxTxBatch + 1 others.
    std::vector<OutgoingTx> txs;
    for (std::size_t i = 0; i < codec::kMaxTxBatch + 1; ++i) {
        txs.push_back({txNamed("client-" + std::to_string(i)), std::nullopt});
        txs.push_back({txNamed("bob-" + std::to_string(i)), kBob});
    }
    EXPECT_EQ(sizesOf(batchesFor(txs, kBob)), (std::vector<std::size_t>{codec::kMaxTxBatch, 1}));
}

TEST(BatchesFor, CutsAtKMaxTxBatchBytes) {
    // Transactions of the largest size: exactly kMaxTxBatchBytes / kMaxTxBytes fit a batch.
    static_assert(kMaxTxBatchBytes % codec::kMaxTxBytes == 0);
    constexpr std::size_t kPerBatch = kMaxTxBatchBytes / codec::kMaxTxBytes;
    static_assert(kPerBatch < codec::kMaxTxBatch);
    std::vector<OutgoingTx> txs;
    for (std::size_t i = 0; i < 2 * kPerBatch + 1; ++i) {
        txs.push_back({Bytes(codec::kMaxTxBytes, static_cast<std::uint8_t>(i)), kCarol});
    }
    const auto batches = batchesFor(txs, kAlice);
    EXPECT_EQ(sizesOf(batches), (std::vector<std::size_t>{kPerBatch, kPerBatch, 1}));
    for (std::size_t b = 0; b < batches.size(); ++b) {
        for (std::size_t k = 0; k < batches[b].txs.size(); ++k) {
            EXPECT_EQ(batches[b].txs[k][0], static_cast<std::uint8_t>(b * kPerBatch + k));
        }
    }
}

TEST(BatchesFor, AByteBoundCutStartsTheNextBatchWithTheTxThatDidNotFit) {
    // Largest txs to just under the byte bound, a half-size one that still fits, then one that
    // would pass the bound: it opens the second batch.
    const std::size_t big = codec::kMaxTxBytes;
    std::vector<OutgoingTx> txs;
    std::size_t bytes = 0;
    while (bytes + big <= kMaxTxBatchBytes - big / 2) {
        txs.push_back({Bytes(big, 0x01), std::nullopt});
        bytes += big;
    }
    txs.push_back({Bytes(big / 2 + 1, 0x02), std::nullopt});  // fits: bytes + big/2 + 1 <= max
    txs.push_back({Bytes(big, 0x03), std::nullopt});          // does not fit
    ASSERT_LE(bytes + big / 2 + 1, kMaxTxBatchBytes);
    ASSERT_GT(bytes + big / 2 + 1 + big, kMaxTxBatchBytes);
    const auto batches = batchesFor(txs, kAlice);
    ASSERT_EQ(batches.size(), 2U);
    EXPECT_EQ(batches[0].txs.size(), txs.size() - 1);
    ASSERT_EQ(batches[1].txs.size(), 1U);
    EXPECT_EQ(batches[1].txs[0], txs.back().raw);
}

TEST(BatchesFor, EveryBatchPassesTheReceiversTxBatchLimits) {
    std::vector<OutgoingTx> txs;
    for (std::size_t i = 0; i < 600; ++i) {
        const std::size_t size = (i * 7919) % codec::kMaxTxBytes + 1;
        txs.push_back({Bytes(size, static_cast<std::uint8_t>(i)), i % 5 == 0 ? kAlice : kBob});
    }
    const auto batches = batchesFor(txs, kAlice);
    std::vector<Bytes> received;
    for (const auto& batch : batches) {
        std::size_t bytes = 0;
        for (const auto& tx : batch.txs) {
            bytes += tx.size();
        }
        EXPECT_LE(bytes, kMaxTxBatchBytes);
        auto decoded = codec::decodeTxBatch(codec::encodeTxBatch(batch));
        ASSERT_TRUE(decoded) << decoded.error().message;
        received.insert(received.end(), decoded->txs.begin(), decoded->txs.end());
    }
    std::vector<Bytes> expected;
    for (const auto& tx : txs) {
        if (tx.origin != kAlice) {
            expected.push_back(tx.raw);
        }
    }
    EXPECT_EQ(received, expected);
}

// ---- TxOutbox ----

TEST(TxOutbox, TakeHandsOutEverythingOldestFirstAndOnlyOnce) {
    TxOutbox outbox;
    EXPECT_TRUE(outbox.take().empty());
    outbox.add({txNamed("one"), std::nullopt});
    outbox.add({txNamed("two"), kAlice});
    outbox.add({txNamed("three"), kBob});
    const auto taken = outbox.take();
    ASSERT_EQ(taken.size(), 3U);
    EXPECT_EQ(taken[0].raw, txNamed("one"));
    EXPECT_FALSE(taken[0].origin.has_value());
    EXPECT_EQ(taken[1].raw, txNamed("two"));
    EXPECT_EQ(taken[1].origin, kAlice);
    EXPECT_EQ(taken[2].raw, txNamed("three"));
    EXPECT_EQ(taken[2].origin, kBob);
    EXPECT_TRUE(outbox.take().empty());
    outbox.add({txNamed("four"), std::nullopt});
    const auto next = outbox.take();
    ASSERT_EQ(next.size(), 1U);
    EXPECT_EQ(next[0].raw, txNamed("four"));
}

TEST(TxOutbox, ConcurrentAddsAndTakesLoseNothingAndKeepEachSendersOrder) {
    constexpr std::size_t kThreads = 4;
    constexpr std::size_t kPerThread = 2000;
    TxOutbox outbox;
    std::vector<OutgoingTx> taken;
    {
        std::vector<std::jthread> threads;
        for (std::size_t t = 0; t < kThreads; ++t) {
            threads.emplace_back([&outbox, t] {
                for (std::size_t i = 0; i < kPerThread; ++i) {
                    outbox.add({txNamed(std::to_string(t) + ":" + std::to_string(i)),
                                peerId(static_cast<std::uint8_t>(t))});
                }
            });
        }
        // Take while the writers run.
        for (int i = 0; i < 100; ++i) {
            auto part = outbox.take();
            taken.insert(taken.end(), part.begin(), part.end());
        }
    }
    auto rest = outbox.take();
    taken.insert(taken.end(), rest.begin(), rest.end());
    ASSERT_EQ(taken.size(), kThreads * kPerThread);
    std::vector<std::size_t> next(kThreads, 0);
    for (const auto& tx : taken) {
        const std::size_t t = (*tx.origin)[0];
        ASSERT_LT(t, kThreads);
        EXPECT_EQ(tx.raw, txNamed(std::to_string(t) + ":" + std::to_string(next[t])));
        ++next[t];
    }
}

}  // namespace
}  // namespace gridledger::node::tx_gossip_test
