#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>

#include <gridledger/base/token_bucket.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/p2p/options.h>

#include "buffer_budget.h"
#include "send_queue.h"
#include "tls.h"

namespace gridledger::p2p {

class Connection;

/** What a connection reports to the network. Every call comes from the I/O thread. */
class ConnectionOwner {
  public:
    virtual ~ConnectionOwner() = default;
    /** Decides, during the TLS handshake, whether the certified node id may connect. */
    virtual std::optional<CloseReason> admit(const NodeId& nodeId) = 0;
    /** The peer's hello arrived: the owner registers, retires or closes the connection. */
    virtual void onReady(const std::shared_ptr<Connection>& connection) = 0;
    /** An application message or a peer list from a ready connection. */
    virtual void onEnvelope(const std::shared_ptr<Connection>& connection,
                            codec::Envelope envelope) = 0;
    /**
     * The peer sent past its inbound budget (Limits::inbound*) and reading pauses until the debt
     * is repaid. The owner may close the connection.
     */
    virtual void onThrottled(const std::shared_ptr<Connection>& connection) = 0;
    /** The connection closed; called exactly once. */
    virtual void onClosed(const std::shared_ptr<Connection>& connection, CloseReason reason,
                          const std::string& detail) = 0;
};

/**
 * One TLS connection to a peer: handshake and hello, frame reading, the bounded send queue and
 * its writer, keep-alive. All socket work runs on the network's single I/O thread; enqueue() and
 * queue queries may be called from any thread.
 */
class Connection : public std::enable_shared_from_this<Connection> {
  public:
    using Stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;

    enum class Enqueued : std::uint8_t { kQueued, kDropped, kOverflow, kClosed };

    struct QueueState {
        std::size_t messages = 0;
        std::size_t bytes = 0;
        std::uint64_t dropped = 0;
    };

    /**
     * `tls`, `options`, `owner`, `dropped` (counts frames dropped by the queue policy) and
     * `budget` (shared by the read buffers of all connections) must outlive the connection's I/O.
     */
    Connection(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context& tls,
               const Options& options, ConnectionOwner& owner, std::uint16_t listenPort,
               std::uint64_t session, std::atomic<std::uint64_t>& dropped, BufferBudget& budget);

    /**
     * Starts the server side of the handshake on an accepted socket whose remote end the
     * network read at accept (an empty IP and port 0 when it could not).
     */
    void accept(const boost::asio::ip::tcp::endpoint& remote);
    /** Resolves, connects and starts the client side of the handshake, expecting `target`. */
    void dial(const PeerAddress& target);

    /** Owner, on ready: the connection is registered; start keep-alive. */
    void activate();
    /**
     * Owner: the connection lost the tie-break (kDuplicate) or was replaced (kSuperseded). It
     * stays open without keep-alive: it finishes its write in flight, answers pings, and
     * delivers what the peer still sends on it, until the peer closes it or `grace` ends.
     */
    void retire(std::chrono::milliseconds grace, CloseReason reason);
    /** Closes the socket and reports onClosed once. I/O thread only. */
    void close(CloseReason reason, const std::string& detail);
    /** Posts close() to the I/O thread; any thread. */
    void closeLater(CloseReason reason, std::string detail);

    /** Queues one frame; any thread. kOverflow leaves the connection to the caller to close. */
    [[nodiscard]] Enqueued enqueue(std::shared_ptr<const Bytes> frame, bool droppable);
    /** Takes the queued frames (to move them to a connection that supersedes this one). */
    [[nodiscard]] std::deque<SendQueue::Entry> takeQueue();
    /** Queues frames taken from another connection, in order, with the queue policy. */
    void adopt(std::deque<SendQueue::Entry> entries);
    [[nodiscard]] QueueState queueState() const;

    /** The verified node id, once TLS completed; else the dialed one; else nothing. */
    [[nodiscard]] std::optional<NodeId> peerId() const;
    /** The node id of the peer certificate, once the TLS handshake verified it. */
    [[nodiscard]] const std::optional<NodeId>& verifiedId() const { return check_.verified; }
    [[nodiscard]] bool outbound() const { return outbound_; }
    [[nodiscard]] bool ready() const { return ready_; }
    [[nodiscard]] const std::string& address() const { return address_; }
    /** Remote IP (no port), once connected; for an inbound connection, as read at accept. */
    [[nodiscard]] const std::string& remoteIp() const { return remoteIp_; }
    /** Listen port from the peer's hello (0: it does not listen). */
    [[nodiscard]] std::uint16_t helloListenPort() const { return helloListenPort_; }
    /** The session the peer's hello named (0: unknown). */
    [[nodiscard]] std::uint64_t helloSession() const { return helloSession_; }

  private:
    using Clock = std::chrono::steady_clock;

    void armDeadline(std::chrono::milliseconds after, CloseReason reason);
    void onConnected(const boost::system::error_code& ec);
    void handshake(Stream::handshake_type type);
    void onHandshake(const boost::system::error_code& ec);
    void readHeader();
    void onHeader(const boost::system::error_code& ec);
    /** Reads the next chunk of the body into a buffer grown by at most what arrives next. */
    void readBody();
    void onChunk(const boost::system::error_code& ec, std::size_t bytes);
    void onBody();
    /** Charges the frame to the inbound budget, then reads on, at once or after a pause. */
    void afterFrame();
    /** Grows the buffer's capacity to at least `bytes` within the budget; false if it cannot. */
    bool reserveBody(std::size_t bytes);
    /** Frees the read buffer and gives its budget back. */
    void releaseBody();
    /** Runs `resume` after `delay`, unless the connection closed meanwhile. */
    template <class Resume>
    void pauseReading(std::chrono::milliseconds delay, Resume resume);
    void onEnvelope(codec::Envelope envelope);
    void onHello(const codec::PeerHello& hello);
    void onReadError(const boost::system::error_code& ec);
    void scheduleKeepAlive();
    void onKeepAlive();
    void sendControl(const codec::Envelope& envelope);
    void startWrite();
    void onWrite(const boost::system::error_code& ec);
    /** Records the remote IP of a connected dial (left empty when unknown). */
    void noteRemote();

    boost::asio::any_io_executor executor_;
    Stream stream_;
    boost::asio::ip::tcp::resolver resolver_;
    boost::asio::steady_timer deadline_;
    boost::asio::steady_timer keepAlive_;
    boost::asio::steady_timer readPause_;
    const Options& options_;
    ConnectionOwner& owner_;
    std::atomic<std::uint64_t>& dropped_;
    BufferBudget& budget_;
    std::uint16_t listenPort_;
    std::uint64_t session_;
    tls::PeerCheck check_;

    bool outbound_ = false;
    bool ready_ = false;
    CloseReason deadlineReason_ = CloseReason::kTimeout;
    std::string address_;
    std::string remoteIp_;
    std::uint16_t helloListenPort_ = 0;
    std::uint64_t helloSession_ = 0;
    std::uint64_t pingCounter_ = 0;
    Clock::time_point lastFrameAt_{};
    std::optional<Clock::time_point> writeStartedAt_;

    std::array<std::uint8_t, 4> header_{};
    Bytes body_;
    std::size_t bodyLength_ = 0;  // announced by the frame being read
    std::size_t charged_ = 0;     // budget taken for body_'s capacity
    TokenBucket bytesIn_;
    TokenBucket messagesIn_;

    mutable std::mutex mutex_;  // guards the members below
    SendQueue queue_;
    bool closed_ = false;
    bool canWrite_ = false;
    bool writePosted_ = false;
};

}  // namespace gridledger::p2p
