#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/ledger/state_tree.h>

namespace gridledger::contracts {

/**
 * Pending writes on top of a committed state version. Reads see the writes; nothing reaches the
 * tree until updates() is applied by the executor. Layers nest: a transaction writes into a child
 * layer that is merged into the block's layer only when the transaction succeeds.
 */
class StateLayer {
  public:
    /** The bottom layer of a block: reads fall through to `tree` at `version`. */
    StateLayer(const ledger::StateTree& tree, std::uint64_t version)
        : tree_(&tree), version_(version) {}
    /** A child layer whose reads fall through to `parent`. */
    explicit StateLayer(StateLayer& parent) : parent_(&parent) {}

    [[nodiscard]] Result<std::optional<Bytes>> get(const Hash256& key) const;
    /**
     * The first `limit` keys from `first` to `last` (both included) that hold a value as this
     * layer sees them (its writes over its parent's, over the tree's), ascending.
     */
    [[nodiscard]] Result<std::vector<Hash256>> keysBetween(
        const Hash256& first, const Hash256& last,
        std::size_t limit = std::numeric_limits<std::size_t>::max()) const;
    void put(const Hash256& key, Bytes value) { writes_[key] = std::move(value); }
    void erase(const Hash256& key) { writes_[key] = std::nullopt; }

    /** Moves this child layer's writes into its parent. */
    void mergeIntoParent();
    /** The writes in key order, ready for StateTree::apply. */
    [[nodiscard]] std::vector<ledger::TreeUpdate> updates() const;

  private:
    const ledger::StateTree* tree_ = nullptr;
    std::uint64_t version_ = 0;
    StateLayer* parent_ = nullptr;
    std::map<Hash256, std::optional<Bytes>> writes_;
};

}  // namespace gridledger::contracts
