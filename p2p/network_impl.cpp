#include "network_impl.h"

#include <chrono>
#include <exception>
#include <random>
#include <utility>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "frame.h"
#include "tls.h"

namespace gridledger::p2p {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

/** Pause before accepting again after an accept error such as running out of descriptors. */
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};
/** How long stop() lets closed connections wind down before it abandons their operations. */
constexpr std::chrono::seconds kStopGrace{5};
/** Bounds of Limits::maxFrameBytes. */
constexpr std::size_t kMinFrameBytes = 1024;
constexpr std::size_t kMaxFrameBytes = std::size_t{1} << 30U;

std::shared_ptr<spdlog::logger> loggerFor(const Options& options) {
    if (options.logger) {
        return options.logger;
    }
    if (auto named = spdlog::get("p2p")) {
        return named;
    }
    return std::make_shared<spdlog::logger>("p2p");  // no sinks: logs go nowhere
}

bool positive(std::chrono::milliseconds duration) {
    return duration > std::chrono::milliseconds::zero();
}

/**
 * A session id for this network's hellos, drawn at start: the wall clock in milliseconds above 16
 * random bits, so that a later start of a node has a higher session (the clock here orders
 * restarts of one process, it decides nothing of consensus), never 0.
 */
std::uint64_t drawSession() {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    std::random_device device;
    const std::uint64_t session =
        (static_cast<std::uint64_t>(ms) << 16U) | (std::uint64_t{device()} & 0xffffU);
    return session == 0 ? 1 : session;
}

}  // namespace

Network::Impl::Impl(Options options, crypto::NodeKey key)
    : options_(std::move(options)),
      key_(key),
      self_(key_.nodeId()),
      log_(loggerFor(options_)),
      acceptor_(io_),
      acceptRetry_(io_),
      exchangeTimer_(io_),
      work_(net::make_work_guard(io_)),
      rng_(options_.seed),
      session_(drawSession()),
      allowed_(options_.allowed),
      bans_(options_.ban),
      buffers_(options_.limits.maxInboundBufferBytes) {}

Network::Impl::~Impl() {
    stop();
}

Status Network::Impl::checkOptions() const {
    const Limits& limits = options_.limits;
    if (limits.maxFrameBytes < kMinFrameBytes || limits.maxFrameBytes > kMaxFrameBytes) {
        return fail(ErrorCode::kConfig, "p2p: maxFrameBytes must be within 1 KiB .. 1 GiB");
    }
    if (limits.maxQueueBytes < limits.maxFrameBytes + kFrameHeaderBytes ||
        limits.maxQueueMessages == 0 || limits.maxPendingHandshakes == 0 ||
        limits.maxPendingHandshakesPerIp == 0 || limits.maxConnectionsPerNode == 0) {
        return fail(ErrorCode::kConfig,
                    "p2p: queues must hold at least one largest frame, handshakes and "
                    "connections per node at least one");
    }
    if (limits.maxInboundBufferBytes < limits.maxFrameBytes ||
        limits.inboundBytesBurst < limits.maxFrameBytes + kFrameHeaderBytes ||
        limits.inboundBytesPerSecond == 0 || limits.inboundMessagesPerSecond == 0 ||
        limits.inboundMessagesBurst == 0) {
        return fail(ErrorCode::kConfig,
                    "p2p: the read buffers and the inbound byte burst must hold at least one "
                    "largest frame, inbound rates must be positive");
    }
    const Timers& t = options_.timers;
    if (!positive(t.handshakeTimeout) || !positive(t.pingInterval) || !positive(t.pingTimeout) ||
        !positive(t.writeTimeout) || !positive(t.reconnectBase) || !positive(t.reconnectCap) ||
        !positive(t.peerExchangeInterval) || !positive(options_.ban.banDuration)) {
        return fail(ErrorCode::kConfig, "p2p: every timer must be positive");
    }
    if (t.pingTimeout <= t.pingInterval || t.reconnectBase > t.reconnectCap) {
        return fail(ErrorCode::kConfig,
                    "p2p: pingTimeout must exceed pingInterval, reconnectBase not exceed the cap");
    }
    if (options_.ban.threshold == 0) {
        return fail(ErrorCode::kConfig, "p2p: the ban threshold must be positive");
    }
    // A persistent peer outside the allow-list is kept and dialed only while it is allowed
    // (the allow-list follows the validator set, setAllowed).
    for (const PeerAddress& peer : options_.persistentPeers) {
        if (peer.nodeId == self_ || !codec::isValidHost(peer.host) || peer.port == 0) {
            return fail(ErrorCode::kConfig, "p2p: persistent peer " + peer.nodeId.hex() + " at " +
                                                peer.host + " is ourselves or has no valid " +
                                                "host:port");
        }
    }
    return {};
}

