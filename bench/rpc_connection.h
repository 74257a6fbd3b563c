#pragma once

// A blocking JSON-RPC client of a node on 127.0.0.1, for the load generator.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/json.hpp>

#include <gridledger/base/bytes.h>

namespace gridledger::bench {

/** One keep-alive HTTP connection to the node's JSON-RPC. */
class Connection {
  public:
    /** Connects to 127.0.0.1:`port`; throws when it cannot. */
    explicit Connection(std::uint16_t port);

    /** Calls `method` and returns the whole reply (result or error). */
    boost::json::value call(const std::string& method, boost::json::array params);

    /**
     * Posts raw transactions to `POST /txs` (each after its 4-byte big-endian length) and
     * returns the reason each was refused for, empty for those admitted.
     */
    std::vector<std::string> postRaw(const std::vector<ByteView>& txs);

    /** Posts a raw JSON-RPC body (one request or a batch) and parses the reply. */
    boost::json::value post(std::string body);

  private:
    /** POSTs `body` to `target` on the kept-alive connection and returns the answer's body. */
    std::string exchange(const char* target, const char* contentType, std::string body);

    boost::asio::io_context io_;
    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
};

}  // namespace gridledger::bench
