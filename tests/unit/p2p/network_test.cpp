// Nodes exchanging messages over real TLS on 127.0.0.1: delivery both ways, broadcast, peer
// exchange, the simultaneous-dial tie-break, reconnection of a restarted persistent peer, lost
// peers dialed at once when another comes back, a restarted peer's new connection preferred to
// the one its old process left open, and clean stops.

#include <algorithm>

#include <gtest/gtest.h>

#include "unit/p2p/harness.h"

namespace gridledger::p2p::test::network_test {
namespace {

crypto::NodeKey keyA() {
    return keyOf(1);
}
crypto::NodeKey keyB() {
    return keyOf(2);
}
crypto::NodeKey keyC() {
    return keyOf(3);
}
std::set<NodeId> allowedAbc() {
    return {keyA().nodeId(), keyB().nodeId(), keyC().nodeId()};
}

TEST(Network, TwoNodesExchangeMessagesBothWaysInOrder) {
    TestNode b(keyB(), fastOptions(allowedAbc()));
    b.start();
    TestNode a(keyA(), fastOptions(allowedAbc(), {b.address()}));
    a.start();
    ASSERT_TRUE(a.events().waitUp(b.id()));
    ASSERT_TRUE(b.events().waitUp(a.id()));
    EXPECT_EQ(a.net().connectedPeers(), std::vector<NodeId>{b.id()});
    EXPECT_EQ(b.net().connectedPeers(), std::vector<NodeId>{a.id()});

    constexpr int kCount = 200;
    for (int i = 0; i < kCount; ++i) {
        ASSERT_TRUE(a.net().send(b.id(), textMessage(MessageKind::kVote, std::to_string(i))));
    }
    ASSERT_TRUE(b.net().send(a.id(), textMessage(MessageKind::kProposal, "from b")));
    ASSERT_TRUE(b.events().waitMessages(kCount));
    ASSERT_TRUE(a.events().waitMessages(1));

    const auto atB = b.events().messages();
    for (int i = 0; i < kCount; ++i) {
        EXPECT_EQ(atB[static_cast<std::size_t>(i)].from, a.id());
        EXPECT_EQ(atB[static_cast<std::size_t>(i)].message.kind, MessageKind::kVote);
        EXPECT_EQ(textOf(atB[static_cast<std::size_t>(i)].message), std::to_string(i));
    }
    const auto atA = a.events().messages();
    EXPECT_EQ(atA[0].from, b.id());
    EXPECT_EQ(atA[0].message.kind, MessageKind::kProposal);
    EXPECT_EQ(textOf(atA[0].message), "from b");
    EXPECT_EQ(b.net().stats().messagesReceived, static_cast<std::uint64_t>(kCount));
}

TEST(Network, ALargeMessageCrossesIntact) {
    TestNode b(keyB(), fastOptions(allowedAbc()));
    b.start();
    TestNode a(keyA(), fastOptions(allowedAbc(), {b.address()}));
    a.start();
    ASSERT_TRUE(a.events().waitUp(b.id()));
    Message big{MessageKind::kBlockResponse, Bytes(std::size_t{8} << 20U)};
    for (std::size_t i = 0; i < big.payload.size(); ++i) {
        big.payload[i] = static_cast<std::uint8_t>(i * 31U);
    }
    ASSERT_TRUE(a.net().send(b.id(), big));
    ASSERT_TRUE(b.events().waitMessages(1));
    EXPECT_TRUE(b.events().messages()[0].message == big);
}

TEST(Network, ThreeNodesBroadcastReachesEveryPeer) {
    TestNode c(keyC(), fastOptions(allowedAbc()));
    c.start();
    TestNode b(keyB(), fastOptions(allowedAbc(), {c.address()}));
    b.start();
    TestNode a(keyA(), fastOptions(allowedAbc(), {b.address(), c.address()}));
    a.start();
    for (TestNode* node : {&a, &b, &c}) {
        for (TestNode* other : {&a, &b, &c}) {
            if (node != other) {
                ASSERT_TRUE(node->events().waitUp(other->id()));
            }
        }
    }
    EXPECT_EQ(a.net().broadcast(textMessage(MessageKind::kProposal, "a")), 2U);
    EXPECT_EQ(b.net().broadcast(textMessage(MessageKind::kProposal, "b")), 2U);
    EXPECT_EQ(c.net().broadcast(textMessage(MessageKind::kProposal, "c")), 2U);
    for (TestNode* node : {&a, &b, &c}) {
        ASSERT_TRUE(node->events().waitMessages(2));
        std::set<NodeId> senders;
        for (const auto& received : node->events().messages()) {
            senders.insert(received.from);
            EXPECT_EQ(textOf(received.message).size(), 1U);
        }
        EXPECT_EQ(senders.size(), 2U);
        EXPECT_FALSE(senders.contains(node->id()));
    }
}

TEST(Network, PeerExchangeLetsTwoNodesThatKnowOnlyAHubFindEachOther) {
    TestNode b(keyB(), fastOptions(allowedAbc()));
    b.start();
    TestNode a(keyA(), fastOptions(allowedAbc(), {b.address()}));
    a.start();
    TestNode c(keyC(), fastOptions(allowedAbc(), {b.address()}));
    c.start();
    ASSERT_TRUE(a.events().waitUp(c.id()));
    ASSERT_TRUE(c.events().waitUp(a.id()));
    const auto known = a.net().knownAddresses();
    const auto entry = std::find_if(known.begin(), known.end(),
                                    [&](const PeerAddress& p) { return p.nodeId == c.id(); });
    ASSERT_NE(entry, known.end());
    EXPECT_EQ(entry->port, c.net().port());
    ASSERT_TRUE(a.net().send(c.id(), textMessage(MessageKind::kTimeout, "direct")));
    ASSERT_TRUE(c.events().waitMessages(1));
    EXPECT_EQ(c.events().messages()[0].from, a.id());
}

TEST(Network, SimultaneousDialsLeaveOneSharedConnection) {
    // Both sides dial each other at once. The tie-break must leave both ends on the same single
    // connection (one outbound end, one inbound end), with one peer-up and no peer-down.
    TestNode a(keyA(), fastOptions(allowedAbc()));
    a.start();
    TestNode b(keyB(), fastOptions(allowedAbc()));
    b.start();
    ASSERT_TRUE(a.net().addPeer(b.address()));
    ASSERT_TRUE(b.net().addPeer(a.address()));
    ASSERT_TRUE(a.events().waitUp(b.id()));
    ASSERT_TRUE(b.events().waitUp(a.id()));
    ASSERT_TRUE(eventually([&] {
        const auto atA = a.net().peerInfo(b.id());
        const auto atB = b.net().peerInfo(a.id());
        return atA && atB && atA->outbound != atB->outbound;
    }));
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(a.net().send(b.id(), textMessage(MessageKind::kVote, "x")));
        ASSERT_TRUE(b.net().send(a.id(), textMessage(MessageKind::kVote, "y")));
    }
    ASSERT_TRUE(a.events().waitMessages(20));
    ASSERT_TRUE(b.events().waitMessages(20));
    EXPECT_EQ(a.net().connectedPeers().size(), 1U);
    EXPECT_EQ(b.net().connectedPeers().size(), 1U);
    EXPECT_EQ(a.events().ups(b.id()), 1);
    EXPECT_EQ(b.events().ups(a.id()), 1);
    EXPECT_TRUE(a.events().downs().empty());
    EXPECT_TRUE(b.events().downs().empty());
}

TEST(Network, APersistentPeerThatRestartsIsReconnected) {
    auto b = std::make_unique<TestNode>(keyB(), fastOptions(allowedAbc()));
    b->start();
    const PeerAddress bAddress = b->address();
    TestNode a(keyA(), fastOptions(allowedAbc(), {bAddress}));
    a.start();
    ASSERT_TRUE(a.events().waitUp(b->id()));

    b.reset();  // B goes away
    ASSERT_TRUE(a.events().waitDown(bAddress.nodeId));
    EXPECT_TRUE(a.net().connectedPeers().empty());

    Options again = fastOptions(allowedAbc());
    again.listenPort = bAddress.port;
    b = std::make_unique<TestNode>(keyB(), again);
    b->start();
    ASSERT_TRUE(a.events().waitUp(bAddress.nodeId, 2));
    ASSERT_TRUE(b->events().waitUp(a.id()));
    ASSERT_TRUE(a.net().send(bAddress.nodeId, textMessage(MessageKind::kTx, "after restart")));
    ASSERT_TRUE(b->events().waitMessages(1));
}

TEST(Network, WhenOneLostPeerComesBackTheOthersAreDialedWithoutWaitingOutTheirBackoff) {
    // B and C listen once, for their addresses, and go away: A's dials to both fail, and its
    // backoff grows (from 2 s: after two failed dials the next one waits 2-4 s).
    auto b = std::make_unique<TestNode>(keyB(), fastOptions(allowedAbc()));
    auto c = std::make_unique<TestNode>(keyC(), fastOptions(allowedAbc()));
    b->start();
    c->start();
    const PeerAddress bAddress = b->address();
    const PeerAddress cAddress = c->address();
    b.reset();
    c.reset();
    Options slow = fastOptions(allowedAbc(), {bAddress, cAddress});
    slow.timers.reconnectBase = std::chrono::milliseconds(2'000);
    slow.timers.reconnectCap = std::chrono::milliseconds(60'000);
    slow.dialExchangedPeers = false;  // only A's own dials can bring C back
    TestNode a(keyA(), slow);
    a.start();
    ASSERT_TRUE(a.events().waitFor(
        [&](const Recorder& r) { return r.failuresLocked(cAddress.nodeId) >= 2; }));
    // C comes back silently (it dials no one), then B, which dials A.
    Options cAgain = fastOptions(allowedAbc());
    cAgain.listenPort = cAddress.port;
    cAgain.dialExchangedPeers = false;
    c = std::make_unique<TestNode>(keyC(), cAgain);
    c->start();
    Options bAgain = fastOptions(allowedAbc(), {a.address()});
    bAgain.listenPort = bAddress.port;
    bAgain.dialExchangedPeers = false;
    b = std::make_unique<TestNode>(keyB(), bAgain);
    b->start();
    ASSERT_TRUE(a.events().waitUp(bAddress.nodeId));
    const auto bUp = std::chrono::steady_clock::now();
    // A link came back: A dials C at once, well before the 2 s its backoff still had to run.
    ASSERT_TRUE(a.events().waitUp(cAddress.nodeId));
    EXPECT_LT(std::chrono::steady_clock::now() - bUp, std::chrono::milliseconds(1'000));
}

// A peer that restarts without closing its connections (a power loss, a silent network): its
// new connection replaces the one the other side still holds, even where the tie-break would
// keep the old one, since the new hello names a later session.
TEST(Network, ARestartedPeersNewConnectionReplacesTheOneItsOldProcessLeftOpen) {
    // `low` has the lower node id and dials the peer: the tie-break alone keeps its connection.
    crypto::NodeKey low = keyA();
    crypto::NodeKey high = keyB();
    if (high.nodeId() < low.nodeId()) {
        std::swap(low, high);
    }
    TestNode before(high, fastOptions(allowedAbc()));
    before.start();
    TestNode l(low, fastOptions(allowedAbc(), {before.address()}));
    l.start();
    ASSERT_TRUE(l.events().waitUp(high.nodeId()));
    // The earlier process stays up, as a dead one looks to `l` (its connection still open), and
    // the restarted one dials `l`.
    TestNode after(high, fastOptions(allowedAbc(), {l.address()}));
    after.start();
    ASSERT_TRUE(after.events().waitUp(low.nodeId()));
    // Until `l` took the new connection, what it sends goes to the earlier process; from then
    // on, everything goes to the new one.
    ASSERT_TRUE(eventually([&] {
        (void)l.net().send(high.nodeId(), textMessage(MessageKind::kTx, "until the switch"));
        return !after.events().messages().empty();
    }));
    const std::size_t received = after.events().messages().size();
    constexpr std::size_t kAfterSwitch = 5;
    for (std::size_t k = 0; k < kAfterSwitch; ++k) {
        ASSERT_TRUE(l.net().send(high.nodeId(), textMessage(MessageKind::kTx, "after the switch")));
    }
    ASSERT_TRUE(after.events().waitMessages(received + kAfterSwitch));
    EXPECT_TRUE(before.events().waitDown(low.nodeId()));  // the old connection was retired
    for (const auto& message : before.events().messages()) {
        EXPECT_EQ(textOf(message.message), "until the switch");
    }
}

// A validator removed by governance loses its connections and is refused; one added is let in
// (and a persistent peer dialed again) without a restart.
TEST(Network, TheAllowListChangesAtRunTime) {
    TestNode b(keyB(), fastOptions(allowedAbc()));
    b.start();
    TestNode a(keyA(), fastOptions(allowedAbc(), {b.address()}));
    a.start();
    ASSERT_TRUE(a.events().waitUp(b.id()));

    // A persistent peer outside the allow-list does not stop a start; it is not dialed.
    Network withStranger(
        fastOptions(allowedAbc(), {PeerAddress{keyOf(9).nodeId(), "127.0.0.1", 1}}), keyC());
    ASSERT_TRUE(withStranger.start());
    withStranger.stop();

    a.net().setAllowed({keyA().nodeId(), keyC().nodeId()});
    ASSERT_TRUE(a.events().waitDown(b.id()));
    ASSERT_TRUE(b.events().waitDown(a.id()));
    EXPECT_TRUE(eventually([&] { return a.net().connectedPeers().empty(); }));
    EXPECT_FALSE(a.net().send(b.id(), textMessage(MessageKind::kTx, "refused")));
    EXPECT_FALSE(a.net().addPeer(b.address()));

    a.net().setAllowed(allowedAbc());
    ASSERT_TRUE(a.events().waitUp(b.id(), 2));
    ASSERT_TRUE(a.net().send(b.id(), textMessage(MessageKind::kTx, "allowed again")));
    ASSERT_TRUE(b.events().waitMessages(1));
    EXPECT_EQ(textOf(b.events().messages().front().message), "allowed again");
}

TEST(Network, StopWithConnectionsOpenIsCleanAndSilent) {
    TestNode c(keyC(), fastOptions(allowedAbc()));
    c.start();
    auto a = std::make_unique<TestNode>(keyA(), fastOptions(allowedAbc(), {c.address()}));
    a->start();
    TestNode b(keyB(), fastOptions(allowedAbc(), {c.address()}));
    b.start();
    ASSERT_TRUE(c.events().waitFor([&](const Recorder& r) { return r.upNowLocked().size() == 2; }));
    ASSERT_TRUE(a->events().waitUp(b.id()));  // via peer exchange
    for (int i = 0; i < 50; ++i) {
        (void)a->net().broadcast(Message{MessageKind::kBlockResponse, Bytes(64 << 10, 1)});
    }
    const NodeId aId = a->id();
    const std::size_t upsBefore = a->events().upCount();
    a->net().stop();
    a->net().stop();  // idempotent
    EXPECT_TRUE(a->net().connectedPeers().empty());
    EXPECT_FALSE(a->net().send(c.id(), textMessage(MessageKind::kVote, "late")));
    EXPECT_EQ(a->net().broadcast(textMessage(MessageKind::kVote, "late")), 0U);
    EXPECT_TRUE(a->events().downs().empty());  // stop() reports no peer-down
    EXPECT_EQ(a->events().upCount(), upsBefore);
    ASSERT_TRUE(c.events().waitDown(aId));
    ASSERT_TRUE(b.events().waitDown(aId));
    a.reset();
    // The others keep serving each other.
    ASSERT_TRUE(b.net().send(c.id(), textMessage(MessageKind::kVote, "still here")));
    ASSERT_TRUE(c.events().waitFor([&](const Recorder& r) {
        return std::any_of(r.messagesLocked().begin(), r.messagesLocked().end(),
                           [](const auto& m) { return textOf(m.message) == "still here"; });
    }));
}

TEST(Network, StartValidatesItsOptionsAndRunsOnce) {
    {
        TestNode a(keyA(), fastOptions(allowedAbc()));
        a.start();
        const Status again = a.net().start();
        ASSERT_FALSE(again);
        EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
        Network sameport(
            [&] {
                Options o = fastOptions(allowedAbc());
                o.listenPort = a.net().port();
                return o;
            }(),
            keyB());
        const Status taken = sameport.start();
        ASSERT_FALSE(taken);
        EXPECT_EQ(taken.error().code, ErrorCode::kIo);
    }
    const auto expectConfigError = [](Options options) {
        Network network(std::move(options), keyA());
        const Status started = network.start();
        ASSERT_FALSE(started);
        EXPECT_EQ(started.error().code, ErrorCode::kConfig) << started.error().message;
    };
    Options badHost = fastOptions(allowedAbc());
    badHost.listenHost = "not an address";
    expectConfigError(badHost);
    const NodeId stranger = keyOf(9).nodeId();
    expectConfigError(fastOptions(allowedAbc(), {PeerAddress{stranger, "not a host", 1}}));
    expectConfigError(fastOptions(allowedAbc(), {PeerAddress{keyA().nodeId(), "127.0.0.1", 1}}));
    Options smallQueue = fastOptions(allowedAbc());
    smallQueue.limits.maxQueueBytes = smallQueue.limits.maxFrameBytes;
    expectConfigError(smallQueue);
    Options badTimers = fastOptions(allowedAbc());
    badTimers.timers.pingTimeout = badTimers.timers.pingInterval;
    expectConfigError(badTimers);
}

TEST(Network, SendToAnUnknownPeerOrTooLargeIsRefused) {
    TestNode a(keyA(), fastOptions(allowedAbc()));
    a.start();
    const Status unknown = a.net().send(keyB().nodeId(), textMessage(MessageKind::kVote, "x"));
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().code, ErrorCode::kUnavailable);
    TestNode b(keyB(), fastOptions(allowedAbc(), {a.address()}));
    b.start();
    ASSERT_TRUE(b.events().waitUp(a.id()));
    const Message tooLarge{MessageKind::kBlockResponse, Bytes(std::size_t{17} << 20U)};
    const Status large = b.net().send(a.id(), tooLarge);
    ASSERT_FALSE(large);
    EXPECT_EQ(large.error().code, ErrorCode::kTooLarge);
}

}  // namespace
}  // namespace gridledger::p2p::test::network_test
