#include <algorithm>
#include <utility>

#include <gridledger/ledger/verify_pool.h>

namespace gridledger::ledger {

/** One verifyBatch call: workers and the caller claim indexes until all are verified. */
struct VerifyPool::Batch {
    std::span<const codec::SignedTx> txs;
    std::vector<std::uint8_t> valid;  // one slot per tx, each written by the thread that claims it
    std::atomic<std::size_t> next{0};
    std::mutex mutex;
    std::condition_variable finished;
    std::size_t done = 0;  // guarded by mutex

    /** Withdraws the transactions no thread has claimed and waits for the claimed ones. */
    void withdraw() {
        const std::size_t claimed = std::min(next.exchange(txs.size()), txs.size());
        std::unique_lock lock(mutex);
        done += txs.size() - claimed;
        finished.wait(lock, [this] { return done == txs.size(); });
    }
};

VerifyPool::PendingBatch::~PendingBatch() {
    if (batch_) {
        batch_->withdraw();
    }
}

VerifyPool::PendingBatch& VerifyPool::PendingBatch::operator=(PendingBatch&& other) noexcept {
    if (this != &other) {
        if (batch_) {
            batch_->withdraw();
        }
        batch_ = std::move(other.batch_);
    }
    return *this;
}

VerifyPool::VerifyPool(VerifyPoolOptions options)
    : verifier_(options.verifier ? std::move(options.verifier)
                                 : TxVerifier([domain = options.domain](const codec::SignedTx& tx) {
                                       return codec::verifyTxSignature(tx, domain);
                                   })),
      maxQueue_(options.maxQueue),
      threadCount_(options.threads != 0 ? options.threads
                                        : std::max(1U, std::thread::hardware_concurrency())) {
    workers_.reserve(threadCount_);
    for (std::size_t i = 0; i < threadCount_; ++i) {
        workers_.emplace_back([this] { workerLoop(); });
    }
}

VerifyPool::~VerifyPool() {
    shutdown();
}

Status VerifyPool::submit(TxPtr tx, VerifyCallback done) {
    if (!tx || !done) {
        return fail(ErrorCode::kInvalidArgument, "verify job needs a transaction and a callback");
    }
    {
        const std::lock_guard lock(mutex_);
        if (stopping_) {
            return fail(ErrorCode::kUnavailable, "verify pool is shut down");
        }
        if (queue_.size() >= maxQueue_) {
            return fail(ErrorCode::kMempoolFull, "signature verification queue is full (" +
                                                     std::to_string(maxQueue_) + " jobs)");
        }
        queue_.push_back(Job{std::move(tx), std::move(done), nullptr});
    }
    wake_.notify_one();
    return {};
}

std::vector<bool> VerifyPool::verifyBatch(std::span<const codec::SignedTx> txs) {
    if (txs.empty()) {
        return {};
    }
    // Block validation goes ahead of single admissions waiting in the queue; the caller takes a
    // share itself.
    const auto batch = queueBatch(txs, std::min(threadCount_, txs.size() - 1), true);
    return completeBatch(*batch);
}

VerifyPool::PendingBatch VerifyPool::startBatch(std::span<const codec::SignedTx> txs) {
    PendingBatch pending;
    if (!txs.empty()) {
        pending.batch_ = queueBatch(txs, std::min(threadCount_, txs.size()), false);
    }
    return pending;
}

std::vector<bool> VerifyPool::finishBatch(PendingBatch pending) {
    const std::shared_ptr<Batch> batch = std::move(pending.batch_);
    if (!batch) {
        return {};
    }
    return completeBatch(*batch);
}

std::shared_ptr<VerifyPool::Batch> VerifyPool::queueBatch(std::span<const codec::SignedTx> txs,
                                                          std::size_t helpers, bool first) {
    auto batch = std::make_shared<Batch>();
    batch->txs = txs;
    batch->valid.assign(txs.size(), 0);
    std::size_t queuedHelpers = 0;
    {
        const std::lock_guard lock(mutex_);
        if (!stopping_) {
            for (; queuedHelpers < helpers; ++queuedHelpers) {
                if (first) {
                    queue_.push_front(Job{nullptr, nullptr, batch});
                } else {
                    queue_.push_back(Job{nullptr, nullptr, batch});
                }
            }
        }
    }
    for (std::size_t i = 0; i < queuedHelpers; ++i) {
        wake_.notify_one();
    }
    return batch;
}

std::vector<bool> VerifyPool::completeBatch(Batch& batch) {
    helpBatch(batch);
    {
        std::unique_lock lock(batch.mutex);
        batch.finished.wait(lock, [&batch] { return batch.done == batch.txs.size(); });
    }
    return {batch.valid.begin(), batch.valid.end()};
}

void VerifyPool::shutdown() {
    std::deque<Job> cancelled;
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
        cancelled.swap(queue_);
    }
    wake_.notify_all();
    for (Job& job : cancelled) {
        if (job.done) {
            job.done(fail(ErrorCode::kUnavailable, "verify pool shut down before verification"));
        }
        // A cancelled batch helper claimed nothing: its caller verifies the rest itself.
    }
    const std::lock_guard joinLock(joinMutex_);
    for (std::thread& worker : workers_) {
        if (worker.joinable()) {
            worker.join();
        }
    }
}

std::size_t VerifyPool::queued() const {
    const std::lock_guard lock(mutex_);
    return queue_.size();
}

void VerifyPool::workerLoop() {
    for (;;) {
        Job job;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) {
                return;  // stopping, and shutdown() took every queued job
            }
            job = std::move(queue_.front());
            queue_.pop_front();
        }
        run(job);
    }
}

void VerifyPool::run(Job& job) {
    if (job.batch) {
        helpBatch(*job.batch);
        return;
    }
    Status verdict = verifyOne(*job.tx);
    try {
        job.done(std::move(verdict));
    } catch (...) {
        // Callbacks must not throw; one that does must not take the worker down with it.
    }
}

Status VerifyPool::verifyOne(const codec::SignedTx& tx) {
    bool valid = false;
    try {
        valid = verifier_(tx);
    } catch (...) {
        return fail(ErrorCode::kInternal, "signature verifier failed");
    }
    verified_.fetch_add(1, std::memory_order_relaxed);
    if (!valid) {
        return fail(ErrorCode::kBadSignature, "signature does not match the sender key");
    }
    return {};
}

void VerifyPool::helpBatch(Batch& batch) {
    std::size_t claimed = 0;
    for (;;) {
        const std::size_t i = batch.next.fetch_add(1);
        if (i >= batch.txs.size()) {
            break;
        }
        batch.valid[i] = verifyOne(batch.txs[i]) ? 1 : 0;
        ++claimed;
    }
    if (claimed == 0) {
        return;
    }
    const std::lock_guard lock(batch.mutex);
    batch.done += claimed;
    if (batch.done == batch.txs.size()) {
        batch.finished.notify_all();
    }
}

}  // namespace gridledger::ledger
