// The memtables of a hashed column (KvOptions::hashedColumns).
#pragma once

#include <cstddef>
#include <memory>

#include <rocksdb/memtablerep.h>

namespace gridledger::storage {

/**
 * Memtables that find a key through a hash of its prefix (the column's prefix extractor) to one of
 * `buckets` buckets, each a list sorted by key, and that walk their entries in key order from a
 * list of them kept on the side and sorted once, by the first eight bytes of each key and then by
 * the column's comparator, which must order keys bytewise (as every GridLedger column does).
 *
 * RocksDB's own hash memtables insert every entry into a new skip list each time they are walked
 * in order: for a flush, a whole memtable of random keys, which cost the flush thread three times
 * what writing the table did. Built with RocksDB's assertions on, as Debian's is, they also search
 * a bucket for each key before inserting it.
 */
[[nodiscard]] std::shared_ptr<rocksdb::MemTableRepFactory> hashedMemtables(std::size_t buckets);

}  // namespace gridledger::storage
