#include "state_tree_cache.h"

#include <algorithm>
#include <bit>

namespace gridledger::ledger::tree {

namespace {

/** The index of `slot` among the slots set in `map`. */
std::size_t rank(std::uint16_t map, std::size_t slot) {
    return static_cast<std::size_t>(
        std::popcount(static_cast<std::uint16_t>(map & ((1U << slot) - 1U))));
}

}  // namespace

NodeCache::Entry::Entry(std::uint64_t version, const StoredForm& form, const InternalNode& node,
                        const InnerHashes& inner, const std::array<const LeafNode*, kRadix>& leaves,
                        const Entry* base, std::uint16_t fromBase) {
    assign(version, form, node, inner, leaves, base, fromBase, nullptr);
}

void NodeCache::Entry::assign(std::uint64_t version, const StoredForm& form,
                              const InternalNode& node, const InnerHashes& inner,
                              const std::array<const LeafNode*, kRadix>& leaves, const Entry* base,
                              std::uint16_t fromBase, Slot* scratch) {
    const auto baseLeaves =
        static_cast<std::uint16_t>(base != nullptr ? base->leavesKnown_ & fromBase : 0U);
    std::uint16_t childMap = 0;
    std::uint16_t leafMap = 0;
    std::uint16_t leavesKnown = 0;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (const auto& child = node.children[slot]) {
            const auto bit = static_cast<std::uint16_t>(1U << slot);
            const bool known = leaves[slot] != nullptr || hasSlot(baseLeaves, slot);
            childMap = static_cast<std::uint16_t>(childMap | bit);
            leafMap = static_cast<std::uint16_t>(leafMap | (child->isLeaf ? bit : 0U));
            leavesKnown =
                static_cast<std::uint16_t>(leavesKnown | (child->isLeaf && known ? bit : 0U));
        }
    }
    const bool dense = static_cast<std::size_t>(std::popcount(childMap)) > kDenseChildren;
    const auto count = static_cast<std::size_t>(std::popcount(childMap)) +
                       2 * static_cast<std::size_t>(std::popcount(leavesKnown)) +
                       (dense ? kInnerSlots : 0);
    const bool inPlace = base == this;
    if (!inPlace) {
        slots_ = std::make_unique_for_overwrite<Slot[]>(count);
    }
    Slot* const begin = inPlace ? scratch : slots_.get();
    Slot* out = begin;
    for (const auto& child : node.children) {
        if (child) {
            *out++ = Slot{child->hash, child->version};
        }
    }
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (!hasSlot(leavesKnown, slot)) {
            continue;
        }
        if (const LeafNode* leaf = leaves[slot]) {
            *out++ = Slot{leaf->key, 0};
            *out++ = Slot{leaf->valueHash, 0};
        } else {
            const Slot* at = &base->slots_[base->childCount() + 2 * rank(base->leavesKnown_, slot)];
            *out++ = at[0];
            *out++ = at[1];
        }
    }
    if (dense) {
        for (std::size_t index = 1; index < kRadix; ++index) {
            *out++ = Slot{inner[index], 0};
        }
    }
    if (inPlace) {
        if (slotCount() != count) {
            slots_ = std::make_unique_for_overwrite<Slot[]>(count);
        }
        std::copy(begin, out, slots_.get());
    }
    version_ = version;
    fullVersion_ = form.fullVersion;
    sinceFull_ = form.sinceFull;
    childMap_ = childMap;
    leafMap_ = leafMap;
    leavesKnown_ = leavesKnown;
}

std::size_t NodeCache::Entry::childCount() const {
    return static_cast<std::size_t>(std::popcount(childMap_));
}

std::size_t NodeCache::Entry::leafCount() const {
    return static_cast<std::size_t>(std::popcount(leavesKnown_));
}

std::size_t NodeCache::Entry::slotCount() const {
    return childCount() + 2 * leafCount() + (keepsInner() ? kInnerSlots : 0);
}

std::optional<ChildRef> NodeCache::Entry::child(std::size_t slot) const {
    if (!hasSlot(childMap_, slot)) {
        return std::nullopt;
    }
    const Slot& child = slots_[rank(childMap_, slot)];
    return ChildRef{child.hash, child.version, hasSlot(leafMap_, slot)};
}

