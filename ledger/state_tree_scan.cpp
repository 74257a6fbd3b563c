// Key-range reads of the state tree: a walk of one version's nodes that descends only into the
// children whose key range meets the one asked for, so that deleted keys cost nothing.

#include <algorithm>

#include <gridledger/ledger/state_tree.h>

#include "state_tree_node.h"

namespace gridledger::ledger {
namespace {

using tree::NibblePath;

/** `key` with nibble `index` set to `nibble`. */
Hash256 withNibble(Hash256 key, std::size_t index, std::uint8_t nibble) {
    auto& byte = key.data()[index / 2];
    byte = index % 2 == 0
               ? static_cast<std::uint8_t>((byte & 0x0fU) | (static_cast<unsigned>(nibble) << 4U))
               : static_cast<std::uint8_t>((byte & 0xf0U) | nibble);
    return key;
}

/** The walk below one version's root; `low` and `high` are the extreme keys under the path. */
class RangeWalk {
  public:
    RangeWalk(const storage::KvStore& store, storage::Column nodes, const Hash256& first,
              const Hash256& last, std::size_t limit)
        : store_(store), nodes_(nodes), first_(first), last_(last), limit_(limit) {}

    Status internal(std::uint64_t version, const NibblePath& path, const Hash256& low,
                    const Hash256& high) {
        GL_ASSIGN_OR_RETURN(node, tree::loadInternal(store_, nodes_, version, path));
        const std::size_t depth = path.size();
        for (std::uint8_t slot = 0; slot < tree::kRadix && keys_.size() < limit_; ++slot) {
            const auto& child = node.children[slot];
            const Hash256 childLow = withNibble(low, depth, slot);
            const Hash256 childHigh = withNibble(high, depth, slot);
            if (!child || childHigh < first_ || last_ < childLow) {
                continue;
            }
            const NibblePath at = path.child(slot);
            if (child->isLeaf) {
                GL_TRY(leaf(child->version, at, child->hash));
            } else {
                GL_TRY(internal(child->version, at, childLow, childHigh));
            }
        }
        return {};
    }

    Status leaf(std::uint64_t version, const NibblePath& path, const Hash256& hash) {
        GL_ASSIGN_OR_RETURN(found, tree::loadLeaf(store_, nodes_, version, path, hash));
        if (!(found.key < first_) && !(last_ < found.key)) {
            keys_.push_back(found.key);
        }
        return {};
    }

    [[nodiscard]] std::vector<Hash256> take() { return std::move(keys_); }

  private:
    const storage::KvStore& store_;
    storage::Column nodes_;
    Hash256 first_;
    Hash256 last_;
    std::size_t limit_;
    std::vector<Hash256> keys_;
};

}  // namespace

Result<std::vector<Hash256>> StateTree::keysBetween(const Hash256& first, const Hash256& last,
                                                    std::uint64_t version,
                                                    std::size_t limit) const {
    GL_ASSIGN_OR_RETURN(stored, store_.get(nodes_, tree::rootKey(version)));
    if (!stored) {
        return std::vector<Hash256>{};
    }
    GL_ASSIGN_OR_RETURN(record, tree::decodeRoot(*stored, version));
    RangeWalk walk(store_, nodes_, first, last, limit);
    if (limit == 0) {
        return std::vector<Hash256>{};
    }
    if (record.kind == tree::RootKind::kLeaf) {
        GL_TRY(walk.leaf(record.nodeVersion, NibblePath{}, record.hash));
    } else if (record.kind == tree::RootKind::kInternal) {
        Hash256 high;
        std::fill_n(high.data(), Hash256::size(), std::uint8_t{0xff});
        GL_TRY(walk.internal(record.nodeVersion, NibblePath{}, Hash256{}, high));
    }
    return walk.take();
}

}  // namespace gridledger::ledger
