#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/tx.h>
#include <gridledger/ledger/tx_validation.h>
#include <gridledger/ledger/verify_pool.h>

namespace gridledger::ledger {

/** What admission needs of a sender's committed account. */
struct AccountView {
    /** The committed next nonce: the number of its committed transactions. */
    std::uint64_t nonce = 0;
    /** The committed balance, DPS base units. */
    u128 balance = 0;
};

/**
 * Gives an account's committed view (zeros for an unknown account). Called without any mempool
 * lock held, from the threads that call Mempool::submit and Mempool::onCommitted; must be
 * thread-safe.
 */
using AccountReader = std::function<Result<AccountView>(const Address&)>;

/** Gives the chain's current fee for a payload's kind. Thread-safe, like AccountReader. */
using FeeReader = std::function<Result<std::uint64_t>(const codec::Payload&)>;

/** Configuration of a Mempool. */
struct MempoolOptions {
    std::string chainId;
    /** The chain's signing domain, crypto::chainDomain(chainId, genesis hash). */
    std::string signingDomain;
    /** Most transactions held at once. */
    std::size_t maxTxs = 50'000;
    /** Most encoded bytes held at once (sum of raw transaction sizes). */
    std::size_t maxBytes = std::size_t{64} * 1024 * 1024;
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
    /** Empty means codec::verifyTxSignature in signingDomain (tests inject a counting verifier). */
    TxVerifier verifier;
    /** The fee floor of each payload kind; empty means every fee is accepted. */
    FeeReader feeReader;
    /** Most evictions one admission may make to free room for a higher fee. */
    std::size_t maxEvictionsPerAdmission = 8;
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
    /** Evicted by a higher-fee transaction while the mempool was full. */
    std::atomic<std::uint64_t> evicted{0};
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
 * The verdicts on the signatures that one admission is checking (a batch's, or a single
 * transaction's), given all at once. Another admission, or a block's check, that meets one of
 * those transactions meanwhile waits here for its verdict instead of checking it again. Settling
 * while nobody waits makes no system call, so an admission makes none per transaction (a
 * std::promise's set_value wakes its futex through std::call_once whether or not anybody waits).
 */
class PendingVerdicts {
  public:
    /** Gives the verdicts, in the order of the indexes handed out, and wakes those who wait. */
    void settle(std::vector<Status> verdicts);
    /** Waits until settled; then the verdict at `index`, which must be below settle's count. */
    [[nodiscard]] Status wait(std::size_t index) const;

  private:
    mutable std::mutex mutex_;
    mutable std::condition_variable settledCv_;
    bool settled_ = false;
    std::vector<Status> verdicts_;
};

/** Where the verdict on one transaction being checked will be given. */
struct PendingVerdict {
    std::shared_ptr<PendingVerdicts> verdicts;
    std::size_t index = 0;

    /** Waits for the verdict. */
    [[nodiscard]] Status wait() const { return verdicts->wait(index); }
};

/**
 * The pool of transactions waiting for a block.
 *
 * Admission (submit) decodes, checks the shape (checkShape), the nonce window (checkNonce)
 * against the committed nonce and the pending set, the fee against the kind's fee and the fees
 * of the sender's pending transactions against its committed balance, then has the signature
 * verified by the verify pool, exactly once per tx hash: verdicts are remembered, and concurrent
 * submissions of one transaction share one verification. Signatures are never verified under the
 * mempool lock. The nonce window is each sender's quota; a sender that cannot pay every pending
 * fee out of its balance gets no more room, so keys that hold nothing hold nothing here either.
 *
 * When the mempool is full, a transaction evicts the cheapest evictable ones (the last pending
 * transaction of a sender, not in a proposed block) if it offers a strictly higher fee than each,
 * and is refused with kMempoolFull otherwise.
 *
 * Block building (collect) takes, per sender, only the contiguous nonce run that starts at the
 * sender's committed next nonce, skipping transactions already in proposed blocks; across
 * senders, the higher fee first. All member functions are thread-safe.
 */
class Mempool {
  public:
    /** Starts the verify pool. `accountReader` must be callable for the mempool's lifetime. */
    Mempool(MempoolOptions options, AccountReader accountReader);
    /** Shuts the verify pool down. Requires that no other thread is inside a member function. */
    ~Mempool();
    Mempool(const Mempool&) = delete;
    Mempool& operator=(const Mempool&) = delete;

    /**
     * Admits a raw encoded transaction and returns its hash, or refuses it with: the decoding
     * error (kMalformed, kBadLength, kUnknownPayload, ...), kTxTooLarge, kDuplicateTx (held
     * already), any checkShape or checkNonce code, kFeeTooLow (below the kind's fee),
     * kInsufficientFee (the balance cannot pay this fee on top of the sender's pending ones),
     * kMempoolFull (count or bytes full of fees at least as high, or verification queue full),
     * kBadSignature, kUnavailable (after shutdown, or no account reader), or a reader's error.
     * Blocks until the signature verdict is known (never forever: shutdown answers waiting
     * submissions). Never crashes on any input.
     */
    [[nodiscard]] Result<Hash256> submit(ByteView raw);

    /**
     * Admits several raw transactions, as submit() would one after the other, and returns each
     * outcome at its index. The signatures of those that pass the cheap checks (decoding, fee,
     * nonce window, balance) are first verified together, on the verify pool and the calling
     * thread, instead of one at a time: a client that sends many transactions at once is not held
     * to one verification in flight. A doomed transaction still costs no verification.
     */
    [[nodiscard]] std::vector<Result<Hash256>> submitBatch(std::span<const ByteView> raws);

    /**
     * Transactions for a new block: at most `maxTxs` of them and `maxBytes` raw bytes. For each
     * sender only the contiguous nonce run from its committed next nonce, in nonce order, minus
     * the transactions marked proposed; across senders the higher fee first, then by arrival. A
     * sender whose next transaction does not fit the byte budget contributes nothing further. Does
     * not mark the result proposed (see markProposed). Deterministic for a given mempool content.
     */
    [[nodiscard]] std::vector<TxPtr> collect(std::size_t maxTxs, std::size_t maxBytes) const;

    /** Marks held transactions as carried by a proposed block; collect() skips them. */
    void markProposed(std::span<const Hash256> hashes);
    /** Clears the proposed mark (the block that carried them will not commit). */
    void release(std::span<const Hash256> hashes);
    /** Clears every proposed mark. */
    void releaseAll();
    /**
     * While on, each admitted transaction is held back from collect() (and so is the rest of its
     * sender's run) until ready() names it: a member that certifies batches proposes its
     * transactions once their batch is certified, so that the voters hold their verdicts
     * (docs/protocol.md §14). Turned off, it lets every held transaction go.
     */
    void holdAdmissions(bool on);
    /** Lets collect() hand out these held transactions. */
    void ready(std::span<const Hash256> hashes);

    /**
     * A block at `height` committed and executed with the transactions `committedHashes`.
     * Removes those held here, sets the next height to height + 1, evicts every transaction with
     * validUntilHeight below it, re-reads the committed nonce of the senders of the removed
     * transactions and drops their transactions below it. Requires the block's effects to be
     * visible to the account reader. Senders of committed transactions this mempool never held are
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
     * What this mempool knows of the transaction: verified when its signature is known valid
     * (held here, or verified valid recently), and decoded when it is held. Block execution
     * skips the signature of a verified transaction and the decoding of a decoded one.
     */
    [[nodiscard]] KnownTx known(const Hash256& hash) const;
    /**
     * Verifies the signatures of a proposed block's transactions (raw bytes) that have no
     * verdict yet, in parallel on the verify pool and the calling thread, and remembers each
     * verdict, so that known() answers for them when the block executes. Held and already
     * judged transactions and ones that do not decode are skipped. Returns how many signatures
     * it verified. Call it off the consensus thread.
     */
    std::size_t verifyProposed(std::span<const Bytes> txs);

    /**
     * Whether every transaction of `txs` (raw bytes) decodes and carries a valid signature: what
     * a member checks before it acknowledges a batch (docs/protocol.md §14). Verifies those
     * without a verdict as verifyProposed does, and remembers each verdict.
     */
    [[nodiscard]] bool signaturesValid(std::span<const Bytes> txs);
    /**
     * Remembers the signatures of a certified batch's transactions (raw bytes) as valid: f + 1
     * members, one of them at least honest, verified each. Admission and execution then skip
     * them. A transaction already judged keeps its verdict.
     */
    void acceptCertified(std::span<const Bytes> txs);

    /**
     * The signature checks of one block's transactions, started by startVerifyingProposed and
     * ended by finishVerifyingProposed. Dropped unfinished, it remembers no verdict, withdraws
     * what no verify-pool worker has taken yet and waits for the checks under way.
     */
    class ProposedChecks {
      public:
        ProposedChecks() = default;
        ProposedChecks(ProposedChecks&&) noexcept = default;
        // An assignment would free the old transactions before withdrawing their checks.
        ProposedChecks& operator=(ProposedChecks&&) = delete;

      private:
        friend class Mempool;
        std::vector<codec::SignedTx> txs_;
        std::vector<std::pair<Hash256, PendingVerdict>> awaited_;
        // Reads txs_ on the workers: declared after it, it is destroyed (and withdrawn) first.
        VerifyPool::PendingBatch pending_;
    };
    /**
     * Like verifyProposed, but returns once the checks are queued for the verify pool's workers,
     * behind the jobs already waiting, so that the caller can go on (execute the blocks before
     * this one) while they run.
     */
    [[nodiscard]] ProposedChecks startVerifyingProposed(std::span<const Bytes> txs);
    /**
     * Ends started checks: verifies on the calling thread what no worker has taken yet, waits
     * for the rest and remembers each verdict as verifyProposed does. Returns how many
     * signatures the checks verified.
     */
    std::size_t finishVerifyingProposed(ProposedChecks checks);
    /** Height of the next block, against which expiry is judged. */
    [[nodiscard]] std::uint64_t nextHeight() const;
    /** Admission and eviction counters. */
    [[nodiscard]] const MempoolCounters& counters() const { return counters_; }
    /** The verify pool, shared with block validation for batch verification. */
    [[nodiscard]] VerifyPool& verifyPool() { return pool_; }

  private:
    /** Eviction order: lowest fee first, among equal fees the latest arrival first. */
    using FeeKey = std::tuple<std::uint64_t, std::uint64_t, Hash256>;  // fee, ~arrival, hash
    /**
     * Expiry order: the last valid height, then arrival. Arrival is unique, so the hash is never
     * compared, and the transactions of one height (most of a client's, often) go in at the end
     * of their run instead of at a random place among them.
     */
    using ExpiryKey = std::tuple<std::uint64_t, std::uint64_t, Hash256>;  // height, arrival, hash
    struct Entry {
        TxPtr tx;
        std::uint64_t arrival = 0;
        bool proposed = false;
        /** Held back from collect() until ready() (holdAdmissions). */
        bool held = false;
        /** The entry's keys in byFee_ and byExpiry_: its removal searches neither set. */
        std::set<FeeKey>::const_iterator byFee;
        std::set<ExpiryKey>::const_iterator byExpiry;
    };
    using Entries = std::unordered_map<Hash256, Entry, DigestKey>;
    struct SenderQueue {
        PendingNonces nonces;
        std::uint64_t committedNonce = 0;  // the highest value the account reader gave
        u128 pendingFees = 0;              // sum of the fees of `nonces`
    };

    /** A transaction decoded for admission, with its sender's account as read then. */
    struct Decoded {
        TxPtr tx;
        AccountView account;
        std::uint64_t generation = 0;  // commits_ when the account was read
    };

    Result<Hash256> admit(ByteView raw);
    /** Size, decoding and fee checks, and the sender's account (no lock held). */
    Result<Decoded> decode(ByteView raw) const;
    /** The rest of admit(): the mempool checks, the verdict (verifying if needed), insertion. */
    Result<Hash256> admitDecoded(Decoded decoded);
    /**
     * The checks of admission under the lock, on the account read again if a block was committed
     * since (which releases the lock meanwhile): the pending transactions to evict to make room.
     */
    Result<std::vector<Hash256>> admissibleLocked(std::unique_lock<std::mutex>& lock,
                                                  Decoded& decoded);
    /**
     * admissibleLocked, then the admission itself if the signature's verdict is known: true once
     * admitted, false (nothing changed) if no verdict is known yet, an error if refused.
     */
    Result<bool> admitIfJudgedLocked(std::unique_lock<std::mutex>& lock, Decoded& decoded);
    /** Counts an admission's outcome (MempoolCounters) and returns it. */
    Result<Hash256> counted(Result<Hash256> result);
    Result<AccountView> readAccount(const Address& sender) const;
    Result<std::uint64_t> readFee(const codec::Payload& payload) const;
    /**
     * Re-reads `account` until no block was committed since it was read (`generation`), so
     * that a sender's queue never starts from a nonce that is already committed. `lock` holds
     * mutex_ on entry and on return.
     */
    Status refreshAccountLocked(std::unique_lock<std::mutex>& lock, const Address& sender,
                                std::uint64_t& generation, AccountView& account) const;
    Status checkAdmissibleLocked(const codec::SignedTx& tx, const AccountView& account) const;
    /**
     * The transactions to evict so that `tx` fits the count and byte budgets: the cheapest
     * evictable ones (a sender's last pending, not proposed, not of tx's sender, at most one per
     * sender), each with a fee strictly below tx's; kMempoolFull when they do not free enough.
     */
    [[nodiscard]] Result<std::vector<Hash256>> planRoomLocked(const codec::SignedTx& tx) const;
    void evictLocked(std::span<const Hash256> victims);
    void insertLocked(const TxPtr& tx, std::uint64_t accountNonce);
    void removeLocked(const Hash256& hash);
    void removeLocked(Entries::iterator entry);
    void raiseCommittedNonceLocked(const Address& sender, std::uint64_t accountNonce);
    void evictExpiredLocked();
    void rememberVerdictLocked(const Hash256& hash, bool valid);
    /** The transactions of a block that need a verdict. */
    struct Unjudged {
        /** Without a verdict and not being verified, decoded (undecodable ones left out). */
        std::vector<codec::SignedTx> txs;
        /** Those an admission is verifying now: the verdict it will give. */
        std::vector<std::pair<Hash256, PendingVerdict>> awaited;
    };
    /** What of `txs` has no verdict yet; held transactions are left out. */
    [[nodiscard]] Unjudged unjudged(std::span<const Bytes> txs) const;
    /**
     * Remembers the verdict valid[i] on unjudged[i]'s signature, for each i, and waits for the
     * awaited verdicts to remember them too (those a verification reached).
     */
    void rememberVerdicts(std::span<const codec::SignedTx> unjudged, const std::vector<bool>& valid,
                          std::span<const std::pair<Hash256, PendingVerdict>> awaited);
    void setProposed(std::span<const Hash256> hashes, bool proposed);

    const MempoolOptions options_;
    const AccountReader accountReader_;
    MempoolCounters counters_;

    mutable std::mutex mutex_;
    /** Counts onCommitted calls; changed under mutex_, read without it before a nonce read. */
    std::atomic<std::uint64_t> commits_{0};
    TxRules rules_;  // nextHeight changes with onCommitted
    Entries entries_;
    std::map<Address, SenderQueue> senders_;
    std::set<ExpiryKey> byExpiry_;
    std::set<FeeKey> byFee_;
    std::size_t bytes_ = 0;
    std::uint64_t nextArrival_ = 0;
    std::unordered_map<Hash256, bool, DigestKey> verdicts_;  // hash -> signature valid
    std::deque<Hash256> verdictOrder_;                       // oldest verdict first
    std::unordered_map<Hash256, PendingVerdict, DigestKey> verifying_;
    bool holdAdmissions_ = false;

    VerifyPool pool_;  // declared last: its workers stop before the state above goes away
};

}  // namespace gridledger::ledger
