#include "connection.h"

#include <utility>
#include <variant>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>

#include "frame.h"

namespace gridledger::p2p {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

/** A read buffer larger than this is released after its frame, so idle peers hold little. */
constexpr std::size_t kKeptBufferBytes = std::size_t{1} << 20U;

}  // namespace

Connection::Connection(tcp::socket socket, net::ssl::context& tls, const Options& options,
                       ConnectionOwner& owner, std::uint16_t listenPort, std::uint64_t session,
                       std::atomic<std::uint64_t>& dropped)
    : executor_(socket.get_executor()),
      stream_(std::move(socket), tls),
      resolver_(executor_),
      deadline_(executor_),
      keepAlive_(executor_),
      options_(options),
      owner_(owner),
      dropped_(dropped),
      listenPort_(listenPort),
      session_(session),
      queue_(options.limits.maxQueueMessages, options.limits.maxQueueBytes) {
    check_.admit = [this](const NodeId& nodeId) { return owner_.admit(nodeId); };
}

std::optional<NodeId> Connection::peerId() const {
    return check_.verified ? check_.verified : check_.expected;
}

void Connection::armDeadline(std::chrono::milliseconds after, CloseReason reason) {
    deadlineReason_ = reason;
    deadline_.expires_after(after);
    deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec) {
            self->close(self->deadlineReason_, "deadline passed");
        }
    });
}

void Connection::accept() {
    const std::uint16_t remotePort = noteRemote();
    address_ = remoteIp_ + ":" + std::to_string(remotePort);
    armDeadline(options_.timers.handshakeTimeout, CloseReason::kTimeout);
    handshake(Stream::server);
}

std::uint16_t Connection::noteRemote() {
    boost::system::error_code ec;
    const tcp::endpoint remote = stream_.next_layer().remote_endpoint(ec);
    if (ec) {
        return 0;
    }
    remoteIp_ = remote.address().to_string();
    return remote.port();
}

void Connection::dial(const PeerAddress& target) {
    outbound_ = true;
    check_.expected = target.nodeId;
    address_ = target.host + ":" + std::to_string(target.port);
    armDeadline(options_.timers.handshakeTimeout, CloseReason::kTimeout);
    boost::system::error_code ec;
    const net::ip::address ip = net::ip::make_address(target.host, ec);
    if (!ec) {
        stream_.next_layer().async_connect(
            tcp::endpoint(ip, target.port),
            [self = shared_from_this()](const boost::system::error_code& connectEc) {
                self->onConnected(connectEc);
            });
        return;
    }
    resolver_.async_resolve(
        target.host, std::to_string(target.port),
        [self = shared_from_this()](const boost::system::error_code& resolveEc,
                                    const tcp::resolver::results_type& results) {
            if (resolveEc) {
                self->close(CloseReason::kIoError, "resolve: " + resolveEc.message());
                return;
            }
            net::async_connect(
                self->stream_.next_layer(), results,
                [self](const boost::system::error_code& connectEc,
                       const tcp::endpoint& /*endpoint*/) { self->onConnected(connectEc); });
        });
}

void Connection::onConnected(const boost::system::error_code& ec) {
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return;
        }
    }
    if (ec) {
        close(CloseReason::kIoError, "connect: " + ec.message());
        return;
    }
    (void)noteRemote();
    handshake(Stream::client);
}

void Connection::handshake(Stream::handshake_type type) {
    boost::system::error_code ignored;
    stream_.next_layer().set_option(tcp::no_delay(true), ignored);
    const Status attached = tls::attach(stream_.native_handle(), &check_);
    if (!attached) {
        close(CloseReason::kHandshakeFailed, attached.error().message);
        return;
    }
    stream_.async_handshake(type, [self = shared_from_this()](const boost::system::error_code& ec) {
        self->onHandshake(ec);
    });
}

