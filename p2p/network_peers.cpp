// Connection events, dialing with backoff, peer exchange and ban scores of Network::Impl.
// Everything here runs on the I/O thread unless it says otherwise.

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

#include "backoff.h"
#include "frame.h"
#include "network_impl.h"
#include "tie_break.h"

namespace gridledger::p2p {
namespace {

namespace net = boost::asio;

/** Closes that are not failures of the peer: no failure callback, no counter. */
bool isBenign(CloseReason reason) {
    return reason == CloseReason::kStopped || reason == CloseReason::kDuplicate ||
           reason == CloseReason::kSuperseded;
}

}  // namespace

std::optional<CloseReason> Network::Impl::admit(const NodeId& nodeId) {
    if (nodeId == self_) {
        return CloseReason::kSelf;
    }
    if (!isAllowed(nodeId)) {
        return CloseReason::kNotAllowed;
    }
    if (bannedUntil(nodeId)) {
        return CloseReason::kBanned;
    }
    return std::nullopt;
}

void Network::Impl::releaseHandshakeSlot(const Connection& connection) {
    --pendingInbound_;
    const auto it = pendingByIp_.find(connection.remoteIp());
    if (it != pendingByIp_.end() && --it->second == 0) {
        pendingByIp_.erase(it);
    }
}

std::size_t Network::Impl::openConnectionsOf(const NodeId& peer,
                                             const std::shared_ptr<Connection>& connection) const {
    std::size_t open = connectionTo(peer) ? 1 : 0;
    for (const auto& other : pending_) {
        if (other != connection && other->ready() && other->verifiedId() == peer) {
            ++open;  // retired by the one-connection rule, still winding down
        }
    }
    return open;
}

void Network::Impl::onReady(const std::shared_ptr<Connection>& connection) {
    if (!connection->outbound()) {
        releaseHandshakeSlot(*connection);
    }
    if (!connection->verifiedId()) {
        connection->close(CloseReason::kHandshakeFailed, "no verified node id");
        return;
    }
    const NodeId peer = *connection->verifiedId();
    if (auto dial = dials_.find(peer);
        dial != dials_.end() && dial->second.inFlight == connection) {
        dial->second.inFlight.reset();
        dial->second.attempts = 0;
    }
    if (stopping_) {
        connection->close(CloseReason::kStopped, "the network stops");
        return;
    }
    if (bannedUntil(peer)) {
        connection->close(CloseReason::kBanned, "banned during the handshake");
        return;
    }
    if (openConnectionsOf(peer, connection) >= options_.limits.maxConnectionsPerNode) {
        log_->debug("p2p connection refused peer={} reason=too_many_connections", peer.hex());
        connection->close(CloseReason::kTooManyConnections,
                          "the node id has too many open connections");
        return;
    }
    std::shared_ptr<Connection> existing = connectionTo(peer);
    // A connection from a later session of the peer: it restarted, and the existing connection
    // belongs to a process that is gone (a power loss or a silent network sends no close, and
    // the tie-break could keep that dead connection until the keep-alive timeout).
    const bool restarted = existing && existing->helloSession() != 0 &&
                           connection->helloSession() > existing->helloSession();
    if (existing && connection->helloSession() != 0 &&
        connection->helloSession() < existing->helloSession()) {
        log_->debug("p2p stale connection peer={} outbound={} kept=existing", peer.hex(),
                    connection->outbound());
        connection->retire(options_.timers.handshakeTimeout, CloseReason::kDuplicate);
        return;  // a dial of the peer's earlier process, ready too late
    }
    if (existing && !restarted &&
        !keepsNewConnection(self_, peer, connection->outbound(), existing->outbound())) {
        log_->debug("p2p duplicate connection peer={} outbound={} kept=existing", peer.hex(),
                    connection->outbound());
        connection->retire(options_.timers.handshakeTimeout, CloseReason::kDuplicate);
        return;  // stays in pending_ until it closes
    }
    pending_.erase(connection);
    registerPeer(peer, connection);
    learnObserved(peer, *connection);
    if (existing) {
        log_->debug("p2p duplicate connection peer={} outbound={} kept=new{}", peer.hex(),
                    connection->outbound(), restarted ? " peer_restarted=true" : "");
        connection->adopt(existing->takeQueue());
        existing->retire(options_.timers.handshakeTimeout, CloseReason::kSuperseded);
        pending_.insert(existing);
        return;
    }
    log_->debug("p2p peer up peer={} outbound={} address={}", peer.hex(), connection->outbound(),
                connection->address());
    redialBackedOff(peer);
    invoke(peerUpHandler_, peer);
    const std::shared_ptr<Connection> current = connectionTo(peer);
    if (current) {
        sendPeerList(peer, current);
    }
}

void Network::Impl::registerPeer(const NodeId& nodeId,
                                 const std::shared_ptr<Connection>& connection) {
    {
        const std::lock_guard lock(peersMutex_);
        peers_[nodeId] = connection;
    }
    connection->activate();
}

void Network::Impl::learnObserved(const NodeId& nodeId, const Connection& connection) {
    if (connection.helloListenPort() == 0 || !codec::isValidHost(connection.remoteIp())) {
        return;
    }
    const std::lock_guard lock(peersMutex_);
    addresses_.learn(PeerAddress{nodeId, connection.remoteIp(), connection.helloListenPort()},
                     AddressSource::kObserved);
}

void Network::Impl::onEnvelope(const std::shared_ptr<Connection>& connection,
                               codec::Envelope envelope) {
    if (!connection->verifiedId()) {
        return;  // a ready connection always has one
    }
    const NodeId from = *connection->verifiedId();
    if (auto* message = std::get_if<codec::NetMessage>(&envelope)) {
        counters_.messagesReceived.fetch_add(1, std::memory_order_relaxed);
        invoke(messageHandler_, from, std::move(*message));
    } else if (const auto* list = std::get_if<codec::PeerList>(&envelope)) {
        onPeerList(from, *list);
    }
}

void Network::Impl::onThrottled(const std::shared_ptr<Connection>& connection) {
    counters_.readsThrottled.fetch_add(1, std::memory_order_relaxed);
    if (connection->verifiedId() && options_.ban.floodPoints > 0) {
        log_->debug("p2p inbound budget exceeded peer={}", connection->verifiedId()->hex());
        addPoints(*connection->verifiedId(), options_.ban.floodPoints);
    }
}

void Network::Impl::onClosed(const std::shared_ptr<Connection>& connection, CloseReason reason,
                             const std::string& detail) {
    if (!connection->outbound() && !connection->ready() && pending_.contains(connection)) {
        releaseHandshakeSlot(*connection);
    }
    pending_.erase(connection);
    const std::optional<NodeId> verified = connection->verifiedId();
    bool wasUp = false;
    if (verified) {
        const std::lock_guard lock(peersMutex_);
        const auto it = peers_.find(*verified);
        if (it != peers_.end() && it->second == connection) {
            peers_.erase(it);
            wasUp = true;
        }
    }
    if (stopping_) {
        return;
    }
    penalise(*connection, reason);
    if (reason == CloseReason::kQueueOverflow || reason == CloseReason::kWriteTimeout) {
        counters_.slowPeersDropped.fetch_add(1);
    }
    const std::optional<NodeId> peer = connection->peerId();
    if (wasUp && verified) {
        log_->debug("p2p peer down peer={} reason={} detail={}", verified->hex(),
                    reasonName(reason), detail);
        invoke(peerDownHandler_, *verified, reason);
    } else if (!connection->ready() && !isBenign(reason)) {
        counters_.handshakesFailed.fetch_add(1);
        log_->debug("p2p connection failed peer={} outbound={} address={} reason={} detail={}",
                    peer ? peer->hex() : "unknown", connection->outbound(), connection->address(),
                    reasonName(reason), detail);
        invoke(failureHandler_, ConnectionFailure{peer.value_or(NodeId{}), connection->outbound(),
                                                  connection->address(), reason, detail});
    }
    if (peer) {
        afterClose(*peer, *connection, wasUp);
    }
}

void Network::Impl::penalise(const Connection& connection, CloseReason reason) {
    std::uint32_t points = 0;
    if (reason == CloseReason::kFrameTooLarge) {
        points = options_.ban.oversizedFramePoints;
    } else if (reason == CloseReason::kMalformedFrame || reason == CloseReason::kProtocol) {
        points = options_.ban.malformedFramePoints;
    } else {
        return;
    }
    counters_.framesRejected.fetch_add(1);
    if (connection.verifiedId() && points > 0) {
        addPoints(*connection.verifiedId(), points);
    }
}

// ---- Dialing ----

void Network::Impl::addDialTarget(const NodeId& nodeId) {
    auto [it, inserted] = dials_.try_emplace(nodeId);
    if (inserted) {
        it->second.timer = std::make_unique<net::steady_timer>(io_);
    }
}

bool Network::Impl::isConnected(const NodeId& nodeId) const {
    return connectionTo(nodeId) != nullptr;
}

bool Network::Impl::isAllowed(const NodeId& nodeId) const {
    const std::lock_guard lock(allowedMutex_);
    return allowed_.contains(nodeId);
}

void Network::Impl::setAllowed(std::set<NodeId> allowed) {
    {
        const std::lock_guard lock(allowedMutex_);
        allowed_ = std::move(allowed);
    }
    if (running_.load()) {
        net::post(io_, [this] {
            if (!stopping_) {
                applyAllowed();
            }
        });
    }
}

void Network::Impl::applyAllowed() {
    std::vector<std::shared_ptr<Connection>> toClose;
    for (const auto& connection : pending_) {
        if (connection->verifiedId() && !isAllowed(*connection->verifiedId())) {
            toClose.push_back(connection);
        }
    }
    {
        const std::lock_guard lock(peersMutex_);
        for (const auto& [id, connection] : peers_) {
            if (!isAllowed(id)) {
                toClose.push_back(connection);
            }
        }
    }
    for (const auto& connection : toClose) {
        connection->close(CloseReason::kNotAllowed, "no longer in the allow-list");
    }
    for (auto& [id, dial] : dials_) {
        if (isAllowed(id)) {
            scheduleDial(id, std::chrono::milliseconds::zero());
        }
    }
}

void Network::Impl::afterClose(const NodeId& nodeId, const Connection& connection, bool wasUp) {
    const auto it = dials_.find(nodeId);
    if (it == dials_.end()) {
        return;
    }
    DialState& dial = it->second;
    const bool wasOurDial = dial.inFlight.get() == &connection;
    if (wasOurDial) {
        dial.inFlight.reset();
    }
    if (wasUp) {
        dial.attempts = 0;
    }
    const auto delay = backoffDelay(dial.attempts, options_.timers.reconnectBase,
                                    options_.timers.reconnectCap, rng_);
    if (wasUp || wasOurDial) {
        ++dial.attempts;
    }
    scheduleDial(nodeId, delay);
}

void Network::Impl::redialBackedOff(const NodeId& up) {
    // A link that came back is the best evidence that the network healed (a partition ended,
    // this node's own connectivity returned): the peers lost with it are dialed now rather than
    // after a backoff that grew while every dial failed. Only targets in a backoff of at least
    // two failed dials, so a peer that comes up again and again adds one dial per target.
    for (auto& [id, dial] : dials_) {
        if (id == up || dial.attempts < 2 || !dial.timerArmed || dial.inFlight || isConnected(id) ||
            !isAllowed(id) || bannedUntil(id)) {
            continue;
        }
        dial.timer->cancel();
        dial.timerArmed = false;
        dial.attempts = 0;
        scheduleDial(id, std::chrono::milliseconds::zero());
    }
}

void Network::Impl::scheduleDial(const NodeId& nodeId, std::chrono::milliseconds delay) {
    const auto it = dials_.find(nodeId);
    if (stopping_ || it == dials_.end()) {
        return;
    }
    DialState& dial = it->second;
    if (dial.inFlight || dial.timerArmed || isConnected(nodeId)) {
        return;
    }
    if (const auto until = bannedUntil(nodeId)) {
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(*until - Clock::now());
        delay = std::max(delay, wait);
    }
    dial.timerArmed = true;
    dial.timer->expires_after(delay);
    dial.timer->async_wait([this, nodeId](const boost::system::error_code& ec) {
        if (ec) {
            return;
        }
        const auto found = dials_.find(nodeId);
        if (found != dials_.end()) {
            found->second.timerArmed = false;
            startDial(nodeId);
        }
    });
}

void Network::Impl::startDial(const NodeId& nodeId) {
    DialState& dial = dials_.at(nodeId);
    if (stopping_ || dial.inFlight || isConnected(nodeId) || !isAllowed(nodeId)) {
        return;  // a node no longer allowed is dialed again once it is (applyAllowed)
    }
    if (bannedUntil(nodeId)) {
        scheduleDial(nodeId, std::chrono::milliseconds::zero());
        return;
    }
    std::optional<PeerAddress> address;
    {
        const std::lock_guard lock(peersMutex_);
        address = addresses_.find(nodeId);
    }
    if (!address) {
        return;
    }
    auto connection = newConnection(boost::asio::ip::tcp::socket(io_));
    dial.inFlight = connection;
    pending_.insert(connection);
    log_->debug("p2p dialing peer={} address={}:{} attempt={}", nodeId.hex(), address->host,
                address->port, dial.attempts);
    connection->dial(*address);
}

// ---- Peer exchange ----

void Network::Impl::schedulePeerExchange() {
    exchangeTimer_.expires_after(options_.timers.peerExchangeInterval);
    exchangeTimer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || stopping_) {
            return;
        }
        std::vector<std::pair<NodeId, std::shared_ptr<Connection>>> targets;
        {
            const std::lock_guard lock(peersMutex_);
            targets.assign(peers_.begin(), peers_.end());
        }
        for (const auto& [id, connection] : targets) {
            sendPeerList(id, connection);
        }
        schedulePeerExchange();
    });
}

