#include "address_book.h"

namespace gridledger::p2p {

bool AddressBook::learn(const PeerAddress& address, AddressSource source) {
    const auto [it, inserted] = entries_.try_emplace(address.nodeId, Entry{address, source});
    if (inserted) {
        return true;
    }
    Entry& entry = it->second;
    if (source < entry.source || entry.address == address) {
        return false;
    }
    entry = Entry{address, source};
    return true;
}

std::optional<PeerAddress> AddressBook::find(const NodeId& nodeId) const {
    const auto it = entries_.find(nodeId);
    if (it == entries_.end()) {
        return std::nullopt;
    }
    return it->second.address;
}

std::vector<PeerAddress> AddressBook::all() const {
    std::vector<PeerAddress> out;
    out.reserve(entries_.size());
    for (const auto& [id, entry] : entries_) {
        out.push_back(entry.address);
    }
    return out;
}

}  // namespace gridledger::p2p
