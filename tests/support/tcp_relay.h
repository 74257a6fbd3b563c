#pragma once

// A fault-injecting TCP relay for multi-process tests: it listens on an ephemeral port of
// 127.0.0.1 and forwards every connection to a target port, byte for byte, in both directions,
// until the test cuts it. Pointing one node's persistent peer at a relay puts the relay on that
// link; cutting the relays of a node partitions it, healing them lets it reconnect.

#include <chrono>
#include <cstdint>
#include <memory>

namespace gridledger::testing {

class TcpRelay {
  public:
    /** Starts relaying 127.0.0.1:<port()> to 127.0.0.1:targetPort on a thread of its own. */
    explicit TcpRelay(std::uint16_t targetPort);
    ~TcpRelay();
    TcpRelay(const TcpRelay&) = delete;
    TcpRelay& operator=(const TcpRelay&) = delete;

    [[nodiscard]] std::uint16_t port() const;
    /** Closes every relayed connection and refuses new ones until heal(). */
    void cut();
    /** Accepts and relays connections again. */
    void heal();
    /** Holds every chunk of bytes this long before forwarding it (0: none). */
    void setDelay(std::chrono::milliseconds delay);
    /** Connections relayed so far. */
    [[nodiscard]] std::uint64_t connections() const;

  private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace gridledger::testing
