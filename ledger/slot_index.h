#pragma once

// Private to the ledger module: the index of the state tree's in-memory tables (the latest values,
// apply's node cache), which keep their items in chunks and find them by number through it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gridledger::ledger::tree {

/**
 * An open-addressing index of numbered items: 8-byte slots, each a 32-bit fingerprint of an item's
 * hash and its number, at most half full and probed linearly from the slot the hash's low bits
 * pick. A lookup in a table far larger than the CPU's caches reads one slot and then the item,
 * where a node-based hash map reads a bucket, the node before and the node. Items are never
 * removed one by one, only all at once.
 */
class SlotIndex {
  public:
    /** The most items an index takes: an item's number + 1 fits a slot's low 32 bits (0: free). */
    static constexpr std::size_t kMaxItems = 0xfffffffeU;

    /** A 64-bit hash whose low bits (the slot) and high bits (the fingerprint) both vary. */
    [[nodiscard]] static std::uint64_t spread(std::uint64_t mixed) {
        // A product's low bits depend on its factors' low bits only: mix the high ones down.
        mixed ^= mixed >> 33U;
        mixed *= 0xff51afd7ed558ccdULL;
        mixed ^= mixed >> 33U;
        return mixed;
    }

    /** The number of the item of hash `hash` for which `matches(number)` holds, if any. */
    template <typename Matches>
    [[nodiscard]] std::optional<std::uint32_t> find(std::uint64_t hash, Matches matches) const {
        if (slots_.empty()) {
            return std::nullopt;
        }
        const std::uint64_t fingerprint = hash >> 32U;
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t at = hash & mask;; at = (at + 1) & mask) {
            const std::uint64_t slot = slots_[at];
            if (slot == 0) {
                return std::nullopt;
            }
            const auto number = static_cast<std::uint32_t>((slot & 0xffffffffU) - 1);
            if (slot >> 32U == fingerprint && matches(number)) {
                return number;
            }
        }
    }

    /**
     * Adds item `number` (the count of items added before it) of hash `hash`. When the index would
     * pass half full it doubles first, placing items 0 .. number - 1 again by `hashOf(n)`.
     */
    template <typename HashOf>
    void add(std::uint64_t hash, std::uint32_t number, HashOf hashOf) {
        if (2 * (std::size_t{number} + 1) > slots_.size()) {
            slots_.assign(std::max(kFirstSlots, slots_.size() * 2), 0);
            // In item order, which reads the items one after the other.
            for (std::uint32_t placed = 0; placed < number; ++placed) {
                place(hashOf(placed), placed);
            }
        }
        place(hash, number);
    }

    /** Asks the CPU to bring in the slot where a lookup of `hash` starts. */
    void prefetch(std::uint64_t hash) const {
        if (!slots_.empty()) {
            __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
        }
    }

    void clear() { std::vector<std::uint64_t>().swap(slots_); }

  private:
    static constexpr std::size_t kFirstSlots = 1024;

    void place(std::uint64_t hash, std::uint32_t number) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t at = hash & mask;
        while (slots_[at] != 0) {
            at = (at + 1) & mask;
        }
        slots_[at] = (hash >> 32U) << 32U | (std::uint64_t{number} + 1);
    }

    std::vector<std::uint64_t> slots_;  // fingerprint (high 32 bits) ‖ item number + 1; 0: free
};

}  // namespace gridledger::ledger::tree
