#pragma once

#include <chrono>
#include <cstddef>

namespace gridledger::rpc {

/**
 * The limits of the JSON-RPC endpoint. Every one is enforced before any handler runs, and each
 * breach is answered with a stable reason token (docs/rpc.md, "Limits").
 */
struct ServerLimits {
    /** Largest HTTP request body; beyond it: HTTP 413, reason body_too_large, connection closed. */
    std::size_t maxBodyBytes = std::size_t{1} << 20;
    /** Largest HTTP request head (request line and headers); beyond it: HTTP 431. */
    std::size_t maxHeaderBytes = std::size_t{8} << 10;
    /** Most requests in one batch; beyond it: one -32005 error, reason batch_too_large. */
    std::size_t maxBatchItems = 100;
    /** Deepest nesting of JSON arrays and objects; beyond it: -32005, reason too_deep. */
    std::size_t maxJsonDepth = 64;
    /** Most open client connections; a connection beyond it is closed at once. */
    std::size_t maxConnections = 1024;
    /**
     * How long an HTTP connection may wait between requests, and a WebSocket connection may stay
     * silent (the server pings it at half this time; a pong counts as traffic).
     */
    std::chrono::milliseconds idleTimeout{30'000};
    /** How long reading one HTTP request or writing one response may take, and the handshake. */
    std::chrono::milliseconds requestTimeout{30'000};
    /** Most WebSocket connections open at once; an upgrade beyond it is answered 503. */
    std::size_t maxWsConnections = 256;
    /** Most subscriptions of one WebSocket connection; beyond it: -32005 too_many_subscriptions. */
    std::size_t maxSubscriptions = 32;
    /**
     * Most bytes queued for one WebSocket client that does not read them; a connection whose
     * queue would grow beyond it is closed (the node never waits for a client).
     */
    std::size_t maxSendBufferBytes = std::size_t{4} << 20;
    /**
     * Largest answer to one request or batch, in bytes of JSON text. A single answer above it is
     * replaced by a -32016 response_too_large error; in a batch, the response that would cross
     * it and every request after it get that error instead (those after it are not run). The
     * default leaves room for a block_getRaw answer carrying one largest block as hex.
     */
    std::size_t maxResponseBytes = std::size_t{16} << 20;
};

}  // namespace gridledger::rpc