Status Network::Impl::listen() {
    boost::system::error_code ec;
    const net::ip::address address = net::ip::make_address(options_.listenHost, ec);
    if (ec) {
        return fail(ErrorCode::kConfig,
                    "p2p: invalid listen address \"" + options_.listenHost + "\": " + ec.message());
    }
    const tcp::endpoint endpoint(address, options_.listenPort);
    const std::string where = options_.listenHost + ":" + std::to_string(options_.listenPort);
    if (acceptor_.open(endpoint.protocol(), ec) ||
        acceptor_.set_option(net::socket_base::reuse_address(true), ec) ||
        acceptor_.bind(endpoint, ec) ||
        acceptor_.listen(net::socket_base::max_listen_connections, ec)) {
        boost::system::error_code ignored;
        acceptor_.close(ignored);
        return fail(ErrorCode::kIo, "p2p: cannot listen on " + where + ": " + ec.message());
    }
    const tcp::endpoint bound = acceptor_.local_endpoint(ec);
    if (ec) {
        return fail(ErrorCode::kIo, "p2p: cannot read the bound port: " + ec.message());
    }
    port_.store(bound.port());
    return {};
}

Status Network::Impl::start() {
    const std::lock_guard lock(lifecycle_);
    if (started_) {
        return fail(ErrorCode::kInvalidArgument, "p2p: the network was already started");
    }
    started_ = true;
    GL_TRY(checkOptions());
    GL_ASSIGN_OR_RETURN(tls, tls::makeContext(key_));
    tls_ = std::move(tls);
    GL_TRY(listen());
    for (const PeerAddress& peer : options_.persistentPeers) {
        {
            const std::lock_guard peersLock(peersMutex_);
            addresses_.learn(peer, AddressSource::kConfigured);
        }
        addDialTarget(peer.nodeId);
    }
    try {
        accept();
        schedulePeerExchange();
        for (const PeerAddress& peer : options_.persistentPeers) {
            scheduleDial(peer.nodeId, std::chrono::milliseconds::zero());
        }
        running_.store(true);
        thread_ = std::thread([this] { runIo(); });
    } catch (const std::exception& e) {
        running_.store(false);
        closeAll();
        work_.reset();
        io_.run();
        return fail(ErrorCode::kInternal, std::string("p2p: cannot start: ") + e.what());
    }
    log_->info("p2p listening node={} port={} allowed={} persistent={}", self_.hex(), port_.load(),
               options_.allowed.size(), options_.persistentPeers.size());
    return {};
}

void Network::Impl::runIo() {
    for (;;) {
        try {
            io_.run();
            break;
        } catch (const std::exception& e) {
            log_->error("p2p I/O handler threw error={}", e.what());
        } catch (...) {
            log_->error("p2p I/O handler threw a non-standard exception");
        }
    }
    const std::lock_guard lock(ioDoneMutex_);
    ioDone_ = true;
    ioDoneCv_.notify_all();
}

void Network::Impl::stop() {
    const std::lock_guard lock(lifecycle_);
    if (!started_ || stopped_) {
        return;
    }
    stopped_ = true;
    running_.store(false);
    if (!thread_.joinable()) {
        return;  // start() failed and cleaned up
    }
    net::post(io_, [this] { closeAll(); });
    work_.reset();
    {
        std::unique_lock done(ioDoneMutex_);
        if (!ioDoneCv_.wait_for(done, kStopGrace, [this] { return ioDone_; })) {
            io_.stop();  // an operation did not end after its socket closed: abandon it
        }
    }
    thread_.join();
    pending_.clear();
    dials_.clear();
    const std::lock_guard peersLock(peersMutex_);
    peers_.clear();
    log_->info("p2p stopped node={}", self_.hex());
}

