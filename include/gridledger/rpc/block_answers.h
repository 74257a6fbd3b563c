#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace gridledger::rpc {

/**
 * block_get answers of final blocks as JSON text, by height and form (transaction hashes or whole
 * transactions), kept in least-recently-used order within a byte budget. A block is final once
 * it is executed and certified: its answer (header, transactions, certificate, roots, system
 * receipt) never changes again, so a repeated read is written out as it was serialised the
 * first time, instead of a decode that hashes every transaction twice (the transactions root,
 * then the answer's hashes) and a serialisation. Thread-safe: the RPC's I/O threads share one
 * cache.
 */
class BlockAnswers {
  public:
    /** Default budget: 32 MiB, about 1,400 blocks of 300 transfers by hash (23 KB of text each). */
    static constexpr std::size_t kDefaultBudgetBytes = std::size_t{32} << 20;

    explicit BlockAnswers(std::size_t budgetBytes = kDefaultBudgetBytes);

    /** The kept answer's JSON text, marked as most recently used; null when none is kept. */
    [[nodiscard]] std::shared_ptr<const std::string> find(std::uint64_t height, bool fullTxs);

    /** Whether an answer is kept for `height` and `fullTxs` (without marking it used). */
    [[nodiscard]] bool contains(std::uint64_t height, bool fullTxs) const;

    /**
     * Keeps `text`, an answer's JSON text, dropping the least recently used answers until the
     * budget holds it. An answer larger than the whole budget is not kept, nor a second one for
     * the same height and form.
     */
    void keep(std::uint64_t height, bool fullTxs, std::string text);

    [[nodiscard]] std::size_t keptBytes() const;
    [[nodiscard]] std::size_t size() const;

  private:
    struct Entry {
        std::uint64_t key = 0;
        std::shared_ptr<const std::string> text;
    };

    std::size_t budget_;
    mutable std::mutex mutex_;
    std::list<Entry> order_;  // most recently used first
    std::unordered_map<std::uint64_t, std::list<Entry>::iterator> byKey_;
    std::size_t bytes_ = 0;
};

}  // namespace gridledger::rpc
