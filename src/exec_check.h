#pragma once

// Checks that keep a node honest with itself: the roots a certified block carries against the
// node's own execution, and the persistence a message depends on before it leaves.

#include <cstdint>
#include <optional>

#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::node {

/**
 * Checks the execution roots that a certified block carries: `local` must be this node's own
 * roots at the block's exec height (nullopt when it holds none there), and equal the block's
 * exec state and results roots. Fails with kDiverged naming the block's height, the exec height
 * and both pairs of roots: the node's state is not the one a quorum certified.
 */
[[nodiscard]] Status checkCertifiedRoots(const codec::BlockHeader& header,
                                         const std::optional<ledger::ExecRoots>& local);

/**
 * Makes the consensus store's writes durable before a message that depends on them leaves the
 * process (docs/protocol.md §8): a block the leader proposes, a QC or a TC written without an
 * fsync of their own are synced together, once, before the next broadcast or vote.
 */
class SendBarrier {
  public:
    explicit SendBarrier(storage::KvStore& store) : store_(store) {}

    /**
     * Records a write to the store; `synced` when it fsynced the WAL itself, which makes every
     * earlier write durable too.
     */
    void wrote(bool synced) { pending_ = !synced; }
    /** Before a message leaves: fsyncs the WAL when a write since the last fsync was not. */
    [[nodiscard]] Status beforeSend();
    /** True while a write awaits its fsync. */
    [[nodiscard]] bool pending() const { return pending_; }

  private:
    storage::KvStore& store_;
    bool pending_ = false;
};

}  // namespace gridledger::node