void Connection::onHandshake(const boost::system::error_code& ec) {
    if (ec) {
        if (ec != net::error::operation_aborted) {
            std::string detail = "tls: " + ec.message();
            if (check_.presented) {
                detail += "; certificate node id " + check_.presented->hex();
            }
            close(check_.refusal.value_or(CloseReason::kHandshakeFailed), detail);
        }
        return;
    }
    if (!check_.verified) {
        close(CloseReason::kHandshakeFailed, "tls: no verified peer certificate");
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return;
        }
        canWrite_ = true;
    }
    sendControl(codec::PeerHello{kProtocolVersion, listenPort_, session_});
    readHeader();
}

void Connection::readHeader() {
    net::async_read(stream_, net::buffer(header_),
                    [self = shared_from_this()](const boost::system::error_code& ec,
                                                std::size_t /*bytes*/) { self->onHeader(ec); });
}

void Connection::onReadError(const boost::system::error_code& ec) {
    if (ec == net::error::operation_aborted) {
        return;
    }
    // Before the peer's hello, an error is most often the peer refusing our certificate.
    close(ready_ ? CloseReason::kIoError : CloseReason::kHandshakeFailed, "read: " + ec.message());
}

void Connection::onHeader(const boost::system::error_code& ec) {
    if (ec) {
        onReadError(ec);
        return;
    }
    const std::uint32_t length = readU32(header_);
    if (length == 0 || length > options_.limits.maxFrameBytes) {
        close(CloseReason::kFrameTooLarge,
              "announced frame of " + std::to_string(length) + " bytes");
        return;
    }
    body_.resize(length);
    net::async_read(stream_, net::buffer(body_),
                    [self = shared_from_this()](const boost::system::error_code& bodyEc,
                                                std::size_t /*bytes*/) { self->onBody(bodyEc); });
}

void Connection::onBody(const boost::system::error_code& ec) {
    if (ec) {
        onReadError(ec);
        return;
    }
    lastFrameAt_ = Clock::now();
    Result<codec::Envelope> envelope = codec::decodeEnvelope(body_);
    if (body_.capacity() > kKeptBufferBytes) {
        Bytes().swap(body_);
    }
    if (!envelope) {
        close(CloseReason::kMalformedFrame, envelope.error().message);
        return;
    }
    onEnvelope(std::move(*envelope));
    const std::lock_guard lock(mutex_);
    if (!closed_) {
        readHeader();
    }
}

void Connection::onEnvelope(codec::Envelope envelope) {
    if (const auto* hello = std::get_if<codec::PeerHello>(&envelope)) {
        onHello(*hello);
        return;
    }
    if (!ready_) {
        close(CloseReason::kProtocol, "the first frame is not a hello");
        return;
    }
    if (const auto* ping = std::get_if<codec::PeerPing>(&envelope)) {
        sendControl(codec::PeerPong{ping->nonce});
        return;
    }
    if (std::holds_alternative<codec::PeerPong>(envelope)) {
        return;  // liveness is any complete frame
    }
    owner_.onEnvelope(shared_from_this(), std::move(envelope));
}

void Connection::onHello(const codec::PeerHello& hello) {
    if (ready_) {
        close(CloseReason::kProtocol, "a second hello");
        return;
    }
    if (hello.version != kProtocolVersion) {
        close(CloseReason::kProtocol, "protocol version " + std::to_string(hello.version));
        return;
    }
    helloListenPort_ = hello.listenPort;
    helloSession_ = hello.session;
    ready_ = true;
    deadline_.cancel();
    owner_.onReady(shared_from_this());
}

void Connection::activate() {
    lastFrameAt_ = Clock::now();
    scheduleKeepAlive();
}

void Connection::retire(std::chrono::milliseconds grace, CloseReason reason) {
    keepAlive_.cancel();
    armDeadline(grace, reason);
}

void Connection::scheduleKeepAlive() {
    keepAlive_.expires_after(options_.timers.pingInterval);
    keepAlive_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
        if (!ec) {
            self->onKeepAlive();
        }
    });
}

