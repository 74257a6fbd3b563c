// The admission journal: what a thread appended and awaited is on disk even when the process is
// killed at once after; concurrent admissions share syncs; a reopened journal gives its records
// back in admission order, each once, and stops at a torn record; the segments found at open go
// once what was taken back is durable again; segments whose records were committed or expired are
// deleted, and one that a few held records pin is compacted into the current segment.

#include "admission_journal.h"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gridledger/crypto/sha256.h>

#include "support/temp_dir.h"

namespace gridledger::node::admission_journal_test {
namespace {

/** A stand-in transaction: its bytes, and their hash as the journal's key. */
struct Tx {
    Bytes raw;
    Hash256 hash;
};

/** Transaction number `n`, padded to `size` bytes. */
Tx txNumber(std::uint64_t n, std::size_t size = 9) {
    Bytes raw{0x0a};
    appendU64(raw, n);
    raw.resize(std::max(size, raw.size()), 0x5a);
    return Tx{raw, crypto::sha256(raw)};
}

std::vector<std::uint64_t> numbersIn(const AdmissionJournal& journal) {
    auto entries = journal.entries();
    EXPECT_TRUE(entries) << entries.error().message;
    std::vector<std::uint64_t> out;
    for (const JournalEntry& entry : *entries) {
        EXPECT_EQ(entry.hash, crypto::sha256(entry.raw));
        out.push_back(readU64(ByteView(entry.raw).subspan(1)));
    }
    return out;
}

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t n = from; n < to; ++n) {
        out.push_back(n);
    }
    return out;
}

/** Appends transactions numbered [from, to) of `size` bytes and waits until they are durable. */
void appendNumbers(AdmissionJournal& journal, std::uint64_t from, std::uint64_t to,
                   std::uint64_t validUntil = 1'000, std::size_t size = 9) {
    for (std::uint64_t n = from; n < to; ++n) {
        const Tx tx = txNumber(n, size);
        journal.append(tx.hash, tx.raw, validUntil);
    }
    ASSERT_TRUE(journal.awaitDurable());
}

/** The hashes of the transactions numbered [from, to) of `size` bytes. */
std::vector<Hash256> hashesOf(std::uint64_t from, std::uint64_t to, std::size_t size = 9) {
    std::vector<Hash256> out;
    for (std::uint64_t n = from; n < to; ++n) {
        out.push_back(txNumber(n, size).hash);
    }
    return out;
}

/**
 * Appends three markers one after the other, each waited for. The writer finishes a turn's
 * compactions and deletions before it starts the next turn, and a compaction's records and its
 * deletion go in the turn after it: by the third marker, all that was queued before is done.
 */
void settle(AdmissionJournal& journal, std::uint64_t firstMarker) {
    for (std::uint64_t marker = firstMarker; marker < firstMarker + 3; ++marker) {
        const Tx tx = txNumber(marker);
        journal.append(tx.hash, tx.raw, 1'000'000);
        ASSERT_TRUE(journal.awaitDurable());
    }
}

std::size_t filesIn(const std::filesystem::path& dir) {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir),
                                                  std::filesystem::directory_iterator()));
}

/** The one segment file in `dir`. */
std::filesystem::path onlySegmentIn(const std::filesystem::path& dir) {
    EXPECT_EQ(filesIn(dir), 1U);
    return std::filesystem::directory_iterator(dir)->path();
}

TEST(AdmissionJournal, WhatWasAwaitedSurvivesAProcessKilledRightAfter) {
    const gridledger::testing::TempDir dir;
    constexpr std::uint64_t kTxs = 50;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto journal = AdmissionJournal::open(dir.path());
        if (!journal) {
            ::_exit(2);
        }
        for (std::uint64_t n = 0; n < kTxs; ++n) {
            const Tx tx = txNumber(n);
            (*journal)->append(tx.hash, tx.raw, 100 + n);
        }
        if (!(*journal)->awaitDurable()) {
            ::_exit(3);
        }
        ::kill(::getpid(), SIGKILL);  // no destructor, no final flush
        ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

    auto journal = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(journal) << journal.error().message;
    EXPECT_EQ(numbersIn(**journal), range(0, kTxs));
}