void Network::Impl::closeAll() {
    stopping_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    acceptRetry_.cancel();
    exchangeTimer_.cancel();
    for (auto& [id, dial] : dials_) {
        dial.timer->cancel();
        dial.timerArmed = false;
    }
    std::vector<std::shared_ptr<Connection>> open(pending_.begin(), pending_.end());
    {
        const std::lock_guard lock(peersMutex_);
        for (const auto& [id, connection] : peers_) {
            open.push_back(connection);
        }
    }
    for (const auto& connection : open) {
        connection->close(CloseReason::kStopped, "the network stops");
    }
}

std::shared_ptr<Connection> Network::Impl::newConnection(tcp::socket socket) {
    return std::make_shared<Connection>(std::move(socket), *tls_, options_, *this, port_.load(),
                                        session_, counters_.messagesDropped, buffers_);
}

void Network::Impl::accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
        onAccept(ec, std::move(socket));
    });
}

void Network::Impl::onAccept(const boost::system::error_code& ec, tcp::socket socket) {
    if (stopping_ || ec == net::error::operation_aborted) {
        return;
    }
    if (ec) {
        log_->debug("p2p accept failed error={}", ec.message());  // e.g. a connection flood
        acceptRetry_.expires_after(kAcceptRetryDelay);
        acceptRetry_.async_wait([this](const boost::system::error_code& timerEc) {
            if (!timerEc && !stopping_) {
                accept();
            }
        });
        return;
    }
    // Read once: the connection counts its handshake slot under the same IP (Connection::accept).
    boost::system::error_code remoteEc;
    tcp::endpoint remote = socket.remote_endpoint(remoteEc);
    if (remoteEc) {
        remote = tcp::endpoint();
    }
    const std::string ip = remote.port() == 0 ? std::string() : remote.address().to_string();
    if (pendingInbound_ >= options_.limits.maxPendingHandshakes ||
        pendingByIp_[ip] >= options_.limits.maxPendingHandshakesPerIp) {
        if (pendingByIp_[ip] == 0) {
            pendingByIp_.erase(ip);
        }
        counters_.handshakesFailed.fetch_add(1);
        boost::system::error_code ignored;
        socket.close(ignored);
        log_->debug("p2p inbound refused address={} reason=too_many_handshakes", ip);
    } else {
        auto connection = newConnection(std::move(socket));
        pending_.insert(connection);
        ++pendingInbound_;
        ++pendingByIp_[ip];
        connection->accept(remote);
    }
    accept();
}

std::shared_ptr<Connection> Network::Impl::connectionTo(const NodeId& nodeId) const {
    const std::lock_guard lock(peersMutex_);
    const auto it = peers_.find(nodeId);
    return it == peers_.end() ? nullptr : it->second;
}

Status Network::Impl::enqueueTo(const std::shared_ptr<Connection>& connection,
                                std::shared_ptr<const Bytes> frame, bool droppable) {
    switch (connection->enqueue(std::move(frame), droppable)) {
        case Connection::Enqueued::kQueued:
            return {};
        case Connection::Enqueued::kDropped:
            return fail(ErrorCode::kUnavailable, "p2p: send queue full, message dropped");
        case Connection::Enqueued::kOverflow:
            connection->closeLater(CloseReason::kQueueOverflow, "send queue full");
            return fail(ErrorCode::kUnavailable,
                        "p2p: peer cannot keep up with its send queue; disconnected");
        case Connection::Enqueued::kClosed:
            break;
    }
    return fail(ErrorCode::kUnavailable, "p2p: peer connection is closed");
}

Status Network::Impl::send(const NodeId& to, const Message& message) {
    if (!running_.load()) {
        return fail(ErrorCode::kUnavailable, "p2p: the network is not running");
    }
    const std::shared_ptr<Connection> connection = connectionTo(to);
    if (!connection) {
        return fail(ErrorCode::kUnavailable, "p2p: peer " + to.hex() + " is not connected");
    }
    GL_ASSIGN_OR_RETURN(frame, encodeFrame(message, options_.limits.maxFrameBytes));
    return enqueueTo(connection, std::move(frame), isDroppable(message));
}

std::size_t Network::Impl::broadcast(const Message& message) {
    if (!running_.load()) {
        return 0;
    }
    auto frame = encodeFrame(message, options_.limits.maxFrameBytes);
    if (!frame) {
        return 0;
    }
    std::vector<std::shared_ptr<Connection>> targets;
    {
        const std::lock_guard lock(peersMutex_);
        targets.reserve(peers_.size());
        for (const auto& [id, connection] : peers_) {
            targets.push_back(connection);
        }
    }
    std::size_t queued = 0;
    for (const auto& connection : targets) {
        if (enqueueTo(connection, *frame, isDroppable(message))) {
            ++queued;
        }
    }
    return queued;
}

