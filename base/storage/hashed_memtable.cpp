#include "hashed_memtable.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <random>
#include <utility>
#include <vector>

#include <rocksdb/slice.h>
#include <rocksdb/slice_transform.h>
#include <sys/mman.h>

#include <gridledger/base/bytes.h>

namespace gridledger::storage {
namespace {

using rocksdb::KeyHandle;
using rocksdb::MemTableRep;

/** The sequence number and type that end every internal key. */
constexpr std::size_t kKeyTrailerBytes = 8;

/** The length of an internal key's user key, the key before its trailer. */
std::size_t userKeyBytes(const rocksdb::Slice& internalKey) {
    return internalKey.size() > kKeyTrailerBytes ? internalKey.size() - kKeyTrailerBytes : 0;
}

/** Up to eight bytes as a big-endian number, zero-padded past `count`. */
std::uint64_t paddedU64(const char* bytes, std::size_t count) {
    std::array<std::uint8_t, sizeof(std::uint64_t)> head{};
    std::copy_n(reinterpret_cast<const std::uint8_t*>(bytes), std::min(count, head.size()),
                head.begin());
    return readU64(head);
}

/**
 * The first eight bytes of an entry's user key as a big-endian number, zero past the key's end:
 * for keys ordered bytewise, a smaller number is a smaller key, and equal numbers tell nothing.
 */
std::uint64_t keyPrefix(const char* entry) {
    const rocksdb::Slice internal = rocksdb::GetLengthPrefixedSlice(entry);
    return paddedU64(internal.data(), userKeyBytes(internal));
}

/** A get's key, as the memtable encodes it (its length, then the internal key) and as decoded. */
struct LookedUp {
    const char* encoded;
    rocksdb::Slice internal;
};

/**
 * The key a get looks for.
 *
 * RocksDB hands it over in a LookupKey, a class its public headers only declare, and its default
 * get (MemTableRep::Get, in RocksDB 7.8, which GridLedger builds with) never frees the iterator it
 * makes, so a memtable of GridLedger's own reads the key itself. The class begins with three
 * pointers: to that encoding, to the internal key within it, and to the end of both. The encoding
 * must agree with the other two, or the build's RocksDB lays the class out otherwise and the
 * process stops before it reads a wrong key.
 */
LookedUp lookedUp(const rocksdb::LookupKey& key) {
    std::array<const char*, 3> parts{};
    std::memcpy(parts.data(), &key, sizeof(parts));
    const auto [encoded, internal, end] = parts;
    const rocksdb::Slice decoded =
        encoded != nullptr ? rocksdb::GetLengthPrefixedSlice(encoded) : rocksdb::Slice();
    if (encoded == nullptr || decoded.data() != internal ||
        decoded.data() + decoded.size() != end) {
        std::fputs("hashed memtable: RocksDB's LookupKey is not laid out as this build expects\n",
                   stderr);
        std::abort();
    }
    return {encoded, decoded};
}

using Entries = std::vector<const char*>;

/**
 * Room for one iterator that RocksDB asks for in its arena (an allocator it keeps private): RocksDB
 * destroys such an iterator in place and never frees it. Each thread keeps rooms for the
 * iterators it makes; a room goes back to the thread that destroyed its iterator, which takes it
 * again only after that destructor returned.
 */
class Rooms {
  public:
    static constexpr std::size_t kBytes = 64;

    Rooms() = default;
    Rooms(const Rooms&) = delete;
    Rooms& operator=(const Rooms&) = delete;
    Rooms(Rooms&&) = delete;
    Rooms& operator=(Rooms&&) = delete;
    ~Rooms() {
        for (Room* room : free_) {
            delete room;
        }
    }

    /** This thread's rooms. */
    static Rooms& here() {
        thread_local Rooms rooms;
        return rooms;
    }

    void* take() {
        if (free_.empty()) {
            return new Room;
        }
        Room* room = free_.back();
        free_.pop_back();
        return room;
    }

    /**
     * Takes back the room of an iterator being destroyed. Past kKept it frees the room given back
     * longest ago, whose destructor has returned, never this one.
     */
    void give(void* at) {
        free_.push_back(static_cast<Room*>(at));
        if (free_.size() > kKept) {
            delete free_.front();
            free_.erase(free_.begin());
        }
    }

