// What peers cannot do: connect with a node id that is not allowed (either direction), pass as
// another node id, connect without a certificate, or keep a connection after sending garbage,
// an oversized frame or frames out of protocol. The node keeps serving its other peers.

#include <algorithm>

#include <gtest/gtest.h>

#include "unit/p2p/harness.h"
#include "unit/p2p/test_clients.h"

namespace gridledger::p2p::test::security_test {
namespace {

crypto::NodeKey keyN() {
    return keyOf(10);
}
crypto::NodeKey keyA() {
    return keyOf(11);
}
crypto::NodeKey keyG() {
    return keyOf(12);
}  // allowed, driven by hand
crypto::NodeKey keyS() {
    return keyOf(13);
}  // a stranger: never allowed by N
crypto::NodeKey keyX() {
    return keyOf(14);
}  // allowed, never running
std::set<NodeId> allowed() {
    return {keyN().nodeId(), keyA().nodeId(), keyG().nodeId(), keyX().nodeId()};
}

/** N serving, with A connected to it: the honest peer that must keep being served. */
class SecurityTest : public ::testing::Test {
  protected:
    void SetUp() override {
        n_ = std::make_unique<TestNode>(keyN(), fastOptions(allowed()));
        n_->start();
        a_ = std::make_unique<TestNode>(keyA(), fastOptions(allowed(), {n_->address()}));
        a_->start();
        ASSERT_TRUE(n_->events().waitUp(a_->id()));
        ASSERT_TRUE(a_->events().waitUp(n_->id()));
    }

    /** A and N still exchange messages both ways. */
    void expectStillServing(const std::string& tag) {
        const std::size_t atN = n_->events().messages().size();
        const std::size_t atA = a_->events().messages().size();
        ASSERT_TRUE(a_->net().send(n_->id(), textMessage(MessageKind::kVote, tag)));
        ASSERT_TRUE(n_->net().send(a_->id(), textMessage(MessageKind::kVote, tag)));
        ASSERT_TRUE(n_->events().waitMessages(atN + 1));
        ASSERT_TRUE(a_->events().waitMessages(atA + 1));
        EXPECT_EQ(n_->events().messages().back().from, a_->id());
    }

    std::size_t messagesFrom(const NodeId& sender) {
        const auto all = n_->events().messages();
        return static_cast<std::size_t>(
            std::count_if(all.begin(), all.end(), [&](const auto& m) { return m.from == sender; }));
    }