void Network::Impl::sendPeerList(const NodeId& to, const std::shared_ptr<Connection>& connection) {
    codec::PeerList list;
    {
        const std::lock_guard lock(peersMutex_);
        list.peers = addresses_.all();
    }
    std::erase_if(list.peers, [&to](const PeerAddress& address) { return address.nodeId == to; });
    if (list.peers.size() > options_.limits.maxExchangedAddresses) {
        list.peers.resize(options_.limits.maxExchangedAddresses);
    }
    if (list.peers.empty()) {
        return;
    }
    auto frame = encodeFrame(list, options_.limits.maxFrameBytes);
    if (frame) {
        (void)enqueueTo(connection, std::move(*frame), true);
    }
}

void Network::Impl::onPeerList(const NodeId& from, const codec::PeerList& list) {
    const std::size_t count = std::min(list.peers.size(), options_.limits.maxExchangedAddresses);
    for (std::size_t i = 0; i < count; ++i) {
        const PeerAddress& address = list.peers[i];
        if (address.nodeId == self_ || address.nodeId == from || !isAllowed(address.nodeId)) {
            continue;  // only addresses of allowed nodes are kept
        }
        {
            const std::lock_guard lock(peersMutex_);
            addresses_.learn(address, AddressSource::kExchange);
        }
        if (options_.dialExchangedPeers && !dials_.contains(address.nodeId)) {
            addDialTarget(address.nodeId);
            scheduleDial(address.nodeId, std::chrono::milliseconds::zero());
        }
    }
}

