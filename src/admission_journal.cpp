#include "admission_journal.h"

#include <algorithm>

#include <pthread.h>

namespace gridledger::node {
namespace {

constexpr storage::Column kTxs = 0;
/** A record's value: u64 validUntilHeight ‖ tx hash ‖ raw transaction. */
constexpr std::size_t kHeadBytes = 8 + Hash256::kSize;
/** What a queued record has before its value: u64 seq (its key) ‖ u32 raw size. */
constexpr std::size_t kQueuedHeadBytes = 8 + 4;

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
    std::uint64_t firstSeq = 0;
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
        journal->heldSeqs_.insert(seq);
        firstSeq = firstSeq == 0 ? seq : firstSeq;
        lastSeq = seq;
    }
    GL_TRY(cursor.status());
    journal->nextSeq_ = lastSeq + 1;
    journal->durableSeq_ = lastSeq;
    journal->rangeFrom_ = firstSeq == 0 ? journal->nextSeq_ : firstSeq;
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
        const std::uint64_t seq = nextSeq_++;
        byExpiry_.emplace(validUntilHeight, hash);
        heldSeqs_.insert(heldSeqs_.end(), seq);
        appendU64(pending_, seq);
        appendU32(pending_, static_cast<std::uint32_t>(raw.size()));
        appendU64(pending_, validUntilHeight);
        gridledger::append(pending_, hash.view());
        gridledger::append(pending_, raw);
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
    std::vector<std::uint64_t> erased;
    erased.reserve(committed.size());
    for (const Hash256& hash : committed) {
        eraseLocked(hash, erased);
    }
    while (!byExpiry_.empty() && byExpiry_.begin()->first < nextHeight) {
        const Hash256 expired = byExpiry_.begin()->second;  // a copy: erasing frees the entry
        eraseLocked(expired, erased);
    }
    queueDeletionsLocked(erased);
}

void AdmissionJournal::drop(const Hash256& hash) {
    const std::lock_guard lock(mutex_);
    std::vector<std::uint64_t> erased;
    eraseLocked(hash, erased);
    queueDeletionsLocked(erased);
}

void AdmissionJournal::eraseLocked(const Hash256& hash, std::vector<std::uint64_t>& erased) {
    const auto found = byHash_.find(hash);
    if (found == byHash_.end()) {
        return;
    }
    const Record record = found->second;
    byExpiry_.erase({record.validUntilHeight, hash});
    heldSeqs_.erase(record.seq);
    byHash_.erase(found);
    erased.push_back(record.seq);
}

void AdmissionJournal::queueDeletionsLocked(std::span<const std::uint64_t> erased) {
    if (erased.empty()) {
        return;
    }
    const std::uint64_t oldestHeld = oldestHeldLocked();
    for (const std::uint64_t seq : erased) {
        if (seq >= oldestHeld) {
            pendingErased_.push_back(seq);
        }
    }
    queued_.notify_one();
}

bool AdmissionJournal::hasWorkLocked() const {
    return !pending_.empty() || !pendingErased_.empty() || rangeFrom_ < oldestHeldLocked();
}

std::uint64_t AdmissionJournal::oldestHeldLocked() const {
    return heldSeqs_.empty() ? nextSeq_ : *heldSeqs_.begin();
}

std::size_t AdmissionJournal::size() const {
    const std::lock_guard lock(mutex_);
    return byHash_.size();
}

std::uint64_t AdmissionJournal::syncs() const {
    const std::lock_guard lock(mutex_);
    return syncs_;
}

std::uint64_t AdmissionJournal::rangeDeletions() const {
    const std::lock_guard lock(mutex_);
    return rangeDeletions_;
}

std::uint64_t AdmissionJournal::pointDeletions() const {
    const std::lock_guard lock(mutex_);
    return pointDeletions_;
}

// One batch per turn: everything queued while the previous batch was being synced. Under load the
// batches grow, so the number of syncs stays bounded by how fast one sync is, not by the number of
// transactions.
void AdmissionJournal::run() {
    ::pthread_setname_np(::pthread_self(), "gl-journal");  // as top -H and perf show it
    std::unique_lock lock(mutex_);
    Bytes spare;
    for (;;) {
        queued_.wait(lock, [&] { return stopping_ || hasWorkLocked(); });
        if (!hasWorkLocked()) {
            return;
        }
        Turn turn;
        turn.records.swap(pending_);
        pending_.swap(spare);  // the buffer of an earlier turn, emptied, with its capacity
        turn.erased.swap(pendingErased_);
        turn.eraseFrom = rangeFrom_;
        turn.eraseTo = oldestHeldLocked();
        rangeFrom_ = turn.eraseTo;
        const std::uint64_t upTo = nextSeq_ - 1;
        lock.unlock();

        storage::WriteBatch batch = store_->batch();
        const ByteView records = turn.records;
        for (std::size_t at = 0; at < records.size();) {
            const std::size_t rawSize = readU32(records.subspan(at + 8, 4));
            batch.put(kTxs, records.subspan(at, 8),
                      records.subspan(at + kQueuedHeadBytes, kHeadBytes + rawSize));
            at += kQueuedHeadBytes + kHeadBytes + rawSize;
        }
        const bool ranged = turn.eraseFrom < turn.eraseTo;
        if (ranged) {
            batch.eraseRange(kTxs, keyOf(turn.eraseFrom), keyOf(turn.eraseTo));
        }
        for (const std::uint64_t seq : turn.erased) {
            batch.erase(kTxs, keyOf(seq));
        }
        const bool sync = !records.empty();
        Status written = store_->write(batch, sync);

        lock.lock();
        syncs_ += sync ? 1 : 0;
        rangeDeletions_ += ranged ? 1 : 0;
        pointDeletions_ += turn.erased.size();
        if (!written && failure_) {  // the first failure is the one reported
            failure_ = std::move(written);
        }
        durableSeq_ = std::max(durableSeq_, upTo);
        written_.notify_all();
        turn.records.clear();
        spare.swap(turn.records);
    }
}

}  // namespace gridledger::node
