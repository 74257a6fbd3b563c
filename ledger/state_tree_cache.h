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

/**
 * At most one internal node per path: the one stored there at the version an apply last read or
 * wrote. A lookup names the version its parent records, so an entry of another version (an older
 * node, or one of an apply whose batch was discarded) is a miss and never a wrong answer: the
 * store holds one node per (version, path), never overwritten.
 *
 * Entries are kept compact: only the children present, and the inner hashes only of nodes with
 * more than kDenseChildren children (a sparse node's are recomputed in a few hashes, since a range
 * holding a lone leaf costs none). New paths are dropped once the entries take `budgetBytes`.
 * An apply reads entries in place, and adds those it read and wrote once it succeeded.
 */
class NodeCache {
  public:
    /** Nodes with more children than this keep their inner hashes. */
    static constexpr std::size_t kDenseChildren = 4;

    /** An internal node as an apply reads and rewrites it, with the leaves it knows. */
    class Entry {
      public:
        /**
         * The node stored at `version`, whose inner hashes are `inner`; `leaves[slot]`, when not
         * null, is the content of the leaf child in that slot.
         */
        Entry(std::uint64_t version, const InternalNode& node, const InnerHashes& inner,
              const std::array<const LeafNode*, kRadix>& leaves);

        [[nodiscard]] std::uint64_t version() const { return version_; }
        [[nodiscard]] std::optional<ChildRef> child(std::size_t slot) const;
        /** The content of the leaf child in `slot`, or nullptr when not known. */
        [[nodiscard]] const LeafNode* leaf(std::size_t slot) const;
        /** The node's inner hashes, kept or recomputed. */
        [[nodiscard]] InnerHashes inner() const;

      private:
        friend class NodeCache;
        struct Child {
            Hash256 hash;
            std::uint64_t version = 0;
        };

        std::uint64_t version_ = 0;
        std::uint16_t childMap_ = 0;
        std::uint16_t leafMap_ = 0;
        std::uint16_t leavesKnown_ = 0;
        // Two arrays rather than one of larger elements: each stays within the sizes that the
        // allocator serves from its per-thread caches (1 KiB).
        std::vector<Child> children_;
        std::vector<LeafNode> leaves_;
        std::unique_ptr<InnerHashes> inner_;
    };

    explicit NodeCache(std::size_t budgetBytes) : budgetBytes_(budgetBytes) {}

    /** The node at (version, path), or nullptr; valid until the next put. */
    [[nodiscard]] const Entry* find(std::uint64_t version, const NibblePath& path) const;

    /** Keeps `entry` for `path`, replacing the path's entry; a new path is dropped when full. */
    void put(const NibblePath& path, Entry entry);

    /** The approximate heap bytes the entries take. */
    [[nodiscard]] std::size_t bytes() const { return bytes_; }

  private:
    struct PathHash {
        std::size_t operator()(const NibblePath& path) const { return path.mapHash(); }
    };

    static std::size_t footprint(const Entry& entry);

    std::size_t budgetBytes_;
    std::size_t bytes_ = 0;
    std::unordered_map<NibblePath, Entry, PathHash> entries_;
};

}  // namespace gridledger::ledger::tree
