#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <gridledger/storage/kv_store.h>

#include "hashed_memtable.h"
#include "write_behind.h"

namespace gridledger::storage {
namespace {

rocksdb::Slice slice(ByteView bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

ByteView view(const rocksdb::Slice& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

/** Bits per key of the Bloom filters of tables (about 1 % false positives). */
constexpr int kBloomBitsPerKey = 10;
/** The memtable prefix Bloom filter's size as a share of the write buffer. */
constexpr double kMemtablePrefixBloomRatio = 0.1;

Error storageError(const rocksdb::Status& status) {
    return Error{ErrorCode::kStorage, "rocksdb: " + status.ToString()};
}

}  // namespace

struct WriteBatch::Impl {
    rocksdb::WriteBatch batch;
    const std::vector<rocksdb::ColumnFamilyHandle*>* handles = nullptr;
};

struct Cursor::Impl {
    std::unique_ptr<rocksdb::Iterator> it;
};

struct KvStore::Impl {
    /** An in-memory store's environment, which must outlive its database. */
    std::unique_ptr<rocksdb::Env> memoryEnv;
    std::unique_ptr<rocksdb::DB> db;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    std::atomic<std::uint64_t> walSyncs{0};
    bool disposable = false;
    /** The thread of writeBehind, once it was first called (made by one thread, read by any). */
    std::unique_ptr<WriteBehind> writer;
    std::atomic<WriteBehind*> behindWriter{nullptr};
    /** The batch handed to the writer last, whose memory the caller gets back at the next one. */
    std::optional<WriteBatch> behind;

    /** Waits for the batch handed last (KvStore::writeBehind) to land. */
    [[nodiscard]] Status settle() const {
        WriteBehind* at = behindWriter.load(std::memory_order_acquire);
        if (at == nullptr) {
            return {};
        }
        if (auto status = at->settle(); !status.ok()) {
            return std::unexpected(storageError(status));
        }
        return {};
    }

    ~Impl() {
        writer.reset();  // lands what was handed, and stops
        if (db && !disposable) {
            // An open replays the write-ahead log into memtables, inserting every record again
            // (a node's 96 MB log took 1.3 s of its start): written into tables at close, the
            // memtables leave the next open nothing to replay. A failed flush loses nothing, since
            // the log still holds every write.
            rocksdb::FlushOptions flush;
            flush.allow_write_stall = true;
            static_cast<void>(db->Flush(flush, handles));
        }
        for (auto* handle : handles) {
            if (db) {
                db->DestroyColumnFamilyHandle(handle);
            }
        }
    }
};

WriteBatch::WriteBatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WriteBatch::~WriteBatch() = default;
WriteBatch::WriteBatch(WriteBatch&&) noexcept = default;
WriteBatch& WriteBatch::operator=(WriteBatch&&) noexcept = default;

void WriteBatch::put(Column column, ByteView key, ByteView value) {
    impl_->batch.Put(impl_->handles->at(column), slice(key), slice(value));
}

void WriteBatch::erase(Column column, ByteView key) {
    impl_->batch.Delete(impl_->handles->at(column), slice(key));
}

void WriteBatch::eraseRange(Column column, ByteView begin, ByteView end) {
    impl_->batch.DeleteRange(impl_->handles->at(column), slice(begin), slice(end));
}

std::size_t WriteBatch::count() const {
    return static_cast<std::size_t>(impl_->batch.Count());
}
std::size_t WriteBatch::byteSize() const {
    return impl_->batch.GetDataSize();
}
void WriteBatch::clear() {
    impl_->batch.Clear();
}

Cursor::Cursor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Cursor::~Cursor() = default;
Cursor::Cursor(Cursor&&) noexcept = default;
Cursor& Cursor::operator=(Cursor&&) noexcept = default;

void Cursor::seek(ByteView key) {
    impl_->it->Seek(slice(key));
}
void Cursor::seekForPrev(ByteView key) {
    impl_->it->SeekForPrev(slice(key));
}
void Cursor::seekToFirst() {
    impl_->it->SeekToFirst();
}
void Cursor::seekToLast() {
    impl_->it->SeekToLast();
}
bool Cursor::valid() const {
    return impl_->it->Valid();
}
void Cursor::next() {
    impl_->it->Next();
}
void Cursor::prev() {
    impl_->it->Prev();
}
ByteView Cursor::key() const {
    return view(impl_->it->key());
}
ByteView Cursor::value() const {
    return view(impl_->it->value());
}
Status Cursor::status() const {
    if (auto s = impl_->it->status(); !s.ok()) {
        return std::unexpected(storageError(s));
    }
    return {};
}

KvStore::KvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvStore::~KvStore() = default;

Result<std::unique_ptr<KvStore>> KvStore::open(const std::filesystem::path& path,
                                               const std::vector<std::string>& columns,
                                               const KvOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->disposable = options.disposable || options.inMemory;
    rocksdb::Options dbOptions;
    if (options.inMemory) {
        impl->memoryEnv.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
        dbOptions.env = impl->memoryEnv.get();
    }
    dbOptions.create_if_missing = options.createIfMissing;
    dbOptions.create_missing_column_families = true;
    dbOptions.IncreaseParallelism(2);
    // The tables' readers are opened with the database, by RocksDB's 16 threads unless told
    // otherwise: each one made and joined at every open, a sixth of a node's start on two cores.
    dbOptions.max_file_opening_threads =
        static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1U, 16U));
    dbOptions.avoid_flush_during_shutdown = impl->disposable;

    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(options.blockCacheBytes);
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(kBloomBitsPerKey));
    rocksdb::ColumnFamilyOptions cfOptions;
    cfOptions.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