void NodeCache::Entry::copyChildren(std::uint16_t slots, InternalNode& node) const {
    const Slot* at = slots_.get();
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (!hasSlot(childMap_, slot)) {
            continue;
        }
        if (hasSlot(slots, slot)) {
            node.children[slot] = ChildRef{at->hash, at->version, hasSlot(leafMap_, slot)};
        }
        ++at;
    }
}

std::optional<LeafNode> NodeCache::Entry::leaf(std::size_t slot) const {
    if (!hasSlot(leavesKnown_, slot)) {
        return std::nullopt;
    }
    const Slot* at = &slots_[childCount() + 2 * rank(leavesKnown_, slot)];
    return LeafNode{at[0].hash, at[1].hash};
}

InnerHashes NodeCache::Entry::inner() const {
    InnerHashes out;
    if (keepsInner()) {
        const Slot* at = &slots_[childCount() + 2 * leafCount()];
        for (std::size_t index = 1; index < kRadix; ++index) {
            out[index] = at[index - 1].hash;
        }
        return out;
    }
    InternalNode node;
    copyChildren(0xffff, node);
    rehashInner(node, 0xffff, out);
    return out;
}

std::uint64_t NodeCache::hashOf(const NibblePath& path) {
    return SlotIndex::spread(path.mapHash());
}

NodeCache::Item& NodeCache::item(std::size_t number) const {
    return chunks_[number / kChunkItems][number % kChunkItems];
}

NodeCache::Item* NodeCache::lookup(const NibblePath& path) const {
    const auto number =
        index_.find(hashOf(path), [this, &path](std::uint32_t n) { return item(n).path == path; });
    return number ? &item(*number) : nullptr;
}

NodeCache::Entry* NodeCache::find(std::uint64_t version, const NibblePath& path) {
    Item* found = lookup(path);
    if (found == nullptr || found->entry.slots_ == nullptr || found->entry.version_ != version) {
        return nullptr;
    }
    return &found->entry;
}

void NodeCache::prefetch(const NibblePath& path) const {
    index_.prefetch(hashOf(path));
}

void NodeCache::rewrite(Entry& current, Rewrites& rewrites, std::uint64_t version,
                        const StoredForm& form, const InternalNode& node, const InnerHashes& inner,
                        const std::array<const LeafNode*, kRadix>& leaves, std::uint16_t fromBase) {
    rewrites.removedBytes_ += footprint(current);
    current.assign(version, form, node, inner, leaves, &current, fromBase, rewrites.scratch_.get());
    rewrites.addedBytes_ += footprint(current);
}

void NodeCache::settle(Rewrites& rewrites) {
    bytes_ = bytes_ - rewrites.removedBytes_ + rewrites.addedBytes_;
    rewrites.removedBytes_ = 0;
    rewrites.addedBytes_ = 0;
}

void NodeCache::drop(Entry& current) {
    replace(current, Entry{});
}

void NodeCache::replace(Entry& current, Entry entry) {
    bytes_ = bytes_ - footprint(current) + footprint(entry);
    current = std::move(entry);
}

void NodeCache::put(const NibblePath& path, Entry entry) {
    if (Item* existing = lookup(path)) {
        replace(existing->entry, std::move(entry));
        return;
    }
    const std::size_t size = footprint(entry);
    if (bytes_ + size > budgetBytes_ || count_ >= SlotIndex::kMaxItems) {
        return;
    }
    if (count_ % kChunkItems == 0) {
        chunks_.push_back(std::make_unique<Item[]>(kChunkItems));
    }
    Item& added = item(count_);
    added.path = path;
    added.entry = std::move(entry);
    index_.add(hashOf(path), static_cast<std::uint32_t>(count_),
               [this](std::uint32_t number) { return hashOf(item(number).path); });
    bytes_ += size;
    ++count_;
}

std::size_t NodeCache::footprint(const Entry& entry) {
    // The item, four index slots (the index is between a quarter and half full), and the
    // entry's allocation.
    return sizeof(Item) + 4 * sizeof(std::uint64_t) + entry.slotCount() * sizeof(Entry::Slot);
}

}  // namespace gridledger::ledger::tree
