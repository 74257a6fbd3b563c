#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <gridledger/p2p/options.h>

namespace gridledger::p2p {

/** Where an address came from; a better source replaces a worse one, never the reverse. */
enum class AddressSource : std::uint8_t {
    kExchange = 0,    // told by another peer
    kObserved = 1,    // the peer's own connection: remote IP and the listen port of its hello
    kConfigured = 2,  // persistent peers of the options or addPeer()
};

/**
 * Known addresses of allowed nodes (docs/p2p.md, "Peer exchange"). Not thread-safe: the network
 * guards it with a mutex.
 */
class AddressBook {
  public:
    /**
     * Records `address` from `source` unless a better source already gave one. Returns true
     * when the stored address changed.
     */
    bool learn(const PeerAddress& address, AddressSource source);

    [[nodiscard]] std::optional<PeerAddress> find(const NodeId& nodeId) const;
    /** Every known address, sorted by node id. */
    [[nodiscard]] std::vector<PeerAddress> all() const;

  private:
    struct Entry {
        PeerAddress address;
        AddressSource source = AddressSource::kExchange;
    };
    std::map<NodeId, Entry> entries_;
};

}  // namespace gridledger::p2p
