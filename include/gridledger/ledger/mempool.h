#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/tx.h>
#include <gridledger/ledger/tx_validation.h>
#include <gridledger/ledger/verify_pool.h>

namespace gridledger::ledger {

/**
 * Gives an account's committed next nonce: the number of its committed transactions (0 for an
 * unknown account). Called without any mempool lock held, from the threads that call
 * Mempool::submit and Mempool::onCommitted; must be thread-safe.
 */
using NonceReader = std::function<Result<std::uint64_t>(const Address&)>;

/** Configuration of a Mempool. */
struct MempoolOptions {
    std::string chainId;
    /** Most transactions held at once. */
    std::size_t maxTxs = 50'000;
    /** Most encoded bytes held at once (sum of raw transaction sizes). */
    std::size_t maxBytes = 64 * 1024 * 1024;
    /** Largest accepted encoded transaction; capped at codec::kMaxTxBytes. */
    std::size_t maxTxBytes = codec::kMaxTxBytes;
    /** A sender's pending nonces must lie in [committed next nonce, + nonceWindow). */
    std::uint64_t nonceWindow = kDefaultNonceWindow;
    /** validUntilHeight may be at most this many blocks beyond the next height. */
    std::uint64_t maxValidityBlocks = kDefaultMaxValidityBlocks;
    /** Height of the last committed block when the mempool starts (0: only genesis). */
    std::uint64_t committedHeight = 0;
    /** Signature verification threads; 0 means one per hardware thread. */
    std::size_t verifierThreads = 0;
    /** Verifications that may wait for a thread before submit() answers kMempoolFull. */
    std::size_t verifyQueue = 16'384;
    /** Signature verdicts remembered by tx hash beyond the held transactions; 0 means maxTxs. */
    std::size_t verdictCacheSize = 0;
    /** Empty means codec::verifyTxSignature (tests inject a counting verifier). */
    TxVerifier verifier;
};

/** A transaction held by the mempool, as tx_get reports it. */
struct PendingTx {
    TxPtr tx;
    /** Handed out in a proposed block that is neither committed nor released yet. */
    bool proposed = false;
    /** Arrival sequence number: the order in which transactions were admitted. */
    std::uint64_t arrival = 0;
};

/** Metrics of a mempool, plain atomics that an exporter reads (relaxed). */
struct MempoolCounters {
    /** Slots of `rejectedByCode`, indexed by the numeric ErrorCode (all codes are below). */
    static constexpr std::size_t kCodeSlots = 100;

    std::atomic<std::uint64_t> admitted{0};
    /** Removed because a committed block carried them. */
    std::atomic<std::uint64_t> committed{0};
    /** Evicted because validUntilHeight fell below the next height. */
    std::atomic<std::uint64_t> expired{0};
    /** Dropped because their nonce fell below the sender's committed next nonce. */
    std::atomic<std::uint64_t> stale{0};
    std::array<std::atomic<std::uint64_t>, kCodeSlots> rejectedByCode{};

    /** Submissions refused with `code`. */
    [[nodiscard]] std::uint64_t rejected(ErrorCode code) const {
        return rejectedByCode[slotOf(code)].load(std::memory_order_relaxed);
    }
    /** The slot of `code`; codes outside the table count as kInternal. */
    [[nodiscard]] static std::size_t slotOf(ErrorCode code) {
        const auto slot = static_cast<std::size_t>(code);
        return slot < kCodeSlots ? slot : static_cast<std::size_t>(ErrorCode::kInternal);
    }
};

/**
 * The pool of transactions waiting for a block.
 *
 * Admission (submit) decodes, checks the shape (checkShape) and the nonce window (checkNonce)
 * against the committed nonce and the pending set, then has the signature verified by the verify
 * pool, exactly once per tx hash: verdicts are remembered, and concurrent submissions of one
 * transaction share one verification. Signatures are never verified under the mempool lock.
 *
 * Block building (collect) takes, per sender, only the contiguous nonce run that starts at the
 * sender's committed next nonce, skipping transactions already in proposed blocks. All member
 * functions are thread-safe.
 */
class Mempool {
  public:
    /** Starts the verify pool. `nonceReader` must be callable for the mempool's lifetime. */
    Mempool(MempoolOptions options, NonceReader nonceReader);
    /** Shuts the verify pool down. Requires that no other thread is inside a member function. */
    ~Mempool();
    Mempool(const Mempool&) = delete;
    Mempool& operator=(const Mempool&) = delete;

    /**
     * Admits a raw encoded transaction and returns its hash, or refuses it with: the decoding
     * error (kMalformed, kBadLength, kUnknownPayload, ...), kTxTooLarge, kDuplicateTx (held
     * already), any checkShape or checkNonce code, kMempoolFull (count, bytes or verification
     * queue full), kBadSignature, kUnavailable (after shutdown, or no nonce reader), or the nonce
     * reader's error. Blocks until the signature verdict is known (never forever: shutdown
     * answers waiting submissions). Never crashes on any input.
     */
    [[nodiscard]] Result<Hash256> submit(ByteView raw);

