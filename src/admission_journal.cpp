#include "admission_journal.h"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <unordered_set>

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "key_file.h"

namespace gridledger::node {
namespace {

/** What a record has before the transaction: u32 size ‖ its hash. */
constexpr std::size_t kRecordHeadBytes = 4 + Hash256::kSize;
/** A segment's name: its number in 20 digits, so that names sort as numbers do. */
constexpr std::size_t kNumberDigits = 20;
constexpr std::string_view kSegmentSuffix = ".seg";

/** The last record each thread appended, and to which journal (awaitDurable waits for it). */
struct Ticket {
    const void* journal = nullptr;
    std::uint64_t seq = 0;
};
thread_local Ticket tLastAppended;

/** The number a segment file's name gives; nullopt for a name that is not a segment's. */
std::optional<std::uint64_t> segmentNumber(const std::string& name) {
    if (name.size() != kNumberDigits + kSegmentSuffix.size() || !name.ends_with(kSegmentSuffix)) {
        return std::nullopt;
    }
    std::uint64_t number = 0;
    for (std::size_t i = 0; i < kNumberDigits; ++i) {
        const char digit = name[i];
        if (digit < '0' || digit > '9' || number > (UINT64_MAX - 9) / 10) {
            return std::nullopt;
        }
        number = number * 10 + static_cast<std::uint64_t>(digit - '0');
    }
    return number;
}

/**
 * The whole records of a segment file, in order. Reading stops at the first record that is not
 * whole (its size past the file's end, or its bytes not hashing to its hash): the tail a crash
 * tore while it was being written.
 */
Result<std::vector<JournalEntry>> readSegment(const std::filesystem::path& path) {
    GL_ASSIGN_OR_RETURN(data, readFile(path));
    const ByteView view = asBytes(data);
    std::vector<JournalEntry> out;
    for (std::size_t at = 0; view.size() - at >= kRecordHeadBytes;) {
        const std::size_t size = readU32(view.subspan(at, 4));
        if (size == 0 || size > view.size() - at - kRecordHeadBytes) {
            break;
        }
        const ByteView raw = view.subspan(at + kRecordHeadBytes, size);
        GL_ASSIGN_OR_RETURN(hash, Hash256::fromBytes(view.subspan(at + 4, Hash256::kSize)));
        if (crypto::sha256(raw) != hash) {
            break;
        }
        out.push_back(JournalEntry{hash, Bytes(raw.begin(), raw.end())});
        at += kRecordHeadBytes + size;
    }
    return out;
}

Status writeAll(int fd, ByteView bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return fail(ErrorCode::kIo, "cannot write the admission journal: " + errnoText());
        }
        bytes = bytes.subspan(static_cast<std::size_t>(n));
    }
    return {};
}

}  // namespace

Result<std::unique_ptr<AdmissionJournal>> AdmissionJournal::open(const std::filesystem::path& dir) {
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error) {
        return fail(ErrorCode::kIo, "cannot create " + dir.string() + ": " + error.message());
    }
    if (std::filesystem::exists(dir / "CURRENT")) {
        return fail(ErrorCode::kCorrupt,
                    dir.string() +
                        " holds an admission journal in the older layout (a RocksDB database): "
                        "start the release that wrote it until its mempool is empty, or move the "
                        "directory away, which forgets what it acknowledged and no block carried");
    }
    std::vector<std::uint64_t> found;
    for (const auto& file : std::filesystem::directory_iterator(dir, error)) {
        const auto number = segmentNumber(file.path().filename().string());
        if (!number) {
            return fail(ErrorCode::kCorrupt,
                        "the admission journal holds a file that is not a segment: " +
                            file.path().string());
        }
        found.push_back(*number);
    }
    if (error) {
        return fail(ErrorCode::kIo, "cannot list " + dir.string() + ": " + error.message());
    }
    std::sort(found.begin(), found.end());
    std::unique_ptr<AdmissionJournal> journal(new AdmissionJournal(dir, std::move(found)));
    journal->writer_ = std::thread([raw = journal.get()] { raw->run(); });
    return journal;
}

AdmissionJournal::AdmissionJournal(std::filesystem::path dir, std::vector<std::uint64_t> replayed)
    : dir_(std::move(dir)),
      replayed_(std::move(replayed)),
      current_(replayed_.empty() ? 1 : replayed_.back() + 1) {}

