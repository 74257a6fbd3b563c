#include "write_behind_stream.h"

#include <chrono>

#include <boost/asio/write.hpp>

namespace gridledger::rpc::detail {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;

constexpr unsigned char kFinText = 0x81;  // FIN, opcode 1 (text)
constexpr unsigned char kOpcodeMask = 0x0f;
constexpr unsigned char kOpcodeClose = 0x08;
constexpr std::size_t kLength16 = 126;
constexpr std::size_t kLength64 = 127;
constexpr std::size_t kMaxLength16 = 0xffff;
/** How long a closing connection may take to send what is queued (its close frame last). */
constexpr auto kCloseGrace = std::chrono::seconds(5);

}  // namespace

void WriteBehindStream::append(std::string_view bytes) {
    Core& core = *core_;
    if (bytes.empty() || core.closed || core.error || core.closeFrameQueued || core.closeWhenSent) {
        return;
    }
    core.queued.append(bytes);
    if (!core.writing && !core.flushPosted) {
        // Posted, not written now: what the strand queues before the post runs leaves with it.
        core.flushPosted = true;
        net::post(core.stream.get_executor(), [core = core_] {
            core->flushPosted = false;
            flush(core);
        });
    }
}

bool WriteBehindStream::isCloseFrame(char first) const {
    return core_->framing && (static_cast<unsigned char>(first) & kOpcodeMask) == kOpcodeClose;
}

void WriteBehindStream::close() {
    closeNow(*core_);
}

void WriteBehindStream::closeWhenSent() {
    Core& core = *core_;
    if (core.closed || core.closeWhenSent) {
        return;
    }
    core.closeWhenSent = true;
    // A client that sent its close frame and no longer reads would keep the socket open.
    core.closeTimer.expires_after(kCloseGrace);
    core.closeTimer.async_wait([core = core_](beast::error_code ec) {
        if (!ec) {
            closeNow(*core);
        }
    });
    if (!core.writing && !core.flushPosted) {
        flush(core_);
    }
}

void WriteBehindStream::flush(const std::shared_ptr<Core>& core) {
    if (core->writing || core->closed) {
        return;
    }
    if (core->queued.empty() || core->error) {
        if (core->closeWhenSent || core->error) {
            closeNow(*core);
        }
        return;
    }
    core->writing = true;
    core->sending.swap(core->queued);
    net::async_write(core->stream, net::buffer(core->sending),
                     [core](beast::error_code ec, std::size_t) {
                         core->writing = false;
                         core->sending.clear();
                         if (ec && !core->error) {
                             core->error = ec;
                         }
                         flush(core);
                     });
}

void WriteBehindStream::closeNow(Core& core) {
    if (core.closed) {
        return;
    }
    core.closed = true;
    core.queued.clear();
    core.closeTimer.cancel();
    // A pending read or write ends with an error; the socket's resources go with the Core.
    core.stream.close();
}

void teardown(beast::role_type /*role*/, WriteBehindStream& stream, beast::error_code& ec) {
    stream.closeWhenSent();
    ec = {};
}

TextFrameHeader::TextFrameHeader(std::size_t payloadBytes) {
    bytes_[0] = static_cast<char>(kFinText);
    if (payloadBytes < kLength16) {
        bytes_[1] = static_cast<char>(payloadBytes);
        size_ = 2;
        return;
    }
    const std::size_t lengthBytes = payloadBytes <= kMaxLength16 ? 2 : 8;
    bytes_[1] = static_cast<char>(lengthBytes == 2 ? kLength16 : kLength64);
    for (std::size_t i = 0; i < lengthBytes; ++i) {  // big-endian
        bytes_[2 + i] = static_cast<char>((payloadBytes >> (8 * (lengthBytes - 1 - i))) & 0xffU);
    }
    size_ = 2 + lengthBytes;
}

}  // namespace gridledger::rpc::detail
