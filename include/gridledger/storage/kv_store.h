#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::storage {

/** Index of a column family in the list given to KvStore::open. */
using Column = std::uint32_t;

class KvStore;

/** Writes that land together or not at all (one RocksDB WriteBatch). Made by KvStore::batch. */
class WriteBatch {
  public:
    ~WriteBatch();
    WriteBatch(WriteBatch&&) noexcept;
    WriteBatch& operator=(WriteBatch&&) noexcept;

    void put(Column column, ByteView key, ByteView value);
    void erase(Column column, ByteView key);
    /** Erases every key from `begin` (included) to `end` (excluded): one range tombstone. */
    void eraseRange(Column column, ByteView begin, ByteView end);
    [[nodiscard]] std::size_t count() const;
    [[nodiscard]] std::size_t byteSize() const;
    /**
     * Empties the batch and keeps its memory: a writer that fills one batch after another through
     * it takes no new pages and makes no copies once the batch has reached their size.
     */
    void clear();

  private:
    friend class KvStore;
    struct Impl;
    explicit WriteBatch(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/** An ordered cursor over one column family, positioned by seek and moved by next/prev. */
class Cursor {
  public:
    ~Cursor();
    Cursor(Cursor&&) noexcept;
    Cursor& operator=(Cursor&&) noexcept;

    void seek(ByteView key);
    /** Positions on the last key <= `key`. */
    void seekForPrev(ByteView key);
    void seekToFirst();
    void seekToLast();
    [[nodiscard]] bool valid() const;
    void next();
    void prev();
    /** The current key and value; only while valid(). */
    [[nodiscard]] ByteView key() const;
    [[nodiscard]] ByteView value() const;
    /** kStorage if the underlying iterator met an I/O error. */
    [[nodiscard]] Status status() const;

  private:
    friend class KvStore;
    struct Impl;
    explicit Cursor(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/** Options of KvStore::open. */
struct KvOptions {
    /** Block cache size in bytes, shared by every column family. */
    std::size_t blockCacheBytes = 64U << 20U;
    bool createIfMissing = true;
    /**
     * Columns whose reads look keys up by their first N bytes (column name → N), through
     * prefixCursor: each gets a Bloom filter of those prefixes in its tables and memtables (its
     * tables only when it is a hashed column too), so that a lookup skips the ones that hold no
     * key with the prefix. Every column also gets a Bloom filter of whole keys, for get.
     */
    std::map<std::string, std::size_t, std::less<>> prefixColumns;
    /**
     * Columns whose batches write runs of ascending keys under a common first N bytes (column
     * name → N): each memtable insert starts its search where the previous insert under the same
     * prefix ended, instead of at the top of the memtable.
     */
    std::map<std::string, std::size_t, std::less<>> sequentialColumns;
    /**
     * Columns whose memtables hash each key's first N bytes (column name → N) to a list of their
     * own, sorted by key, so that an insert of a random key searches a short list instead of the
     * whole memtable (storage::hashedMemtables). Such a column serves get, and a prefixCursor (in
     * a column of prefixColumns with the same N) moved forward by seek and next only: a memtable's
     * keys are found by seek alone, so seekForPrev finds none of them. A cursor() over it,
     * and a flush, walk each memtable through a list of its entries sorted for the walk (once,
     * for a memtable that takes no more writes). With any hashed column the database inserts a
     * write group's batches into memtables one after another, not in parallel.
     */
    std::map<std::string, std::size_t, std::less<>> hashedColumns;
    /**
     * Buckets of each hashed column's memtable, at least 1. A full memtable (64 MiB) holds about
     * 600,000 state value or transaction index records: with 2^20 buckets most hold one key, so
     * an insert or a read compares against one key instead of searching a list. The buckets take
     * 8 bytes each (8 MiB at 2^20, counted toward the memtable's size), in a mapping whose pages
     * the kernel zeroes as keys first land in them: a new memtable, at a node's start or after a
     * flush, clears nothing.
     */
    std::size_t hashedBuckets = std::size_t{1} << 20U;
    /**
     * A store thrown away after use, or after a crash (a replay's scratch ledger): writes skip
     * the write-ahead log and closing does not flush the memtables, so whatever no background
     * flush has put in a table is lost with the store. Synced writes and syncWal sync nothing.
     */
    bool disposable = false;
    /**
     * A store held in memory only (RocksDB's in-memory environment), for a moment's scratch work
     * such as computing a genesis block: `path` only names it, no file is created or synced, and
     * everything is gone once it closes. Implies disposable.
     */
    bool inMemory = false;
};

/**
 * A RocksDB database with named column families. Thread-safe for concurrent reads and writes.
 * Synchronous writes fsync the write-ahead log before they return. Closing a store that is not
 * disposable writes its memtables into tables, so that the next open has no log to replay.
 */
class KvStore {
  public:
    /**
     * Opens (or creates) the database at `path` with exactly these column families;
     * kInvalidArgument, naming it, if the database holds a family not among them (a database
     * written in another layout).
     */
    [[nodiscard]] static Result<std::unique_ptr<KvStore>> open(
        const std::filesystem::path& path, const std::vector<std::string>& columns,
        const KvOptions& options = {});

    ~KvStore();
    KvStore(const KvStore&) = delete;
    KvStore& operator=(const KvStore&) = delete;

    /** The value under `key`, std::nullopt if absent, kStorage on I/O failure. */
    [[nodiscard]] Result<std::optional<Bytes>> get(Column column, ByteView key) const;
    /**
     * Calls `use` with the value under `key` where RocksDB holds it (block cache or memtable),
     * without copying it; the view is valid during the call only. false if absent, kStorage on
     * I/O failure.
     */
    [[nodiscard]] Result<bool> read(Column column, ByteView key,
                                    const std::function<void(ByteView)>& use) const;
    /** Applies the batch atomically; with `sync` the WAL is fsynced before returning. */
    [[nodiscard]] Status write(WriteBatch& batch, bool sync);
    /**
     * Applies the batch atomically and unsynced, as write(batch, false) does, on the store's
     * writer thread: returns once the batch is handed over, with `batch` emptied (its memory that
     * of a batch handed before, so that a caller filling one batch after another takes no new
     * pages). Every later call on the store, from any thread, sees the store as if the write had
     * returned here: a get or read of a key the batch writes is answered from the batch, of any
     * other key from the database, waiting only for the writer to index the batch (or, when it
     * erases a range, to land it); a cursor, write, put, writeBehind, syncWal and settle wait
     * until it has landed. A batch that fails to land fails every later call that returns a
     * status with its error. Lets a caller go on with work that needs no
     * store, such as executing the next block from memory, while RocksDB inserts the batch. One
     * thread at a time.
     */
    [[nodiscard]] Status writeBehind(WriteBatch& batch);
    /** Waits until a batch handed to writeBehind has landed; its error if it failed. */
    [[nodiscard]] Status settle() const;
    [[nodiscard]] Status put(Column column, ByteView key, ByteView value, bool sync);
    /** Fsyncs the write-ahead log: every write made before the call is durable after it. */
    [[nodiscard]] Status syncWal();
    /** How many times this store fsynced its WAL (synced writes and syncWal calls). */
    [[nodiscard]] std::uint64_t walSyncs() const;
    /** An empty batch for this store. */
    [[nodiscard]] WriteBatch batch() const;
    /** A cursor over the whole column, in key order. */
    [[nodiscard]] Cursor cursor(Column column) const;
    /**
     * A cursor that sees only the keys sharing the prefix of the key it was last positioned on,
     * for a column of KvOptions::prefixColumns: seek or seekForPrev to a key, read while valid.
     * In any other column it sees the whole column, like cursor().
     */
    [[nodiscard]] Cursor prefixCursor(Column column) const;

  private:
    struct Impl;
    explicit KvStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace gridledger::storage
