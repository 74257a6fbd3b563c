#include "hashed_memtable.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include <rocksdb/slice.h>

#include <gridledger/base/bytes.h>

namespace gridledger::storage {
namespace {

using rocksdb::KeyHandle;
using rocksdb::MemTableRep;

/** The sequence number and type that end every internal key. */
constexpr std::size_t kKeyTrailerBytes = 8;

/**
 * The first eight bytes of an entry's user key as a big-endian number, zero past the key's end:
 * for keys ordered bytewise, a smaller number is a smaller key, and equal numbers tell nothing.
 */
std::uint64_t keyPrefix(const char* entry) {
    const rocksdb::Slice internal = rocksdb::GetLengthPrefixedSlice(entry);
    const std::size_t userBytes =
        internal.size() > kKeyTrailerBytes ? internal.size() - kKeyTrailerBytes : 0;
    std::array<std::uint8_t, sizeof(std::uint64_t)> head{};
    std::copy_n(reinterpret_cast<const std::uint8_t*>(internal.data()),
                std::min(userBytes, head.size()), head.begin());
    return readU64(head);
}

using Entries = std::vector<const char*>;

/** An iterator over a memtable's entries, sorted before it was made. */
class SortedIterator final : public MemTableRep::Iterator {
  public:
    SortedIterator(std::shared_ptr<const Entries> entries,
                   const MemTableRep::KeyComparator& compare)
        : entries_(std::move(entries)), compare_(compare), at_(entries_->size()) {}
    SortedIterator(const SortedIterator&) = delete;
    SortedIterator& operator=(const SortedIterator&) = delete;
    SortedIterator(SortedIterator&&) = delete;
    SortedIterator& operator=(SortedIterator&&) = delete;
    ~SortedIterator() override = default;

    [[nodiscard]] bool Valid() const override { return at_ < entries_->size(); }
    [[nodiscard]] const char* key() const override { return (*entries_)[at_]; }
    void Next() override { ++at_; }
    void Prev() override { at_ = at_ == 0 ? entries_->size() : at_ - 1; }
    void SeekToFirst() override { at_ = 0; }
    void SeekToLast() override { at_ = entries_->empty() ? 0 : entries_->size() - 1; }

    void Seek(const rocksdb::Slice& internalKey, const char* memtableKey) override {
        at_ = firstFrom(internalKey, memtableKey, false);
    }

    void SeekForPrev(const rocksdb::Slice& internalKey, const char* memtableKey) override {
        const std::size_t above = firstFrom(internalKey, memtableKey, true);
        at_ = above == 0 ? entries_->size() : above - 1;
    }

  private:
    /**
     * The index of the first entry at or above the target (the memtable's encoding of it when
     * given), or strictly above it; the end when there is none.
     */
    [[nodiscard]] std::size_t firstFrom(const rocksdb::Slice& internalKey, const char* memtableKey,
                                        bool strictlyAbove) const {
        const auto order = [&](const char* entry) {
            return memtableKey != nullptr ? compare_(entry, memtableKey)
                                          : compare_(entry, internalKey);
        };
        const auto found =
            std::partition_point(entries_->begin(), entries_->end(), [&](const char* entry) {
                return strictlyAbove ? order(entry) <= 0 : order(entry) < 0;
            });
        return static_cast<std::size_t>(found - entries_->begin());
    }

    std::shared_ptr<const Entries> entries_;
    const MemTableRep::KeyComparator& compare_;
    std::size_t at_;
};

/**
 * Room for an iterator RocksDB asks for in its arena, which only its own memtables can allocate
 * from: RocksDB destroys such an iterator in place and never frees it, so the memtable keeps the
 * room until it goes. It is asked for by a flush, and by a whole-column cursor, which no
 * GridLedger store opens over a hashed column outside its tests.
 */
struct IteratorShell {
    alignas(SortedIterator) std::byte room[sizeof(SortedIterator)];
};

/**
 * RocksDB's hash link-list memtable, with the list of its entries kept on the side: walked in
 * order (a flush, a whole-column cursor), it sorts that list instead of building a skip list.
 * RocksDB inserts into it from one thread at a time, each entry right after allocating it.
 */
class HashedMemtable final : public MemTableRep {
  public:
    HashedMemtable(std::unique_ptr<MemTableRep> lists, const KeyComparator& compare)
        : MemTableRep(nullptr), lists_(std::move(lists)), compare_(compare) {}
    HashedMemtable(const HashedMemtable&) = delete;
    HashedMemtable& operator=(const HashedMemtable&) = delete;
    HashedMemtable(HashedMemtable&&) = delete;
    HashedMemtable& operator=(HashedMemtable&&) = delete;
    ~HashedMemtable() override = default;

    KeyHandle Allocate(const std::size_t len, char** buf) override {
        allocated_ = lists_->Allocate(len, buf);
        allocatedEntry_ = *buf;
        return allocated_;
    }

    void Insert(KeyHandle handle) override {
        if (handle != allocated_) {
            // Its key is unknown, so the entry could not be walked: a flush would lose it.
            std::fputs("hashed memtable: an entry inserted that it did not just allocate\n",
                       stderr);
            std::abort();
        }
        allocated_ = nullptr;
        lists_->Insert(handle);
        const std::scoped_lock lock(mutex_);
        entries_.push_back(allocatedEntry_);
    }

    [[nodiscard]] bool Contains(const char* key) const override { return lists_->Contains(key); }

    void MarkReadOnly() override {
        lists_->MarkReadOnly();
        const std::scoped_lock lock(mutex_);
        readOnly_ = true;
        frozenBytes_ = bytesUsed();
    }

    void MarkFlushed() override { lists_->MarkFlushed(); }

