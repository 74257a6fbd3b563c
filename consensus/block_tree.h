#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/consensus/effect.h>

namespace gridledger::consensus {

/**
 * The blocks this validator knows above the committed root, each reachable from the root by
 * parent links, and the QCs that certify them. Holds the highest QC. Pure bookkeeping: every
 * protocol decision is taken by the core.
 */
class BlockTree {
  public:
    /** A tree holding only `root`, certified by `rootQc` (which must name it). */
    BlockTree(BlockPtr root, const codec::QuorumCert& rootQc);

    /** The block `id`, or nullptr when it is not in the tree. */
    [[nodiscard]] BlockPtr find(const Hash256& id) const;
    [[nodiscard]] bool contains(const Hash256& id) const { return blocks_.contains(id); }
    [[nodiscard]] const codec::Block& root() const { return *root_; }
    [[nodiscard]] std::size_t size() const { return blocks_.size(); }

    /** Adds `block`; requires its parent in the tree and its id not yet in it. */
    void insert(BlockPtr block);

    /**
     * Stores `qc`, which requires its block in the tree; raises the highest QC when its round is
     * higher. Returns false when the block was already certified.
     */
    bool insertQc(const codec::QuorumCert& qc);

    /** The QC that certifies block `id`, or nullptr. */
    [[nodiscard]] const codec::QuorumCert* qcFor(const Hash256& id) const;
    [[nodiscard]] const codec::QuorumCert& highestQc() const { return highestQc_; }

    /** The blocks above the root up to and including `id`, in height order; requires `id`. */
    [[nodiscard]] std::vector<BlockPtr> pathFromRoot(const Hash256& id) const;

    /** Makes block `id` (in the tree) the root and drops every block not descending from it. */
    void commit(const Hash256& id);

    /** True iff a block above the root on the highest QC's chain carries transactions. */
    [[nodiscard]] bool hasUncommittedTxs() const;

    /** A block of `round` above the root (the lowest id if several), or nullptr. (The root may
     * be the seed block of an epoch, whose round counts in the previous epoch.) */
    [[nodiscard]] BlockPtr findByRound(std::uint64_t round) const;

    /** The highest round of a block above the root authored by `author` (0 if none). */
    [[nodiscard]] std::uint64_t highestRoundBy(const PubKey& author) const;

  private:
    std::map<Hash256, BlockPtr> blocks_;
    std::map<Hash256, codec::QuorumCert> qcs_;
    BlockPtr root_;
    codec::QuorumCert highestQc_;
};

}  // namespace gridledger::consensus
