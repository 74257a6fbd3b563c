// The admission journal: what a thread appended and awaited is on disk even when the process is
// killed at once after; concurrent admissions share syncs; committed, expired and dropped records
// go, and what stays comes back in admission order after a reopen; records that go in admission
// order cost a range deletion per prune, and only those dropped past a held one a deletion each.

#include "admission_journal.h"

#include <csignal>
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

Tx txNumber(std::uint64_t n) {
    Bytes raw{0x0a};
    appendU64(raw, n);
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
    std::vector<std::uint64_t> expected(kTxs);
    for (std::uint64_t n = 0; n < kTxs; ++n) {
        expected[n] = n;
    }
    EXPECT_EQ(numbersIn(**journal), expected);
    EXPECT_EQ((*journal)->size(), kTxs);
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
    EXPECT_EQ(numbersIn(**journal).size(), kThreads * kPerThread);
    // Every admission waited for its own record, yet one sync served several of them.
    EXPECT_LT((*journal)->syncs(), kThreads * kPerThread);
    EXPECT_GT((*journal)->syncs(), 0U);
}

TEST(AdmissionJournal, CommittedExpiredAndDroppedRecordsGoTheRestComesBackInOrder) {
    const gridledger::testing::TempDir dir;
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        for (std::uint64_t n = 0; n < 10; ++n) {
            const Tx tx = txNumber(n);
            (*journal)->append(tx.hash, tx.raw, n < 5 ? 20 : 50);  // 0..4 expire first
        }
        const Tx again = txNumber(7);
        (*journal)->append(again.hash, again.raw, 50);  // recorded once
        ASSERT_TRUE((*journal)->awaitDurable());
        EXPECT_EQ((*journal)->size(), 10U);

        const std::vector<Hash256> committed{txNumber(6).hash, txNumber(1).hash};
        (*journal)->prune(committed, 20);  // nothing below 20 yet
        EXPECT_EQ((*journal)->size(), 10U - 2U);
        (*journal)->prune({}, 21);  // 0, 2, 3, 4 expired (1 went with its block)
        (*journal)->drop(txNumber(9).hash);
        (*journal)->drop(txNumber(9).hash);  // dropping twice is harmless
        EXPECT_EQ((*journal)->size(), 3U);
    }
    auto reopened = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(reopened) << reopened.error().message;
    EXPECT_EQ(numbersIn(**reopened), (std::vector<std::uint64_t>{5, 7, 8}));
    // New records follow the old ones.
    const Tx later = txNumber(42);
    (*reopened)->append(later.hash, later.raw, 60);
    ASSERT_TRUE((*reopened)->awaitDurable());
    EXPECT_EQ(numbersIn(**reopened), (std::vector<std::uint64_t>{5, 7, 8, 42}));
}

/** Appends the transactions numbered 0 .. count - 1 and waits until they are durable. */
void appendNumbers(AdmissionJournal& journal, std::uint64_t count) {
    for (std::uint64_t n = 0; n < count; ++n) {
        const Tx tx = txNumber(n);
        journal.append(tx.hash, tx.raw, 1'000);
    }
    ASSERT_TRUE(journal.awaitDurable());
}

/** The hashes of the transactions numbered from .. to - 1. */
std::vector<Hash256> hashesOf(std::uint64_t from, std::uint64_t to) {
    std::vector<Hash256> out;
    for (std::uint64_t n = from; n < to; ++n) {
        out.push_back(txNumber(n).hash);
    }
    return out;
}

/** Appends one more record and waits for it: whatever was queued before it is written by then. */
void settle(AdmissionJournal& journal, std::uint64_t marker) {
    const Tx tx = txNumber(marker);
    journal.append(tx.hash, tx.raw, 1'000);
    ASSERT_TRUE(journal.awaitDurable());
}

void expectDeletions(const AdmissionJournal& journal, std::uint64_t single, std::uint64_t ranges) {
    EXPECT_EQ(journal.pointDeletions(), single);
    EXPECT_EQ(journal.rangeDeletions(), ranges);
}

TEST(AdmissionJournal, RecordsCommittedInAdmissionOrderGoWithOneRangeDeletionEach) {
    const gridledger::testing::TempDir dir;
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        appendNumbers(**journal, 100);
        for (std::uint64_t block = 0; block < 10; ++block) {
            (*journal)->prune(hashesOf(block * 10, block * 10 + 10), 1);
            settle(**journal, 1'000 + block);
        }
        expectDeletions(**journal, 0, 10);
        EXPECT_EQ((*journal)->size(), 10U);  // the ten markers
    }
    auto reopened = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(reopened) << reopened.error().message;
    std::vector<std::uint64_t> markers;
    for (std::uint64_t block = 0; block < 10; ++block) {
        markers.push_back(1'000 + block);
    }
    EXPECT_EQ(numbersIn(**reopened), markers);
}

TEST(AdmissionJournal, ARecordHeldBackKeepsItsOwnAndTheLaterOnesAreDeletedOneByOne) {
    const gridledger::testing::TempDir dir;
    {
        auto journal = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(journal) << journal.error().message;
        appendNumbers(**journal, 10);
        (*journal)->prune(hashesOf(1, 10), 1);  // all but the first
        settle(**journal, 100);
        expectDeletions(**journal, 9, 0);
    }
    {
        auto reopened = AdmissionJournal::open(dir.path());
        ASSERT_TRUE(reopened) << reopened.error().message;
        EXPECT_EQ(numbersIn(**reopened), (std::vector<std::uint64_t>{0, 100}));
        (*reopened)->prune(hashesOf(0, 1), 1);  // the oldest goes: one range deletion covers it
        settle(**reopened, 101);
        expectDeletions(**reopened, 0, 1);
    }
    auto again = AdmissionJournal::open(dir.path());
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(numbersIn(**again), (std::vector<std::uint64_t>{100, 101}));
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
