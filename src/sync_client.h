#pragma once

// Block sync, the asking side (docs/p2p.md §11): when a block far above this node's ledger or a
// verified epoch proof shows that it is behind, one sync at a time, with one peer at a time. It
// asks for the committed blocks above this node's executed height, checks every answer against
// its own head and committee, executes verified blocks (never past the block that ends an
// epoch), and moves to the next connected peer after a silent or failed one. It owns its state;
// the node (and the simulator, over its own ledgers and signatures) gives it the ledger, the
// peers, time and execution through SyncHost. Consensus runs on meanwhile: only verified blocks
// change the ledger.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/p2p/network.h>

#include "block_sync.h"

namespace gridledger::node {

/** What block sync needs from the node, all on its consensus thread. */
class SyncHost {
  public:
    virtual ~SyncHost() = default;

    /** Monotonic time, for timers and logs only (never for a consensus decision). */
    [[nodiscard]] virtual std::chrono::milliseconds now() const = 0;
    [[nodiscard]] virtual std::uint64_t executedHeight() const = 0;
    /** The committed block at `height`, nullopt when the ledger holds none. */
    [[nodiscard]] virtual Result<std::optional<codec::Block>> blockAt(
        std::uint64_t height) const = 0;
    /** The committee of the epoch the ledger is in. */
    [[nodiscard]] virtual std::shared_ptr<const consensus::Committee> committee() const = 0;
    /** Sends to a connected peer; false when it is not connected. */
    [[nodiscard]] virtual bool send(const NodeId& peer, p2p::Message message) = 0;
    /** The connected peers, in node id order. */
    [[nodiscard]] virtual std::vector<NodeId> connectedPeers() const = 0;
    /** Calls SyncClient::expired(seq, reason) after `delay`, from the consensus thread. */
    virtual void expireAfter(std::uint64_t seq, std::chrono::milliseconds delay,
                             std::string reason) = 0;
    /**
     * The blocks of an answer that verified, before any of them executes: the node starts the
     * checks of their transactions' signatures here, block after block on the verify pool's
     * workers, so that they run while the blocks before them execute, rather than one by one
     * on its consensus thread as each block executes. Changes no state.
     */
    virtual void prepare(std::span<const codec::Block> blocks) = 0;
    /** Executes a verified committed block; true when its execution ended the epoch. */
    [[nodiscard]] virtual Result<bool> execute(const codec::Block& block,
                                               const codec::QuorumCert& certifying) = 0;
    /**
     * Stores the commit proofs of a batch, which ends it: everything execute() wrote for the
     * batch is durable when this returns.
     */
    [[nodiscard]] virtual Status storeCommitProofs(const std::vector<HeightProof>& proofs) = 0;
    /** `count` verified blocks reached the ledger. */
    virtual void synced(std::size_t count) = 0;
    /** A peer's answer (kSyncResponse) or epoch proof (kEpochProof) did not verify. */
    virtual void refused(const NodeId& peer, codec::MessageKind kind, const Error& error) = 0;
    /** Executing or storing failed: the node stops (or halts on a divergence). */
    virtual void failed(const Error& error) = 0;
    /** A sync that brought verified blocks ended: the core restarts from the synced head. */
    virtual void caughtUp() = 0;
};

/** How block sync asks. */
struct SyncLimits {
    /** Blocks asked for in one request (config sync_batch_blocks). */
    std::uint32_t batchBlocks = 0;
    /** How long an answer may take before the next peer is asked. */
    std::chrono::milliseconds answerTimeout{10'000};
    /** Peers tried in a row without progress before the sync ends. */
    std::size_t maxFailures = 3;
    /** A block more than this many heights above the highest block the node holds certified
     * starts a sync instead of reaching the core (config sync_lag_blocks). */
    std::uint64_t lagBlocks = 32;
    /** Least time between two requests for an epoch proof. */
    std::chrono::milliseconds epochProofInterval{1'000};
    /**
     * Blocks asked for in a sync's first request (at most batchBlocks); each answer that
     * verifies doubles it, up to batchBlocks. A short first answer comes soon, and the blocks
     * it brings execute while the next, larger one is read and sent.
     */
    std::uint32_t firstBatchBlocks = 16;
};

/** The asking side of block sync (see the top of this file). */
class SyncClient {
  public:
    /** `check` verifies the signatures of answers and proofs (BIP-340 outside the simulator). */
    SyncClient(SyncHost& host, std::string chainId, SyncLimits limits,
               std::shared_ptr<spdlog::logger> log,
               consensus::SignatureCheck check = consensus::bip340Check());

    /** The request for the committed blocks above this node's executed height. */
    [[nodiscard]] p2p::Message requestMessage() const;
    /** True while a sync runs (asked, or verified blocks are arriving). */
    [[nodiscard]] bool active() const { return state_.has_value(); }
    /** True from the first verified answer to the end of the sync. Thread-safe. */
    [[nodiscard]] bool syncing() const { return syncing_.load(std::memory_order_relaxed); }
    /** True iff a sync runs with `peer` as its peer. */
    [[nodiscard]] bool isPeer(const NodeId& peer) const;

    /** True when a block at `height` is too far above `certified`, the height of the highest
     * block the core holds certified (its highest QC's): the node offers it to sync instead. */
    [[nodiscard]] bool farAhead(std::uint64_t height, std::uint64_t certified) const;
    /** A checked proposal or fetched block from `peer` at `height`, far above `certified`: only
     * the sender's word, so a reason to ask it (when no sync runs), never a fact. */
    void offer(const NodeId& peer, std::uint64_t height, std::uint64_t certified);
    /** A consensus message of a later epoch came from `peer`: asks it for the proof that ended
     * this node's epoch, at most once per epochProofInterval and peer, while no sync runs. */
    void onLaterEpoch(const NodeId& peer);
    /** An epoch proof from `from`: verified against this node's committee, a proof of a block
     * above this ledger starts a sync from `from`. */
    void onEpochProof(const NodeId& from, const codec::EpochProof& proof);
    /** Starts a sync by asking `peer`. Requires !active(). */
    void start(const NodeId& peer);
    /** The answer of the sync peer. Requires isPeer(from). */
    void onResponse(const NodeId& from, codec::SyncResponse response);
    /** The timer of request `seq` expired, or its request could not leave. */
    void expired(std::uint64_t seq, const std::string& reason);
    /** Ends the sync now without a word to the host (the node halted). */
    void abandon();

  private:
    struct State {
        NodeId peer;
        std::uint64_t startHeight = 0;
        std::chrono::milliseconds started{0};
        std::uint64_t requestSeq = 0;
        std::size_t failures = 0;
        /** Set by the first answer whose blocks verified: from then on the node is syncing. */
        bool confirmed = false;
        /** Blocks the next request asks for. */
        std::uint32_t batchBlocks = 0;
    };

    [[nodiscard]] p2p::Message requestFrom(std::uint64_t fromHeight,
                                           std::uint32_t batchBlocks) const;
    /** Asks the sync peer for the committed blocks from `fromHeight` on. */
    void request(std::uint64_t fromHeight);
    void apply(const NodeId& from, codec::SyncResponse response);
    /** The current peer failed: ask the next one, or end after too many failures. */
    void nextPeer(const std::string& reason);
    void finish();

    SyncHost& host_;
    std::string chainId_;
    SyncLimits limits_;
    std::shared_ptr<spdlog::logger> log_;
    consensus::SignatureCheck check_;
    std::optional<State> state_;
    /** When each peer was last asked for an epoch proof. */
    std::map<NodeId, std::chrono::milliseconds> lastEpochProofAsk_;
    std::atomic<bool> syncing_{false};
};

}  // namespace gridledger::node