    /**
     * Transactions for a new block: at most `maxTxs` of them and `maxBytes` raw bytes. For each
     * sender only the contiguous nonce run from its committed next nonce, in nonce order, minus
     * the transactions marked proposed; across senders by arrival. A sender whose next
     * transaction does not fit the byte budget contributes nothing further. Does not mark the
     * result proposed (see markProposed). Deterministic for a given mempool content.
     */
    [[nodiscard]] std::vector<TxPtr> collect(std::size_t maxTxs, std::size_t maxBytes) const;

    /** Marks held transactions as carried by a proposed block; collect() skips them. */
    void markProposed(std::span<const Hash256> hashes);
    /** Clears the proposed mark (the block that carried them will not commit). */
    void release(std::span<const Hash256> hashes);
    /** Clears every proposed mark. */
    void releaseAll();

    /**
     * A block at `height` committed and executed with the transactions `committedHashes`.
     * Removes those held here, sets the next height to height + 1, evicts every transaction with
     * validUntilHeight below it, re-reads the committed nonce of the senders of the removed
     * transactions and drops their transactions below it. Requires the block's effects to be
     * visible to the nonce reader. Senders of committed transactions this mempool never held are
     * refreshed at their next submission; any stale transaction of theirs is carried into a
     * block at most once, fails there with a receipt and is removed when that block commits.
     */
    void onCommitted(std::span<const Hash256> committedHashes, std::uint64_t height);

    /** Stops the verify pool: later submissions needing a verification fail with kUnavailable. */
    void shutdown();

    /** True iff the transaction is held. */
    [[nodiscard]] bool contains(const Hash256& hash) const;
    /** The held transaction with this hash, if any. */
    [[nodiscard]] std::optional<PendingTx> get(const Hash256& hash) const;
    /** Number of held transactions. */
    [[nodiscard]] std::size_t size() const;
    /** Sum of the raw sizes of the held transactions. */
    [[nodiscard]] std::size_t bytes() const;
    /**
     * True iff the transaction's signature is known valid: held here, or verified valid
     * recently. Block validation skips the signature of such transactions.
     */
    [[nodiscard]] bool isVerified(const Hash256& hash) const;
    /**
     * Verifies the signatures of a proposed block's transactions (raw bytes) that have no
     * verdict yet, in parallel on the verify pool and the calling thread, and remembers each
     * verdict, so that isVerified() answers for them when the block executes. Held and already
     * judged transactions and ones that do not decode are skipped. Returns how many signatures
     * it verified. Call it off the consensus thread.
     */
    std::size_t verifyProposed(std::span<const Bytes> txs);
    /** Height of the next block, against which expiry is judged. */
    [[nodiscard]] std::uint64_t nextHeight() const;
    /** Admission and eviction counters. */
    [[nodiscard]] const MempoolCounters& counters() const { return counters_; }
    /** The verify pool, shared with block validation for batch verification. */
    [[nodiscard]] VerifyPool& verifyPool() { return pool_; }

  private:
    struct Entry {
        TxPtr tx;
        std::uint64_t arrival = 0;
        bool proposed = false;
    };
    struct SenderQueue {
        PendingNonces nonces;
        std::uint64_t committedNonce = 0;  // the highest value the nonce reader gave
    };
    struct HashKey {
        std::size_t operator()(const Hash256& hash) const noexcept;
    };

    Result<Hash256> admit(ByteView raw);
    Result<std::uint64_t> readNonce(const Address& sender) const;
    /**
     * Re-reads `accountNonce` until no block was committed since it was read (`generation`), so
     * that a sender's queue never starts from a nonce that is already committed. `lock` holds
     * mutex_ on entry and on return.
     */
    Status refreshNonceLocked(std::unique_lock<std::mutex>& lock, const Address& sender,
                              std::uint64_t& generation, std::uint64_t& accountNonce) const;
    Status checkAdmissibleLocked(const codec::SignedTx& tx, std::uint64_t accountNonce) const;
    void insertLocked(const TxPtr& tx, std::uint64_t accountNonce);
    void removeLocked(const Hash256& hash);
    void raiseCommittedNonceLocked(const Address& sender, std::uint64_t accountNonce);
    void evictExpiredLocked();
    void rememberVerdictLocked(const Hash256& hash, bool valid);
    void setProposed(std::span<const Hash256> hashes, bool proposed);

    const MempoolOptions options_;
    const NonceReader nonceReader_;
    MempoolCounters counters_;

    mutable std::mutex mutex_;
    /** Counts onCommitted calls; changed under mutex_, read without it before a nonce read. */
    std::atomic<std::uint64_t> commits_{0};
    TxRules rules_;  // nextHeight changes with onCommitted
    std::unordered_map<Hash256, Entry, HashKey> entries_;
    std::map<Address, SenderQueue> senders_;
    std::set<std::pair<std::uint64_t, Hash256>> byExpiry_;  // (validUntilHeight, hash)
    std::size_t bytes_ = 0;
    std::uint64_t nextArrival_ = 0;
    std::unordered_map<Hash256, bool, HashKey> verdicts_;  // hash -> signature valid
    std::deque<Hash256> verdictOrder_;                     // oldest verdict first
    std::unordered_map<Hash256, std::shared_future<Status>, HashKey> verifying_;

    VerifyPool pool_;  // declared last: its workers stop before the state above goes away
};

}  // namespace gridledger::ledger
