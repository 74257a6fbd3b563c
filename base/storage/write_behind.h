// The writer thread of KvStore::writeBehind.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <gridledger/base/bytes.h>

namespace gridledger::storage {

class BatchIndex;

/** How a read stands against the batch in flight. */
enum class InFlight : std::uint8_t {
    kUntouched,  // no batch in flight writes the key: read the database
    kAnswered,   // the batch in flight writes or erases it: answered from the batch
};

/**
 * The thread that lands the batches KvStore::writeBehind hands over, one at a time, in the order
 * they were handed; made by the store's first such batch. Before it writes a batch it indexes the
 * batch's keys, so that a read of a key the batch writes is answered from the batch and a read of
 * any other key goes to the database at once: both see the store as if the batch had landed.
 */
class WriteBehind {
  public:
    /** Writes every batch into `db` with `options`. */
    WriteBehind(rocksdb::DB& db, const rocksdb::WriteOptions& options);
    WriteBehind(const WriteBehind&) = delete;
    WriteBehind& operator=(const WriteBehind&) = delete;
    WriteBehind(WriteBehind&&) = delete;
    WriteBehind& operator=(WriteBehind&&) = delete;
    /** Lands the batch in flight, then stops the thread. */
    ~WriteBehind();

    /**
     * Starts landing `batch`, which must stay untouched until the next settle returns; the batch
     * handed before must have landed (settle). One thread at a time.
     */
    void hand(rocksdb::WriteBatch& batch);

    /**
     * Waits until the batch handed last has landed, writing it on the calling thread when the
     * writer thread has not started on it yet. A batch that failed to land fails this and every
     * later call with its status: what came after it in the caller's order must not land.
     */
    [[nodiscard]] rocksdb::Status settle();

    /**
     * A read of `key` in column family `column` (its RocksDB id): when the batch in flight writes
     * or erases the key, kAnswered, with `found` telling which and `use` called with the value
     * written (under the thread's lock: it must not call the store); else kUntouched, having
     * waited for nothing but the batch's index, or for the batch to land when it erases a range.
     * A failed batch's status when one failed.
     */
    [[nodiscard]] rocksdb::Status read(std::uint32_t column, std::string_view key, InFlight& answer,
                                       bool& found, const std::function<void(ByteView)>& use);

  private:
    void run();
    /** Writes a batch taken from handed_, without the lock meanwhile; with the lock held. */
    void land(rocksdb::WriteBatch& batch, std::unique_lock<std::mutex>& lock);
    [[nodiscard]] bool idle() const;

    rocksdb::DB& db_;
    const rocksdb::WriteOptions options_;
    std::mutex mutex_;
    std::condition_variable changed_;
    /** The batch handed and not yet taken to be written (by the thread or by settle). */
    rocksdb::WriteBatch* handed_ = nullptr;
    /** The keys of the batch in flight, once indexed; null while it is being indexed. */
    std::unique_ptr<BatchIndex> index_;
    /** A batch was handed and has not landed yet; read without the mutex by the fast paths. */
    std::atomic<bool> busy_{false};
    std::atomic<bool> failed_{false};
    rocksdb::Status failure_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace gridledger::storage
