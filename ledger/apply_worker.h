#pragma once

// Private to the ledger module: the second thread of the state tree's applies that share their
// work, kept for the tree's life.

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace gridledger::ledger::tree {

/**
 * A thread that runs one task at a time, handed over by another and waited for. Kept from the
 * first shared apply to the tree's end, so that an apply costs a wake-up where a thread made for
 * each one cost its start and its exit: the exit gives the thread's stack and its allocator cache
 * back to the kernel, and the next apply faults them in again.
 */
class ApplyWorker {
  public:
    /** Starts the thread; std::system_error when none can be had. */
    ApplyWorker();
    /** Ends the thread; requires every Task of this worker gone. */
    ~ApplyWorker();
    ApplyWorker(const ApplyWorker&) = delete;
    ApplyWorker& operator=(const ApplyWorker&) = delete;
    ApplyWorker(ApplyWorker&&) = delete;
    ApplyWorker& operator=(ApplyWorker&&) = delete;

    /**
     * One task on the worker, which runs `task` from the Task's construction on; finish() or the
     * destructor waits until it is done (the destructor drops what it threw). One Task of a
     * worker at a time.
     */
    class Task {
      public:
        Task(ApplyWorker& worker, std::function<void()> task);
        ~Task();
        Task(const Task&) = delete;
        Task& operator=(const Task&) = delete;
        Task(Task&&) = delete;
        Task& operator=(Task&&) = delete;

        /** Waits until the task is done; rethrows what it threw. Later calls do nothing. */
        void finish();

      private:
        ApplyWorker* worker_;
    };

  private:
    void run();
    /** Waits until the task is done and returns what it threw, if anything. */
    std::exception_ptr wait();

    std::mutex mutex_;
    std::condition_variable changed_;
    std::function<void()> task_;
    bool busy_ = false;
    bool stopping_ = false;
    std::exception_ptr thrown_;
    std::thread thread_;
};

}  // namespace gridledger::ledger::tree
