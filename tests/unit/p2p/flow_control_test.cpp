// Inbound flow control: what a peer's frames may cost the node. A frame's buffer grows with the
// bytes that arrive, never with the length its header announces, within one budget for all
// connections; each peer has a budget of bytes and frames per second, past which it is read more
// slowly and scored; one remote IP cannot hold every handshake slot; one node id cannot keep
// more than a few connections open.

#include <algorithm>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/base/token_bucket.h>

#include "unit/p2p/harness.h"
#include "unit/p2p/test_clients.h"

namespace gridledger::p2p::test::flow_control_test {
namespace {

crypto::NodeKey keyN() {
    return keyOf(40);
}
crypto::NodeKey keyA() {
    return keyOf(41);
}  // an honest Network
crypto::NodeKey keyG() {
    return keyOf(42);
}  // allowed, driven by hand
crypto::NodeKey keyH() {
    return keyOf(43);
}  // allowed, driven by hand
std::set<NodeId> allowed() {
    return {keyN().nodeId(), keyA().nodeId(), keyG().nodeId(), keyH().nodeId()};
}

/** The 4-byte header of a frame announcing `length` bytes of body. */
Bytes header(std::uint32_t length) {
    return Bytes{static_cast<std::uint8_t>(length >> 24U), static_cast<std::uint8_t>(length >> 16U),
                 static_cast<std::uint8_t>(length >> 8U), static_cast<std::uint8_t>(length)};
}

/** `count` frames of one small application message each, back to back. */
Bytes smallFrames(std::size_t count) {
    const auto frame = encodeFrame(textMessage(MessageKind::kTx, "x"), 1024);
    Bytes out;
    for (std::size_t i = 0; i < count; ++i) {
        out.insert(out.end(), (*frame)->begin(), (*frame)->end());
    }
    return out;
}

using Clock = TokenBucket::Clock;

TEST(TokenBucketPolicy, ADebtIsRepaidAtTheRateAndTheBucketNeverHoldsMoreThanItsBurst) {
    const Clock::time_point t0{};
    TokenBucket bucket(100.0, 50.0, t0);
    bucket.charge(50.0, t0);
    EXPECT_EQ(bucket.waitFor(t0), std::chrono::milliseconds::zero());  // exactly empty
    bucket.charge(20.0, t0);                                           // 20 in debt
    EXPECT_EQ(bucket.waitFor(t0), std::chrono::milliseconds(200));
    EXPECT_EQ(bucket.waitFor(t0 + std::chrono::milliseconds(100)), std::chrono::milliseconds(100));
    EXPECT_EQ(bucket.waitFor(t0 + std::chrono::milliseconds(200)),
              std::chrono::milliseconds::zero());
    EXPECT_DOUBLE_EQ(bucket.tokens(t0 + std::chrono::seconds(60)), 50.0);  // capped at the burst
}

TEST(ReadBuffer, AnAnnouncedLengthReservesNothingUntilItsBytesArrive) {
    TestNode n(keyN(), fastOptions(allowed()));
    n.start();
    TlsTestClient g(keyG(), n.net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));

    // 16 MiB announced, 100 KiB sent: the buffer holds what arrived (rounded to its growth).
    ASSERT_FALSE(g.writeRaw(header(std::uint32_t{16} << 20U)));
    ASSERT_FALSE(g.writeRaw(Bytes(std::size_t{100} << 10U, 0)));
    ASSERT_TRUE(eventually([&] { return n.net().stats().inboundBufferBytes >= (100U << 10U); }));
    EXPECT_LE(n.net().stats().inboundBufferBytes, std::size_t{256} << 10U);
    EXPECT_FALSE(n.net().isBanned(keyG().nodeId()));
}

TEST(ReadBuffer, ConnectionsWaitForTheSharedBufferBudgetAndThenDeliver) {
    Options options = fastOptions(allowed());
    options.limits.maxFrameBytes = std::size_t{1} << 20U;
    options.limits.maxQueueBytes = std::size_t{4} << 20U;
    options.limits.inboundBytesBurst = std::size_t{4} << 20U;
    options.limits.maxInboundBufferBytes = (std::size_t{3} << 20U) / 2;  // 1.5 MiB
    TestNode n(keyN(), options);
    n.start();
    TlsTestClient g(keyG(), n.net().port());
    TlsTestClient h(keyH(), n.net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(h.join());
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));
    ASSERT_TRUE(n.events().waitUp(keyH().nodeId()));

