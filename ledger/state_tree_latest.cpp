#include "state_tree_latest.h"

#include <cstring>
#include <mutex>
#include <utility>

namespace gridledger::ledger::tree {

std::size_t LatestValues::KeyHash::operator()(const Hash256& key) const noexcept {
    // Ledger keys are SHA-256 digests, but the tree takes any key: mix all four words, so that
    // keys differing only in their last bytes spread too.
    std::uint64_t mixed = 0;
    for (std::size_t word = 0; word < Hash256::size(); word += sizeof mixed) {
        std::uint64_t part = 0;
        std::memcpy(&part, key.data() + word, sizeof part);
        mixed = (mixed ^ part) * 0x9e3779b97f4a7c15ULL;
    }
    return static_cast<std::size_t>(mixed ^ (mixed >> 32U));
}

std::optional<KnownValue> LatestValues::find(const Hash256& key, std::uint64_t version) const {
    const std::shared_lock lock(mutex_);
    if (!tip_ || version > *tip_) {
        return std::nullopt;
    }
    const auto it = entries_.find(key);
    if (it == entries_.end() || version < it->second.writtenAt) {
        return std::nullopt;
    }
    return KnownValue{it->second.value};
}

void LatestValues::learn(const Hash256& key, std::uint64_t version, std::uint64_t writtenAt,
                         const std::optional<Bytes>& value) {
    const std::unique_lock lock(mutex_);
    // Only a read at the tip saw the last write up to the tip; an entry already there is newer
    // or the same.
    if (!tip_ || version != *tip_ || entries_.contains(key)) {
        return;
    }
    setLocked(key, writtenAt, value);
}

void LatestValues::advance(std::uint64_t version, std::vector<TreeUpdate> writes) {
    const std::unique_lock lock(mutex_);
    if (!tip_ || version != *tip_ + 1) {
        // A version in between may have been written without passing here.
        entries_.clear();
        bytes_ = 0;
    }
    tip_ = version;
    for (auto& write : writes) {
        setLocked(write.key, version, std::move(write.value));
    }
}

std::size_t LatestValues::footprint(const std::optional<Bytes>& value) {
    // The map node (key, entry, link, cached hash), its bucket, and the value's allocation.
    constexpr std::size_t kNode = sizeof(Hash256) + sizeof(Entry) + 3 * sizeof(void*);
    return kNode + (value ? value->size() : 0);
}

void LatestValues::setLocked(const Hash256& key, std::uint64_t writtenAt,
                             std::optional<Bytes> value) {
    const std::size_t size = footprint(value);
    if (const auto it = entries_.find(key); it != entries_.end()) {
        bytes_ = bytes_ - footprint(it->second.value) + size;
        it->second = Entry{writtenAt, std::move(value)};
        return;
    }
    if (bytes_ + size <= budgetBytes_) {
        bytes_ += size;
        entries_.emplace(key, Entry{writtenAt, std::move(value)});
    }
}

}  // namespace gridledger::ledger::tree
