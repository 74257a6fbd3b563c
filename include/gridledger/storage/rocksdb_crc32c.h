#pragma once

// RocksDB's CRC-32C as the node links it on x86-64 with RocksDB's static archive
// (base/storage/link/rocksdb_crc32c.cpp, docs/architecture.md "RocksDB's checksums"). The two
// functions have global names fixed by the linker's `--wrap` of `rocksdb::crc32c::Extend`; only a
// program linked with the `gridledger_rocksdb_crc32c` target can use them.

#include <cstddef>
#include <cstdint>

/** RocksDB's own CRC-32C extension: `crc`, continued over `size` bytes at `data`. */
std::uint32_t gridledgerRocksdbCrc32cExtend(
    std::uint32_t crc, const char* data,
    std::size_t size) asm("__real__ZN7rocksdb6crc32c6ExtendEjPKcm");

/**
 * What RocksDB's calls reach instead: the same function, on the crc32 instruction where the CPU
 * has it, and RocksDB's own where it does not.
 */
std::uint32_t gridledgerHardwareCrc32cExtend(
    std::uint32_t crc, const char* data,
    std::size_t size) asm("__wrap__ZN7rocksdb6crc32c6ExtendEjPKcm");
