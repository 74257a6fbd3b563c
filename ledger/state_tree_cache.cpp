#include "state_tree_cache.h"

namespace gridledger::ledger::tree {

std::optional<CachedInternal> NodeCache::find(std::uint64_t version, const NibblePath& path) const {
    const auto it = entries_.find(path);
    if (it == entries_.end() || it->second.version != version) {
        return std::nullopt;
    }
    const Entry& entry = it->second;
    CachedInternal out;
    out.version = entry.version;
    out.leafKeysKnown = entry.leafKeysKnown;
    std::size_t next = 0;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (((entry.childMap >> slot) & 1U) == 0) {
            continue;
        }
        const Child& child = entry.children[next++];
        out.node.children[slot] =
            ChildRef{child.hash, child.version, ((entry.leafMap >> slot) & 1U) != 0};
        out.leafKeys[slot] = child.leafKey;
    }
    if (entry.inner) {
        out.inner = *entry.inner;
    } else {
        rehashInner(out.node, 0xffff, out.inner);
    }
    return out;
}

void NodeCache::put(const NibblePath& path, const CachedInternal& entry) {
    Entry compacted = compact(entry);
    const std::size_t size = footprint(compacted);
    if (const auto it = entries_.find(path); it != entries_.end()) {
        bytes_ = bytes_ - footprint(it->second) + size;
        it->second = std::move(compacted);
    } else if (bytes_ + size <= budgetBytes_) {
        bytes_ += size;
        entries_.emplace(path, std::move(compacted));
    }
}

NodeCache::Entry NodeCache::compact(const CachedInternal& entry) {
    Entry out;
    out.version = entry.version;
    out.leafKeysKnown = entry.leafKeysKnown;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        const auto& child = entry.node.children[slot];
        if (!child) {
            continue;
        }
        const auto bit = static_cast<std::uint16_t>(1U << slot);
        out.childMap = static_cast<std::uint16_t>(out.childMap | bit);
        out.leafMap = static_cast<std::uint16_t>(out.leafMap | (child->isLeaf ? bit : 0U));
        out.children.push_back(Child{child->hash, child->version, entry.leafKeys[slot]});
    }
    if (out.children.size() > kDenseChildren) {
        out.inner = std::make_unique<InnerHashes>(entry.inner);
    }
    return out;
}

std::size_t NodeCache::footprint(const Entry& entry) {
    // The map node (key, entry, link and cached hash) and the two allocations.
    constexpr std::size_t kNode = sizeof(NibblePath) + sizeof(Entry) + 2 * sizeof(void*);
    return kNode + entry.children.capacity() * sizeof(Child) +
           (entry.inner ? sizeof(InnerHashes) : 0);
}

}  // namespace gridledger::ledger::tree
