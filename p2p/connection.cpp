#include "connection.h"

#include <algorithm>
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

/**
 * A body is read in chunks of at most this many bytes, and its buffer grows only as they arrive:
 * a length announced in a header reserves nothing. A buffer larger than this is also released
 * after its frame, so idle peers hold little.
 */
constexpr std::size_t kReadChunkBytes = std::size_t{64} << 10U;
/** Largest frame before the peer's hello (which is a few bytes). */
constexpr std::size_t kMaxHelloFrameBytes = 1024;
/** When the read buffers of all connections use the whole budget, a growth is retried after. */
constexpr std::chrono::milliseconds kBudgetRetryDelay{20};

}  // namespace

Connection::Connection(tcp::socket socket, net::ssl::context& tls, const Options& options,
                       ConnectionOwner& owner, std::uint16_t listenPort, std::uint64_t session,
                       std::atomic<std::uint64_t>& dropped, BufferBudget& budget)
    : executor_(socket.get_executor()),
      stream_(std::move(socket), tls),
      resolver_(executor_),
      deadline_(executor_),
      keepAlive_(executor_),
      readPause_(executor_),
      options_(options),
      owner_(owner),
      dropped_(dropped),
      budget_(budget),
      listenPort_(listenPort),
      session_(session),
      bytesIn_(static_cast<double>(options.limits.inboundBytesPerSecond),
               static_cast<double>(options.limits.inboundBytesBurst), Clock::now()),
      messagesIn_(static_cast<double>(options.limits.inboundMessagesPerSecond),
                  static_cast<double>(options.limits.inboundMessagesBurst), Clock::now()),
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

void Connection::accept(const tcp::endpoint& remote) {
    remoteIp_ = remote.port() == 0 ? std::string() : remote.address().to_string();
    address_ = remoteIp_ + ":" + std::to_string(remote.port());
    armDeadline(options_.timers.handshakeTimeout, CloseReason::kTimeout);
    handshake(Stream::server);
}

void Connection::noteRemote() {
    boost::system::error_code ec;
    const tcp::endpoint remote = stream_.next_layer().remote_endpoint(ec);
    if (!ec) {
        remoteIp_ = remote.address().to_string();
    }
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
    noteRemote();
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
    const std::size_t limit = ready_ ? options_.limits.maxFrameBytes : kMaxHelloFrameBytes;
    if (length == 0 || length > limit) {
        close(CloseReason::kFrameTooLarge,
              "announced frame of " + std::to_string(length) + " bytes");
        return;
    }
    bodyLength_ = length;
    body_.clear();
    readBody();
}

bool Connection::reserveBody(std::size_t bytes) {
    if (bytes <= body_.capacity()) {
        return true;
    }
    // Doubling what arrived keeps the copies few; a buffer never exceeds the announced length.
    const std::size_t doubled = std::min(bodyLength_, std::max(bytes, 2 * body_.capacity()));
    for (const std::size_t capacity : {doubled, bytes}) {
        if (budget_.tryTake(capacity - charged_)) {
            body_.reserve(capacity);
            charged_ = capacity;
            return true;
        }
    }
    return false;
}

void Connection::releaseBody() {
    Bytes().swap(body_);
    budget_.give(charged_);
    charged_ = 0;
}

template <class Resume>
void Connection::pauseReading(std::chrono::milliseconds delay, Resume resume) {
    readPause_.expires_after(delay);
    readPause_.async_wait([self = shared_from_this(),
                           resume = std::move(resume)](const boost::system::error_code& ec) {
        if (ec) {
            return;
        }
        {
            const std::lock_guard lock(self->mutex_);
            if (self->closed_) {
                return;
            }
        }
        resume(*self);
    });
}

void Connection::readBody() {
    const std::size_t received = body_.size();
    const std::size_t chunk = std::min(kReadChunkBytes, bodyLength_ - received);
    if (!reserveBody(received + chunk)) {
        // The read buffers of all connections hold the whole budget: read on once some is back.
        pauseReading(kBudgetRetryDelay, [](Connection& self) { self.readBody(); });
        return;
    }
    body_.resize(received + chunk);
    net::async_read(stream_, net::buffer(body_.data() + received, chunk),
                    [self = shared_from_this()](const boost::system::error_code& ec,
                                                std::size_t bytes) { self->onChunk(ec, bytes); });
}

void Connection::onChunk(const boost::system::error_code& ec, std::size_t /*bytes*/) {
    if (ec) {
        onReadError(ec);
        return;
    }
    if (body_.size() < bodyLength_) {
        readBody();
        return;
    }
    onBody();
}

void Connection::onBody() {
    lastFrameAt_ = Clock::now();
    Result<codec::Envelope> envelope = codec::decodeEnvelope(body_);
    if (body_.capacity() > kReadChunkBytes) {
        releaseBody();
    }
    if (!envelope) {
        close(CloseReason::kMalformedFrame, envelope.error().message);
        return;
    }
    onEnvelope(std::move(*envelope));
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return;
        }
    }
    afterFrame();
}

void Connection::afterFrame() {
    const Clock::time_point now = Clock::now();
    bytesIn_.charge(static_cast<double>(kFrameHeaderBytes + bodyLength_), now);
    messagesIn_.charge(1.0, now);
    const std::chrono::milliseconds wait =
        std::max(bytesIn_.waitFor(now), messagesIn_.waitFor(now));
    if (wait == std::chrono::milliseconds::zero()) {
        readHeader();
        return;
    }
    // Backpressure: the peer's frames stay in its socket (and TCP slows it down) until its
    // budget refills. The owner may also score or drop it.
    owner_.onThrottled(shared_from_this());
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return;
        }
    }
    pauseReading(wait, [](Connection& self) { self.readHeader(); });
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
    readPause_.cancel();
    resolver_.cancel();
    // The buffer itself stays until the connection is destroyed: a read may still point into it.
    budget_.give(charged_);
    charged_ = 0;
    boost::system::error_code ignored;
    stream_.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.next_layer().close(ignored);
    owner_.onClosed(shared_from_this(), reason, detail);
}

}  // namespace gridledger::p2p
