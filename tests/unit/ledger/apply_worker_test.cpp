// The state tree's apply worker: every task runs on one thread, named gl-apply, the same for all
// of them and not the caller's; finish returns once the task is done and rethrows what it threw;
// a task dropped without finish is still waited for; the worker takes tasks after one threw.
#include "../../../ledger/apply_worker.h"

#include <array>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pthread.h>

namespace gridledger::ledger::apply_worker_test {
namespace {

using tree::ApplyWorker;

TEST(ApplyWorkerTest, EveryTaskRunsOnTheSameThreadThatIsNotTheCallers) {
    ApplyWorker worker;
    std::vector<std::thread::id> ran;
    std::array<char, 16> name{};
    for (int i = 0; i < 5; ++i) {
        std::thread::id here;
        ApplyWorker::Task task(worker, [&here, &name] {
            here = std::this_thread::get_id();
            ::pthread_getname_np(::pthread_self(), name.data(), name.size());
        });
        task.finish();
        ran.push_back(here);
    }
    EXPECT_STREQ(name.data(), "gl-apply");  // as top -H shows it
    EXPECT_NE(ran.front(), std::this_thread::get_id());
    EXPECT_NE(ran.front(), std::thread::id{});
    for (const std::thread::id id : ran) {
        EXPECT_EQ(id, ran.front());
    }
}

TEST(ApplyWorkerTest, FinishReturnsOnceTheTaskIsDoneWhileTheCallerWorks) {
    ApplyWorker worker;
    std::atomic<bool> callerDone = false;
    bool sawCaller = false;
    bool taskDone = false;
    ApplyWorker::Task task(worker, [&] {
        // Runs beside the caller: it waits for the caller's part, which a task run on the
        // caller's thread, before the caller goes on, would wait for in vain.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!callerDone.load() && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
        }
        sawCaller = callerDone.load();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        taskDone = true;
    });
    callerDone = true;
    task.finish();
    EXPECT_TRUE(sawCaller);
    EXPECT_TRUE(taskDone);
}

TEST(ApplyWorkerTest, FinishRethrowsWhatTheTaskThrewAndTheWorkerGoesOn) {
    ApplyWorker worker;
    {
        ApplyWorker::Task task(worker, [] { throw std::runtime_error("task failed"); });
        EXPECT_THROW(task.finish(), std::runtime_error);
        EXPECT_NO_THROW(task.finish());  // once only
    }
    int value = 0;
    ApplyWorker::Task next(worker, [&value] { value = 7; });
    next.finish();
    EXPECT_EQ(value, 7);
}

TEST(ApplyWorkerTest, ATaskLeftWithoutFinishIsWaitedForAndWhatItThrewDropped) {
    ApplyWorker worker;
    bool done = false;
    {
        ApplyWorker::Task task(worker, [&done] {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            done = true;
        });
    }
    EXPECT_TRUE(done);
    {
        ApplyWorker::Task task(worker, [] { throw std::runtime_error("dropped"); });
    }
    int value = 0;
    ApplyWorker::Task next(worker, [&value] { value = 3; });
    next.finish();
    EXPECT_EQ(value, 3);
}

}  // namespace
}  // namespace gridledger::ledger::apply_worker_test
