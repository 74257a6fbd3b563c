#pragma once

// Private to the rpc module: the byte stream under a WebSocket session, whose writes wait in
// memory and leave together.

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace gridledger::rpc::detail {

/**
 * A TCP stream for one WebSocket connection whose writes are queued in memory and sent behind
 * the writer's back: a write completes as soon as its bytes are queued, and one socket write
 * then sends everything queued so far. While that write is on its way, what is queued next
 * waits and leaves with the following one. A connection that is behind therefore gets its
 * frames in few large writes instead of one system call each, and the cost of sending to it
 * shrinks as it falls behind instead of growing.
 *
 * Two writers share the queue in order: Beast's WebSocket stream (the upgrade answer and the
 * control frames: pong, ping, close), through async_write_some, and the session, which appends
 * whole frames it built with append(). Each write is queued whole, so frames never interleave.
 * Once a close frame was queued, nothing more is (RFC 6455 §5.5.1: no data after a close).
 *
 * Every member runs on the socket's strand. What is queued is freed only by a completed socket
 * write or by close(); queuedBytes() lets the owner bound it.
 */
class WriteBehindStream {
  public:
    using next_layer_type = boost::beast::tcp_stream;
    using executor_type = next_layer_type::executor_type;

    explicit WriteBehindStream(boost::asio::ip::tcp::socket&& socket)
        : core_(std::make_shared<Core>(std::move(socket))) {}

    // The members below are named by Asio's AsyncStream and Beast's next-layer requirements.
    // NOLINTNEXTLINE(readability-identifier-naming)
    [[nodiscard]] executor_type get_executor() noexcept { return core_->stream.get_executor(); }
    // NOLINTNEXTLINE(readability-identifier-naming)
    [[nodiscard]] next_layer_type& next_layer() noexcept { return core_->stream; }

    template <typename MutableBuffers, typename Token>
    // NOLINTNEXTLINE(readability-identifier-naming)
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return core_->stream.async_read_some(buffers, std::forward<Token>(token));
    }

    /** Queues `buffers` and completes (never inline) with their size, or the stream's error. */
    template <typename ConstBuffers, typename Token>
    // NOLINTNEXTLINE(readability-identifier-naming)
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        return boost::asio::async_initiate<Token, void(boost::beast::error_code, std::size_t)>(
            [this](auto handler, const ConstBuffers& data) {
                const boost::beast::error_code ec = core_->error;
                std::size_t size = 0;
                bool closeFrame = false;
                for (const boost::asio::const_buffer piece :
                     boost::beast::buffers_range_ref(data)) {
                    const std::string_view bytes(static_cast<const char*>(piece.data()),
                                                 piece.size());
                    if (size == 0 && !bytes.empty()) {
                        closeFrame = isCloseFrame(bytes.front());
                    }
                    append(bytes);
                    size += piece.size();
                }
                if (closeFrame) {
                    core_->closeFrameQueued = true;
                }
                boost::asio::post(core_->stream.get_executor(),
                                  boost::beast::bind_front_handler(std::move(handler), ec, size));
            },
            token, buffers);
    }

    /**
     * Marks the end of the HTTP upgrade answer: from here on, each of Beast's writes is one whole
     * frame, and a close frame among them ends what may be queued.
     */
    void startFrames() { core_->framing = true; }

    /** Queues `bytes`, a frame or a part of one; nothing once closed, failed or after a close. */
    void append(std::string_view bytes);

    /** Bytes queued and not yet written to the socket, the write on its way included. */
    [[nodiscard]] std::size_t queuedBytes() const {
        return core_->queued.size() + core_->sending.size();
    }

    /** Closes the socket now; what is queued is dropped. */
    void close();
    /**
     * Closes the socket once what is queued is written, the write fails, or 5 s have passed;
     * nothing is queued after this.
     */
    void closeWhenSent();

  private:
    struct Core {
        explicit Core(boost::asio::ip::tcp::socket&& socket)
            : stream(std::move(socket)), closeTimer(stream.get_executor()) {}
        next_layer_type stream;
        boost::asio::steady_timer closeTimer;
        std::string queued;
        std::string sending;
        boost::beast::error_code error;
        bool writing = false;
        bool flushPosted = false;
        bool framing = false;
        bool closeFrameQueued = false;
        bool closeWhenSent = false;
        bool closed = false;
    };

    /** Whether a write of Beast's that begins with `first` is a close frame. */
    [[nodiscard]] bool isCloseFrame(char first) const;
    /** Writes what is queued unless a write is on its way; closes when asked and all is sent. */
    static void flush(const std::shared_ptr<Core>& core);
    static void closeNow(Core& core);

    // Shared with the posted writes, which keep the socket alive after the session is gone.
    std::shared_ptr<Core> core_;
};

/** Beast's teardown of the WebSocket's next layer (found by argument-dependent lookup). */
void teardown(boost::beast::role_type role, WriteBehindStream& stream,
              boost::beast::error_code& ec);

template <typename TeardownHandler>
// NOLINTNEXTLINE(readability-identifier-naming): Beast's customization point for the next layer.
void async_teardown(boost::beast::role_type /*role*/, WriteBehindStream& stream,
                    TeardownHandler&& handler) {
    // The close frame Beast just queued goes out before the socket closes.
    stream.closeWhenSent();
    boost::asio::post(stream.get_executor(),
                      boost::beast::bind_front_handler(std::forward<TeardownHandler>(handler),
                                                       boost::beast::error_code{}));
}

/** The header of an unmasked, final text frame (RFC 6455 §5.2), 2 to 10 bytes. */
class TextFrameHeader {
  public:
    explicit TextFrameHeader(std::size_t payloadBytes);
    [[nodiscard]] std::string_view bytes() const { return {bytes_.data(), size_}; }

  private:
    std::array<char, 10> bytes_{};
    std::size_t size_ = 0;
};

}  // namespace gridledger::rpc::detail