  private:
    static constexpr std::size_t kKept = 64;
    struct Room {
        alignas(std::max_align_t) std::byte bytes[kBytes];
    };
    std::vector<Room*> free_;
};

/**
 * An iterator made in one of this thread's rooms when RocksDB gives an arena, or on the heap when
 * it does not (RocksDB then deletes it). Its first argument says which.
 */
template <typename It, typename... Args>
MemTableRep::Iterator* makeIterator(rocksdb::Arena* arena, Args&&... args) {
    static_assert(sizeof(It) <= Rooms::kBytes && alignof(It) <= alignof(std::max_align_t));
    if (arena == nullptr) {
        return new It(false, std::forward<Args>(args)...);
    }
    return new (Rooms::here().take()) It(true, std::forward<Args>(args)...);
}

/** An iterator over a memtable's entries, sorted before it was made. */
class SortedIterator final : public MemTableRep::Iterator {
  public:
    SortedIterator(bool roomed, std::shared_ptr<const Entries> entries,
                   const MemTableRep::KeyComparator& compare)
        : roomed_(roomed), entries_(std::move(entries)), compare_(compare), at_(entries_->size()) {}
    SortedIterator(const SortedIterator&) = delete;
    SortedIterator& operator=(const SortedIterator&) = delete;
    SortedIterator(SortedIterator&&) = delete;
    SortedIterator& operator=(SortedIterator&&) = delete;
    ~SortedIterator() override {
        if (roomed_) {
            Rooms::here().give(this);
        }
    }

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

    bool roomed_;
    std::shared_ptr<const Entries> entries_;
    const MemTableRep::KeyComparator& compare_;
    std::size_t at_;
};

/**
 * One entry of a bucket's list: the link to the next, then the entry RocksDB encodes (its
 * length-prefixed internal key and value). The writer links a node in with a release store once
 * it is whole, and readers follow the links with acquire loads, so they never wait for it.
 */
struct Node {
    Node* next;

    [[nodiscard]] char* entry() { return reinterpret_cast<char*>(this) + sizeof(Node); }
};

Node* loadAcquire(Node*& link) {
    return std::atomic_ref<Node*>(link).load(std::memory_order_acquire);
}

void storeRelease(Node*& link, Node* node) {
    std::atomic_ref<Node*>(link).store(node, std::memory_order_release);
}

/**
 * A memtable's buckets, each the head of its list, in a private mapping of their own: the kernel
 * hands its pages over zeroed as keys first land in them, so a new memtable clears nothing. The
 * mapping asks for transparent huge pages: a block's keys land in random buckets, and over 4 KiB
 * pages nearly each of them missed the TLB (the executor bench's block of 1,000 transfers took
 * about a tenth longer with 2^20 buckets than with 2^16 until then, and no longer with them).
 * Where the kernel gives none, the pages are 4 KiB.
 */
class Buckets {
  public:
    explicit Buckets(std::size_t count) : count_(count), heads_(map(bytes())) {}
    Buckets(const Buckets&) = delete;
    Buckets& operator=(const Buckets&) = delete;
    Buckets(Buckets&&) = delete;
    Buckets& operator=(Buckets&&) = delete;
    ~Buckets() { ::munmap(heads_, bytes()); }

    [[nodiscard]] std::size_t count() const { return count_; }
    [[nodiscard]] std::size_t bytes() const { return count_ * sizeof(Node*); }
    [[nodiscard]] Node*& operator[](std::size_t at) const { return heads_[at]; }

  private:
    static Node** map(std::size_t bytes) {
        void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (at == MAP_FAILED) {
            throw std::bad_alloc();
        }
        (void)::madvise(at, bytes, MADV_HUGEPAGE);  // a hint; refused, the pages stay small
        return static_cast<Node**>(at);
    }

    std::size_t count_;
    Node** heads_;
};

class HashedMemtable;

/**
 * The entries of the bucket a seek's key falls in, from the first at or above it: the keys of its
 * prefix, in order, among those of other prefixes that share the bucket. Like RocksDB's own hash
 * memtables, it has no order across buckets, so it does not step back or seek from either end.
 */
class BucketIterator final : public MemTableRep::Iterator {
  public:
    BucketIterator(bool roomed, const HashedMemtable& memtable)
        : roomed_(roomed), memtable_(memtable) {}
    BucketIterator(const BucketIterator&) = delete;
    BucketIterator& operator=(const BucketIterator&) = delete;
    BucketIterator(BucketIterator&&) = delete;
    BucketIterator& operator=(BucketIterator&&) = delete;
    ~BucketIterator() override {
        if (roomed_) {
            Rooms::here().give(this);
        }
    }

