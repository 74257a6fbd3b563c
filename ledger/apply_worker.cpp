#include "apply_worker.h"

#include <utility>

#include <pthread.h>

namespace gridledger::ledger::tree {

ApplyWorker::ApplyWorker() : thread_([this] { run(); }) {}

ApplyWorker::~ApplyWorker() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void ApplyWorker::run() {
    ::pthread_setname_np(::pthread_self(), "gl-apply");  // as top -H and perf show it
    std::unique_lock lock(mutex_);
    for (;;) {
        changed_.wait(lock, [this] { return busy_ || stopping_; });
        if (!busy_) {
            return;
        }
        const std::function<void()> task = std::move(task_);
        lock.unlock();
        std::exception_ptr thrown;
        try {
            task();
        } catch (...) {
            thrown = std::current_exception();
        }
        lock.lock();
        thrown_ = thrown;
        busy_ = false;
        changed_.notify_all();
    }
}

std::exception_ptr ApplyWorker::wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !busy_; });
    return std::exchange(thrown_, nullptr);
}

ApplyWorker::Task::Task(ApplyWorker& worker, std::function<void()> task) : worker_(&worker) {
    {
        std::lock_guard lock(worker.mutex_);
        worker.task_ = std::move(task);
        worker.busy_ = true;
    }
    worker.changed_.notify_all();
}

ApplyWorker::Task::~Task() {
    if (worker_ != nullptr) {
        (void)worker_->wait();
    }
}

void ApplyWorker::Task::finish() {
    ApplyWorker* const worker = std::exchange(worker_, nullptr);
    if (worker == nullptr) {
        return;
    }
    if (const std::exception_ptr thrown = worker->wait()) {
        std::rethrow_exception(thrown);
    }
}

}  // namespace gridledger::ledger::tree
