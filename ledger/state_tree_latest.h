#pragma once

// Private to the ledger module: the latest value of each state key the tree has seen, so that
// reads at the committed tip cost a hash lookup instead of a seek in the value column.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/ledger/state_tree.h>

namespace gridledger::ledger::tree {

/** A key's value as of a version: std::nullopt when it holds none. */
struct KnownValue {
    std::optional<Bytes> value;
};

/**
 * Latest values, as of the tip: the last version the tree was told is committed.
 *
 * Invariant: an entry (key, writtenAt, value) says that the last write of `key` at a version up
 * to the tip was at `writtenAt`, so it answers every read of `key` at a version from writtenAt to
 * the tip. It holds because the entries change only
 * with the tip, under one lock: advancing the tip by one version writes that version's updates
 * over their keys, and any other advance (a version skipped, as when another tree instance wrote
 * to the store) drops every entry. A read beyond the tip or before an entry's writtenAt goes to
 * the store, and a store read at the tip itself may add what it found. Dropping an entry never
 * makes an answer wrong; when the entries take `budgetBytes`, new keys are not added.
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

    /** Version `version` is committed, with these writes (each key once), taken over. */
    void advance(std::uint64_t version, std::vector<TreeUpdate> writes);

  private:
    struct Entry {
        std::uint64_t writtenAt = 0;
        std::optional<Bytes> value;
    };
    struct KeyHash {
        std::size_t operator()(const Hash256& key) const noexcept;
    };

    static std::size_t footprint(const std::optional<Bytes>& value);
    /** Sets the entry of `key`, or adds it within the budget. Requires the lock held alone. */
    void setLocked(const Hash256& key, std::uint64_t writtenAt, std::optional<Bytes> value);

    std::size_t budgetBytes_;
    mutable std::shared_mutex mutex_;
    std::optional<std::uint64_t> tip_;
    std::size_t bytes_ = 0;
    std::unordered_map<Hash256, Entry, KeyHash> entries_;
};

}  // namespace gridledger::ledger::tree
