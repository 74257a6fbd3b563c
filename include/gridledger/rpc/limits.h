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
    /** How long a connection may stay idle, or take to send a request or read a response. */
    std::chrono::milliseconds idleTimeout{30'000};
};

}  // namespace gridledger::rpc
