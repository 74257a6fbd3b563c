// The test harness's child processes (tests/support/process.h): a node started by a test or a
// benchmark does not outlive the process that started it.

#include "support/process.h"

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/temp_dir.h"

namespace gridledger::process_test {
namespace {

/** Whether `pid` has exited: gone, or a zombie that its new parent has not reaped yet. */
bool exited(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pidField;
    std::string name;
    char state = 0;
    if (!(stat >> pidField >> name >> state)) {
        return true;
    }
    return state == 'Z' || state == 'X';
}

/** The command name of process `pid` (/proc/<pid>/comm), empty when it cannot be read. */
std::string commandOf(pid_t pid) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    return name;
}

TEST(ProcessTest, AChildIsKilledWhenTheProcessThatStartedItDies) {
    const testing::TempDir dir;
    // A child of this process first, as a test that ran before would have made.
    testing::Process("/bin/true", {}, dir.path() / "true.log").stop(SIGKILL);
    int pipeFds[2];
    ASSERT_EQ(pipe(pipeFds), 0);
    // A stand-in for a test or benchmark process that crashes while its node runs: it starts a
    // child that would run for a minute, reports the child's pid, and is killed at once, so no
    // destructor of its Process runs.
    const pid_t starter = fork();
    ASSERT_GE(starter, 0);
    if (starter == 0) {
        close(pipeFds[0]);
        const testing::Process child("/bin/sleep", {"60"}, dir.path() / "sleep.log");
        const pid_t pid = child.pid();
        if (write(pipeFds[1], &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) {
            _exit(1);
        }
        raise(SIGKILL);
    }
    close(pipeFds[1]);
    pid_t child = -1;
    const ssize_t got = read(pipeFds[0], &child, sizeof child);
    close(pipeFds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(starter, &status, 0), starter);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    ASSERT_EQ(got, static_cast<ssize_t>(sizeof child));
    ASSERT_GT(child, 0);

    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!exited(child) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const bool gone = exited(child);
    if (!gone) {
        kill(child, SIGKILL);  // do not leave it behind when the test fails
    }
    EXPECT_TRUE(gone) << "the child " << child << " outlived the process that started it";
}

TEST(ProcessTest, AChildMadeOnAThreadThatEndsRunsOn) {
    // Linux sends a parent-death signal when the thread that forked a child ends: the fault suite
    // restarts nodes from worker threads that end before it checks those nodes.
    const testing::TempDir dir;
    std::unique_ptr<testing::Process> child;
    std::thread([&] {
        child = std::make_unique<testing::Process>("/bin/sleep", std::vector<std::string>{"60"},
                                                   dir.path() / "sleep.log");
        // The thread ends only once the child runs `sleep`, after it asked for its parent-death
        // signal: a thread that ended before that would not be its parent any more.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (commandOf(child->pid()) != "sleep" && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    }).join();
    ASSERT_EQ(commandOf(child->pid()), "sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(child->running()) << "the child ended with the thread that made it";
}

}  // namespace
}  // namespace gridledger::process_test
