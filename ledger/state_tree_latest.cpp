#include "state_tree_latest.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

namespace gridledger::ledger::tree {

std::optional<Bytes> KeyTable::Entry::value() const {
    if (!present) {
        return std::nullopt;
    }
    const std::uint8_t* data = size <= kInlineBytes ? inlineBytes.data() : heap.get();
    return Bytes(data, data + size);
}

std::uint64_t KeyTable::hashOf(const Hash256& key) {
    // Ledger keys are SHA-256 digests, but the tree takes any key: mix all four words, so that
    // keys differing only in their last bytes spread too.
    std::uint64_t mixed = 0;
    for (std::size_t word = 0; word < Hash256::size(); word += sizeof mixed) {
        std::uint64_t part = 0;
        std::memcpy(&part, key.data() + word, sizeof part);
        mixed = (mixed ^ part) * 0x9e3779b97f4a7c15ULL;
    }
    return SlotIndex::spread(mixed);
}

std::size_t KeyTable::footprint(std::size_t valueSize) {
    // The entry, four index slots (the index is between a quarter and half full), and a value
    // too long to be kept in place.
    return sizeof(Entry) + 4 * sizeof(std::uint64_t) + (valueSize > kInlineBytes ? valueSize : 0);
}

void KeyTable::store(Entry& entry, const std::optional<Bytes>& value) {
    entry.present = value.has_value();
    entry.size = value ? static_cast<std::uint32_t>(value->size()) : 0;
    entry.heap.reset();
    if (!value) {
        return;
    }
    if (value->size() <= kInlineBytes) {
        std::copy(value->begin(), value->end(), entry.inlineBytes.begin());
        return;
    }
    entry.heap = std::make_unique<std::uint8_t[]>(value->size());
    std::copy(value->begin(), value->end(), entry.heap.get());
}

KeyTable::Entry& KeyTable::entry(std::size_t index) const {
    return chunks_[index / kChunkEntries][index % kChunkEntries];
}

std::optional<std::size_t> KeyTable::indexOf(const Hash256& key) const {
    return index_.find(hashOf(key),
                       [this, &key](std::uint32_t number) { return entry(number).key == key; });
}

const KeyTable::Entry* KeyTable::find(const Hash256& key) const {
    const auto index = indexOf(key);
    return index ? &entry(*index) : nullptr;
}

bool KeyTable::set(const Hash256& key, std::uint64_t writtenAt, const std::optional<Bytes>& value,
                   std::size_t budgetBytes) {
    const std::size_t size = footprint(value ? value->size() : 0);
    if (const auto index = indexOf(key)) {
        Entry& existing = entry(*index);
        bytes_ = bytes_ - footprint(existing.present ? existing.size : 0) + size;
        existing.writtenAt = writtenAt;
        store(existing, value);
        return true;
    }
    if (bytes_ + size > budgetBytes || count_ >= SlotIndex::kMaxItems) {
        return false;
    }
    if (count_ % kChunkEntries == 0) {
        chunks_.push_back(std::make_unique<Entry[]>(kChunkEntries));
    }
    Entry& added = entry(count_);
    added.key = key;
    added.writtenAt = writtenAt;
    store(added, value);
    index_.add(hashOf(key), static_cast<std::uint32_t>(count_),
               [this](std::uint32_t number) { return hashOf(entry(number).key); });
    ++count_;
    bytes_ += size;
    return true;
}

void KeyTable::clear() {
    index_.clear();
    chunks_.clear();
    count_ = 0;
    bytes_ = 0;
}

std::optional<KnownValue> LatestValues::find(const Hash256& key, std::uint64_t version) const {
    const std::shared_lock lock(mutex_);
    if (!tip_ || version > *tip_) {
        return std::nullopt;
    }
    const KeyTable::Entry* found = entries_.find(key);
    if (found == nullptr) {
        return complete_ ? std::optional(KnownValue{}) : std::nullopt;
    }
    if (version < found->writtenAt) {
        return std::nullopt;
    }
    return KnownValue{found->value()};
}

void LatestValues::learn(const Hash256& key, std::uint64_t version, std::uint64_t writtenAt,
                         const std::optional<Bytes>& value) {
    const std::unique_lock lock(mutex_);
    // Only a read at the tip saw the last write up to the tip; an entry already there is newer
    // or the same.
    if (!tip_ || version != *tip_ || entries_.find(key) != nullptr) {
        return;
    }
    entries_.set(key, writtenAt, value, budgetBytes_);
}

void LatestValues::advance(std::uint64_t version, std::span<const TreeUpdate> writes,
                           bool fromEmpty) {
    const std::unique_lock lock(mutex_);
    if (fromEmpty) {
        entries_.clear();
        complete_ = true;
    } else if (!tip_ || version != *tip_ + 1) {
        // A version in between may have been written without passing here.
        entries_.clear();
        complete_ = false;
    }
    tip_ = version;
    for (const auto& write : writes) {
        if (!entries_.set(write.key, version, write.value, budgetBytes_)) {
            complete_ = false;
        }
    }
}

}  // namespace gridledger::ledger::tree
