#include "ws_session.h"

#include <cstdio>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <boost/json/serialize.hpp>

#include <gridledger/rpc/errors.h>
#include <gridledger/rpc/params.h>

#include "http_session.h"

namespace gridledger::rpc::detail {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace json = boost::json;

constexpr std::string_view kServerName = "gridledger";

// A notification is these parts around its subscription id and its result's JSON text.
constexpr std::string_view kNotificationPrefix =
    R"({"jsonrpc":"2.0","method":"chain_subscription","params":{"subscription":")";
constexpr std::string_view kNotificationResult = R"(","result":)";
constexpr std::string_view kNotificationSuffix = "}}";
static_assert(kNotificationPrefix.find(kNotificationMethod) != std::string_view::npos);

std::string subscriptionId(std::uint64_t number) {
    char text[19];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(number));
    return text;
}

}  // namespace

WsSession::WsSession(net::ip::tcp::socket&& socket, std::shared_ptr<ServerState> state)
    : ws_(std::move(socket)), state_(std::move(state)) {
    // Two valid, distinct names: neither add can fail. The handlers run only inside onRead.
    (void)methods_.add(std::string(kSubscribeMethod),
                       [this](const json::value& params) { return subscribe(params); });
    (void)methods_.add(std::string(kUnsubscribeMethod),
                       [this](const json::value& params) { return unsubscribe(params); });
}

WsSession::~WsSession() {
    state_->releaseWs(this);
}

void WsSession::start(Request request) {
    net::dispatch(ws_.get_executor(), [self = shared_from_this(), request = std::move(request)] {
        const ServerLimits& limits = self->state_->limits();
        beast::get_lowest_layer(self->ws_).expires_never();
        websocket::stream_base::timeout timeout{};
        timeout.handshake_timeout = limits.requestTimeout;
        timeout.idle_timeout = limits.idleTimeout;
        timeout.keep_alive_pings = true;
        self->ws_.set_option(timeout);
        self->ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
            res.set(beast::http::field::server, kServerName);
        }));
        self->ws_.read_message_max(limits.maxBodyBytes);
        self->ws_.async_accept(request, beast::bind_front_handler(&WsSession::onAccept, self));
    });
}

void WsSession::close() {
    net::post(ws_.get_executor(),
              beast::bind_front_handler(&WsSession::doClose, shared_from_this()));
}

void WsSession::deliver(SharedNotifications notifications) {
    {
        const std::lock_guard lock(pendingMutex_);
        pending_.push_back(std::move(notifications));
        if (pending_.size() > 1) {
            return;  // the onDeliver posted for the first of them has not run yet
        }
    }
    net::post(ws_.get_executor(), [self = shared_from_this()] { self->onDeliver(); });
}

void WsSession::onAccept(beast::error_code ec) {
    if (ec || closed_) {
        doClose();
        return;
    }
    open_ = true;
    ws_.next_layer().startFrames();
    readNext();
}

void WsSession::readNext() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        self->onRead(ec);
    });
}

void WsSession::onRead(beast::error_code ec) {
    if (ec == websocket::error::closed) {
        // The close handshake: Beast queued its close frame, and the stream closes once it is
        // sent.
        closed_ = true;
        subscriptions_.clear();
        return;
    }
    if (ec || closed_) {
        // The client sent a message above the limit (Beast queued a close frame with code 1009),
        // stayed silent past the idle time, or the connection failed.
        doClose();
        return;
    }
    std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    // The connection's own methods run here, on its strand, like every handler of this read.
    std::optional<std::string> answer = state_->dispatcher().handle(text, &methods_);
    if (answer) {
        send({*answer});
    }
    readNext();
}

Result<json::value> WsSession::subscribe(const json::value& params) {
    GL_TRY(expectOnly(params, {"topic"}));
    GL_ASSIGN_OR_RETURN(name, requireString(params, 0, "topic"));
    const std::optional<Topic> topic = topicNamed(name);
    if (!topic) {
        return fail(ErrorCode::kInvalidArgument,
                    "param 0 \"topic\": unknown topic \"" + name.substr(0, 64) +
                        "\" (newHeads, taskTransitions, attestations, epochSettlements)");
    }
    const std::size_t limit = state_->limits().maxSubscriptions;
    if (subscriptions_.size() >= limit) {
        return fail(ErrorCode::kTooManySubscriptions,
                    "a connection may hold at most " + std::to_string(limit) + " subscriptions");
    }
    std::string subscription = subscriptionId(state_->nextSubscriptionNumber());
    subscriptions_.emplace(subscription, *topic);
    return json::string(subscription);
}

Result<json::value> WsSession::unsubscribe(const json::value& params) {
    GL_TRY(expectOnly(params, {"subscription"}));
    GL_ASSIGN_OR_RETURN(subscription, requireString(params, 0, "subscription"));
    return json::value(subscriptions_.erase(subscription) == 1);
}

void WsSession::onDeliver() {
    std::vector<SharedNotifications> batches;
    {
        const std::lock_guard lock(pendingMutex_);
        batches.swap(pending_);
    }
    if (closed_ || subscriptions_.empty()) {
        return;
    }
    for (const SharedNotifications& batch : batches) {
        for (const Notification& notification : *batch) {
            for (const auto& [subscription, topic] : subscriptions_) {
                if (topic == notification.topic &&
                    !send({kNotificationPrefix, subscription, kNotificationResult,
                           notification.resultJson, kNotificationSuffix})) {
                    return;
                }
            }
        }
    }
}

bool WsSession::send(std::initializer_list<std::string_view> parts) {
    if (closed_ || !open_) {
        // Nothing is sent before the upgrade completes: requests and subscriptions come after it.
        return false;
    }
    std::size_t size = 0;
    for (const std::string_view part : parts) {
        size += part.size();
    }
    const TextFrameHeader header(size);
    WriteBehindStream& stream = ws_.next_layer();
    if (stream.queuedBytes() + header.bytes().size() + size > state_->limits().maxSendBufferBytes) {
        // The client does not read what it asked for: drop it rather than buffer without end.
        // Reset, not a graceful close: what is queued for it would never be read.
        state_->countSlowClientDropped();
        beast::error_code ignored;
        beast::get_lowest_layer(ws_).socket().set_option(net::socket_base::linger(true, 0),
                                                         ignored);
        doClose();
        return false;
    }
    stream.append(header.bytes());
    for (const std::string_view part : parts) {
        stream.append(part);
    }
    return true;
}

void WsSession::doClose() {
    if (closed_) {
        return;
    }
    closed_ = true;
    subscriptions_.clear();
    // Without a close handshake: the client may not be reading at all. Pending operations end
    // with an error and release the session.
    ws_.next_layer().close();
}

}  // namespace gridledger::rpc::detail
