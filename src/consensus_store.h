#pragma once

// Persistence of the consensus core's state in the node's database (the consensus column family):
// safety data, blocks and certificates above the committed root, the highest TC. A block's bytes
// go into the ledger's blocks column, where its commit finds them, so that a block is written once.

#include <atomic>
#include <optional>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/safety_rules.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::node {

/** What ConsensusStore::load read back. */
struct StoredConsensus {
    std::optional<consensus::SafetyData> safety;
    std::vector<codec::Block> blocks;
    std::vector<codec::QuorumCert> qcs;
    std::optional<codec::TimeoutCert> highestTc;
};

class ConsensusStore {
  public:
    /** `blocks` is the ledger's block store over the same `store`. */
    ConsensusStore(storage::KvStore& store, const ledger::BlockStore& blocks)
        : store_(store), blocks_(blocks) {}

    /** Persists safety data and fsyncs the WAL, which also makes every earlier write durable. */
    [[nodiscard]] Status saveSafety(const consensus::SafetyData& data);
    [[nodiscard]] Status saveBlock(const codec::Block& block);
    [[nodiscard]] Status saveQc(const codec::QuorumCert& qc);
    [[nodiscard]] Status saveTc(const codec::TimeoutCert& tc);

    /** The persisted safety data, nullopt when none was ever written; kCorrupt if unreadable. */
    [[nodiscard]] Result<std::optional<consensus::SafetyData>> loadSafety() const;
    /** Everything persisted; stored records that do not decode are reported as kCorrupt. */
    [[nodiscard]] Result<StoredConsensus> load() const;

    /**
     * A block by id: one held (above the pruned height), or one the ledger committed. Safe to
     * call from any thread, also during prune.
     */
    [[nodiscard]] Result<std::optional<codec::Block>> blockById(const Hash256& id) const;

    /**
     * Drops blocks at or below `height` and QCs below `round` (they are in the ledger now, which
     * must have executed up to `height`): the bytes of a block stay if the ledger committed it,
     * and go if it did not. Each call scans only the records above what earlier calls pruned, so
     * its cost does not grow with the chain.
     */
    [[nodiscard]] Status prune(std::uint64_t height, std::uint64_t round);

  private:
    /** The block of the record `key` ‖ `value` under kBlockPrefix; nullopt if pruned meanwhile. */
    [[nodiscard]] Result<std::optional<codec::Block>> readBlock(ByteView key, ByteView value) const;

    storage::KvStore& store_;
    const ledger::BlockStore& blocks_;
    /**
     * Every block below this height and QC below this round was pruned by this store. Only prune
     * writes them (on the consensus thread); blockById reads the height on the threads that serve
     * peers, where an older value only means a longer scan.
     */
    std::atomic<std::uint64_t> prunedHeight_ = 0;
    std::atomic<std::uint64_t> prunedRound_ = 0;
};

}  // namespace gridledger::node
