#include "state_tree_cache.h"

#include <bit>

namespace gridledger::ledger::tree {

namespace {

/** Whether `slot`'s bit is set in `map`. */
bool has(std::uint16_t map, std::size_t slot) {
    return ((static_cast<unsigned>(map) >> slot) & 1U) != 0;
}

/** The index of `slot` among the slots set in `map`. */
std::size_t rank(std::uint16_t map, std::size_t slot) {
    return static_cast<std::size_t>(
        std::popcount(static_cast<std::uint16_t>(map & ((1U << slot) - 1U))));
}

}  // namespace

NodeCache::Entry::Entry(std::uint64_t version, const InternalNode& node, const InnerHashes& inner,
                        const std::array<const LeafNode*, kRadix>& leaves)
    : version_(version) {
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (const auto& child = node.children[slot]) {
            const auto bit = static_cast<std::uint16_t>(1U << slot);
            childMap_ = static_cast<std::uint16_t>(childMap_ | bit);
            leafMap_ = static_cast<std::uint16_t>(leafMap_ | (child->isLeaf ? bit : 0U));
            leavesKnown_ = static_cast<std::uint16_t>(leavesKnown_ |
                                                      (child->isLeaf && leaves[slot] ? bit : 0U));
        }
    }
    children_.reserve(static_cast<std::size_t>(std::popcount(childMap_)));
    leaves_.reserve(static_cast<std::size_t>(std::popcount(leavesKnown_)));
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (const auto& child = node.children[slot]) {
            children_.push_back(Child{child->hash, child->version});
        }
        if (has(leavesKnown_, slot)) {
            leaves_.push_back(*leaves[slot]);
        }
    }
    if (children_.size() > kDenseChildren) {
        inner_ = std::make_unique<InnerHashes>(inner);
    }
}

std::optional<ChildRef> NodeCache::Entry::child(std::size_t slot) const {
    if (!has(childMap_, slot)) {
        return std::nullopt;
    }
    const Child& child = children_[rank(childMap_, slot)];
    return ChildRef{child.hash, child.version, has(leafMap_, slot)};
}

const LeafNode* NodeCache::Entry::leaf(std::size_t slot) const {
    if (!has(leavesKnown_, slot)) {
        return nullptr;
    }
    return &leaves_[rank(leavesKnown_, slot)];
}

InnerHashes NodeCache::Entry::inner() const {
    if (inner_) {
        return *inner_;
    }
    InternalNode node;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        node.children[slot] = child(slot);
    }
    InnerHashes out;
    rehashInner(node, 0xffff, out);
    return out;
}

const NodeCache::Entry* NodeCache::find(std::uint64_t version, const NibblePath& path) const {
    const auto it = entries_.find(path);
    if (it == entries_.end() || it->second.version_ != version) {
        return nullptr;
    }
    return &it->second;
}

void NodeCache::put(const NibblePath& path, Entry entry) {
    const std::size_t size = footprint(entry);
    if (const auto it = entries_.find(path); it != entries_.end()) {
        bytes_ = bytes_ - footprint(it->second) + size;
        it->second = std::move(entry);
    } else if (bytes_ + size <= budgetBytes_) {
        bytes_ += size;
        entries_.emplace(path, std::move(entry));
    }
}

std::size_t NodeCache::footprint(const Entry& entry) {
    // The map node (key, entry, link and cached hash) and the three allocations.
    constexpr std::size_t kNode = sizeof(NibblePath) + sizeof(Entry) + 2 * sizeof(void*);
    return kNode + entry.children_.capacity() * sizeof(Entry::Child) +
           entry.leaves_.capacity() * sizeof(LeafNode) + (entry.inner_ ? sizeof(InnerHashes) : 0);
}

}  // namespace gridledger::ledger::tree
