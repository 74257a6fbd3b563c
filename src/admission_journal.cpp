#include "admission_journal.h"

#include <algorithm>

namespace gridledger::node {
namespace {

constexpr storage::Column kTxs = 0;
/** A record's value: u64 validUntilHeight ‖ tx hash ‖ raw transaction. */
constexpr std::size_t kHeadBytes = 8 + Hash256::kSize;

/** The last record each thread appended, and to which journal (awaitDurable waits for it). */
struct Ticket {
    const void* journal = nullptr;
    std::uint64_t seq = 0;
};
thread_local Ticket tLastAppended;

Bytes keyOf(std::uint64_t seq) {
    Bytes key;
    appendU64(key, seq);
    return key;
}

}  // namespace

Result<std::unique_ptr<AdmissionJournal>> AdmissionJournal::open(const std::filesystem::path& dir) {
    storage::KvOptions options;
    options.blockCacheBytes = std::size_t{8} << 20U;
    GL_ASSIGN_OR_RETURN(store, storage::KvStore::open(dir, {"txs"}, options));
    std::unique_ptr<AdmissionJournal> journal(new AdmissionJournal(std::move(store)));
    std::uint64_t lastSeq = 0;
    auto cursor = journal->store_->cursor(kTxs);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        if (cursor.key().size() != 8 || cursor.value().size() <= kHeadBytes) {
            return fail(ErrorCode::kCorrupt, "the admission journal holds a malformed record");
        }
        const std::uint64_t seq = readU64(cursor.key());
        const std::uint64_t validUntil = readU64(cursor.value());
        GL_ASSIGN_OR_RETURN(hash, Hash256::fromBytes(cursor.value().subspan(8, Hash256::kSize)));
        journal->byHash_.emplace(hash, Record{seq, validUntil});
        journal->byExpiry_.emplace(validUntil, hash);
        lastSeq = seq;
    }
    GL_TRY(cursor.status());
    journal->nextSeq_ = lastSeq + 1;
    journal->durableSeq_ = lastSeq;
    journal->writer_ = std::thread([raw = journal.get()] { raw->run(); });
    return journal;
}

AdmissionJournal::AdmissionJournal(std::unique_ptr<storage::KvStore> store)
    : store_(std::move(store)) {}

AdmissionJournal::~AdmissionJournal() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_all();
    if (writer_.joinable()) {
        writer_.join();
    }
}

Result<std::vector<JournalEntry>> AdmissionJournal::entries() const {
    std::vector<JournalEntry> out;
    auto cursor = store_->cursor(kTxs);
    for (cursor.seekToFirst(); cursor.valid(); cursor.next()) {
        const ByteView value = cursor.value();
        if (value.size() <= kHeadBytes) {
            return fail(ErrorCode::kCorrupt, "the admission journal holds a malformed record");
        }
        GL_ASSIGN_OR_RETURN(hash, Hash256::fromBytes(value.subspan(8, Hash256::kSize)));
        const ByteView raw = value.subspan(kHeadBytes);
        out.push_back(JournalEntry{hash, readU64(value), Bytes(raw.begin(), raw.end())});
    }
    GL_TRY(cursor.status());
    return out;
}

void AdmissionJournal::append(const Hash256& hash, ByteView raw, std::uint64_t validUntilHeight) {
    const std::lock_guard lock(mutex_);
    const auto [found, added] = byHash_.try_emplace(hash, Record{nextSeq_, validUntilHeight});
    if (added) {
        ++nextSeq_;
        byExpiry_.emplace(validUntilHeight, hash);
        queue_.push_back(
            Pending{found->second.seq, hash, validUntilHeight, Bytes(raw.begin(), raw.end())});
        queued_.notify_one();
    }
    // A transaction recorded already is durable when its first record is.
    tLastAppended = Ticket{this, found->second.seq};
}

Status AdmissionJournal::awaitDurable() {
    const Ticket ticket = std::exchange(tLastAppended, Ticket{});
    if (ticket.journal != this) {
        return {};
    }
    std::unique_lock lock(mutex_);
    written_.wait(lock, [&] { return durableSeq_ >= ticket.seq; });
    return failure_;
}

void AdmissionJournal::prune(std::span<const Hash256> committed, std::uint64_t nextHeight) {
    const std::lock_guard lock(mutex_);
    for (const Hash256& hash : committed) {
        eraseLocked(hash);
    }
    while (!byExpiry_.empty() && byExpiry_.begin()->first < nextHeight) {
        const Hash256 expired = byExpiry_.begin()->second;  // a copy: erasing frees the entry
        eraseLocked(expired);
    }
}

void AdmissionJournal::drop(const Hash256& hash) {
    const std::lock_guard lock(mutex_);
    eraseLocked(hash);
}

void AdmissionJournal::eraseLocked(const Hash256& hash) {
    const auto found = byHash_.find(hash);
    if (found == byHash_.end()) {
        return;
    }
    const Record record = found->second;
    byExpiry_.erase({record.validUntilHeight, hash});
    byHash_.erase(found);
    queue_.push_back(Pending{record.seq, hash, record.validUntilHeight, {}});
    queued_.notify_one();
}

std::size_t AdmissionJournal::size() const {
    const std::lock_guard lock(mutex_);
    return byHash_.size();
}

std::uint64_t AdmissionJournal::syncs() const {
    const std::lock_guard lock(mutex_);
    return syncs_;
}

// One batch per turn: everything queued while the previous batch was being synced. Under load the
// batches grow, so the number of syncs stays bounded by how fast one sync is, not by the number of
// transactions.
void AdmissionJournal::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) {
            return;
        }
        std::vector<Pending> taken;
        taken.swap(queue_);
        const std::uint64_t upTo = nextSeq_ - 1;
        lock.unlock();
        storage::WriteBatch batch = store_->batch();
        bool records = false;
        for (const Pending& pending : taken) {
            if (pending.raw.empty()) {
                batch.erase(kTxs, keyOf(pending.seq));
                continue;
            }
            Bytes value;
            value.reserve(kHeadBytes + pending.raw.size());
            appendU64(value, pending.validUntilHeight);
            gridledger::append(value, pending.hash.view());
            gridledger::append(value, pending.raw);
            batch.put(kTxs, keyOf(pending.seq), value);
            records = true;
        }
        Status written = store_->write(batch, records);
        lock.lock();
        if (records) {
            ++syncs_;
        }
        if (!written && failure_) {  // the first failure is the one reported
            failure_ = std::move(written);
        }
        durableSeq_ = std::max(durableSeq_, upTo);
        written_.notify_all();
    }
}

}  // namespace gridledger::node
