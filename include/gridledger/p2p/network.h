#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/crypto/ed25519.h>
#include <gridledger/p2p/options.h>

namespace gridledger::p2p {

/** Called for each application message, with the sender's verified node id. */
using MessageHandler = std::function<void(const NodeId& from, Message message)>;
/** Called when a peer's connection is up (TLS verified, hellos exchanged). */
using PeerUpHandler = std::function<void(const NodeId& peer)>;
/** Called when an up peer's connection closed; `reason` says why. */
using PeerDownHandler = std::function<void(const NodeId& peer, CloseReason reason)>;
/** Called for each connection that closed before its peer was up (refused, failed, timed out). */
using FailureHandler = std::function<void(const ConnectionFailure& failure)>;

/**
 * The P2P transport of a node (docs/p2p.md): TLS 1.3 with mutual authentication by Ed25519
 * node certificates, length-prefixed protobuf frames, per-peer bounded send queues, keep-alive,
 * re-dial with backoff, peer exchange and ban scores. It moves opaque messages; which messages
 * go to which peers (gossip, sync) is the node layer's choice.
 *
 * Threading: the network runs one I/O thread of its own. Every callback runs on that thread,
 * one at a time, with the messages of one peer in the order they were sent. A callback must not
 * block for long (hand heavy work to another thread) and must not call stop(); it may call
 * send(), broadcast(), reportMisbehaviour() and the queries. All public methods are thread-safe
 * except the callback setters, which must be called before start().
 *
 * No exception crosses this API, and nothing a peer sends can crash the node: bad input closes
 * that peer's connection and raises its ban score. Not copyable or movable.
 */
class Network {
  public:
    /** Prepares a network for `key`'s node id; nothing is bound or dialed until start(). */
    Network(Options options, crypto::NodeKey key);
    /** Stops the network if it runs (see stop()). */
    ~Network();

    Network(const Network&) = delete;
    Network& operator=(const Network&) = delete;
    Network(Network&&) = delete;
    Network& operator=(Network&&) = delete;

    /** Sets the message callback; call before start(). */
    void onMessage(MessageHandler handler);
    /** Sets the peer-up callback; call before start(). */
    void onPeerUp(PeerUpHandler handler);
    /** Sets the peer-down callback; call before start(). Not called for the closes of stop(). */
    void onPeerDown(PeerDownHandler handler);
    /** Sets the failed-connection callback; call before start(). */
    void onConnectionFailed(FailureHandler handler);

    /**
     * Makes the node certificate, binds and listens, starts the I/O thread and dials the
     * persistent peers. Fails with kConfig on an invalid option (bad listen address, a limit or
     * timer out of range, a persistent peer that is not allowed or is ourselves), kIo when the
     * address cannot be bound, kInternal when TLS cannot be set up, and kInvalidArgument when
     * called a second time. A network is started at most once.
     */
    [[nodiscard]] Status start();

    /**
     * Closes the listener and every connection, cancels every timer and dial, and joins the I/O
     * thread. Idempotent. No callback runs once stop() returns. Must not be called from a
     * callback (it would join its own thread).
     */
    void stop();

    /** This node's id (from the key). */
    [[nodiscard]] NodeId nodeId() const;

    /** The bound TCP port once start() succeeded (the ephemeral one when listenPort was 0). */
    [[nodiscard]] std::uint16_t port() const;

    /**
     * Queues `message` for peer `to`. Ok means the message is queued (possibly after dropping
     * older droppable messages, see docs/p2p.md "Send queue"); delivery is still best-effort:
     * a message queued to a peer that disconnects before it leaves is lost. Fails with
     * kUnavailable when `to` is not connected (or the network is not running), when the
     * queue is full and the message was dropped (a droppable kind), or when the queue is full
     * of messages that cannot be dropped, in which case the peer is disconnected as too slow;
     * with kTooLarge when the encoded frame exceeds Limits::maxFrameBytes.
     */
    [[nodiscard]] Status send(const NodeId& to, const Message& message);

    /**
     * Queues `message` for every connected peer (encoded once), with the queue policy of
     * send() for each. Returns the number of peers it was queued for.
     */
    std::size_t broadcast(const Message& message);

    /**
     * Adds `peer` to the persistent peers at run time (or updates its address) and dials it if
     * it is not connected. Fails with kConfig when it is not allowed or is ourselves, and with
     * kUnavailable when the network is not running.
     */
    [[nodiscard]] Status addPeer(const PeerAddress& peer);

    /**
     * Replaces the allow-list (Options::allowed) at run time: connections of nodes no longer in
     * it are closed with CloseReason::kNotAllowed and they are refused from then on; persistent
     * peers that are in it again are dialed. Thread-safe.
     */
    void setAllowed(std::set<NodeId> allowed);

    /**
     * Adds misbehaviour points to `nodeId` (an upper layer found its payload invalid, e.g. a
     * bad signature). At the threshold the peer is disconnected and banned (docs/p2p.md).
     */
    void reportMisbehaviour(const NodeId& nodeId, std::uint32_t points);

    /** True while `nodeId` is banned. */
    [[nodiscard]] bool isBanned(const NodeId& nodeId) const;
    /** The current (decayed) ban score of `nodeId`; 0 while banned or never reported. */
    [[nodiscard]] std::uint32_t banScore(const NodeId& nodeId) const;

    /** The node ids of the peers that are up now, sorted. */
    [[nodiscard]] std::vector<NodeId> connectedPeers() const;
    /** The state of peer `nodeId`, when it is up. */
    [[nodiscard]] std::optional<PeerInfo> peerInfo(const NodeId& nodeId) const;
    /** Addresses known for allowed nodes (configured, observed, or from peer exchange). */
    [[nodiscard]] std::vector<PeerAddress> knownAddresses() const;
    /** Counters since start(). */
    [[nodiscard]] NetworkStats stats() const;

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gridledger::p2p
