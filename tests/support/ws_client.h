#pragma once

// A blocking WebSocket JSON-RPC client on /ws (a node's, or a test server's), for tests of
// subscriptions. It needs only Boost and GoogleTest, so unit tests may compile it too.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <boost/json.hpp>

namespace gridledger::testing {

class WsClient {
  public:
    /**
     * Connects to 127.0.0.1:`port` and upgrades to /ws. A positive `receiveBuffer` sets the
     * socket's receive buffer (bytes) before connecting. Throws on a failed connect or handshake.
     */
    explicit WsClient(std::uint16_t port, int receiveBuffer = 0);

    /** Sends one text frame holding `request` serialized. Throws on a write error. */
    void send(const boost::json::value& request);
    /** Sends `text` as one text frame, as it is (also when it is not JSON). Throws on an error. */
    void sendText(std::string_view text);
    /** Sends `text` and returns the next frame parsed (as read() with its default timeout). */
    boost::json::value call(std::string_view text);

    /**
     * Blocks until the next frame and parses it. Throws on a read error, invalid JSON, or when no
     * frame arrives within `timeout` (the connection is unusable after that).
     */
    boost::json::value read(std::chrono::milliseconds timeout = std::chrono::seconds(60));

    /**
     * Subscribes to `topic` with request id `id` and returns the subscription id, skipping
     * notifications of earlier subscriptions; fails the current test and returns "" on an error.
     */
    std::string subscribe(std::string_view topic, int id);

    /**
     * Shuts the socket down in both directions, so that a read blocked on another thread
     * returns with an error. Only this may be called while another thread reads.
     */
    void shutdown();

    /** The kernel's TCP state of the connection (TCP_CLOSE once the node reset it). */
    int tcpState();

  private:
    boost::asio::io_context io_;
    boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws_;
};

}  // namespace gridledger::testing
