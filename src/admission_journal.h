#pragma once

// The admission journal: a transaction that tx_submit acknowledges is on disk before the answer
// leaves, so that a crash of the node loses none of them (docs/operations.md, "Durable admission").

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::node {

/** One journaled transaction, as AdmissionJournal::entries reads it back. */
struct JournalEntry {
    Hash256 hash;
    /** The transaction's validUntilHeight: the record is dropped once the chain passes it. */
    std::uint64_t validUntilHeight = 0;
    Bytes raw;
};

/**
 * An append-only record of admitted transactions, in a RocksDB database of its own: its write-ahead
 * log is synced without waiting for the block store's writes, and the other way round.
 *
 * Group commit: append() queues a record and returns at once; one writer thread writes everything
 * queued in one batch and syncs the log once for all of it, so concurrent admissions share a sync.
 * awaitDurable() blocks its thread until every record that thread appended is synced. Records are
 * keyed by an admission sequence number, so entries() gives admission order back.
 *
 * prune() drops the records of committed and expired transactions without a sync of its own: a
 * record that a crash brings back is refused by the mempool when it is replayed (held already,
 * stale nonce, expired) and dropped then. Records are dropped with one range deletion for
 * everything below the oldest record still held, so that transactions committed in about the
 * order they were admitted cost no deletion each; a record dropped above that one is deleted on
 * its own. Each write batch puts its records before it deletes any. Thread-safe.
 */
class AdmissionJournal {
  public:
    /** Opens (or creates) the journal in `dir` and starts its writer. */
    [[nodiscard]] static Result<std::unique_ptr<AdmissionJournal>> open(
        const std::filesystem::path& dir);
    /** Writes and syncs what is queued, then stops the writer. */
    ~AdmissionJournal();
    AdmissionJournal(const AdmissionJournal&) = delete;
    AdmissionJournal& operator=(const AdmissionJournal&) = delete;

    /** Every record, in admission order; kCorrupt for a record that does not read back. */
    [[nodiscard]] Result<std::vector<JournalEntry>> entries() const;
    /** Queues a record of an admitted transaction. A hash recorded already is not queued again. */
    void append(const Hash256& hash, ByteView raw, std::uint64_t validUntilHeight);
    /**
     * Blocks until every record this thread appended is durable. Fails with kStorage when the
     * write or the sync failed: the journal keeps nothing it cannot make durable.
     */
    [[nodiscard]] Status awaitDurable();
    /** Drops the records of `committed` and of every transaction with validUntilHeight below
     * `nextHeight`. */
    void prune(std::span<const Hash256> committed, std::uint64_t nextHeight);
    /** Drops the record of one transaction (the mempool refused it at replay). */
    void drop(const Hash256& hash);

    /** Records held (queued or written). */
    [[nodiscard]] std::size_t size() const;
    /** Syncs of the journal's log so far. */
    [[nodiscard]] std::uint64_t syncs() const;

    /** Range deletions written so far (records dropped below the oldest one held). */
    [[nodiscard]] std::uint64_t rangeDeletions() const;
    /** Records deleted one by one so far (dropped above the oldest one held). */
    [[nodiscard]] std::uint64_t pointDeletions() const;

  private:
    struct Record {
        std::uint64_t seq = 0;
        std::uint64_t validUntilHeight = 0;
    };
    /** What the writer takes in one turn. */
    struct Turn {
        Bytes records;  // see pending_
        std::vector<std::uint64_t> erased;
        std::uint64_t eraseFrom = 0;
        std::uint64_t eraseTo = 0;  // a range deletion of [eraseFrom, eraseTo) when above
    };

    explicit AdmissionJournal(std::unique_ptr<storage::KvStore> store);
    void run();
    [[nodiscard]] bool hasWorkLocked() const;
    /** The sequence number of the oldest record held (the next one when none is): every record
     * below it is dropped. */
    [[nodiscard]] std::uint64_t oldestHeldLocked() const;
    /** Forgets the record of `hash`; its sequence number joins `erased`. */
    void eraseLocked(const Hash256& hash, std::vector<std::uint64_t>& erased);
    /** Queues the deletion of the records just erased: a range below the oldest record held, and
     * one by one above it. */
    void queueDeletionsLocked(std::span<const std::uint64_t> erased);

    std::unique_ptr<storage::KvStore> store_;
    mutable std::mutex mutex_;
    std::condition_variable queued_;
    std::condition_variable written_;
    /**
     * Records queued for the writer, back to back, each u64 seq ‖ u32 raw size ‖ u64
     * validUntilHeight ‖ hash ‖ raw: the bytes after the size are the stored value as they are.
     */
    Bytes pending_;
    std::vector<std::uint64_t> pendingErased_;
    /** Where the range deletion not yet written starts: every record below it is deleted. */
    std::uint64_t rangeFrom_ = 1;
    std::map<Hash256, Record> byHash_;
    std::set<std::pair<std::uint64_t, Hash256>> byExpiry_;  // (validUntilHeight, hash)
    std::set<std::uint64_t> heldSeqs_;
    std::uint64_t nextSeq_ = 1;
    /** Every record with a sequence number up to this one is durable (or failed). */
    std::uint64_t durableSeq_ = 0;
    Status failure_;
    bool stopping_ = false;
    std::uint64_t syncs_ = 0;
    std::uint64_t rangeDeletions_ = 0;
    std::uint64_t pointDeletions_ = 0;
    std::thread writer_;
};

}  // namespace gridledger::node
