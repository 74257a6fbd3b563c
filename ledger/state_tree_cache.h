#pragma once

// Private to the ledger module: the internal nodes that state tree applies keep in memory, so that
// an apply neither reads back nor rehashes from scratch what the previous ones wrote.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "state_tree_node.h"

namespace gridledger::ledger::tree {

/** An internal node as an apply reads and rewrites it. */
struct CachedInternal {
    std::uint64_t version = 0;
    InternalNode node;
    InnerHashes inner;
    /** The keys of leaf children, for the slots set in leafKeysKnown. */
    std::array<Hash256, kRadix> leafKeys;
    std::uint16_t leafKeysKnown = 0;
};

/**
 * At most one internal node per path: the one stored there at the version an apply last read or
 * wrote. A lookup names the version its parent records, so an entry of another version (an older
 * node, or one of an apply whose batch was discarded) is a miss and never a wrong answer: the
 * store holds one node per (version, path), never overwritten.
 *
 * Entries are kept compact: only the children present, and the inner hashes only of nodes with
 * more than kDenseChildren children (a sparse node's are recomputed in a few hashes, since a range
 * holding a lone leaf costs none). New paths are dropped once the entries take `budgetBytes`.
 */
class NodeCache {
  public:
    /** Nodes with more children than this keep their inner hashes. */
    static constexpr std::size_t kDenseChildren = 4;

    explicit NodeCache(std::size_t budgetBytes) : budgetBytes_(budgetBytes) {}

    /** The node at (version, path), or std::nullopt. */
    [[nodiscard]] std::optional<CachedInternal> find(std::uint64_t version,
                                                     const NibblePath& path) const;

    /** Keeps `entry` for `path`, replacing the path's entry; a new path is dropped when full. */
    void put(const NibblePath& path, const CachedInternal& entry);

    /** The approximate heap bytes the entries take. */
    [[nodiscard]] std::size_t bytes() const { return bytes_; }

  private:
    struct Child {
        Hash256 hash;
        std::uint64_t version = 0;
        Hash256 leafKey;
    };
    struct Entry {
        std::uint64_t version = 0;
        std::uint16_t childMap = 0;
        std::uint16_t leafMap = 0;
        std::uint16_t leafKeysKnown = 0;
        std::vector<Child> children;
        std::unique_ptr<InnerHashes> inner;
    };
    struct PathHash {
        std::size_t operator()(const NibblePath& path) const { return path.mapHash(); }
    };

    static Entry compact(const CachedInternal& entry);
    static std::size_t footprint(const Entry& entry);

    std::size_t budgetBytes_;
    std::size_t bytes_ = 0;
    std::unordered_map<NibblePath, Entry, PathHash> entries_;
};

}  // namespace gridledger::ledger::tree
