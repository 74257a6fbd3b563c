#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/rpc/access.h>
#include <gridledger/rpc/limits.h>
#include <gridledger/rpc/method_table.h>
#include <gridledger/rpc/subscriptions.h>

namespace gridledger::rpc {

/** Where and how the JSON-RPC endpoint listens. */
struct ServerOptions {
    /** IP address to bind. Loopback by default: exposing the node is the operator's choice. */
    std::string address = "127.0.0.1";
    /** TCP port; 0 binds an ephemeral port, which Server::port() reports after start(). */
    std::uint16_t port = 0;
    /** Threads running the I/O and the handlers; at least 1. */
    std::size_t ioThreads = 2;
    /**
     * How much nicer than the process the I/O threads run (0..19, Linux niceness): when the
     * cores are busy, consensus, verification and execution take them before reads do. 0 keeps
     * the process's own priority.
     */
    int ioNice = 0;
    /** Body, batch, depth, connection, subscription and time limits. */
    ServerLimits limits{};
    /**
     * The notifications of an executed height (notificationsAt over the node's chain), called by
     * publishExecuted on the server's own threads; empty: no notifications are ever sent.
     */
    std::function<Result<std::vector<Notification>>(std::uint64_t height)> feed{};
    /**
     * The shortest time between two fan-outs of notifications to the WebSocket subscribers. A
     * height announced sooner after the last fan-out waits for the next, which carries every
     * height announced meanwhile, each still its own notification, in order: each connection
     * then gets them in one socket write. This bounds the writes to subscribers at one per
     * connection per interval, whatever the block rate. Zero: each height fans out as soon as
     * it is announced.
     */
    std::chrono::milliseconds notifyInterval{0};
    /**
     * Why the node is not ready to serve (GET /readyz answers 503 with it), or nullopt when it
     * is (200). Called on the server's threads; empty: always ready.
     */
    std::function<std::optional<std::string>()> readiness{};
    /**
     * Host, Origin and bearer-token checks of every request but GET /livez and /readyz; a
     * refused one gets HTTP 403 (Host, Origin) or 401 (token) before any method runs or any
     * WebSocket upgrade. The defaults admit loopback clients only, and any non-browser client.
     */
    AccessPolicy access{};
    /**
     * Methods this listener does not serve because another listener does (the node's admin
     * methods on its public listener): a call answers -32601 with reason admin_only.
     */
    std::vector<std::string> adminOnlyMethods{};
    /**
     * Runs after the handlers of one HTTP body or WebSocket message, before the answer is sent
     * (Dispatcher): the node waits there until what tx_submit admitted is durable. Empty: none.
     */
    std::function<Status()> settle{};
    /**
     * Admits the raw transactions of one `POST /txs` body, returning each outcome at its index
     * (the node's Mempool::submitBatch, then journal and gossip). `settle` runs after it, before
     * the answer. Empty: `/txs` is not served (404).
     */
    std::function<std::vector<Result<Hash256>>(std::span<const ByteView>)> submitRaw{};
    /**
     * A directory served read-only under `/explorer/` (the built explorer, docs/explorer.md), with
     * the Host, Origin and token checks of every other request. start() fails with kConfig when
     * it is not a directory. Empty: `/explorer/` is not served (404).
     */
    std::filesystem::path explorerDir{};
};

/**
 * The JSON-RPC 2.0 endpoint over HTTP/1.1 (docs/rpc.md):
 *
 * - `POST /` with `Content-Type: application/json`: one request or a batch, answered with
 *   200 and the response (204 when the body held notifications only);
 * - `POST /txs` with `Content-Type: application/octet-stream`: raw transactions, each after its
 *   4-byte big-endian length, answered with 200 and one binary outcome per transaction
 *   (ServerOptions::submitRaw; docs/rpc.md "Raw transaction batches");
 * - `GET /livez`: 200 while the server runs;
 * - `GET /readyz`: 200 while ServerOptions::readiness finds the node ready, else 503 and why;
 * - `GET /explorer/<file>`: the files of ServerOptions::explorerDir (rpc/static_files.h), 404
 *   for any other, 400 for a path that tries to leave the directory;
 * - keep-alive connections, each bounded by ServerLimits;
 * - `GET /ws` with a WebSocket upgrade: every method over WebSocket, plus chain_subscribe /
 *   chain_unsubscribe and the notifications of ServerOptions::feed (subscriptions.h).
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
     * Binds, listens and starts the I/O threads. Fails with kConfig on a bad address or option
     * (an explorerDir that is not a directory included),
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

    /** The number of client connections open right now (HTTP and WebSocket). */
    [[nodiscard]] std::size_t connectionCount() const;

    /**
     * The number of HTTP connections waiting for a request head right now: the ones a new
     * connection at the limit may evict (ServerLimits::maxConnections).
     */
    [[nodiscard]] std::size_t idleConnectionCount() const;

    /** The number of WebSocket connections open right now. */
    [[nodiscard]] std::size_t webSocketCount() const;

    /** How many WebSocket clients were disconnected because they did not read their messages. */
    [[nodiscard]] std::uint64_t slowClientsDropped() const;

    /**
     * Announces that `height` was executed: its notifications (from ServerOptions::feed) go to
     * the subscribers on the server's threads. Never blocks and never fails; call it once per
     * height, in height order, from one thread, and subscribers receive them in that order.
     * Nothing is read when no WebSocket client is connected.
     */
    void publishExecuted(std::uint64_t height);

  private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gridledger::rpc
