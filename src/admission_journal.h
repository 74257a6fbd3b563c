#pragma once

// The admission journal: a transaction that tx_submit acknowledges is on disk before the answer
// leaves, so that a crash of the node loses none of them (docs/operations.md, "Durable admission").

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::node {

/** One journaled transaction, as AdmissionJournal::entries reads it back. */
struct JournalEntry {
    Hash256 hash;
    Bytes raw;
};

/**
 * An append-only record of admitted transactions, in segment files of its own: their syncs never
 * wait for the block store's writes, nor the other way round.
 *
 * A record is u32 size ‖ SHA-256 of the transaction ‖ the transaction's bytes. The hash is the
 * transaction's own, so it is what proves a record whole when it is read back: a record that a
 * crash tore, and whatever follows it in its segment, is not read. Segments are numbered and
 * roll over at kSegmentBytes.
 *
 * Group commit: append() queues a record and returns at once; one writer thread writes everything
 * queued and syncs once for all of it, so concurrent admissions share a sync. awaitDurable()
 * blocks its thread until every record that thread appended is synced.
 *
 * prune() forgets the records of committed transactions, without a sync: a record that a crash
 * brings back is refused by the mempool when it is replayed (committed, stale nonce, expired). A
 * segment older than the current one is deleted once it holds no record, or once its latest
 * validUntilHeight is behind the chain, which forgets the records it held. One that two newer
 * segments follow and that holds less than a quarter of its records is compacted: the writer
 * appends what it holds to the current segment and deletes it once those records are synced. So
 * every segment but the two newest has at least a quarter of its records held. Thread-safe.
 *
 * Reopening: entries() reads the segments found at open, and retireReplayed() deletes them once
 * the node has appended again what the mempool took back.
 */
class AdmissionJournal {
  public:
    /** Where a segment rolls over to the next. */
    static constexpr std::uint64_t kSegmentBytes = std::uint64_t{4} << 20U;

    /** Opens (or creates) the journal in `dir` and starts its writer. */
    [[nodiscard]] static Result<std::unique_ptr<AdmissionJournal>> open(
        const std::filesystem::path& dir);
    /** Writes and syncs what is queued, then stops the writer. */
    ~AdmissionJournal();
    AdmissionJournal(const AdmissionJournal&) = delete;
    AdmissionJournal& operator=(const AdmissionJournal&) = delete;

    /** The records of the segments found at open, in admission order, each transaction once. */
    [[nodiscard]] Result<std::vector<JournalEntry>> entries() const;
    /**
     * Deletes the segments found at open. Call it after appending again what entries() gave and
     * the mempool took back: it waits until this thread's records are durable first.
     */
    [[nodiscard]] Status retireReplayed();

    /** Queues a record of an admitted transaction. A hash recorded already is not queued again. */
    void append(const Hash256& hash, ByteView raw, std::uint64_t validUntilHeight);
    /**
     * Blocks until every record this thread appended is durable. Fails with kIo when a write or a
     * sync failed: the journal keeps nothing it cannot make durable.
     */
    [[nodiscard]] Status awaitDurable();
    /** Forgets the records of `committed`; deletes and compacts segments as the class comment
     * says, `nextHeight` being the height of the next block. */
    void prune(std::span<const Hash256> committed, std::uint64_t nextHeight);

    /** Records held (queued or written). */
    [[nodiscard]] std::size_t size() const;
    /** Syncs so far. */
    [[nodiscard]] std::uint64_t syncs() const;
    /** Segments compacted so far. */
    [[nodiscard]] std::uint64_t compactions() const;

  private:
    struct Held {
        std::uint64_t segment = 0;
        std::uint64_t seq = 0;  // the admission's number, for awaitDurable
    };
    struct Segment {
        std::vector<Hash256> hashes;  // every record written to it
        std::size_t held = 0;         // of those, the ones still held here
        std::uint64_t latestValidUntil = 0;
        bool compacting = false;
    };
    /** Records queued for one segment, back to back in their file's format. */
    struct Chunk {
        std::uint64_t segment = 0;
        Bytes records;
    };
    /** What the writer takes in one turn. */
    struct Turn {
        std::vector<Chunk> chunks;
        std::vector<std::uint64_t> deletions;
        std::vector<std::uint64_t> compactions;
    };

    AdmissionJournal(std::filesystem::path dir, std::vector<std::uint64_t> replayed);
    void run();
    /** Writes and syncs a turn's chunks; kIo when a write or a sync fails. */
    [[nodiscard]] Status write(std::vector<Chunk>& chunks);
    /** Reads segment `number` and appends what it still holds to the current segment. */
    void compact(std::uint64_t number);
    /** Queues a record for the current segment, rolling over when it is full; returns the
     * segment. */
    std::uint64_t placeLocked(const Hash256& hash, ByteView raw, std::uint64_t validUntilHeight);
    /** Forgets the record of `hash` in the segment it is held in. */
    void forgetLocked(const Hash256& hash);
    /** Queues deletions and compactions of the segments before the current one. */
    void reviewSegmentsLocked(std::uint64_t nextHeight);
    [[nodiscard]] bool hasWorkLocked() const;
    [[nodiscard]] std::filesystem::path pathOf(std::uint64_t segment) const;

    const std::filesystem::path dir_;
    /** The segments found at open, which entries() reads. */
    const std::vector<std::uint64_t> replayed_;
    mutable std::mutex mutex_;
    std::condition_variable queued_;
    std::condition_variable written_;
    std::vector<Chunk> pending_;
    Bytes spare_;  // a written chunk's buffer, emptied, for the next chunk
    std::vector<std::uint64_t> pendingDeletions_;
    std::vector<std::uint64_t> pendingCompactions_;
    std::unordered_map<Hash256, Held, DigestKey> held_;
    std::map<std::uint64_t, Segment> segments_;
    std::uint64_t current_ = 0;  // the segment appended to
    std::uint64_t currentBytes_ = 0;
    std::uint64_t nextSeq_ = 1;
    /** Every record with a sequence number up to this one is durable (or failed). */
    std::uint64_t durableSeq_ = 0;
    Status failure_;
    bool stopping_ = false;
    std::uint64_t syncs_ = 0;
    std::uint64_t compactions_ = 0;
    int fd_ = -1;  // the writer's open segment; only the writer touches it
    std::uint64_t fdSegment_ = 0;
    std::thread writer_;
};

}  // namespace gridledger::node