TEST(AdmissionJournal, ConcurrentAdmissionsShareSyncs) {
    const gridledger::testing::TempDir dir;
    auto journal = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(journal) << journal.error().message;
    constexpr std::uint64_t kThreads = 8;
    constexpr std::uint64_t kPerThread = 100;
    std::vector<std::thread> threads;
    for (std::uint64_t t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (std::uint64_t i = 0; i < kPerThread; ++i) {
                const Tx tx = txNumber(t * kPerThread + i);
                (*journal)->append(tx.hash, tx.raw, 1'000);
                EXPECT_TRUE((*journal)->awaitDurable());
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ((*journal)->size(), kThreads * kPerThread);
    // Every admission waited for its own record, yet one sync served several of them.
    EXPECT_LT((*journal)->syncs(), kThreads * kPerThread);
    EXPECT_GT((*journal)->syncs(), 0U);
}

TEST(AdmissionJournal, AReopenedJournalGivesItsRecordsBackAndRetiresThemOnceTakenAgain) {
    const gridledger::testing::TempDir dir;
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        appendNumbers(**journal, 0, 10);
        const Tx again = txNumber(7);
        (*journal)->append(again.hash, again.raw, 1'000);  // recorded once
        ASSERT_TRUE((*journal)->awaitDurable());
        EXPECT_EQ((*journal)->size(), 10U);
        (*journal)->prune(hashesOf(2, 4), 1);
        EXPECT_EQ((*journal)->size(), 8U);
    }
    {
        // A prune writes nothing: committed records come back, and the mempool refuses them.
        auto reopened = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(reopened) << reopened.error().message;
        EXPECT_EQ(numbersIn(**reopened), range(0, 10));
        EXPECT_EQ((*reopened)->size(), 0U);
        // The node takes back the even ones and journals them again; then the old segment goes.
        for (std::uint64_t n = 0; n < 10; n += 2) {
            const Tx tx = txNumber(n);
            (*reopened)->append(tx.hash, tx.raw, 1'000);
        }
        ASSERT_TRUE((*reopened)->retireReplayed());
        const Tx later = txNumber(42);
        (*reopened)->append(later.hash, later.raw, 1'000);
        ASSERT_TRUE((*reopened)->awaitDurable());
        EXPECT_EQ(filesIn(dir.path()), 1U);
    }
    auto again = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(numbersIn(**again), (std::vector<std::uint64_t>{0, 2, 4, 6, 8, 42}));
}

TEST(AdmissionJournal, ReadingStopsAtATornRecordAndATransactionIsGivenOnce) {
    const gridledger::testing::TempDir dir;
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        appendNumbers(**journal, 0, 5);
    }
    const auto segment = onlySegmentIn(dir.path());
    const auto whole = std::filesystem::file_size(segment);
    const std::uint64_t recordBytes = whole / 5;
    // A copy of the segment under a later number: what a crash between a compaction's write and
    // its deletion leaves. Its records are given once.
    std::filesystem::copy_file(segment, dir.path() / "00000000000000000009.seg");
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        EXPECT_EQ(numbersIn(**journal), range(0, 5));
    }
    std::filesystem::remove(dir.path() / "00000000000000000009.seg");

    // The last record cut short: the four before it read.
    std::filesystem::resize_file(segment, whole - 3);
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        EXPECT_EQ(numbersIn(**journal), range(0, 4));
    }
    // A byte of the third record changed: it and what follows it are not read.
    {
        std::fstream file(segment, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(static_cast<std::streamoff>(2 * recordBytes + recordBytes - 1));
        file.put('\x7f');
    }
    auto journal = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(journal) << journal.error().message;
    EXPECT_EQ(numbersIn(**journal), range(0, 2));
}

// Records of 64 KiB: a segment holds 63 of them (4 MiB with the records' heads).
constexpr std::size_t kBig = std::size_t{64} << 10U;
constexpr std::uint64_t kPerSegment = AdmissionJournal::kSegmentBytes / (kBig + 36);

TEST(AdmissionJournal, SegmentsWhoseRecordsWereCommittedOrExpiredAreDeleted) {
    const gridledger::testing::TempDir dir;
    auto journal = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(journal) << journal.error().message;
    appendNumbers(**journal, 0, kPerSegment, 500, kBig);                      // segment 1
    appendNumbers(**journal, kPerSegment, 2 * kPerSegment, 1'000, kBig);      // segment 2
    appendNumbers(**journal, 2 * kPerSegment, 3 * kPerSegment, 1'000, kBig);  // segment 3
    ASSERT_EQ(filesIn(dir.path()), 3U);

    // All but one of segment 2's records committed: it stays. All of segment 1's expired: it goes.
    (*journal)->prune(hashesOf(kPerSegment + 1, 2 * kPerSegment, kBig), 501);
    settle(**journal, 1'000'000);
    EXPECT_EQ(filesIn(dir.path()), 2U);
    EXPECT_EQ((*journal)->size(), kPerSegment + 1 + 3);

    // Its last one committed: segment 2 goes too. The current segment stays.
    (*journal)->prune(hashesOf(kPerSegment, kPerSegment + 1, kBig), 501);
    settle(**journal, 1'000'010);
    EXPECT_EQ(filesIn(dir.path()), 1U);
    EXPECT_EQ((*journal)->compactions(), 0U);
}

TEST(AdmissionJournal, ASegmentThatAFewRecordsPinIsCompactedIntoTheCurrentOne) {
    const gridledger::testing::TempDir dir;
    constexpr std::uint64_t kSegments = 4;
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        for (std::uint64_t segment = 0; segment < kSegments; ++segment) {
            appendNumbers(**journal, segment * kPerSegment, (segment + 1) * kPerSegment, 1'000,
                          kBig);
        }
        ASSERT_EQ(filesIn(dir.path()), kSegments);
        // Segment 1 keeps records 5 and 6; segment 2 keeps its last 16 of 63, not under a quarter.
        std::vector<Hash256> committed = hashesOf(0, 5, kBig);
        for (const Hash256& hash : hashesOf(7, 2 * kPerSegment - 16, kBig)) {
            committed.push_back(hash);
        }
        (*journal)->prune(committed, 1);
        settle(**journal, 1'000'000);
        // Segment 1 went into a fifth segment, which the markers opened; segment 2 stays.
        EXPECT_EQ((*journal)->compactions(), 1U);
        EXPECT_EQ(filesIn(dir.path()), kSegments);
        EXPECT_FALSE(std::filesystem::exists(dir.path() / "00000000000000000001.seg"));
        EXPECT_EQ((*journal)->size(), 16 + 2 * kPerSegment + 2 + 3);
    }
    auto reopened = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(reopened) << reopened.error().message;
    std::vector<std::uint64_t> numbers = numbersIn(**reopened);
    // Segments 2 to 4 as written (a prune writes nothing), then the fifth: the markers, with the
    // two compacted records among them as the writer's turns fell.
    const std::vector<std::uint64_t> kept = range(kPerSegment, kSegments * kPerSegment);
    ASSERT_EQ(numbers.size(), kept.size() + 5);
    EXPECT_TRUE(std::equal(kept.begin(), kept.end(), numbers.begin()));
    std::sort(numbers.begin() + static_cast<std::ptrdiff_t>(kept.size()), numbers.end());
    EXPECT_EQ(std::vector<std::uint64_t>(numbers.begin() + static_cast<std::ptrdiff_t>(kept.size()),
                                         numbers.end()),
              (std::vector<std::uint64_t>{5, 6, 1'000'000, 1'000'001, 1'000'002}));
}

TEST(AdmissionJournal, AJournalOfTheOlderLayoutOrAStrangeFileIsRefused) {
    const gridledger::testing::TempDir dir;
    std::ofstream(dir.path() / "CURRENT") << "MANIFEST-000001\n";
    auto older = AdmissionJournal::open(dir.path());
    ASSERT_FALSE(older);
    EXPECT_EQ(older.error().code, ErrorCode::kCorrupt);
    EXPECT_NE(older.error().message.find("older layout"), std::string::npos);

    std::filesystem::rename(dir.path() / "CURRENT", dir.path() / "notes.txt");
    auto strange = AdmissionJournal::open(dir.path());
    ASSERT_FALSE(strange);
    EXPECT_NE(strange.error().message.find("notes.txt"), std::string::npos);
}

TEST(AdmissionJournal, AThreadThatAppendedNothingDoesNotWait) {
    const gridledger::testing::TempDir dir;
    auto journal = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(journal) << journal.error().message;
    EXPECT_TRUE((*journal)->awaitDurable());
    EXPECT_EQ((*journal)->syncs(), 0U);
}

}  // namespace
}  // namespace gridledger::node::admission_journal_test
