#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <gridledger/base/result.h>
#include <gridledger/rpc/limits.h>
#include <gridledger/rpc/method_table.h>

namespace gridledger::rpc {

/** Where and how the JSON-RPC endpoint listens. */
struct ServerOptions {
    /** IP address to bind. Loopback by default: exposing the node is the operator's choice. */
    std::string address = "127.0.0.1";
    /** TCP port; 0 binds an ephemeral port, which Server::port() reports after start(). */
    std::uint16_t port = 0;
    /** Threads running the I/O and the handlers; at least 1. */
    std::size_t ioThreads = 2;
    /** Body, batch, depth, connection and time limits. */
    ServerLimits limits{};
};

/**
 * The JSON-RPC 2.0 endpoint over HTTP/1.1 (docs/rpc.md):
 *
 * - `POST /` with `Content-Type: application/json`: one request or a batch, answered with
 *   200 and the response (204 when the body held notifications only);
 * - `GET /livez`: 200 while the server runs;
 * - keep-alive connections, each bounded by ServerLimits; a WebSocket upgrade request is
 *   recognised and currently refused with 501 (subscriptions come later on `/ws`).
 *
 * No exception crosses this API: socket and protocol errors are handled per connection, and a
 * handler's exception becomes a -32603 error for its request. Not copyable or movable.
 */
class Server {
  public:
    /** Prepares a server for `methods`; nothing is bound until start(). */
    Server(MethodTable methods, ServerOptions options);
    /** Stops the server if it runs (see stop()). */
    ~Server();

    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;
    Server(Server&&) = delete;
    Server& operator=(Server&&) = delete;

    /**
     * Binds, listens and starts the I/O threads. Fails with kConfig on a bad address or option,
     * kIo when the address cannot be bound (e.g. the port is taken), and kInvalidArgument when
     * called a second time. A server is started at most once.
     */
    [[nodiscard]] Status start();

    /**
     * Closes the listener and every open connection, waits for in-flight handlers, and joins the
     * I/O threads. Idempotent. Must not be called from a handler (it would join its own thread).
     */
    void stop();

    /** The bound TCP port once start() succeeded (the ephemeral one when options.port was 0). */
    [[nodiscard]] std::uint16_t port() const;

    /** The number of client connections open right now. */
    [[nodiscard]] std::size_t connectionCount() const;

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gridledger::rpc