void Connection::onKeepAlive() {
    const Clock::time_point now = Clock::now();
    if (now - lastFrameAt_ > options_.timers.pingTimeout) {
        close(CloseReason::kKeepAliveTimeout, "no frame received in time");
        return;
    }
    if (writeStartedAt_ && now - *writeStartedAt_ > options_.timers.writeTimeout) {
        close(CloseReason::kWriteTimeout, "the peer does not read");
        return;
    }
    sendControl(codec::PeerPing{++pingCounter_});
    const std::lock_guard lock(mutex_);
    if (!closed_) {
        scheduleKeepAlive();
    }
}

void Connection::sendControl(const codec::Envelope& envelope) {
    auto frame = encodeFrame(envelope, options_.limits.maxFrameBytes);
    if (!frame) {
        return;  // control frames are tiny; cannot happen with a valid maxFrameBytes
    }
    if (enqueue(std::move(*frame), false) == Enqueued::kOverflow) {
        close(CloseReason::kQueueOverflow, "send queue full");
    }
}

Connection::Enqueued Connection::enqueue(std::shared_ptr<const Bytes> frame, bool droppable) {
    const std::lock_guard lock(mutex_);
    if (closed_) {
        return Enqueued::kClosed;
    }
    const std::uint64_t droppedBefore = queue_.dropped();
    const SendQueue::Outcome outcome = queue_.push(SendQueue::Entry{std::move(frame), droppable});
    dropped_.fetch_add(queue_.dropped() - droppedBefore, std::memory_order_relaxed);
    switch (outcome) {
        case SendQueue::Outcome::kDroppedNew:
            return Enqueued::kDropped;
        case SendQueue::Outcome::kOverflow:
            return Enqueued::kOverflow;
        case SendQueue::Outcome::kQueued:
            break;
    }
    if (canWrite_ && !queue_.inFlight() && !writePosted_) {
        writePosted_ = true;
        net::post(executor_, [self = shared_from_this()] { self->startWrite(); });
    }
    return Enqueued::kQueued;
}

void Connection::startWrite() {
    std::shared_ptr<const Bytes> frame;
    {
        const std::lock_guard lock(mutex_);
        writePosted_ = false;
        if (closed_) {
            return;
        }
        frame = queue_.beginWrite();
    }
    if (!frame) {
        return;
    }
    writeStartedAt_ = Clock::now();
    net::async_write(
        stream_, net::buffer(*frame),
        [self = shared_from_this(), frame](const boost::system::error_code& ec,
                                           std::size_t /*bytes*/) { self->onWrite(ec); });
}

void Connection::onWrite(const boost::system::error_code& ec) {
    writeStartedAt_.reset();
    if (ec) {
        if (ec != net::error::operation_aborted) {
            close(CloseReason::kIoError, "write: " + ec.message());
        }
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return;
        }
        queue_.finishWrite();
    }
    startWrite();
}

std::deque<SendQueue::Entry> Connection::takeQueue() {
    const std::lock_guard lock(mutex_);
    return queue_.takeQueued();
}

void Connection::adopt(std::deque<SendQueue::Entry> entries) {
    for (auto& entry : entries) {
        if (enqueue(std::move(entry.frame), entry.droppable) == Enqueued::kOverflow) {
            close(CloseReason::kQueueOverflow, "send queue full");
            return;
        }
    }
}

Connection::QueueState Connection::queueState() const {
    const std::lock_guard lock(mutex_);
    return {queue_.size(), queue_.bytes(), queue_.dropped()};
}

void Connection::closeLater(CloseReason reason, std::string detail) {
    net::post(executor_, [self = shared_from_this(), reason, detail = std::move(detail)] {
        self->close(reason, detail);
    });
}

void Connection::close(CloseReason reason, const std::string& detail) {
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return;
        }
        closed_ = true;
        queue_.clear();
    }
    deadline_.cancel();
    keepAlive_.cancel();
    resolver_.cancel();
    boost::system::error_code ignored;
    stream_.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.next_layer().close(ignored);
    owner_.onClosed(shared_from_this(), reason, detail);
}

}  // namespace gridledger::p2p
