// The pure policies of the transport: send queue, ban score, re-dial backoff, address book.

#include <random>

#include <gtest/gtest.h>

#include "../../../p2p/address_book.h"
#include "../../../p2p/backoff.h"
#include "../../../p2p/ban_list.h"
#include "../../../p2p/send_queue.h"
#include "../../../p2p/tie_break.h"

namespace gridledger::p2p::policy_test {
namespace {

using namespace std::chrono_literals;

SendQueue::Entry entry(std::size_t bytes, bool droppable, std::uint8_t tag = 0) {
    return {std::make_shared<const Bytes>(bytes, tag), droppable};
}

NodeId nodeIdWith(std::uint8_t byte) {
    NodeId id;
    id[0] = byte;
    return id;
}

TEST(SendQueue, CountAndByteBoundsAlwaysHold) {
    SendQueue queue(4, 1000);
    for (int i = 0; i < 100; ++i) {
        (void)queue.push(entry(300, i % 2 == 0));
        EXPECT_LE(queue.size(), 4U);
        EXPECT_LE(queue.bytes(), 1000U);
    }
}

TEST(SendQueue, TheOldestDroppableFrameMakesRoomFirst) {
    SendQueue queue(3, 10'000);
    ASSERT_EQ(queue.push(entry(10, true, 1)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(10, false, 2)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(10, true, 3)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(10, false, 4)), SendQueue::Outcome::kQueued);
    EXPECT_EQ(queue.dropped(), 1U);
    std::vector<std::uint8_t> tags;
    for (const auto& e : queue.takeQueued()) {
        tags.push_back((*e.frame)[0]);
    }
    EXPECT_EQ(tags, (std::vector<std::uint8_t>{2, 3, 4}));
}

TEST(SendQueue, ADroppableFrameWithNoRoomIsDroppedItself) {
    SendQueue queue(2, 10'000);
    ASSERT_EQ(queue.push(entry(10, false)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(10, false)), SendQueue::Outcome::kQueued);
    EXPECT_EQ(queue.push(entry(10, true)), SendQueue::Outcome::kDroppedNew);
    EXPECT_EQ(queue.dropped(), 1U);
    EXPECT_EQ(queue.size(), 2U);
}

TEST(SendQueue, AFullQueueOfUndroppableFramesOverflows) {
    SendQueue queue(2, 10'000);
    ASSERT_EQ(queue.push(entry(10, false)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(10, false)), SendQueue::Outcome::kQueued);
    EXPECT_EQ(queue.push(entry(10, false)), SendQueue::Outcome::kOverflow);
    EXPECT_EQ(queue.size(), 2U);
}

TEST(SendQueue, TheFrameInFlightIsNeverEvicted) {
    SendQueue queue(2, 10'000);
    ASSERT_EQ(queue.push(entry(10, true, 1)), SendQueue::Outcome::kQueued);
    auto writing = queue.beginWrite();
    ASSERT_NE(writing, nullptr);
    EXPECT_EQ(queue.beginWrite(), nullptr);  // one write at a time
    ASSERT_EQ(queue.push(entry(10, true, 2)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(10, false, 3)), SendQueue::Outcome::kQueued);  // evicts tag 2
    EXPECT_EQ(queue.push(entry(10, false, 4)), SendQueue::Outcome::kOverflow);
    queue.finishWrite();
    EXPECT_EQ(queue.size(), 1U);
    EXPECT_EQ(queue.bytes(), 10U);
    EXPECT_EQ((*queue.beginWrite())[0], 3);
}

TEST(SendQueue, TakingTheQueueLeavesTheFrameInFlightToFinish) {
    SendQueue queue(10, 10'000);
    ASSERT_EQ(queue.push(entry(10, false, 1)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(20, true, 2)), SendQueue::Outcome::kQueued);
    ASSERT_EQ(queue.push(entry(30, false, 3)), SendQueue::Outcome::kQueued);
    ASSERT_NE(queue.beginWrite(), nullptr);
    const auto taken = queue.takeQueued();
    ASSERT_EQ(taken.size(), 2U);
    EXPECT_EQ((*taken[0].frame)[0], 2);
    EXPECT_EQ((*taken[1].frame)[0], 3);
    EXPECT_EQ(queue.size(), 1U);
    EXPECT_EQ(queue.bytes(), 10U);
    EXPECT_TRUE(queue.inFlight());
    queue.finishWrite();
    EXPECT_TRUE(queue.empty());
    EXPECT_EQ(queue.bytes(), 0U);
}

TEST(SendQueue, TheByteBoundEvictsSeveralSmallFramesForALargeOne) {
    SendQueue queue(100, 1000);
    for (int i = 0; i < 9; ++i) {
        ASSERT_EQ(queue.push(entry(100, true)), SendQueue::Outcome::kQueued);
    }
    ASSERT_EQ(queue.push(entry(500, false)), SendQueue::Outcome::kQueued);
    EXPECT_EQ(queue.bytes(), 1000U);
    EXPECT_EQ(queue.dropped(), 4U);
}

TEST(BanList, ScoresAddUpToABanThatEnds) {
    BanPolicy policy;
    policy.threshold = 100;
    policy.banDuration = 10min;
    policy.decayPerMinute = 0;
    BanList bans(policy);
    const auto t0 = BanList::Clock::time_point{} + 1h;
    const NodeId peer = nodeIdWith(1);
    EXPECT_FALSE(bans.add(peer, 50, t0));
    EXPECT_EQ(bans.score(peer, t0), 50U);
    EXPECT_FALSE(bans.isBanned(peer, t0));
    EXPECT_TRUE(bans.add(peer, 50, t0));
    EXPECT_TRUE(bans.isBanned(peer, t0 + 9min));
    EXPECT_EQ(*bans.bannedUntil(peer, t0), t0 + 10min);
    EXPECT_FALSE(bans.add(peer, 500, t0 + 1min));  // ignored while banned
    EXPECT_FALSE(bans.isBanned(peer, t0 + 10min));
    EXPECT_EQ(bans.score(peer, t0 + 10min), 0U);
    EXPECT_FALSE(bans.isBanned(nodeIdWith(2), t0));
}

TEST(BanList, ScoresDecayOverTime) {
    BanPolicy policy;
    policy.threshold = 100;
    policy.decayPerMinute = 10;
    BanList bans(policy);
    const auto t0 = BanList::Clock::time_point{} + 1h;
    const NodeId peer = nodeIdWith(1);
    EXPECT_FALSE(bans.add(peer, 90, t0));
    EXPECT_EQ(bans.score(peer, t0 + 3min), 60U);
    EXPECT_FALSE(bans.add(peer, 30, t0 + 3min));  // 60 + 30 < 100
    EXPECT_EQ(bans.score(peer, t0 + 20min), 0U);
}

TEST(Backoff, DoublesUpToTheCapWithJitterInTheUpperHalf) {
    std::mt19937_64 rng(7);
    for (std::uint32_t attempt = 0; attempt < 20; ++attempt) {
        const auto nominal = std::min<std::int64_t>(500LL << std::min(attempt, 10U), 30'000);
        for (int i = 0; i < 20; ++i) {
            const auto delay = backoffDelay(attempt, 500ms, 30s, rng).count();
            EXPECT_GE(delay, nominal / 2) << "attempt " << attempt;
            EXPECT_LE(delay, nominal) << "attempt " << attempt;
        }
    }
}

TEST(Backoff, TheSameSeedGivesTheSameDelays) {
    std::mt19937_64 a(42);
    std::mt19937_64 b(42);
    for (std::uint32_t attempt = 0; attempt < 10; ++attempt) {
        EXPECT_EQ(backoffDelay(attempt, 100ms, 5s, a), backoffDelay(attempt, 100ms, 5s, b));
    }
}

TEST(AddressBook, ABetterSourceWinsAndAWorseOneNeverReplacesIt) {
    AddressBook book;
    const NodeId peer = nodeIdWith(1);
    EXPECT_TRUE(book.learn({peer, "10.0.0.1", 1}, AddressSource::kExchange));
    EXPECT_TRUE(book.learn({peer, "10.0.0.2", 2}, AddressSource::kObserved));
    EXPECT_FALSE(book.learn({peer, "10.0.0.3", 3}, AddressSource::kExchange));
    EXPECT_TRUE(book.learn({peer, "10.0.0.4", 4}, AddressSource::kConfigured));
    EXPECT_FALSE(book.learn({peer, "10.0.0.5", 5}, AddressSource::kObserved));
    EXPECT_EQ(book.find(peer)->host, "10.0.0.4");
    EXPECT_EQ(book.all().size(), 1U);
    EXPECT_FALSE(book.find(nodeIdWith(2)));
}

TEST(TieBreak, BothEndsKeepTheConnectionDialedByTheLowerNodeId) {
    const NodeId low = nodeIdWith(1);
    const NodeId high = nodeIdWith(2);
    // At `low`: its own outbound connection beats the inbound one dialed by `high`.
    EXPECT_TRUE(keepsNewConnection(low, high, /*newOutbound=*/true, /*existingOutbound=*/false));
    EXPECT_FALSE(keepsNewConnection(low, high, false, true));
    // At `high`: the inbound connection (dialed by `low`) beats its own outbound one.
    EXPECT_TRUE(keepsNewConnection(high, low, false, true));
    EXPECT_FALSE(keepsNewConnection(high, low, true, false));
}

TEST(TieBreak, ANewConnectionFromTheSameDialerReplacesAStaleOne) {
    const NodeId low = nodeIdWith(1);
    const NodeId high = nodeIdWith(2);
    EXPECT_TRUE(keepsNewConnection(low, high, true, true));
    EXPECT_TRUE(keepsNewConnection(low, high, false, false));
    EXPECT_TRUE(keepsNewConnection(high, low, true, true));
    EXPECT_TRUE(keepsNewConnection(high, low, false, false));
}

}  // namespace
}  // namespace gridledger::p2p::policy_test
