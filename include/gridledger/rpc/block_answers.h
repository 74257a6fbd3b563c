#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <boost/json/value.hpp>

namespace gridledger::rpc {

/**
 * block_get answers of final blocks, by height and form (transaction hashes or whole
 * transactions), kept in least-recently-used order within a byte budget. A block is final once
 * it is executed and certified: its answer (header, transactions, certificate, roots, system
 * receipt) never changes again, so a repeated read costs a copy instead of a decode that hashes
 * every transaction twice (the transactions root, then the answer's hashes). Thread-safe: the
 * RPC's I/O threads share one cache.
 */
class BlockAnswers {
  public:
    /** Default budget: 32 MiB, about 1,200 blocks of 300 transfers by hash. */
    static constexpr std::size_t kDefaultBudgetBytes = std::size_t{32} << 20;

    explicit BlockAnswers(std::size_t budgetBytes = kDefaultBudgetBytes);

    /** The kept answer, marked as most recently used; null when none is kept. */
    [[nodiscard]] std::shared_ptr<const boost::json::value> find(std::uint64_t height,
                                                                 bool fullTxs);

    /**
     * Keeps `answer`, whose serialised size is about `bytes`, dropping the least recently used
     * answers until the budget holds it. An answer larger than the whole budget is not kept.
     */
    void keep(std::uint64_t height, bool fullTxs, boost::json::value answer, std::size_t bytes);

    [[nodiscard]] std::size_t keptBytes() const;
    [[nodiscard]] std::size_t size() const;

  private:
    struct Entry {
        std::uint64_t key = 0;
        std::size_t bytes = 0;
        std::shared_ptr<const boost::json::value> answer;
    };

    std::size_t budget_;
    mutable std::mutex mutex_;
    std::list<Entry> order_;  // most recently used first
    std::unordered_map<std::uint64_t, std::list<Entry>::iterator> byKey_;
    std::size_t bytes_ = 0;
};

}  // namespace gridledger::rpc