// ---- Ban scores ----

std::optional<Network::Impl::Clock::time_point> Network::Impl::bannedUntil(
    const NodeId& nodeId) const {
    const std::lock_guard lock(banMutex_);
    return bans_.bannedUntil(nodeId, Clock::now());
}

bool Network::Impl::isBanned(const NodeId& nodeId) const {
    return bannedUntil(nodeId).has_value();
}

std::uint32_t Network::Impl::banScore(const NodeId& nodeId) const {
    const std::lock_guard lock(banMutex_);
    return bans_.score(nodeId, Clock::now());
}

bool Network::Impl::addPoints(const NodeId& nodeId, std::uint32_t points) {
    bool banned = false;
    {
        const std::lock_guard lock(banMutex_);
        banned = bans_.add(nodeId, points, Clock::now());
    }
    if (banned) {
        counters_.bans.fetch_add(1);
        log_->debug("p2p banned peer={} for_ms={}", nodeId.hex(), options_.ban.banDuration.count());
        dropBanned(nodeId);
    }
    return banned;
}

void Network::Impl::reportMisbehaviour(const NodeId& nodeId, std::uint32_t points) {
    if (!running_.load() || points == 0) {
        return;
    }
    net::post(io_, [this, nodeId, points] {
        if (!stopping_) {
            addPoints(nodeId, points);
        }
    });
}

void Network::Impl::dropBanned(const NodeId& nodeId) {
    std::vector<std::shared_ptr<Connection>> toClose;
    for (const auto& connection : pending_) {
        if (connection->verifiedId() == nodeId) {
            toClose.push_back(connection);
        }
    }
    if (auto registered = connectionTo(nodeId)) {
        toClose.push_back(std::move(registered));
    }
    for (const auto& connection : toClose) {
        connection->close(CloseReason::kMisbehaviour, "ban score reached the threshold");
    }
}

}  // namespace gridledger::p2p
