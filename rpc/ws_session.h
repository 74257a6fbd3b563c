#pragma once

// Private to the rpc module: one WebSocket client connection on `/ws`.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json/object.hpp>

#include <gridledger/rpc/method_table.h>
#include <gridledger/rpc/subscriptions.h>

#include "write_behind_stream.h"

namespace gridledger::rpc::detail {

class ServerState;

/** A batch of notifications shared by every session it is delivered to. */
using SharedNotifications = std::shared_ptr<const std::vector<Notification>>;

/**
 * One WebSocket connection: every JSON-RPC method (one text message per request or batch, one per
 * response), plus chain_subscribe / chain_unsubscribe, served from the connection's own method
 * table (also inside a batch), and the notifications of its subscriptions. Its work runs on the
 * strand of its socket.
 *
 * Outgoing messages are framed here and queued on the connection's WriteBehindStream, which
 * sends everything queued in one write; the queue is bounded by ServerLimits::maxSendBufferBytes,
 * and a client that does not read is disconnected when it would exceed it, so nobody ever waits
 * for it.
 */
class WsSession : public std::enable_shared_from_this<WsSession> {
  public:
    using Request = boost::beast::http::request<boost::beast::http::string_body>;

    WsSession(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<ServerState> state);
    ~WsSession();

    WsSession(const WsSession&) = delete;
    WsSession& operator=(const WsSession&) = delete;

    /** Completes the upgrade `request` (HTTP 101) and starts reading messages. */
    void start(Request request);
    /** Closes the connection from any thread. */
    void close();
    /**
     * Queues the notifications its subscriptions match; callable from any thread. Batches
     * delivered before the connection's strand takes the previous ones leave together with them.
     */
    void deliver(SharedNotifications notifications);

  private:
    void onAccept(boost::beast::error_code ec);
    void readNext();
    void onRead(boost::beast::error_code ec);
    /** chain_subscribe on this connection: the new subscription's id. */
    Result<boost::json::value> subscribe(const boost::json::value& params);
    /** chain_unsubscribe on this connection: whether the subscription existed. */
    Result<boost::json::value> unsubscribe(const boost::json::value& params);
    /** Sends every batch delivered since the last call, in order. */
    void onDeliver();
    /** Queues one text message made of `parts`; false when the connection closed or was dropped. */
    bool send(std::initializer_list<std::string_view> parts);
    void doClose();

    boost::beast::websocket::stream<WriteBehindStream> ws_;
    boost::beast::flat_buffer buffer_;
    std::shared_ptr<ServerState> state_;
    bool open_ = false;
    bool closed_ = false;
    /** chain_subscribe and chain_unsubscribe, bound to this connection. */
    MethodTable methods_;
    /** Subscription id -> topic. */
    std::map<std::string, Topic, std::less<>> subscriptions_;
    /**
     * Batches delivered and not yet sent. Only the first of a run posts onDeliver to the strand:
     * a connection whose strand is behind takes the heads that came meanwhile in one pass and
     * one socket write, so falling behind makes each head cheaper to send instead of queueing
     * one handler per head.
     */
    std::mutex pendingMutex_;
    std::vector<SharedNotifications> pending_;
};

}  // namespace gridledger::rpc::detail