    std::unique_ptr<TestNode> n_;
    std::unique_ptr<TestNode> a_;
};

TEST_F(SecurityTest, AStrangerDialingInIsRefusedAndNeverDelivers) {
    TlsTestClient stranger(keyS(), n_->net().port());
    (void)stranger.handshake();  // TLS 1.3: the client may finish before N's verdict
    (void)stranger.writeEnvelope(codec::PeerHello{kProtocolVersion, 0});
    (void)stranger.writeEnvelope(codec::NetMessage{MessageKind::kVote, Bytes{1}});
    EXPECT_TRUE(stranger.waitClosed());
    ASSERT_TRUE(n_->events().waitFailure(keyS().nodeId(), CloseReason::kNotAllowed));
    EXPECT_EQ(messagesFrom(keyS().nodeId()), 0U);
    EXPECT_EQ(n_->events().ups(keyS().nodeId()), 0);
    expectStillServing("after stranger");
}

TEST_F(SecurityTest, AStrangerNetworkIsRefusedAndRefusesInTurn) {
    // S allows N and dials it; N does not allow S. Then N is made to dial a listener that does
    // not allow N. Neither side ever reports the other up.
    TestNode s(keyS(), fastOptions({keyN().nodeId(), keyS().nodeId()}, {n_->address()}));
    s.start();
    ASSERT_TRUE(n_->events().waitFailure(keyS().nodeId(), CloseReason::kNotAllowed));

    TestNode g(keyG(), fastOptions({keyG().nodeId(), keyA().nodeId()}));  // does not allow N
    g.start();
    ASSERT_TRUE(n_->net().addPeer(g.address()));
    ASSERT_TRUE(g.events().waitFailure(keyN().nodeId(), CloseReason::kNotAllowed));
    ASSERT_TRUE(n_->events().waitFailure(keyG().nodeId(), CloseReason::kHandshakeFailed));
    EXPECT_EQ(n_->events().ups(keyS().nodeId()), 0);
    EXPECT_EQ(n_->events().ups(keyG().nodeId()), 0);
    EXPECT_EQ(s.events().upCount(), 0U);
    EXPECT_EQ(g.events().upCount(), 0U);
    EXPECT_EQ(n_->net().connectedPeers(), std::vector<NodeId>{a_->id()});
    expectStillServing("after strangers");
}

TEST_F(SecurityTest, DialingANodeIdThatTheCertificateDoesNotCarryFails) {
    // A second node dials A's address but expects G's node id.
    TestNode dialer(
        keyG(),
        fastOptions(allowed(), {PeerAddress{keyN().nodeId(), "127.0.0.1", a_->net().port()}}));
    dialer.start();
    ASSERT_TRUE(dialer.events().waitFailure(keyN().nodeId(), CloseReason::kNodeIdMismatch));
    EXPECT_EQ(dialer.events().upCount(), 0U);
    EXPECT_EQ(a_->events().ups(keyG().nodeId()), 0);
    expectStillServing("after mismatch");
}

TEST_F(SecurityTest, AClientWithoutACertificateIsRefused) {
    TlsTestClient anonymous(n_->net().port());
    (void)anonymous.handshake();
    EXPECT_TRUE(anonymous.waitClosed());
    ASSERT_TRUE(n_->events().waitFailure(NodeId{}, CloseReason::kHandshakeFailed));
    EXPECT_EQ(n_->net().connectedPeers(), std::vector<NodeId>{a_->id()});
    expectStillServing("after anonymous");
}

TEST_F(SecurityTest, RawTcpGarbageIsDroppedWhileTheNodeKeepsServing) {
    RawTcpClient raw(n_->net().port());
    ASSERT_FALSE(raw.connectError());
    const Bytes garbage(4096, 0x5a);
    (void)raw.write(garbage);
    EXPECT_TRUE(raw.waitClosed());
    ASSERT_TRUE(n_->events().waitFailure(NodeId{}, CloseReason::kHandshakeFailed));
    expectStillServing("after raw garbage");
}

TEST_F(SecurityTest, AGarbageFrameFromAnAllowedPeerDropsItAndRaisesItsScore) {
    TlsTestClient g(keyG(), n_->net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n_->events().waitUp(keyG().nodeId()));
    const Bytes frame = {0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ASSERT_FALSE(g.writeRaw(frame));
    EXPECT_TRUE(g.waitClosed());
    ASSERT_TRUE(n_->events().waitDown(keyG().nodeId()));
    EXPECT_EQ(n_->events().downs().back().second, CloseReason::kMalformedFrame);
    EXPECT_EQ(n_->net().banScore(keyG().nodeId()), 50U);
    EXPECT_FALSE(n_->net().isBanned(keyG().nodeId()));
    EXPECT_EQ(n_->net().stats().framesRejected, 1U);
    expectStillServing("after garbage frame");

    // A second offence reaches the threshold: banned, and refused at the next handshake.
    TlsTestClient again(keyG(), n_->net().port());
    ASSERT_TRUE(again.join());
    ASSERT_FALSE(again.writeEnvelope(codec::PeerHello{kProtocolVersion, 0}));  // out of protocol
    EXPECT_TRUE(again.waitClosed());
    ASSERT_TRUE(n_->events().waitDown(keyG().nodeId(), 2));
    EXPECT_EQ(n_->events().downs().back().second, CloseReason::kProtocol);
    EXPECT_TRUE(n_->net().isBanned(keyG().nodeId()));
    TlsTestClient refused(keyG(), n_->net().port());
    (void)refused.handshake();
    EXPECT_TRUE(refused.waitClosed());
    ASSERT_TRUE(n_->events().waitFailure(keyG().nodeId(), CloseReason::kBanned));
    expectStillServing("after ban");
}

TEST_F(SecurityTest, AnOversizedLengthPrefixDropsAndBansThePeer) {
    TlsTestClient g(keyG(), n_->net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n_->events().waitUp(keyG().nodeId()));
    ASSERT_FALSE(g.writeRaw(Bytes{0xff, 0xff, 0xff, 0xff}));
    EXPECT_TRUE(g.waitClosed());
    ASSERT_TRUE(n_->events().waitDown(keyG().nodeId()));
    EXPECT_EQ(n_->events().downs().back().second, CloseReason::kFrameTooLarge);
    EXPECT_TRUE(n_->net().isBanned(keyG().nodeId()));  // 100 points: the default threshold
    EXPECT_EQ(n_->net().stats().bans, 1U);
    expectStillServing("after oversized frame");
}

TEST_F(SecurityTest, AFirstFrameThatIsNotAHelloIsAProtocolError) {
    TlsTestClient g(keyG(), n_->net().port());
    ASSERT_FALSE(g.handshake());
    ASSERT_FALSE(g.writeEnvelope(codec::NetMessage{MessageKind::kVote, Bytes{1}}));
    EXPECT_TRUE(g.waitClosed());
    ASSERT_TRUE(n_->events().waitFailure(keyG().nodeId(), CloseReason::kProtocol));
    EXPECT_EQ(messagesFrom(keyG().nodeId()), 0U);
    EXPECT_EQ(n_->net().banScore(keyG().nodeId()), 50U);
}

TEST_F(SecurityTest, PeerExchangeKeepsOnlyAddressesOfAllowedNodes) {
    TlsTestClient g(keyG(), n_->net().port());
    ASSERT_TRUE(g.join());
    ASSERT_TRUE(n_->events().waitUp(keyG().nodeId()));
    const NodeId stranger = keyS().nodeId();
    const PeerAddress allowedX{keyX().nodeId(), "127.0.0.1", 3};
    codec::PeerList list{{PeerAddress{stranger, "127.0.0.1", 1},
                          PeerAddress{keyN().nodeId(), "127.0.0.1", 2},  // N itself
                          allowedX}};
    ASSERT_FALSE(g.writeEnvelope(list));
    // Frames are handled in order: once this message arrives, the list was handled.
    ASSERT_FALSE(g.writeEnvelope(codec::NetMessage{MessageKind::kTx, Bytes{1}}));
    ASSERT_TRUE(
        n_->events().waitFor([](const Recorder& r) { return !r.messagesLocked().empty(); }));
    const auto known = n_->net().knownAddresses();
    for (const PeerAddress& address : known) {
        EXPECT_NE(address.nodeId, stranger);
        EXPECT_NE(address.nodeId, keyN().nodeId());
    }
    EXPECT_NE(std::find(known.begin(), known.end(), allowedX), known.end());
}

TEST_F(SecurityTest, ReportedMisbehaviourBansAPeerUntilTheBanEnds) {
    // A short ban on a fresh N2, so that the test also sees the ban end.
    Options options = fastOptions(allowed());
    options.ban.banDuration = std::chrono::milliseconds(1500);
    TestNode n2(keyN(), options);
    n2.start();
    TestNode peer(keyG(), fastOptions(allowed(), {n2.address()}));
    peer.start();
    ASSERT_TRUE(n2.events().waitUp(peer.id()));

    n2.net().reportMisbehaviour(peer.id(), 30);
    ASSERT_TRUE(eventually([&] { return n2.net().banScore(peer.id()) == 30U; }));
    EXPECT_FALSE(n2.net().isBanned(peer.id()));
    const auto bannedAt = std::chrono::steady_clock::now();
    n2.net().reportMisbehaviour(peer.id(), 70);
    ASSERT_TRUE(n2.events().waitDown(peer.id()));
    EXPECT_EQ(n2.events().downs().back().second, CloseReason::kMisbehaviour);
    EXPECT_TRUE(n2.net().isBanned(peer.id()));
    // The peer re-dials at once (backoff from 50 ms) and is refused while banned...
    ASSERT_TRUE(n2.events().waitFailure(peer.id(), CloseReason::kBanned));
    EXPECT_EQ(n2.events().ups(peer.id()), 1);
    // ...and accepted again once the ban is over.
    ASSERT_TRUE(n2.events().waitUp(peer.id(), 2));
    EXPECT_GE(std::chrono::steady_clock::now() - bannedAt, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace gridledger::p2p::test::security_test