    // Two frames of almost 1 MiB each: G sends all of its frame but the last byte, then H all
    // of its own; together they would need 2 MiB of buffers.
    const auto frameOf = [](std::uint8_t fill) {
        return **encodeFrame(Message{MessageKind::kTx, Bytes(1'000'000, fill)}, 1U << 20U);
    };
    const Bytes gFrame = frameOf(1);
    const Bytes hFrame = frameOf(2);
    ASSERT_FALSE(g.writeRaw(ByteView(gFrame).first(gFrame.size() - 1)));
    ASSERT_TRUE(eventually([&] { return n.net().stats().inboundBufferBytes >= 900'000U; }));
    std::thread hWriter([&] { (void)h.writeRaw(hFrame); });  // blocks while N does not read it
    ASSERT_TRUE(eventually([&] {
        return n.net().stats().inboundBufferBytes >= options.limits.maxInboundBufferBytes - 65536;
    }));
    EXPECT_LE(n.net().stats().inboundBufferBytes, options.limits.maxInboundBufferBytes);
    EXPECT_TRUE(n.events().messages().empty());

    // G's last byte completes its frame, its buffer goes back, and H's frame is read in turn.
    ASSERT_FALSE(g.writeRaw(ByteView(gFrame).last(1)));
    ASSERT_TRUE(n.events().waitMessages(2));
    hWriter.join();
    EXPECT_LE(n.net().stats().inboundBufferBytes, std::size_t{128} << 10U);
    EXPECT_EQ(n.net().banScore(keyG().nodeId()), 0U);
    EXPECT_EQ(n.net().banScore(keyH().nodeId()), 0U);
}

TEST(HandshakeSlots, OneAddressHoldingIdleConnectionsLeavesSlotsForAnother) {
    TestNode n(keyN(), fastOptions(allowed()));
    n.start();
    // As many idle TCP connections from 127.0.0.1 as there are handshake slots in all.
    std::vector<std::unique_ptr<RawTcpClient>> idle;
    for (std::size_t i = 0; i < Limits{}.maxPendingHandshakes; ++i) {
        idle.push_back(std::make_unique<RawTcpClient>(n.net().port()));
        ASSERT_FALSE(idle.back()->connectError());
    }
    // Those past the per-IP cap are closed at accept.
    EXPECT_TRUE(idle.back()->waitClosed());
    EXPECT_GE(n.net().stats().handshakesFailed,
              Limits{}.maxPendingHandshakes - Limits{}.maxPendingHandshakesPerIp);

    // A peer from another address still completes its handshake.
    TlsTestClient g(keyG(), n.net().port(), "127.0.0.2");
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));
}

TEST(ConnectionsPerNode, ANodeIdCannotKeepMoreConnectionsOpenThanTheCap) {
    Options options = fastOptions(allowed());
    options.timers.handshakeTimeout = std::chrono::seconds(120);  // retired ones stay open
    TestNode n(keyN(), options);
    n.start();
    const std::size_t cap = Limits{}.maxConnectionsPerNode;
    std::vector<std::unique_ptr<TlsTestClient>> clients;
    for (std::size_t i = 0; i < cap + 2; ++i) {
        clients.push_back(std::make_unique<TlsTestClient>(keyG(), n.net().port()));
        ASSERT_TRUE(clients.back()->join());
        if (i < cap) {
            // The newest connection of a node id replaces the one in use, which is retired but
            // stays open; a message on it shows that N took its hello.
            ASSERT_FALSE(clients.back()->writeEnvelope(textMessage(MessageKind::kVote, "hello")));
            ASSERT_TRUE(n.events().waitMessages(i + 1));
        }
    }
    // The connections past the cap are closed at once (not after the 120 s grace).
    EXPECT_TRUE(clients[cap]->waitClosed());
    EXPECT_TRUE(clients[cap + 1]->waitClosed());
    // The connection in use (the last one within the cap) still delivers.
    ASSERT_FALSE(clients[cap - 1]->writeEnvelope(textMessage(MessageKind::kVote, "still here")));
    ASSERT_TRUE(n.events().waitMessages(cap + 1));
    EXPECT_EQ(textOf(n.events().messages().back().message), "still here");
    EXPECT_EQ(n.events().ups(keyG().nodeId()), 1);
    EXPECT_EQ(n.net().banScore(keyG().nodeId()), 0U);
}

TEST(InboundBudget, APeerThatKeepsSendingPastItsBudgetIsThrottledThenBanned) {
    Options options = fastOptions(allowed());
    options.limits.inboundMessagesPerSecond = 100;
    options.limits.inboundMessagesBurst = 100;
    TestNode n(keyN(), options);
    n.start();
    TestNode a(keyA(), fastOptions(allowed(), {n.address()}));
    a.start();
    ASSERT_TRUE(n.events().waitUp(keyA().nodeId()));
    TlsTestClient g(keyG(), n.net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));

    // 5,000 frames at once: 50 s of G's budget.
    (void)g.writeRaw(smallFrames(5'000));
    ASSERT_TRUE(eventually([&] { return n.net().isBanned(keyG().nodeId()); }));
    ASSERT_TRUE(n.events().waitDown(keyG().nodeId()));
    EXPECT_EQ(n.events().downs().back().second, CloseReason::kMisbehaviour);
    const NetworkStats stats = n.net().stats();
    EXPECT_GE(stats.readsThrottled, options.ban.threshold / options.ban.floodPoints);
    const auto all = n.events().messages();
    const auto fromG = std::count_if(all.begin(), all.end(),
                                     [](const auto& m) { return m.from == keyG().nodeId(); });
    EXPECT_LT(fromG, 1'000);  // read at its rate, not all at once

    // The honest peer, within its budget, is served and never scored.
    ASSERT_TRUE(a.net().send(n.id(), textMessage(MessageKind::kVote, "honest")));
    ASSERT_TRUE(n.events().waitFor([](const Recorder& r) {
        return std::any_of(r.messagesLocked().begin(), r.messagesLocked().end(),
                           [](const auto& m) { return textOf(m.message) == "honest"; });
    }));
    EXPECT_EQ(n.net().banScore(keyA().nodeId()), 0U);
}

TEST(InboundBudget, APeerWithinItsBudgetIsNeverThrottled) {
    Options options = fastOptions(allowed());
    options.limits.inboundMessagesPerSecond = 100;
    options.limits.inboundMessagesBurst = 100;
    TestNode n(keyN(), options);
    n.start();
    TlsTestClient g(keyG(), n.net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));
    ASSERT_FALSE(g.writeRaw(smallFrames(90)));  // the hello and 90 frames fit in the burst
    ASSERT_TRUE(n.events().waitMessages(90));
    EXPECT_EQ(n.net().stats().readsThrottled, 0U);
    EXPECT_EQ(n.net().banScore(keyG().nodeId()), 0U);
}

}  // namespace
}  // namespace gridledger::p2p::test::flow_control_test
