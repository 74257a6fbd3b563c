#include "write_behind.h"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace gridledger::storage {

/**
 * What a batch writes, by column family id and key: the value (a view into the batch) or none for
 * an erase, the last write of each key winning; and whether it erases a range of keys, which the
 * index cannot answer.
 */
class BatchIndex final : public rocksdb::WriteBatch::Handler {
  public:
    explicit BatchIndex(std::size_t writes) { writes_.reserve(writes); }

    /** The last write of `key` in `column`; null when the batch leaves the key alone. */
    [[nodiscard]] const std::optional<std::string_view>* find(std::uint32_t column,
                                                              std::string_view key) const {
        const auto it = writes_.find(Key{column, key});
        return it == writes_.end() ? nullptr : &it->second;
    }
    [[nodiscard]] bool erasesRanges() const { return ranges_; }

    rocksdb::Status PutCF(std::uint32_t column, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
        writes_.insert_or_assign(Key{column, key.ToStringView()}, value.ToStringView());
        return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(std::uint32_t column, const rocksdb::Slice& key) override {
        writes_.insert_or_assign(Key{column, key.ToStringView()}, std::nullopt);
        return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteRangeCF(std::uint32_t /*column*/, const rocksdb::Slice& /*begin*/,
                                  const rocksdb::Slice& /*end*/) override {
        ranges_ = true;
        return rocksdb::Status::OK();
    }

  private:
    struct Key {
        std::uint32_t column;
        std::string_view bytes;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& key) const {
            return std::hash<std::string_view>{}(key.bytes) ^ key.column;
        }
    };
    std::unordered_map<Key, std::optional<std::string_view>, KeyHash> writes_;
    bool ranges_ = false;
};

WriteBehind::WriteBehind(rocksdb::DB& db, const rocksdb::WriteOptions& options)
    : db_(db), options_(options), thread_([this] { run(); }) {}

WriteBehind::~WriteBehind() {
    {
        const std::scoped_lock lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void WriteBehind::hand(rocksdb::WriteBatch& batch) {
    {
        const std::scoped_lock lock(mutex_);
        handed_ = &batch;
        busy_.store(true, std::memory_order_relaxed);
    }
    changed_.notify_all();
}

bool WriteBehind::idle() const {
    return !busy_.load(std::memory_order_acquire) && !failed_.load(std::memory_order_acquire);
}

rocksdb::Status WriteBehind::settle() {
    if (idle()) {
        return rocksdb::Status::OK();
    }
    std::unique_lock lock(mutex_);
    if (handed_ != nullptr) {
        // The thread has not taken the batch yet: on a machine whose cores are busy it may not run
        // for milliseconds, so the caller, who would only wait, writes the batch itself.
        land(*std::exchange(handed_, nullptr), lock);
    }
    changed_.wait(lock, [this] { return !busy_.load(std::memory_order_relaxed); });
    return failure_;
}

rocksdb::Status WriteBehind::read(std::uint32_t column, std::string_view key, InFlight& answer,
                                  bool& found, const std::function<void(ByteView)>& use) {
    answer = InFlight::kUntouched;
    if (idle()) {
        return rocksdb::Status::OK();
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] {
        return !busy_.load(std::memory_order_relaxed) || (index_ && !index_->erasesRanges());
    });
    if (!failure_.ok() || !busy_.load(std::memory_order_relaxed)) {
        return failure_;
    }
    const std::optional<std::string_view>* written = index_->find(column, key);
    if (written == nullptr) {
        return rocksdb::Status::OK();
    }
    answer = InFlight::kAnswered;
    found = written->has_value();
    if (found) {
        // Under the lock: the batch is not given back while its value is read.
        use(ByteView(reinterpret_cast<const std::uint8_t*>((*written)->data()),
                     (*written)->size()));
    }
    return rocksdb::Status::OK();
}

void WriteBehind::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [this] { return stopping_ || handed_ != nullptr; });
        if (handed_ == nullptr) {
            return;  // stopping, and every batch handed has landed
        }
        rocksdb::WriteBatch* batch = std::exchange(handed_, nullptr);
        lock.unlock();
        auto index = std::make_unique<BatchIndex>(batch->Count());
        const rocksdb::Status indexed = batch->Iterate(index.get());
        lock.lock();
        if (indexed.ok()) {  // a batch it cannot index: reads wait for it to land
            index_ = std::move(index);
            changed_.notify_all();
        }
        land(*batch, lock);
    }
}

void WriteBehind::land(rocksdb::WriteBatch& batch, std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    const rocksdb::Status written = db_.Write(options_, &batch);
    lock.lock();
    if (!written.ok() && failure_.ok()) {
        failure_ = written;
        failed_.store(true, std::memory_order_release);
    }
    index_.reset();
    busy_.store(false, std::memory_order_release);
    changed_.notify_all();
}

}  // namespace gridledger::storage
