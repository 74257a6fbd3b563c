// RocksDB's CRC-32C, as the node links it (base/storage/link/rocksdb_crc32c.cpp), gives the
// standard check values and agrees with a bit-by-bit CRC-32C at every length, alignment and
// starting value, and when continued over a second buffer. With the static RocksDB, its calls go
// to GridLedger's function, which agrees with RocksDB's own on the same inputs. A record written
// through the log and replayed at the next open reads back, and a record whose bytes were changed
// in the log after it was written is not replayed.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/base/bytes.h>
#include <gridledger/storage/kv_store.h>
#ifdef GRIDLEDGER_ROCKSDB_CRC32C_LINKED
#include <gridledger/storage/rocksdb_crc32c.h>
#endif

#include "support/temp_dir.h"

namespace rocksdb::crc32c {
// Declared in RocksDB's util/crc32c.h, which Debian does not install; exported by its library,
// and named as RocksDB names it.
std::uint32_t Extend(std::uint32_t crc, const char* data,  // NOLINT(readability-identifier-naming)
                     std::size_t size);
}  // namespace rocksdb::crc32c

namespace gridledger::storage::rocksdb_crc32c_test {
namespace {

/** CRC-32C (reflected polynomial 0x82F63B78) one bit at a time, continued from `crc`. */
std::uint32_t bitwiseCrc32c(std::uint32_t crc, const char* data, std::size_t size) {
    std::uint32_t state = ~crc;
    for (std::size_t i = 0; i < size; ++i) {
        state ^= static_cast<std::uint8_t>(data[i]);
        for (int bit = 0; bit < 8; ++bit) {
            state = (state & 1U) != 0 ? (state >> 1U) ^ 0x82F63B78U : state >> 1U;
        }
    }
    return ~state;
}

/** `size` bytes drawn from `random`. */
std::vector<char> randomBuffer(std::size_t size, std::mt19937_64& random) {
    std::vector<char> buffer(size);
    for (char& byte : buffer) {
        byte = static_cast<char>(random());
    }
    return buffer;
}

std::uint32_t crcOf(std::string_view text) {
    return rocksdb::crc32c::Extend(0, text.data(), text.size());
}

TEST(RocksdbCrc32c, GivesTheStandardCheckValues) {
    EXPECT_EQ(crcOf("123456789"), 0xE3069283U);
    // RFC 3720, appendix B.4.
    EXPECT_EQ(crcOf(std::string(32, '\0')), 0x8A9136AAU);
    EXPECT_EQ(crcOf(std::string(32, '\xff')), 0x62A8AB43U);
    std::string ascending(32, '\0');
    for (std::size_t i = 0; i < ascending.size(); ++i) {
        ascending[i] = static_cast<char>(i);
    }
    EXPECT_EQ(crcOf(ascending), 0x46DD794EU);
    EXPECT_EQ(crcOf(""), 0U);
}

TEST(RocksdbCrc32c, AgreesWithABitwiseCrcAtEveryLengthAlignmentAndStart) {
    std::mt19937_64 random(7);
    const std::vector<char> buffer = randomBuffer(600, random);
    for (std::size_t offset = 0; offset < 8; ++offset) {
        for (std::size_t size = 0; size + offset <= buffer.size(); size += 1 + size / 16) {
            const auto start = static_cast<std::uint32_t>(random());
            const char* data = buffer.data() + offset;
            ASSERT_EQ(rocksdb::crc32c::Extend(start, data, size), bitwiseCrc32c(start, data, size))
                << "offset " << offset << ", size " << size << ", start " << start;
        }
    }
    // Continued over a second part, the CRC is the whole buffer's.
    for (std::size_t split = 0; split <= buffer.size(); split += 37) {
        const std::uint32_t head = rocksdb::crc32c::Extend(0, buffer.data(), split);
        EXPECT_EQ(rocksdb::crc32c::Extend(head, buffer.data() + split, buffer.size() - split),
                  bitwiseCrc32c(0, buffer.data(), buffer.size()))
            << "split at " << split;
    }
}

#ifdef GRIDLEDGER_ROCKSDB_CRC32C_LINKED
TEST(RocksdbCrc32c, RocksdbsCallsGoToTheNodesFunctionWhichAgreesWithRocksdbsOwn) {
    // The linker sends this file's calls where it sends those in RocksDB's archive.
    EXPECT_EQ(&rocksdb::crc32c::Extend, &gridledgerHardwareCrc32cExtend);
    EXPECT_NE(&rocksdb::crc32c::Extend, &gridledgerRocksdbCrc32cExtend);
    std::mt19937_64 random(11);
    const std::vector<char> buffer = randomBuffer(70'000, random);
    for (int i = 0; i < 2'000; ++i) {
        const std::size_t offset = random() % 64;
        const std::size_t size = random() % (i % 10 == 0 ? buffer.size() - offset : 300);
        const auto start = static_cast<std::uint32_t>(random());
        const char* data = buffer.data() + offset;
        ASSERT_EQ(gridledgerHardwareCrc32cExtend(start, data, size),
                  gridledgerRocksdbCrc32cExtend(start, data, size))
            << "offset " << offset << ", size " << size << ", start " << start;
    }
}
#endif

const std::vector<std::string> kColumns{"only"};

/** The path of the one non-empty write-ahead log file in `dir`. */
std::filesystem::path logFile(const std::filesystem::path& dir) {
    std::filesystem::path found;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() == ".log" && entry.file_size() > 0) {
            found = entry.path();
        }
    }
    return found;
}

TEST(RocksdbCrc32c, ALoggedRecordReplaysAtOpenAndOneChangedInTheLogDoesNot) {
    const Bytes value(5'000, 0x5a);
    gridledger::testing::TempDir written;
    auto store = KvStore::open(written.path(), kColumns);
    ASSERT_TRUE(store) << store.error().message;
    ASSERT_TRUE((*store)->put(0, asBytes("key"), value, true));
    const std::array<bool, 2> damaged{false, true};
    for (const bool damage : damaged) {
        // A copy of the open store's files is what a crash right after the write leaves: the
        // record is in the log alone.
        gridledger::testing::TempDir crashed;
        std::filesystem::copy(written.path(), crashed.path(),
                              std::filesystem::copy_options::recursive |
                                  std::filesystem::copy_options::overwrite_existing);
        const std::filesystem::path log = logFile(crashed.path());
        ASSERT_FALSE(log.empty()) << "no log in " << crashed.path();
        if (damage) {
            // A byte in the middle of the value, which only the record's checksum covers.
            std::fstream file(log, std::ios::in | std::ios::out | std::ios::binary);
            file.seekp(static_cast<std::streamoff>(std::filesystem::file_size(log) / 2));
            file.put('\x5b');
        }
        auto replayed = KvStore::open(crashed.path(), kColumns);
        ASSERT_TRUE(replayed) << replayed.error().message;
        const auto read = (*replayed)->get(0, asBytes("key"));
        ASSERT_TRUE(read) << read.error().message;
        if (damage) {
            EXPECT_FALSE(read->has_value()) << "a record with a changed byte was replayed";
        } else {
            ASSERT_TRUE(read->has_value()) << "the logged record was not replayed";
            EXPECT_EQ(**read, value);
        }
    }
}

}  // namespace
}  // namespace gridledger::storage::rocksdb_crc32c_test
