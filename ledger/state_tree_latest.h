#pragma once

// Private to the ledger module: the latest value of each state key the tree has seen, so that
// reads at the committed tip cost a hash lookup instead of a seek in the value column.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/ledger/state_tree.h>

#include "slot_index.h"

namespace gridledger::ledger::tree {

/** A key's value as of a version: std::nullopt when it holds none. */
struct KnownValue {
    std::optional<Bytes> value;
};

/**
 * Keys with the version of their last write and their value (or none), in one open-addressing
 * table: a lookup reads one slot of a SlotIndex and then the entry, which holds a value of up to
 * kInlineBytes (an account) in place. So a lookup in a table too large for the CPU's caches costs
 * about two misses, where a node-based hash map costs four (bucket, the node before, the node, the
 * value). Entries are never removed one by one, only all at once.
 */
class KeyTable {
  public:
    static constexpr std::size_t kInlineBytes = 24;

    /** A key, the version of its last write, and its value: none unless `present`, else
     * `size` bytes in `inlineBytes` or, when longer, in `heap`. */
    struct Entry {
        Hash256 key;
        std::uint64_t writtenAt = 0;
        std::uint32_t size = 0;
        bool present = false;
        std::array<std::uint8_t, kInlineBytes> inlineBytes{};
        std::unique_ptr<std::uint8_t[]> heap;

        [[nodiscard]] std::optional<Bytes> value() const;
    };

    /** The entry of `key`, or nullptr; valid until the next set or clear. */
    [[nodiscard]] const Entry* find(const Hash256& key) const;

    /**
     * Sets the entry of `key`, or adds one if that keeps bytes() within `budgetBytes`; returns
     * whether the key now has an entry.
     */
    bool set(const Hash256& key, std::uint64_t writtenAt, const std::optional<Bytes>& value,
             std::size_t budgetBytes);

    void clear();

    [[nodiscard]] std::size_t size() const { return count_; }
    /** The memory the entries take, counting each entry's share of the index at its fullest. */
    [[nodiscard]] std::size_t bytes() const { return bytes_; }

  private:
    static constexpr std::size_t kChunkEntries = 4096;

    static std::uint64_t hashOf(const Hash256& key);
    static std::size_t footprint(std::size_t valueSize);
    static void store(Entry& entry, const std::optional<Bytes>& value);
    [[nodiscard]] Entry& entry(std::size_t index) const;
    [[nodiscard]] std::optional<std::size_t> indexOf(const Hash256& key) const;

    SlotIndex index_;
    std::vector<std::unique_ptr<Entry[]>> chunks_;
    std::size_t count_ = 0;
    std::size_t bytes_ = 0;
};

/**
 * Latest values, as of the tip: the last version the tree was told is committed.
 *
 * Invariant: an entry (key, writtenAt, value) says that the last write of `key` at a version up
 * to the tip was at `writtenAt`, so it answers every read of `key` at a version from writtenAt to
 * the tip. It holds because the entries change only with the tip, under one lock: advancing the
 * tip by one version writes that version's updates over their keys, and any other advance (a
 * version skipped, as when another tree instance wrote to the store) drops every entry. A read
 * beyond the tip or before an entry's writtenAt goes to the store, and a store read at the tip
 * itself may add what it found. Dropping an entry never makes an answer wrong; when the entries
 * take `budgetBytes`, new keys are not added.
 *
 * The entries are complete when every key written at a version up to the tip has one: from a
 * first version applied to an empty store, through every advance by one version, until a key
 * finds no room. Complete entries answer a read of a key without an entry, at a version up to the
 * tip, with no value: a transfer to a new account costs no seek in the store.
 *
 * Thread-safe: reads share the lock, advancing takes it alone.
 */
class LatestValues {
  public:
    explicit LatestValues(std::size_t budgetBytes) : budgetBytes_(budgetBytes) {}

    /** The value of `key` as of `version`, when the entries know it. */
    [[nodiscard]] std::optional<KnownValue> find(const Hash256& key, std::uint64_t version) const;

    /**
     * A store read of `key` as of `version` found the record written at `writtenAt`, holding
     * `value` (none for a deletion). Kept only when `version` is the tip and the key has no
     * entry. A key found never written is not kept: reads of absent keys, which anyone can ask
     * for, must not fill the budget.
     */
    void learn(const Hash256& key, std::uint64_t version, std::uint64_t writtenAt,
               const std::optional<Bytes>& value);

    /**
     * Version `version` is committed, with these writes (each key once); `fromEmpty` when it was
     * applied to a store holding no version.
     */
    void advance(std::uint64_t version, std::span<const TreeUpdate> writes, bool fromEmpty);

  private:
    std::size_t budgetBytes_;
    mutable std::shared_mutex mutex_;
    std::optional<std::uint64_t> tip_;
    bool complete_ = false;
    KeyTable entries_;
};

}  // namespace gridledger::ledger::tree
