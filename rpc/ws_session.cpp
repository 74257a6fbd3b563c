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
#include <boost/json/parse.hpp>
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

std::string successText(const json::value& id, json::value result) {
    return json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string errorText(const json::value& id, const RpcError& error) {
    return json::serialize(makeErrorResponse(id, error));
}

std::string subscriptionId(std::uint64_t number) {
    char text[19];
    std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(number));
    return text;
}

}  // namespace

WsSession::WsSession(net::ip::tcp::socket&& socket, std::shared_ptr<ServerState> state)
    : ws_(std::move(socket)), state_(std::move(state)) {}

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
    net::post(ws_.get_executor(),
              [self = shared_from_this(), notifications = std::move(notifications)] {
                  self->onDeliver(notifications);
              });
}

void WsSession::onAccept(beast::error_code ec) {
    if (ec || closed_) {
        doClose();
        return;
    }
    open_ = true;
    if (!outbox_.empty() && !writing_) {
        writeNext();
    }
    readNext();
}

void WsSession::readNext() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
        self->onRead(ec);
    });
}

void WsSession::onRead(beast::error_code ec) {
    if (ec || closed_) {
        // The client closed, sent a message above the limit, or stayed silent past the idle time.
        doClose();
        return;
    }
    std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    std::optional<std::string> answer = answerSubscription(text);
    if (!answer) {
        answer = state_->dispatcher().handle(text);
    }
    if (answer) {
        send(std::move(*answer));
    }
    readNext();
}

std::optional<std::string> WsSession::answerSubscription(const std::string& text) {
    // Only single requests are answered here; a subscription call inside a batch reaches the
    // method table, whose stand-ins refuse it.
    if (text.find("subscribe") == std::string::npos || !isValidUtf8(text)) {
        return std::nullopt;
    }
    json::parse_options options;
    options.max_depth = state_->limits().maxJsonDepth;
    boost::system::error_code ec;
    const json::value parsed = json::parse(text, ec, json::storage_ptr(), options);
    const json::object* request = ec ? nullptr : parsed.if_object();
    if (request == nullptr) {
        return std::nullopt;
    }
    const json::value* method = request->if_contains("method");
    const json::value* version = request->if_contains("jsonrpc");
    const json::value* id = request->if_contains("id");
    const json::value* params = request->if_contains("params");
    if (method == nullptr || !method->is_string() || version == nullptr || *version != "2.0" ||
        (id != nullptr && !id->is_string() && !id->is_number() && !id->is_null()) ||
        (params != nullptr && !params->is_array() && !params->is_object())) {
        return std::nullopt;  // The dispatcher answers what is wrong with it.
    }
    const json::value replyId = id != nullptr ? *id : json::value();
    std::string answer;
    if (method->get_string() == kSubscribeMethod) {
        answer = subscribe(replyId, params);
    } else if (method->get_string() == kUnsubscribeMethod) {
        answer = unsubscribe(replyId, params);
    } else {
        return std::nullopt;
    }
    if (id == nullptr) {
        return std::string();  // A notification: done, and never answered.
    }
    return answer;
}

std::string WsSession::subscribe(const json::value& id, const json::value* params) {
    const json::value args = params != nullptr ? *params : json::value();
    auto checked = expectOnly(args, {"topic"});
    auto name = checked ? requireString(args, 0, "topic")
                        : Result<std::string>(std::unexpected(checked.error()));
    if (!name) {
        return errorText(id, toRpcError(name.error()));
    }
    const std::optional<Topic> topic = topicNamed(*name);
    if (!topic) {
        return errorText(
            id, toRpcError(Error{ErrorCode::kInvalidArgument,
                                 "param 0 \"topic\": unknown topic \"" + name->substr(0, 64) +
                                     "\" (newHeads, taskTransitions, "
                                     "attestations, epochSettlements)"}));
    }
    const std::size_t limit = state_->limits().maxSubscriptions;
    if (subscriptions_.size() >= limit) {
        return errorText(id, RpcError{kLimitExceeded,
                                      "a connection may hold at most " + std::to_string(limit) +
                                          " subscriptions",
                                      std::string(reason::kTooManySubscriptions)});
    }
    std::string subscription = subscriptionId(state_->nextSubscriptionNumber());
    subscriptions_.emplace(subscription, *topic);
    return successText(id, json::string(subscription));
}

std::string WsSession::unsubscribe(const json::value& id, const json::value* params) {
    const json::value args = params != nullptr ? *params : json::value();
    auto checked = expectOnly(args, {"subscription"});
    auto subscription = checked ? requireString(args, 0, "subscription")
                                : Result<std::string>(std::unexpected(checked.error()));
    if (!subscription) {
        return errorText(id, toRpcError(subscription.error()));
    }
    return successText(id, json::value(subscriptions_.erase(*subscription) == 1));
}

void WsSession::onDeliver(const SharedNotifications& notifications) {
    if (closed_ || subscriptions_.empty()) {
        return;
    }
    for (const Notification& notification : *notifications) {
        for (const auto& [subscription, topic] : subscriptions_) {
            if (topic != notification.topic) {
                continue;
            }
            std::string message;
            message.reserve(notification.resultJson.size() + 96);
            message += R"({"jsonrpc":"2.0","method":")";
            message += kNotificationMethod;
            message += R"(","params":{"subscription":")";
            message += subscription;
            message += R"(","result":)";
            message += notification.resultJson;
            message += "}}";
            send(std::move(message));
            if (closed_) {
                return;
            }
        }
    }
}

void WsSession::send(std::string message) {
    if (closed_ || message.empty()) {
        return;
    }
    if (outboxBytes_ + message.size() > state_->limits().maxSendBufferBytes) {
        // The client does not read what it asked for: drop it rather than buffer without end.
        // Reset, not a graceful close: what is queued for it would never be read.
        state_->countSlowClientDropped();
        beast::error_code ignored;
        beast::get_lowest_layer(ws_).socket().set_option(net::socket_base::linger(true, 0),
                                                         ignored);
        doClose();
        return;
    }
    outboxBytes_ += message.size();
    outbox_.push_back(std::move(message));
    if (open_ && !writing_) {
        writeNext();
    }
}

void WsSession::writeNext() {
    writing_ = true;
    ws_.text(true);
    ws_.async_write(
        net::buffer(outbox_.front()),
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onWrite(ec); });
}

void WsSession::onWrite(beast::error_code ec) {
    writing_ = false;
    if (ec || closed_) {
        doClose();
        return;
    }
    outboxBytes_ -= outbox_.front().size();
    outbox_.pop_front();
    if (!outbox_.empty()) {
        writeNext();
    }
}

void WsSession::doClose() {
    if (closed_) {
        return;
    }
    closed_ = true;
    subscriptions_.clear();
    // Without a close handshake: the client may not be reading at all. Pending operations end
    // with an error and release the session.
    beast::get_lowest_layer(ws_).close();
}

}  // namespace gridledger::rpc::detail
