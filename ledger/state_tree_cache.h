#pragma once

// Private to the ledger module: the internal nodes that state tree applies keep in memory, so that
// an apply neither reads back nor rehashes from scratch what the previous ones wrote.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "slot_index.h"
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
 * An apply reads entries in place and rewrites those it found in place as it goes (emptying them
 * if it fails); it adds the nodes it read and those of new paths once it succeeded.
 */
class NodeCache {
  public:
    /** Nodes with more children than this keep their inner hashes. */
    static constexpr std::size_t kDenseChildren = 4;

    /** An internal node as an apply reads and rewrites it, with the leaves it knows. */
    class Entry {
      public:
        /**
         * The node stored at `version` in `form`, whose inner hashes are `inner`; `leaves[slot]`,
         * when not null, is the content of the leaf child in that slot. In the slots of
         * `fromBase`, whose children are `base`'s, the leaves `base` knows are known too.
         */
        Entry(std::uint64_t version, const StoredForm& form, const InternalNode& node,
              const InnerHashes& inner, const std::array<const LeafNode*, kRadix>& leaves,
              const Entry* base = nullptr, std::uint16_t fromBase = 0);
        /** No node: the state of an item not yet filled, or of a dropped entry. */
        Entry() = default;

        [[nodiscard]] std::uint64_t version() const { return version_; }
        /** How the node is stored: whole, or as a delta on its path's last full node. */
        [[nodiscard]] StoredForm form() const { return StoredForm{fullVersion_, sinceFull_}; }
        /** The slots holding a child (bit i = slot i). */
        [[nodiscard]] std::uint16_t childMap() const { return childMap_; }
        [[nodiscard]] std::optional<ChildRef> child(std::size_t slot) const;
        /** Sets node.children[slot] to this node's child for every slot of `slots` it holds. */
        void copyChildren(std::uint16_t slots, InternalNode& node) const;
        /** The content of the leaf child in `slot`, when known. */
        [[nodiscard]] std::optional<LeafNode> leaf(std::size_t slot) const;
        /** The node's inner hashes, kept or recomputed. */
        [[nodiscard]] InnerHashes inner() const;

      private:
        friend class NodeCache;
        /**
         * One unit of the entry's single allocation: a child (its hash and version), half of a
         * known leaf (its key, then its value hash) or one inner hash, in that order.
         */
        struct Slot {
            Hash256 hash;
            std::uint64_t version = 0;
        };
        /** Inner hashes kept: [1..15] of InnerHashes. */
        static constexpr std::size_t kInnerSlots = kRadix - 1;
        /** The most slots an entry takes: every child a known leaf, and the inner hashes. */
        static constexpr std::size_t kMaxSlots = 3 * kRadix + kInnerSlots;

        /**
         * Makes this entry the one the constructor makes of the same arguments. With `base` this
         * entry itself, the slots are first built in `scratch` (room for kMaxSlots), since its
         * leaves move when the maps change, and its allocation is kept if the new node takes as
         * many slots; otherwise this entry holds no slots yet.
         */
        void assign(std::uint64_t version, const StoredForm& form, const InternalNode& node,
                    const InnerHashes& inner, const std::array<const LeafNode*, kRadix>& leaves,
                    const Entry* base, std::uint16_t fromBase, Slot* scratch);

        [[nodiscard]] std::size_t childCount() const;
        [[nodiscard]] std::size_t leafCount() const;
        [[nodiscard]] bool keepsInner() const { return childCount() > kDenseChildren; }
        [[nodiscard]] std::size_t slotCount() const;

        // The stored form as two fields, so that the four 16-bit maps share one 8-byte word.
        std::uint64_t version_ = 0;
        std::uint64_t fullVersion_ = 0;
        std::uint16_t childMap_ = 0;
        std::uint16_t leafMap_ = 0;
        std::uint16_t leavesKnown_ = 0;
        std::uint16_t sinceFull_ = 0;
        // One allocation, so that reading a node costs one miss of the CPU caches past the map.
        std::unique_ptr<Slot[]> slots_;
    };

    /**
     * What the rewrites of one apply thread need of their own: the buffer an entry's slots are
     * built in, and the change in the entries' bytes, which the cache counts in settle(). Two
     * threads may rewrite distinct entries at once, each through its own Rewrites.
     */
    class Rewrites {
      public:
        Rewrites() : scratch_(std::make_unique_for_overwrite<Entry::Slot[]>(Entry::kMaxSlots)) {}

      private:
        friend class NodeCache;
        std::unique_ptr<Entry::Slot[]> scratch_;
        std::size_t removedBytes_ = 0;
        std::size_t addedBytes_ = 0;
    };

    explicit NodeCache(std::size_t budgetBytes) : budgetBytes_(budgetBytes) {}

    /**
     * The node at (version, path), or nullptr. Entries never move: the pointer stays valid, and
     * names the path's entry until a put, rewrite or drop of that path.
     */
    [[nodiscard]] Entry* find(std::uint64_t version, const NibblePath& path);

    /**
     * Asks the CPU to bring in the index slot where a find of `path` starts, so that finds of
     * several paths (the children of a node about to be updated) wait for memory once together.
     */
    void prefetch(const NibblePath& path) const;

    /** Keeps `entry` for `path`, replacing the path's entry; a new path is dropped when full. */
    void put(const NibblePath& path, Entry entry);

    /**
     * Makes `current`, an entry that find returned, the node an apply wrote in its place: the
     * Entry of these arguments, with `current` as its base, in the memory `current` holds when
     * the node takes as many slots. Its path is not searched again. Touches `current` and
     * `rewrites` only: the bytes it adds or frees are counted once `rewrites` is settled.
     */
    static void rewrite(Entry& current, Rewrites& rewrites, std::uint64_t version,
                        const StoredForm& form, const InternalNode& node, const InnerHashes& inner,
                        const std::array<const LeafNode*, kRadix>& leaves, std::uint16_t fromBase);

    /** Counts the bytes that the rewrites through `rewrites` added and freed, and resets them. */
    void settle(Rewrites& rewrites);

    /**
     * Empties `current`, an entry that find returned, so that no find returns it until its path
     * is put again: for an entry rewritten by an apply that then failed (its rewrites settled).
     */
    void drop(Entry& current);

    /** The approximate heap bytes the entries take. */
    [[nodiscard]] std::size_t bytes() const { return bytes_; }

  private:
    struct Item {
        NibblePath path;
        Entry entry;
    };
    static constexpr std::size_t kChunkItems = 4096;

    static std::uint64_t hashOf(const NibblePath& path);
    void replace(Entry& current, Entry entry);
    static std::size_t footprint(const Entry& entry);
    [[nodiscard]] Item& item(std::size_t number) const;
    [[nodiscard]] Item* lookup(const NibblePath& path) const;

    std::size_t budgetBytes_;
    std::size_t bytes_ = 0;
    // The items in chunks, never moved, never removed, found through the index.
    SlotIndex index_;
    std::vector<std::unique_ptr<Item[]>> chunks_;
    std::size_t count_ = 0;
};

}  // namespace gridledger::ledger::tree