Status Network::Impl::addPeer(const PeerAddress& peer) {
    if (peer.nodeId == self_ || !isAllowed(peer.nodeId) || !codec::isValidHost(peer.host) ||
        peer.port == 0) {
        return fail(ErrorCode::kConfig, "p2p: peer " + peer.nodeId.hex() +
                                            " is ourselves, not allowed, or has no valid address");
    }
    if (!running_.load()) {
        return fail(ErrorCode::kUnavailable, "p2p: the network is not running");
    }
    net::post(io_, [this, peer] {
        {
            const std::lock_guard lock(peersMutex_);
            addresses_.learn(peer, AddressSource::kConfigured);
        }
        addDialTarget(peer.nodeId);
        scheduleDial(peer.nodeId, std::chrono::milliseconds::zero());
    });
    return {};
}

std::vector<NodeId> Network::Impl::connectedPeers() const {
    const std::lock_guard lock(peersMutex_);
    std::vector<NodeId> out;
    out.reserve(peers_.size());
    for (const auto& [id, connection] : peers_) {
        out.push_back(id);
    }
    return out;
}

std::optional<PeerInfo> Network::Impl::peerInfo(const NodeId& nodeId) const {
    const std::shared_ptr<Connection> connection = connectionTo(nodeId);
    if (!connection) {
        return std::nullopt;
    }
    const Connection::QueueState queue = connection->queueState();
    return PeerInfo{nodeId,      connection->outbound(), connection->address(), queue.messages,
                    queue.bytes, queue.dropped};
}

std::vector<PeerAddress> Network::Impl::knownAddresses() const {
    const std::lock_guard lock(peersMutex_);
    return addresses_.all();
}

NetworkStats Network::Impl::stats() const {
    return NetworkStats{counters_.messagesReceived.load(), counters_.framesRejected.load(),
                        counters_.handshakesFailed.load(), counters_.messagesDropped.load(),
                        counters_.slowPeersDropped.load(), counters_.bans.load(),
                        counters_.readsThrottled.load(),   buffers_.used()};
}

// ---- Network: forwards to Impl ----

Network::Network(Options options, crypto::NodeKey key)
    : impl_(std::make_unique<Impl>(std::move(options), key)) {}

Network::~Network() = default;

void Network::onMessage(MessageHandler handler) {
    impl_->messageHandler_ = std::move(handler);
}
void Network::onPeerUp(PeerUpHandler handler) {
    impl_->peerUpHandler_ = std::move(handler);
}
void Network::onPeerDown(PeerDownHandler handler) {
    impl_->peerDownHandler_ = std::move(handler);
}
void Network::onConnectionFailed(FailureHandler handler) {
    impl_->failureHandler_ = std::move(handler);
}
Status Network::start() {
    return impl_->start();
}
void Network::stop() {
    impl_->stop();
}
NodeId Network::nodeId() const {
    return impl_->nodeId();
}
std::uint16_t Network::port() const {
    return impl_->port();
}
Status Network::send(const NodeId& to, const Message& message) {
    return impl_->send(to, message);
}
std::size_t Network::broadcast(const Message& message) {
    return impl_->broadcast(message);
}
Status Network::addPeer(const PeerAddress& peer) {
    return impl_->addPeer(peer);
}
void Network::setAllowed(std::set<NodeId> allowed) {
    impl_->setAllowed(std::move(allowed));
}
void Network::reportMisbehaviour(const NodeId& nodeId, std::uint32_t points) {
    impl_->reportMisbehaviour(nodeId, points);
}
bool Network::isBanned(const NodeId& nodeId) const {
    return impl_->isBanned(nodeId);
}
std::uint32_t Network::banScore(const NodeId& nodeId) const {
    return impl_->banScore(nodeId);
}
std::vector<NodeId> Network::connectedPeers() const {
    return impl_->connectedPeers();
}
std::optional<PeerInfo> Network::peerInfo(const NodeId& nodeId) const {
    return impl_->peerInfo(nodeId);
}
std::vector<PeerAddress> Network::knownAddresses() const {
    return impl_->knownAddresses();
}
NetworkStats Network::stats() const {
    return impl_->stats();
}

}  // namespace gridledger::p2p