    [[nodiscard]] bool Valid() const override { return at_ != nullptr; }
    [[nodiscard]] const char* key() const override { return at_->entry(); }
    void Next() override { at_ = loadAcquire(at_->next); }
    void Prev() override { at_ = nullptr; }
    void Seek(const rocksdb::Slice& internalKey, const char* memtableKey) override;
    void SeekForPrev(const rocksdb::Slice& /*internalKey*/, const char* /*memtableKey*/) override {
        at_ = nullptr;
    }
    void SeekToFirst() override { at_ = nullptr; }
    void SeekToLast() override { at_ = nullptr; }

  private:
    bool roomed_;
    const HashedMemtable& memtable_;
    Node* at_ = nullptr;
};

/**
 * A memtable that hashes each key's prefix (the column's prefix extractor; the whole user key
 * outside its domain) to a bucket holding a list sorted by RocksDB's comparator, and keeps the
 * list of its entries on the side: walked in order (a flush, a whole-column cursor), it sorts
 * that list instead of building a skip list. RocksDB inserts into it from one thread at a time,
 * while any number read.
 *
 * The buckets are placed by a hash keyed with a secret drawn when the store opens, so that keys
 * chosen to share one bucket (a sender grinding addresses) cannot be found without it: every key
 * in a bucket is passed by an insert or a read that lands after it.
 */
class HashedMemtable final : public MemTableRep {
  public:
    HashedMemtable(const KeyComparator& compare, rocksdb::Allocator* allocator,
                   const rocksdb::SliceTransform* transform, std::size_t buckets,
                   std::uint64_t secret)
        : MemTableRep(allocator),
          compare_(compare),
          transform_(transform),
          secret_(secret),
          buckets_(buckets) {}
    HashedMemtable(const HashedMemtable&) = delete;
    HashedMemtable& operator=(const HashedMemtable&) = delete;
    HashedMemtable(HashedMemtable&&) = delete;
    HashedMemtable& operator=(HashedMemtable&&) = delete;
    ~HashedMemtable() override = default;

    /**
     * A node and its entry from the memtable's arena, which gives out bytes unaligned
     * (MemTableRep::Allocate): the node starts at the first aligned byte.
     */
    KeyHandle Allocate(const std::size_t len, char** buf) override {
        std::size_t space = sizeof(Node) + alignof(Node) - 1 + len;
        char* room = nullptr;
        MemTableRep::Allocate(space, &room);
        void* at = room;
        auto* node = new (std::align(alignof(Node), sizeof(Node) + len, at, space)) Node{nullptr};
        *buf = node->entry();
        return node;
    }

    void Insert(KeyHandle handle) override {
        auto* node = static_cast<Node*>(handle);
        const char* entry = node->entry();
        const rocksdb::Slice internalKey = rocksdb::GetLengthPrefixedSlice(entry);
        Node** link = &bucketOf(internalKey);
        // The writer is alone: it reads the links it wrote itself without ordering.
        while (*link != nullptr && compare_((*link)->entry(), entry) < 0) {
            link = &(*link)->next;
        }
        node->next = *link;
        storeRelease(*link, node);
        const std::scoped_lock lock(mutex_);
        entries_.push_back(entry);
    }

    [[nodiscard]] bool Contains(const char* key) const override {
        const rocksdb::Slice internalKey = rocksdb::GetLengthPrefixedSlice(key);
        Node* found = firstAtOrAbove(internalKey, key);
        return found != nullptr && compare_(found->entry(), key) == 0;
    }

    void MarkReadOnly() override {
        const std::scoped_lock lock(mutex_);
        readOnly_ = true;
        frozenBytes_ = bytesUsed();
    }

