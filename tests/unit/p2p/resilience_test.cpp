// Behaviour under slow and silent peers: the send queue bound and its policy, the keep-alive.

#include <gtest/gtest.h>

#include "unit/p2p/harness.h"
#include "unit/p2p/test_clients.h"

namespace gridledger::p2p::test::resilience_test {
namespace {

crypto::NodeKey keyN() {
    return keyOf(20);
}
crypto::NodeKey keyG() {
    return keyOf(21);
}  // driven by hand
std::set<NodeId> allowed() {
    return {keyN().nodeId(), keyG().nodeId()};
}

TEST(SendQueueBound, APeerThatDoesNotReadNeverGrowsTheQueuePastItsBound) {
    Options options = fastOptions(allowed());
    options.limits.maxFrameBytes = std::size_t{1} << 20U;
    options.limits.maxQueueMessages = 64;
    options.limits.maxQueueBytes = std::size_t{4} << 20U;
    options.timers.pingInterval = std::chrono::seconds(60);  // G sends nothing: no keep-alive here
    options.timers.pingTimeout = std::chrono::seconds(120);
    options.timers.writeTimeout = std::chrono::seconds(120);
    TestNode n(keyN(), options);
    n.start();
    TlsTestClient g(keyG(), n.net().port());
    ASSERT_TRUE(g.join());  // then never reads again
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));

    // 400 transactions of 256 KiB (100 MiB) to a peer that reads nothing: the socket buffers
    // fill, then the queue holds at most 4 MiB and drops the oldest transactions.
    const Message tx{MessageKind::kTx, Bytes(std::size_t{256} << 10U, 7)};
    std::size_t refused = 0;
    for (int i = 0; i < 400; ++i) {
        if (!n.net().send(keyG().nodeId(), tx)) {
            ++refused;
        }
        const auto info = n.net().peerInfo(keyG().nodeId());
        ASSERT_TRUE(info);
        ASSERT_LE(info->queuedBytes, options.limits.maxQueueBytes);
        ASSERT_LE(info->queuedMessages, options.limits.maxQueueMessages);
    }
    const auto afterTxs = n.net().peerInfo(keyG().nodeId());
    ASSERT_TRUE(afterTxs);
    EXPECT_GT(afterTxs->droppedMessages, 200U);  // far less than 50 MiB fits in buffers and queue
    EXPECT_EQ(refused, 0U);  // a new transaction always finds an older one to replace
    EXPECT_GE(n.net().stats().messagesDropped, afterTxs->droppedMessages);

    // Proposals cannot be dropped: each evicts queued transactions until none is left; then
    // the next proposal finds the queue full of undroppable frames and the peer is dropped.
    const Message proposal{MessageKind::kProposal, Bytes(std::size_t{256} << 10U, 9)};
    Status status;
    int sent = 0;
    while (status && sent < 100) {
        status = n.net().send(keyG().nodeId(), proposal);
        ++sent;
        if (const auto info = n.net().peerInfo(keyG().nodeId())) {
            ASSERT_LE(info->queuedBytes, options.limits.maxQueueBytes);
        }
    }
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, ErrorCode::kUnavailable);
    EXPECT_GE(sent, 10);  // the ~15 queued transactions made room for proposals first
    ASSERT_TRUE(n.events().waitDown(keyG().nodeId()));
    EXPECT_EQ(n.events().downs().back().second, CloseReason::kQueueOverflow);
    EXPECT_EQ(n.net().stats().slowPeersDropped, 1U);
    EXPECT_TRUE(n.net().connectedPeers().empty());
}

TEST(KeepAlive, APeerThatFallsSilentIsDropped) {
    Options options = fastOptions(allowed());
    options.timers.pingInterval = std::chrono::milliseconds(100);
    options.timers.pingTimeout = std::chrono::milliseconds(400);
    TestNode n(keyN(), options);
    n.start();
    TlsTestClient g(keyG(), n.net().port());
    ASSERT_TRUE(g.join());  // then answers no ping and sends nothing
    ASSERT_TRUE(n.events().waitUp(keyG().nodeId()));
    ASSERT_TRUE(n.events().waitDown(keyG().nodeId()));
    EXPECT_EQ(n.events().downs().back().second, CloseReason::kKeepAliveTimeout);
    EXPECT_EQ(n.net().banScore(keyG().nodeId()), 0U);  // silence is not misbehaviour
}

TEST(KeepAlive, PingsKeepAnIdleConnectionUp) {
    Options options = fastOptions(allowed());
    options.timers.pingInterval = std::chrono::milliseconds(50);
    options.timers.pingTimeout = std::chrono::milliseconds(200);
    TestNode g(keyG(), options);
    g.start();
    Options dialer = options;
    dialer.persistentPeers = {g.address()};
    TestNode n(keyN(), dialer);
    n.start();
    ASSERT_TRUE(n.events().waitUp(g.id()));
    // No application traffic for ten ping timeouts: only pings and pongs cross, and no side
    // reports the peer down.
    const auto anyDown = [](const Recorder& r) { return !r.downsListLocked().empty(); };
    EXPECT_FALSE(n.events().waitFor(anyDown, std::chrono::seconds(2)));
    EXPECT_FALSE(g.events().waitFor(anyDown, std::chrono::seconds(0)));
    ASSERT_TRUE(g.net().send(n.id(), textMessage(MessageKind::kVote, "still up")));
    ASSERT_TRUE(n.events().waitMessages(1));
    EXPECT_EQ(n.events().ups(g.id()), 1);
}

}  // namespace
}  // namespace gridledger::p2p::test::resilience_test
