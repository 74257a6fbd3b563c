#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/codec/tx.h>

namespace gridledger::ledger {

/** A decoded transaction shared between the mempool, the verify pool and block building. */
using TxPtr = std::shared_ptr<const codec::SignedTx>;

/**
 * What a node knows of a transaction before a block that carries it executes (Mempool::known):
 * whether its signature was found valid, and the transaction decoded from the same bytes when the
 * node holds it. Block execution then neither verifies the signature again nor decodes the bytes.
 */
struct KnownTx {
    bool verified = false;
    TxPtr decoded;
};

/**
 * Decides whether a transaction's signature is valid. The production verifier is
 * codec::verifyTxSignature; tests inject counting or gated ones. Must be safe to call from
 * several threads at once and must not throw.
 */
using TxVerifier = std::function<bool(const codec::SignedTx&)>;

/**
 * The verdict on one signature: success when valid, kBadSignature when not, kUnavailable when the
 * pool shut down before the job ran, kInternal when the verifier threw.
 */
using VerifyCallback = std::function<void(Status)>;

/** Configuration of a VerifyPool. */
struct VerifyPoolOptions {
    /** Worker threads; 0 means std::thread::hardware_concurrency() (at least 1). */
    std::size_t threads = 0;
    /** Jobs that may wait for a worker; submissions beyond it are refused with kMempoolFull. */
    std::size_t maxQueue = 16'384;
    /** Empty means codec::verifyTxSignature in `domain`. */
    TxVerifier verifier;
    /** The chain's signing domain (crypto::chainDomain), for the default verifier. */
    std::string domain;
};

/**
 * A fixed set of worker threads that verify transaction signatures.
 *
 * Single submissions go through a bounded queue and are answered through a callback; a full
 * queue refuses at once, so a caller never waits for room. Batches (the transactions of a block
 * from a peer) are verified in parallel by the workers and the calling thread together and are
 * never refused. All member functions are thread-safe.
 */
class VerifyPool {
    struct Batch;

  public:
    /**
     * A batch queued by startBatch, whose verdicts finishBatch gives. Dropped unfinished, it
     * withdraws what no worker has taken yet and waits for the signatures being checked, so
     * that its transactions may go once it is gone.
     */
    class PendingBatch {
      public:
        PendingBatch() = default;
        ~PendingBatch();
        PendingBatch(PendingBatch&&) noexcept = default;
        PendingBatch& operator=(PendingBatch&&) noexcept;
        PendingBatch(const PendingBatch&) = delete;
        PendingBatch& operator=(const PendingBatch&) = delete;

      private:
        friend class VerifyPool;
        std::shared_ptr<Batch> batch_;
    };

    /** Starts the workers. */
    explicit VerifyPool(VerifyPoolOptions options = {});
    /** Same as shutdown(). */
    ~VerifyPool();
    VerifyPool(const VerifyPool&) = delete;
    VerifyPool& operator=(const VerifyPool&) = delete;

    /**
     * Queues `tx` for verification; `done` is called exactly once with the verdict, on a worker
     * thread, or on the thread calling shutdown() if the job is cancelled. Requires `tx` non-null
     * and `done` callable and non-throwing. Fails with kMempoolFull when the queue is full and
     * kUnavailable after shutdown(); `done` is then never called.
     */
    [[nodiscard]] Status submit(TxPtr tx, VerifyCallback done);

    /**
     * Verifies every transaction of `txs` and returns, at the same index, whether its signature
     * is valid. Uses idle workers and the calling thread; completes even when the queue is full
     * or the pool is shut down (then on the calling thread alone). Blocks until all are done.
     */
    [[nodiscard]] std::vector<bool> verifyBatch(std::span<const codec::SignedTx> txs);

    /**
     * Queues every transaction of `txs` for the workers, behind the jobs already waiting, and
     * returns at once: one job per worker, whatever the batch's size, and never refused. `txs`
     * must stay alive and unchanged until finishBatch returns.
     */
    [[nodiscard]] PendingBatch startBatch(std::span<const codec::SignedTx> txs);

    /**
     * The verdicts of a started batch, as verifyBatch gives them: verifies on the calling thread
     * what no worker has taken yet (all of it after shutdown()), then waits for the rest.
     */
    [[nodiscard]] std::vector<bool> finishBatch(PendingBatch pending);

    /**
     * Refuses new submissions, cancels queued jobs (their callbacks get kUnavailable), lets the
     * running ones finish and joins the workers. Idempotent; must not be called from a worker.
     */
    void shutdown();

    /** Number of worker threads. */
    [[nodiscard]] std::size_t threads() const { return threadCount_; }
    /** Jobs waiting for a worker now. */
    [[nodiscard]] std::size_t queued() const;
    /** Signatures checked so far, by workers and batch callers (a metrics counter). */
    [[nodiscard]] std::uint64_t verifiedCount() const { return verified_.load(); }

  private:
    struct Job {
        TxPtr tx;
        VerifyCallback done;
        std::shared_ptr<Batch> batch;  // set for a batch helper, then tx and done are empty
    };

    void workerLoop();
    void run(Job& job);
    Status verifyOne(const codec::SignedTx& tx);
    void helpBatch(Batch& batch);
    /** Queues `helpers` jobs on a new batch of `txs`, at the queue's front when `first`. */
    std::shared_ptr<Batch> queueBatch(std::span<const codec::SignedTx> txs, std::size_t helpers,
                                      bool first);
    /** Helps `batch` on the calling thread, waits until it is done and gives its verdicts. */
    std::vector<bool> completeBatch(Batch& batch);

    TxVerifier verifier_;
    std::size_t maxQueue_;
    std::size_t threadCount_;
    std::atomic<std::uint64_t> verified_{0};

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job> queue_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
    std::mutex joinMutex_;
};

}  // namespace gridledger::ledger