    void Get(const rocksdb::LookupKey& key, void* callbackArgs,
             bool (*callback)(void* arg, const char* entry)) override {
        lists_->Get(key, callbackArgs, callback);
    }

    std::uint64_t ApproximateNumEntries(const rocksdb::Slice& startKey,
                                        const rocksdb::Slice& endKey) override {
        return lists_->ApproximateNumEntries(startKey, endKey);
    }

    /**
     * Fixed once the memtable takes no more writes: RocksDB counts an immutable memtable's figure
     * into its list when it joins and takes the same figure out when it leaves.
     */
    std::size_t ApproximateMemoryUsage() override {
        const std::scoped_lock lock(mutex_);
        return readOnly_ ? frozenBytes_ : bytesUsed();
    }

    Iterator* GetIterator(rocksdb::Arena* arena) override {
        auto entries = inOrder();
        if (arena == nullptr) {
            return new SortedIterator(std::move(entries), compare_);
        }
        IteratorShell& shell = newShell();
        return new (shell.room) SortedIterator(std::move(entries), compare_);
    }

    Iterator* GetDynamicPrefixIterator(rocksdb::Arena* arena) override {
        return lists_->GetDynamicPrefixIterator(arena);
    }

    [[nodiscard]] bool IsMergeOperatorSupported() const override {
        return lists_->IsMergeOperatorSupported();
    }
    [[nodiscard]] bool IsSnapshotSupported() const override {
        return lists_->IsSnapshotSupported();
    }

  private:
    struct Ranked {
        std::uint64_t prefix;
        const char* entry;
    };

    /**
     * The entries in key order: once the memtable takes no more writes, sorted once and shared by
     * every walk after; before, a sorted copy of those inserted so far, made without holding up
     * the writer.
     */
    std::shared_ptr<const Entries> inOrder() {
        std::unique_lock lock(mutex_);
        if (sorted_) {
            return sorted_;
        }
        std::vector<Ranked> ranked;
        ranked.reserve(entries_.size());
        for (const char* entry : entries_) {
            ranked.push_back(Ranked{keyPrefix(entry), entry});
        }
        const bool final = readOnly_;
        if (!final) {
            lock.unlock();
        }
        std::sort(ranked.begin(), ranked.end(), [this](const Ranked& a, const Ranked& b) {
            return a.prefix != b.prefix ? a.prefix < b.prefix : compare_(a.entry, b.entry) < 0;
        });
        auto out = std::make_shared<Entries>();
        out->reserve(ranked.size());
        for (const Ranked& one : ranked) {
            out->push_back(one.entry);
        }
        if (final) {
            sorted_ = out;
            Entries{}.swap(entries_);
        }
        return out;
    }

    /** Memory beside the arena's; with the mutex held. */
    [[nodiscard]] std::size_t bytesUsed() const {
        return lists_->ApproximateMemoryUsage() + entries_.capacity() * sizeof(const char*) +
               shells_.size() * sizeof(IteratorShell);
    }

    IteratorShell& newShell() {
        const std::scoped_lock lock(mutex_);
        return *shells_.emplace_back(std::make_unique<IteratorShell>());
    }

    std::unique_ptr<MemTableRep> lists_;
    const KeyComparator& compare_;
    /** The entry allocated last and not yet inserted, and where its key is: the writer's alone. */
    KeyHandle allocated_ = nullptr;
    const char* allocatedEntry_ = nullptr;
    std::mutex mutex_;
    Entries entries_;
    bool readOnly_ = false;
    std::size_t frozenBytes_ = 0;
    std::shared_ptr<const Entries> sorted_;
    std::vector<std::unique_ptr<IteratorShell>> shells_;
};

class HashedMemtables final : public rocksdb::MemTableRepFactory {
  public:
    HashedMemtables(std::size_t openBuckets, std::size_t buckets)
        : open_(linkLists(openBuckets)), later_(linkLists(buckets)) {}

    using rocksdb::MemTableRepFactory::CreateMemTableRep;
    MemTableRep* CreateMemTableRep(const MemTableRep::KeyComparator& compare,
                                   rocksdb::Allocator* allocator,
                                   const rocksdb::SliceTransform* transform,
                                   rocksdb::Logger* logger) override {
        const bool first = !madeOne_.exchange(true);
        std::unique_ptr<MemTableRep> lists(
            (first ? open_ : later_)->CreateMemTableRep(compare, allocator, transform, logger));
        return new HashedMemtable(std::move(lists), compare);
    }
    [[nodiscard]] const char* Name() const override { return "GridLedgerHashMemtables"; }

  private:
    /**
     * A bucket is a list sorted by key, so that a key's newer version, which sorts first (the
     * state values' inverted versions), goes in at its head after one comparison, where a
     * bucket's skip list searched its levels, twice in Debian's RocksDB, whose assertions search
     * before each insert. A bucket of more than kSkipListAfter keys turns into a skip list.
     */
    static constexpr std::uint32_t kSkipListAfter = 256;
    /** RocksDB's default: a bucket longer than this is logged. */
    static constexpr int kLongBucketLog = 4096;

    /** Bucket array from malloc (no huge pages); no log of the bucket lengths at each flush. */
    static rocksdb::MemTableRepFactory* linkLists(std::size_t buckets) {
        return rocksdb::NewHashLinkListRepFactory(buckets, 0, kLongBucketLog, false,
                                                  kSkipListAfter);
    }

    std::unique_ptr<rocksdb::MemTableRepFactory> open_;
    std::unique_ptr<rocksdb::MemTableRepFactory> later_;
    std::atomic<bool> madeOne_{false};
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> hashedMemtables(std::size_t openBuckets,
                                                             std::size_t buckets) {
    return std::make_shared<HashedMemtables>(openBuckets, buckets);
}

}  // namespace gridledger::storage