    if (!options.hashedColumns.empty() && options.hashedBuckets == 0) {
        return fail(ErrorCode::kInvalidArgument,
                    "kv store: a hashed column's memtable needs at least one bucket");
    }
    // A database holding a family this list lacks was written in another layout.
    std::vector<std::string> existing;
    const bool fresh = !rocksdb::DB::ListColumnFamilies(dbOptions, path.string(), &existing).ok();
    if (!fresh) {
        for (const auto& name : existing) {
            if (name != rocksdb::kDefaultColumnFamilyName &&
                std::find(columns.begin(), columns.end(), name) == columns.end()) {
                return fail(ErrorCode::kInvalidArgument,
                            "kv store: the database at " + path.string() + " holds column " + name +
                                ", which this layout does not have");
            }
        }
    }
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, cfOptions);
    for (const auto& name : columns) {
        rocksdb::ColumnFamilyOptions column = cfOptions;
        if (const auto prefix = options.prefixColumns.find(name);
            prefix != options.prefixColumns.end()) {
            column.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(prefix->second));
            column.memtable_prefix_bloom_size_ratio = kMemtablePrefixBloomRatio;
        }
        if (const auto run = options.sequentialColumns.find(name);
            run != options.sequentialColumns.end()) {
            column.memtable_insert_with_hint_prefix_extractor.reset(
                rocksdb::NewFixedPrefixTransform(run->second));
        }
        if (const auto hashed = options.hashedColumns.find(name);
            hashed != options.hashedColumns.end()) {
            if (const auto prefix = options.prefixColumns.find(name);
                prefix != options.prefixColumns.end() && prefix->second != hashed->second) {
                return fail(ErrorCode::kInvalidArgument,
                            "kv store: column " + name + " hashes and filters different prefixes");
            }
            column.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(hashed->second));
            // The memtable finds a prefix's keys in one bucket already: a Bloom filter of the
            // prefixes would save no search, and each new memtable would zero its 6.4 MiB.
            column.memtable_prefix_bloom_size_ratio = 0;
            column.memtable_factory = hashedMemtables(options.hashedBuckets);
            // RocksDB inserts into a hash memtable from one thread at a time only.
            dbOptions.allow_concurrent_memtable_write = false;
        }
        descriptors.emplace_back(name, column);
    }
    // RocksDB creates each family an open finds missing with a write of its options file, read
    // back to check it: a new database, opened with the default family alone, creates the others
    // in one call, which writes that file once.
    const auto opened = static_cast<std::ptrdiff_t>(fresh ? 1 : descriptors.size());
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    auto status =
        rocksdb::DB::Open(dbOptions, path.string(),
                          {descriptors.begin(), descriptors.begin() + opened}, &handles, &raw);
    if (!status.ok()) {
        return std::unexpected(storageError(status));
    }
    impl->db.reset(raw);
    if (fresh) {
        std::vector<rocksdb::ColumnFamilyHandle*> created;
        status =
            raw->CreateColumnFamilies({descriptors.begin() + opened, descriptors.end()}, &created);
        handles.insert(handles.end(), created.begin(), created.end());
        if (!status.ok()) {
            for (auto* handle : handles) {
                raw->DestroyColumnFamilyHandle(handle);
            }
            return std::unexpected(storageError(status));
        }
    }
    // Handle 0 is RocksDB's default family, which GridLedger does not use.
    impl->db->DestroyColumnFamilyHandle(handles.front());
    impl->handles.assign(handles.begin() + 1, handles.end());
    return std::unique_ptr<KvStore>(new KvStore(std::move(impl)));
}