    /**
     * Hands the entries of the key's bucket, from the first at or above it, to the callback until
     * the callback stops.
     */
    void Get(const rocksdb::LookupKey& key, void* callbackArgs,
             bool (*callback)(void* arg, const char* entry)) override {
        const auto [encoded, internal] = lookedUp(key);
        for (Node* node = firstAtOrAbove(internal, encoded);
             node != nullptr && callback(callbackArgs, node->entry());
             node = loadAcquire(node->next)) {
        }
    }

    std::uint64_t ApproximateNumEntries(const rocksdb::Slice& /*startKey*/,
                                        const rocksdb::Slice& /*endKey*/) override {
        return 0;  // unknown, as for RocksDB's own hash memtables
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
        return makeIterator<SortedIterator>(arena, inOrder(), compare_);
    }

    Iterator* GetDynamicPrefixIterator(rocksdb::Arena* arena) override {
        return makeIterator<BucketIterator>(arena, *this);
    }

    /**
     * The first node of a key's bucket at or above it (compared as the memtable's encoding of the
     * key when given), or none.
     */
    [[nodiscard]] Node* firstAtOrAbove(const rocksdb::Slice& internalKey,
                                       const char* memtableKey) const {
        Node* node = loadAcquire(bucketOf(internalKey));
        while (node != nullptr &&
               (memtableKey != nullptr ? compare_(node->entry(), memtableKey) < 0
                                       : compare_(node->entry(), internalKey) < 0)) {
            node = loadAcquire(node->next);
        }
        return node;
    }

  private:
    struct Ranked {
        std::uint64_t prefix;
        const char* entry;
    };

    /** The bucket of an internal key's prefix. */
    [[nodiscard]] Node*& bucketOf(const rocksdb::Slice& internalKey) const {
        const rocksdb::Slice user(internalKey.data(), userKeyBytes(internalKey));
        const rocksdb::Slice prefix = transform_ != nullptr && transform_->InDomain(user)
                                          ? transform_->Transform(user)
                                          : user;
        return buckets_[keyedHash(prefix) % buckets_.count()];
    }

    /** The bytes' hash keyed with the secret, eight at a time, each step a full 64-bit mix. */
    [[nodiscard]] std::uint64_t keyedHash(const rocksdb::Slice& bytes) const {
        std::uint64_t hash = secret_ ^ bytes.size();
        for (std::size_t at = 0; at < bytes.size(); at += sizeof(std::uint64_t)) {
            hash = mix(hash ^ paddedU64(bytes.data() + at, bytes.size() - at));
        }
        return hash;
    }

    /** A bijective 64-bit finaliser: every input bit moves every output bit. */
    static std::uint64_t mix(std::uint64_t x) {
        x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
        return x ^ (x >> 31U);
    }

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
        return buckets_.bytes() + entries_.capacity() * sizeof(const char*);
    }

    const KeyComparator& compare_;
    const rocksdb::SliceTransform* transform_;
    std::uint64_t secret_;
    Buckets buckets_;
    std::mutex mutex_;
    Entries entries_;
    bool readOnly_ = false;
    std::size_t frozenBytes_ = 0;
    std::shared_ptr<const Entries> sorted_;
};

void BucketIterator::Seek(const rocksdb::Slice& internalKey, const char* memtableKey) {
    at_ = memtable_.firstAtOrAbove(internalKey, memtableKey);
}

class HashedMemtables final : public rocksdb::MemTableRepFactory {
  public:
    explicit HashedMemtables(std::size_t buckets) : buckets_(buckets), secret_(drawSecret()) {}

    using rocksdb::MemTableRepFactory::CreateMemTableRep;
    MemTableRep* CreateMemTableRep(const MemTableRep::KeyComparator& compare,
                                   rocksdb::Allocator* allocator,
                                   const rocksdb::SliceTransform* transform,
                                   rocksdb::Logger* /*logger*/) override {
        return new HashedMemtable(compare, allocator, transform, buckets_, secret_);
    }
    [[nodiscard]] const char* Name() const override { return "GridLedgerHashMemtables"; }

  private:
    static std::uint64_t drawSecret() {
        std::random_device device;
        return (std::uint64_t{device()} << 32U) | device();
    }

    std::size_t buckets_;
    std::uint64_t secret_;
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> hashedMemtables(std::size_t buckets) {
    return std::make_shared<HashedMemtables>(buckets);
}

}  // namespace gridledger::storage
