#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/logger.h>

#include <gridledger/p2p/network.h>

#include "address_book.h"
#include "ban_list.h"
#include "connection.h"

namespace gridledger::p2p {

/**
 * The running network. State touched only by the I/O thread is marked so; what public methods
 * read from other threads is guarded by peersMutex_ (peers, addresses) or banMutex_ (bans).
 * network_impl.cpp holds the lifecycle and the public API, network_peers.cpp the connection
 * events, dialing, peer exchange and bans.
 */
class Network::Impl final : public ConnectionOwner {
  public:
    Impl(Options options, crypto::NodeKey key);
    ~Impl() override;

    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    Impl(Impl&&) = delete;
    Impl& operator=(Impl&&) = delete;

    Status start();
    void stop();
    Status send(const NodeId& to, const Message& message);
    std::size_t broadcast(const Message& message);
    Status addPeer(const PeerAddress& peer);
    void setAllowed(std::set<NodeId> allowed);
    void reportMisbehaviour(const NodeId& nodeId, std::uint32_t points);
    [[nodiscard]] bool isBanned(const NodeId& nodeId) const;
    [[nodiscard]] std::uint32_t banScore(const NodeId& nodeId) const;
    [[nodiscard]] std::vector<NodeId> connectedPeers() const;
    [[nodiscard]] std::optional<PeerInfo> peerInfo(const NodeId& nodeId) const;
    [[nodiscard]] std::vector<PeerAddress> knownAddresses() const;
    [[nodiscard]] NetworkStats stats() const;
    [[nodiscard]] const NodeId& nodeId() const { return self_; }
    [[nodiscard]] std::uint16_t port() const { return port_.load(); }

    MessageHandler messageHandler_;
    PeerUpHandler peerUpHandler_;
    PeerDownHandler peerDownHandler_;
    FailureHandler failureHandler_;

    // ConnectionOwner (I/O thread).
    std::optional<CloseReason> admit(const NodeId& nodeId) override;
    void onReady(const std::shared_ptr<Connection>& connection) override;
    void onEnvelope(const std::shared_ptr<Connection>& connection,
                    codec::Envelope envelope) override;
    void onThrottled(const std::shared_ptr<Connection>& connection) override;
    void onClosed(const std::shared_ptr<Connection>& connection, CloseReason reason,
                  const std::string& detail) override;

  private:
    using Clock = std::chrono::steady_clock;

    /** Re-dial state of one node we keep connected to (I/O thread). */
    struct DialState {
        std::unique_ptr<boost::asio::steady_timer> timer;
        std::uint32_t attempts = 0;
        bool timerArmed = false;
        std::shared_ptr<Connection> inFlight;
    };

    struct Counters {
        std::atomic<std::uint64_t> messagesReceived{0};
        std::atomic<std::uint64_t> framesRejected{0};
        std::atomic<std::uint64_t> handshakesFailed{0};
        std::atomic<std::uint64_t> messagesDropped{0};
        std::atomic<std::uint64_t> slowPeersDropped{0};
        std::atomic<std::uint64_t> bans{0};
        std::atomic<std::uint64_t> readsThrottled{0};
    };

    // network_impl.cpp
    [[nodiscard]] Status checkOptions() const;
    [[nodiscard]] Status listen();
    void accept();
    void onAccept(const boost::system::error_code& ec, boost::asio::ip::tcp::socket socket);
    void runIo();
    void closeAll();
    [[nodiscard]] std::shared_ptr<Connection> connectionTo(const NodeId& nodeId) const;
    Status enqueueTo(const std::shared_ptr<Connection>& connection,
                     std::shared_ptr<const Bytes> frame, bool droppable);
    [[nodiscard]] std::shared_ptr<Connection> newConnection(boost::asio::ip::tcp::socket socket);