AdmissionJournal::~AdmissionJournal() {
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_all();
    if (writer_.joinable()) {
        writer_.join();
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Result<std::vector<JournalEntry>> AdmissionJournal::entries() const {
    std::vector<JournalEntry> out;
    std::unordered_set<Hash256, DigestKey> seen;  // a record compacted by a crashed run is twice
    for (const std::uint64_t number : replayed_) {
        GL_ASSIGN_OR_RETURN(records, readSegment(pathOf(number)));
        for (JournalEntry& record : records) {
            if (seen.insert(record.hash).second) {
                out.push_back(std::move(record));
            }
        }
    }
    return out;
}

Status AdmissionJournal::retireReplayed() {
    GL_TRY(awaitDurable());
    for (const std::uint64_t number : replayed_) {
        std::error_code error;
        std::filesystem::remove(pathOf(number), error);
        if (error) {
            return fail(ErrorCode::kIo,
                        "cannot delete " + pathOf(number).string() + ": " + error.message());
        }
    }
    return {};
}

void AdmissionJournal::append(const Hash256& hash, ByteView raw, std::uint64_t validUntilHeight) {
    const std::lock_guard lock(mutex_);
    const auto [found, added] = held_.try_emplace(hash, Held{0, nextSeq_});
    if (added) {
        found->second.segment = placeLocked(hash, raw, validUntilHeight);
        ++nextSeq_;
    }
    // A transaction recorded already is durable when its first record is.
    tLastAppended = Ticket{this, found->second.seq};
}

std::uint64_t AdmissionJournal::placeLocked(const Hash256& hash, ByteView raw,
                                            std::uint64_t validUntilHeight) {
    const std::uint64_t bytes = kRecordHeadBytes + raw.size();
    if (currentBytes_ > 0 && currentBytes_ + bytes > kSegmentBytes) {
        ++current_;
        currentBytes_ = 0;
    }
    Segment& segment = segments_[current_];
    segment.hashes.push_back(hash);
    ++segment.held;
    segment.latestValidUntil = std::max(segment.latestValidUntil, validUntilHeight);
    if (pending_.empty() || pending_.back().segment != current_) {
        pending_.push_back(Chunk{current_, std::move(spare_)});
        spare_ = Bytes();
    }
    Bytes& records = pending_.back().records;
    appendU32(records, static_cast<std::uint32_t>(raw.size()));
    gridledger::append(records, hash.view());
    gridledger::append(records, raw);
    currentBytes_ += bytes;
    queued_.notify_one();
    return current_;
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
        forgetLocked(hash);
    }
    reviewSegmentsLocked(nextHeight);
}

void AdmissionJournal::forgetLocked(const Hash256& hash) {
    const auto found = held_.find(hash);
    if (found == held_.end()) {
        return;
    }
    if (const auto segment = segments_.find(found->second.segment); segment != segments_.end()) {
        --segment->second.held;
    }
    held_.erase(found);
}

void AdmissionJournal::reviewSegmentsLocked(std::uint64_t nextHeight) {
    for (auto it = segments_.begin(); it != segments_.end() && it->first < current_;) {
        Segment& segment = it->second;
        if (segment.held == 0 || segment.latestValidUntil < nextHeight) {
            for (const Hash256& hash : segment.hashes) {
                const auto found = held_.find(hash);
                if (found != held_.end() && found->second.segment == it->first) {
                    held_.erase(found);
                }
            }
            pendingDeletions_.push_back(it->first);
            it = segments_.erase(it);
            queued_.notify_one();
            continue;
        }
        if (!segment.compacting && it->first + 2 <= current_ &&
            segment.held * 4 < segment.hashes.size()) {
            segment.compacting = true;
            pendingCompactions_.push_back(it->first);
            queued_.notify_one();
        }
        ++it;
    }
}

bool AdmissionJournal::hasWorkLocked() const {
    return !pending_.empty() || !pendingDeletions_.empty() || !pendingCompactions_.empty();
}

std::filesystem::path AdmissionJournal::pathOf(std::uint64_t segment) const {
    std::string name = std::to_string(segment);
    name.insert(0, kNumberDigits - name.size(), '0');
    return dir_ / (name + std::string(kSegmentSuffix));
}

std::size_t AdmissionJournal::size() const {
    const std::lock_guard lock(mutex_);
    return held_.size();
}

std::uint64_t AdmissionJournal::syncs() const {
    const std::lock_guard lock(mutex_);
    return syncs_;
}

std::uint64_t AdmissionJournal::compactions() const {
    const std::lock_guard lock(mutex_);
    return compactions_;
}

// One turn writes everything queued while the previous turn was being synced, with one sync.
// Under load the turns grow, so the number of syncs stays bounded by how fast one sync is, not by
// the number of transactions. Deletions come after the turn's sync: a compacted segment goes only
// once the records moved out of it are durable.
void AdmissionJournal::run() {
    ::pthread_setname_np(::pthread_self(), "gl-journal");  // as top -H and perf show it
    std::unique_lock lock(mutex_);
    for (;;) {
        queued_.wait(lock, [&] { return stopping_ || hasWorkLocked(); });
        if (!hasWorkLocked()) {
            return;
        }
        Turn turn;
        turn.chunks.swap(pending_);
        turn.deletions.swap(pendingDeletions_);
        turn.compactions.swap(pendingCompactions_);
        const std::uint64_t upTo = nextSeq_ - 1;
        const bool failedBefore = !failure_;
        lock.unlock();

        Status written = failedBefore ? Status{} : write(turn.chunks);

        lock.lock();
        syncs_ += turn.chunks.empty() || failedBefore ? 0U : 1U;
        if (!written && failure_) {  // the first failure is the one reported
            failure_ = std::move(written);
        }
        durableSeq_ = std::max(durableSeq_, upTo);
        written_.notify_all();
        if (!turn.chunks.empty() && spare_.capacity() == 0) {
            spare_ = std::move(turn.chunks.back().records);
            spare_.clear();
        }
        const bool failed = !failure_;
        lock.unlock();

        // After a failure nothing is deleted: a compacted segment's records may be all that is
        // left of them.
        if (!failed) {
            for (const std::uint64_t number : turn.compactions) {
                compact(number);
            }
            for (const std::uint64_t number : turn.deletions) {
                std::error_code ignored;  // a segment left behind is read and refused at replay
                std::filesystem::remove(pathOf(number), ignored);
            }
        }
        lock.lock();
    }
}

Status AdmissionJournal::write(std::vector<Chunk>& chunks) {
    bool created = false;
    for (const Chunk& chunk : chunks) {
        if (fd_ < 0 || chunk.segment != fdSegment_) {
            if (fd_ >= 0) {
                const bool synced = ::fdatasync(fd_) == 0;
                ::close(fd_);
                fd_ = -1;
                if (!synced) {
                    return fail(ErrorCode::kIo,
                                "cannot sync the admission journal: " + errnoText());
                }
            }
            const std::string path = pathOf(chunk.segment).string();
            fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
            if (fd_ < 0) {
                return fail(ErrorCode::kIo, "cannot create " + path + ": " + errnoText());
            }
            fdSegment_ = chunk.segment;
            created = true;
        }
        GL_TRY(writeAll(fd_, chunk.records));
    }
    if (fd_ >= 0 && ::fdatasync(fd_) != 0) {
        return fail(ErrorCode::kIo, "cannot sync the admission journal: " + errnoText());
    }
    // A new segment's name is durable only once its directory is.
    return created ? syncDirectory(dir_) : Status{};
}

// The records read back are those written before the segment was left behind; a record held
// there moves to the current segment, and one committed meanwhile is not moved.
void AdmissionJournal::compact(std::uint64_t number) {
    std::uint64_t latestValidUntil = 0;
    {
        const std::lock_guard lock(mutex_);
        const auto segment = segments_.find(number);
        if (segment == segments_.end()) {
            return;  // deleted meanwhile
        }
        latestValidUntil = segment->second.latestValidUntil;
    }
    const auto records = readSegment(pathOf(number));
    const std::lock_guard lock(mutex_);
    const auto segment = segments_.find(number);
    if (!records || segment == segments_.end()) {
        return;  // unreadable: it stays until its records expire
    }
    for (const JournalEntry& record : *records) {
        const auto found = held_.find(record.hash);
        if (found != held_.end() && found->second.segment == number) {
            found->second.segment = placeLocked(record.hash, record.raw, latestValidUntil);
            --segment->second.held;
        }
    }
    if (segment->second.held == 0) {
        segments_.erase(segment);
        pendingDeletions_.push_back(number);
        ++compactions_;
        queued_.notify_one();
    }
}

}  // namespace gridledger::node