Result<std::optional<Bytes>> KvStore::get(Column column, ByteView key) const {
    std::optional<Bytes> out;
    GL_TRY(read(column, key, [&out](ByteView value) { out.emplace(value.begin(), value.end()); }));
    return out;
}

Result<bool> KvStore::read(Column column, ByteView key,
                           const std::function<void(ByteView)>& use) const {
    if (WriteBehind* writer = impl_->behindWriter.load(std::memory_order_acquire)) {
        InFlight answer = InFlight::kUntouched;
        bool found = false;
        const auto status = writer->read(impl_->handles.at(column)->GetID(),
                                         slice(key).ToStringView(), answer, found, use);
        if (!status.ok()) {
            return std::unexpected(storageError(status));
        }
        if (answer == InFlight::kAnswered) {
            return found;
        }
    }
    rocksdb::PinnableSlice value;
    const auto status =
        impl_->db->Get(rocksdb::ReadOptions(), impl_->handles.at(column), slice(key), &value);
    if (status.IsNotFound()) {
        return false;
    }
    if (!status.ok()) {
        return std::unexpected(storageError(status));
    }
    use(view(value));
    return true;
}

Status KvStore::write(WriteBatch& batch, bool sync) {
    GL_TRY(impl_->settle());
    rocksdb::WriteOptions writeOptions;
    writeOptions.sync = sync && !impl_->disposable;
    writeOptions.disableWAL = impl_->disposable;
    auto status = impl_->db->Write(writeOptions, &batch.impl_->batch);
    if (!status.ok()) {
        return std::unexpected(storageError(status));
    }
    if (writeOptions.sync) {
        impl_->walSyncs.fetch_add(1, std::memory_order_relaxed);
    }
    return {};
}

Status KvStore::writeBehind(WriteBatch& batch) {
    GL_TRY(impl_->settle());
    WriteBehind* writer = impl_->behindWriter.load(std::memory_order_relaxed);
    if (writer == nullptr) {
        rocksdb::WriteOptions writeOptions;
        writeOptions.disableWAL = impl_->disposable;
        impl_->writer = std::make_unique<WriteBehind>(*impl_->db, writeOptions);
        writer = impl_->writer.get();
        impl_->behindWriter.store(writer, std::memory_order_release);
        impl_->behind = this->batch();
    }
    std::swap(batch.impl_, impl_->behind->impl_);
    batch.clear();
    writer->hand(impl_->behind->impl_->batch);
    return {};
}

Status KvStore::settle() const {
    return impl_->settle();
}

Status KvStore::syncWal() {
    GL_TRY(impl_->settle());
    if (impl_->disposable) {
        return {};
    }
    auto status = impl_->db->SyncWAL();
    if (!status.ok()) {
        return std::unexpected(storageError(status));
    }
    impl_->walSyncs.fetch_add(1, std::memory_order_relaxed);
    return {};
}

std::uint64_t KvStore::walSyncs() const {
    return impl_->walSyncs.load(std::memory_order_relaxed);
}

Status KvStore::put(Column column, ByteView key, ByteView value, bool sync) {
    WriteBatch writes = batch();
    writes.put(column, key, value);
    return write(writes, sync);
}

WriteBatch KvStore::batch() const {
    auto impl = std::make_unique<WriteBatch::Impl>();
    impl->handles = &impl_->handles;
    return WriteBatch(std::move(impl));
}

Cursor KvStore::cursor(Column column) const {
    static_cast<void>(impl_->settle());  // a failed write fails the next get or write instead
    auto impl = std::make_unique<Cursor::Impl>();
    rocksdb::ReadOptions read;
    read.total_order_seek = true;  // whole-column order even in a column with a prefix filter
    impl->it.reset(impl_->db->NewIterator(read, impl_->handles.at(column)));
    return Cursor(std::move(impl));
}

Cursor KvStore::prefixCursor(Column column) const {
    static_cast<void>(impl_->settle());  // as in cursor
    auto impl = std::make_unique<Cursor::Impl>();
    rocksdb::ReadOptions read;
    read.prefix_same_as_start = true;
    impl->it.reset(impl_->db->NewIterator(read, impl_->handles.at(column)));
    return Cursor(std::move(impl));
}

}  // namespace gridledger::storage