    // network_peers.cpp (I/O thread)
    /** An inbound connection left the handshake (hello or close): its slot is free again. */
    void releaseHandshakeSlot(const Connection& connection);
    /** Open connections of `peer` besides `connection`: the one in use and retired ones. */
    [[nodiscard]] std::size_t openConnectionsOf(
        const NodeId& peer, const std::shared_ptr<Connection>& connection) const;
    void registerPeer(const NodeId& nodeId, const std::shared_ptr<Connection>& connection);
    void learnObserved(const NodeId& nodeId, const Connection& connection);
    void addDialTarget(const NodeId& nodeId);
    void scheduleDial(const NodeId& nodeId, std::chrono::milliseconds delay);
    void startDial(const NodeId& nodeId);
    void afterClose(const NodeId& nodeId, const Connection& connection, bool wasUp);
    /** A peer came up: every other dial target waiting out a backoff is dialed now. */
    void redialBackedOff(const NodeId& up);
    void schedulePeerExchange();
    void sendPeerList(const NodeId& to, const std::shared_ptr<Connection>& connection);
    void onPeerList(const NodeId& from, const codec::PeerList& list);
    void penalise(const Connection& connection, CloseReason reason);
    /** Adds points; true when they banned the node (then its connections are closed). */
    bool addPoints(const NodeId& nodeId, std::uint32_t points);
    void dropBanned(const NodeId& nodeId);
    [[nodiscard]] std::optional<Clock::time_point> bannedUntil(const NodeId& nodeId) const;
    [[nodiscard]] bool isConnected(const NodeId& nodeId) const;
    [[nodiscard]] bool isAllowed(const NodeId& nodeId) const;
    /** Closes the connections of nodes no longer allowed and dials the newly allowed ones. */
    void applyAllowed();

    template <class Handler, class... Args>
    void invoke(const Handler& handler, Args&&... args);

    // Declared first so that it is destroyed last: every I/O object below belongs to it.
    boost::asio::io_context io_;
    Options options_;
    crypto::NodeKey key_;
    NodeId self_;
    std::shared_ptr<spdlog::logger> log_;
    std::unique_ptr<boost::asio::ssl::context> tls_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::steady_timer acceptRetry_;
    boost::asio::steady_timer exchangeTimer_;
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
    std::thread thread_;

    // I/O thread only.
    std::mt19937_64 rng_;
    /** Sent in every hello (codec::PeerHello::session). */
    const std::uint64_t session_;
    std::set<std::shared_ptr<Connection>> pending_;   // handshaking or retired connections
    std::size_t pendingInbound_ = 0;                  // inbound ones still in the handshake
    std::map<std::string, std::size_t> pendingByIp_;  // the same, per remote IP
    std::map<NodeId, DialState> dials_;
    bool stopping_ = false;

    mutable std::mutex allowedMutex_;  // guards allowed_
    std::set<NodeId> allowed_;         // Options::allowed, then each setAllowed()
    mutable std::mutex peersMutex_;    // guards peers_ and addresses_
    std::map<NodeId, std::shared_ptr<Connection>> peers_;
    AddressBook addresses_;

    mutable std::mutex banMutex_;  // guards bans_
    BanList bans_;

    Counters counters_;
    BufferBudget buffers_;  // outlives every connection's I/O (io_ is destroyed last)
    std::atomic<std::uint16_t> port_{0};
    std::atomic<bool> running_{false};

    std::mutex lifecycle_;  // serialises start() and stop()
    bool started_ = false;
    bool stopped_ = false;
    std::mutex ioDoneMutex_;
    std::condition_variable ioDoneCv_;
    bool ioDone_ = false;
};

template <class Handler, class... Args>
void Network::Impl::invoke(const Handler& handler, Args&&... args) {
    if (!handler) {
        return;
    }
    try {
        handler(std::forward<Args>(args)...);
    } catch (const std::exception& e) {
        log_->error("p2p callback threw error={}", e.what());
    } catch (...) {
        log_->error("p2p callback threw a non-standard exception");
    }
}

}  // namespace gridledger::p2p
