#pragma once

// Hand-driven peers for the P2P tests: a raw TCP client and a TLS client that speaks the frame
// format directly, so tests can send what a real Network never would (garbage, oversized
// lengths, frames out of protocol). Each operation runs on the client's own io_context with an
// upper-bound timeout.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <gridledger/codec/p2p.h>
#include <gridledger/crypto/ed25519.h>

#include "../../../p2p/frame.h"
#include "../../../p2p/tls.h"
#include "unit/p2p/harness.h"

namespace gridledger::p2p::test {

namespace net = boost::asio;

/** Runs one asynchronous operation on `io` to completion or until `timeout` (then cancelled). */
template <class Start, class Cancel>
boost::system::error_code runWithTimeout(net::io_context& io, Start start, Cancel cancel,
                                         std::chrono::seconds timeout = kWait) {
    std::optional<boost::system::error_code> result;
    start([&result](const boost::system::error_code& ec, auto&&...) { result = ec; });
    io.restart();
    io.run_for(timeout);
    if (!result) {
        cancel();
        io.restart();
        io.run();
        return net::error::timed_out;
    }
    return *result;
}

/** A plain TCP client: connects and writes bytes, then waits for the node to close. */
class RawTcpClient {
  public:
    explicit RawTcpClient(std::uint16_t port) : socket_(io_) {
        boost::system::error_code ec;
        socket_.connect({net::ip::make_address("127.0.0.1"), port}, ec);
        connectError_ = ec;
    }
    [[nodiscard]] boost::system::error_code connectError() const { return connectError_; }

    boost::system::error_code write(ByteView bytes) {
        boost::system::error_code ec;
        net::write(socket_, net::buffer(bytes.data(), bytes.size()), ec);
        return ec;
    }

    /** Reads until the peer closes; true when it did (EOF or reset), false on timeout. */
    bool waitClosed() {
        std::array<std::uint8_t, 4096> buffer{};
        for (;;) {
            const auto ec = runWithTimeout(
                io_, [&](auto handler) { socket_.async_read_some(net::buffer(buffer), handler); },
                [&] { socket_.close(); });
            if (ec == net::error::timed_out) {
                return false;
            }
            if (ec) {
                return true;
            }
        }
    }

  private:
    net::io_context io_;
    net::ip::tcp::socket socket_;
    boost::system::error_code connectError_;
};

/** A TLS 1.3 client with a node key (or with no certificate at all). */
class TlsTestClient {
  public:
    /**
     * With `key`'s node certificate; accepts any server certificate. Connects from `source`
     * (another loopback address, e.g. 127.0.0.2, is another remote IP to the node).
     */
    TlsTestClient(const crypto::NodeKey& key, std::uint16_t port, const char* source = nullptr)
        : context_(std::move(*tls::makeContext(key))), stream_(io_, *context_) {
        check_.admit = [](const NodeId&) { return std::optional<CloseReason>(); };
        connect(port, source);
    }

    /** Without a client certificate. */
    explicit TlsTestClient(std::uint16_t port)
        : context_(std::make_unique<net::ssl::context>(net::ssl::context::tls)),
          stream_(io_, *context_) {
        SSL_CTX_set_min_proto_version(context_->native_handle(), TLS1_3_VERSION);
        context_->set_verify_mode(net::ssl::verify_none);
        connect(port);
    }

    /** The client side of the TLS handshake (in TLS 1.3 it may end before the server's verdict). */
    boost::system::error_code handshake() {
        if (connectError_) {
            return connectError_;
        }
        if (SSL_CTX_get_verify_mode(context_->native_handle()) != SSL_VERIFY_NONE) {
            if (!tls::attach(stream_.native_handle(), &check_)) {
                return net::error::invalid_argument;
            }
        }
        return runWithTimeout(
            io_,
            [&](auto handler) {
                stream_.async_handshake(
                    net::ssl::stream_base::client,
                    [handler](const boost::system::error_code& ec) mutable { handler(ec); });
            },
            [&] { stream_.next_layer().close(); });
    }

    /** Handshake, then exchanges hellos like a real node; true on success. */
    bool join() {
        if (handshake()) {
            return false;
        }
        if (writeEnvelope(codec::PeerHello{kProtocolVersion, 0})) {
            return false;
        }
        auto hello = readEnvelope();
        return hello && std::holds_alternative<codec::PeerHello>(*hello);
    }

    boost::system::error_code writeRaw(ByteView bytes) {
        return runWithTimeout(
            io_,
            [&](auto handler) {
                net::async_write(stream_, net::buffer(bytes.data(), bytes.size()), handler);
            },
            [&] { stream_.next_layer().close(); });
    }

    boost::system::error_code writeEnvelope(const codec::Envelope& envelope) {
        auto frame = encodeFrame(envelope, std::size_t{1} << 30U);
        return writeRaw(**frame);
    }

    /** Reads one frame, skipping pings; an error when the connection closed or timed out. */
    Result<codec::Envelope> readEnvelope() {
        for (;;) {
            std::array<std::uint8_t, 4> header{};
            if (auto ec = readExactly(header.data(), header.size())) {
                return fail(ErrorCode::kIo, ec.message());
            }
            Bytes body(readU32(header));
            if (auto ec = readExactly(body.data(), body.size())) {
                return fail(ErrorCode::kIo, ec.message());
            }
            auto envelope = codec::decodeEnvelope(body);
            if (!envelope || !std::holds_alternative<codec::PeerPing>(*envelope)) {
                return envelope;
            }
        }
    }

    /** Reads until the node closes the connection; true when it did, false on timeout. */
    bool waitClosed() {
        for (;;) {
            std::array<std::uint8_t, 4096> buffer{};
            const auto ec = runWithTimeout(
                io_, [&](auto handler) { stream_.async_read_some(net::buffer(buffer), handler); },
                [&] { stream_.next_layer().close(); });
            if (ec == net::error::timed_out) {
                return false;
            }
            if (ec) {
                return true;
            }
        }
    }

  private:
    void connect(std::uint16_t port, const char* source = nullptr) {
        if (source != nullptr) {
            auto& socket = stream_.next_layer();
            if (socket.open(net::ip::tcp::v4(), connectError_) ||
                socket.bind({net::ip::make_address(source), 0}, connectError_)) {
                return;
            }
        }
        stream_.next_layer().connect({net::ip::make_address("127.0.0.1"), port}, connectError_);
    }

    boost::system::error_code readExactly(std::uint8_t* data, std::size_t size) {
        return runWithTimeout(
            io_, [&](auto handler) { net::async_read(stream_, net::buffer(data, size), handler); },
            [&] { stream_.next_layer().close(); });
    }

    net::io_context io_;
    std::unique_ptr<net::ssl::context> context_;
    net::ssl::stream<net::ip::tcp::socket> stream_;
    tls::PeerCheck check_;
    boost::system::error_code connectError_;
};

}  // namespace gridledger::p2p::test
