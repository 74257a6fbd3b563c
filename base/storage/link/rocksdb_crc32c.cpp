// RocksDB's CRC-32C computed with the CPU's crc32 instruction.
//
// RocksDB checksums every record of its write-ahead log, and of its manifest, with CRC-32C
// (`rocksdb::crc32c::Extend`). Debian's RocksDB 7.8 is built without SSE4.2, so its Extend reads
// every byte through lookup tables: 7 % of the executor bench's block, whose one write batch puts
// about 850 KB through the log (docs/benchmarks.md). The storage library links each program with
// `--wrap` for that function (base/storage/CMakeLists.txt): RocksDB's calls to it come here, and
// RocksDB's own stays reachable as the linker's `__real_` name, for a CPU without SSE4.2.
//
// This file is compiled into each program that links the storage library, as the allocator's
// settings are, and into no library (base/storage/CMakeLists.txt): a definition in a library's
// archive would be left out of a program, since the calls that need it are found only in
// RocksDB's archive, which the linker reads after it, and one in a library's unity-built object
// would be defined twice.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <nmmintrin.h>

#include <gridledger/storage/rocksdb_crc32c.h>

namespace {

/**
 * CRC-32C of `size` bytes continued from `crc`, with RocksDB's convention: `crc` and the result
 * are the finished (inverted) values, so Extend(Extend(0, a), b) is the CRC of a ‖ b.
 */
__attribute__((target("sse4.2"))) std::uint32_t crc32cOnInstruction(std::uint32_t crc,
                                                                    const char* data,
                                                                    std::size_t size) {
    std::uint64_t state = ~crc;
    for (; size >= sizeof(std::uint64_t); size -= sizeof(std::uint64_t)) {
        std::uint64_t word = 0;
        std::memcpy(&word, data, sizeof word);  // little-endian, as the instruction reads memory
        state = _mm_crc32_u64(state, word);
        data += sizeof word;
    }
    auto narrow = static_cast<std::uint32_t>(state);
    for (; size > 0; --size) {
        narrow = _mm_crc32_u8(narrow, static_cast<std::uint8_t>(*data++));
    }
    return ~narrow;
}

}  // namespace

std::uint32_t gridledgerHardwareCrc32cExtend(std::uint32_t crc, const char* data,
                                             std::size_t size) {
    static const bool hasInstruction = __builtin_cpu_supports("sse4.2") != 0;
    return hasInstruction ? crc32cOnInstruction(crc, data, size)
                          : gridledgerRocksdbCrc32cExtend(crc, data, size);
}
