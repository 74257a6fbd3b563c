#pragma once

// Starts and stops real gridledger processes for the integration tests.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/types.h>

namespace gridledger::testing {

/**
 * A child process running `program args...`, its output appended to `logFile`. It is killed
 * (SIGKILL) when the process that made it ends, even by a crash, so that no node outlives the
 * test or benchmark that started it.
 */
class Process {
  public:
    Process(const std::string& program, const std::vector<std::string>& args,
            const std::filesystem::path& logFile);
    ~Process();
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] bool running();
    /** Sends `signal` and waits for the process to exit; returns its wait status. */
    int stop(int signal);

  private:
    pid_t pid_ = -1;
    bool reaped_ = false;
    int status_ = 0;
};

/** The whole text of the file at `path` (a log, a command's output); empty when unreadable. */
[[nodiscard]] std::string readText(const std::filesystem::path& path);

/** Runs a command to completion and returns its exit code; output goes to `logFile`. */
int runCommand(const std::string& program, const std::vector<std::string>& args,
               const std::filesystem::path& logFile);

/**
 * A base port P in [10000, 32768) (below Linux's ephemeral range, so that no outgoing connection
 * takes it) such that P..P+count-1 could all be bound on 127.0.0.1 just now, and that no other
 * call, of this process or of another test process running beside it, is given: the ports come
 * from blocks this process claims with a file lock it holds until it ends. Throws
 * std::runtime_error after many failed tries.
 */
[[nodiscard]] std::uint16_t freePortRange(std::size_t count);

/** A TCP port on 127.0.0.1 that was free a moment ago: freePortRange(1). */
[[nodiscard]] std::uint16_t freePort();

}  // namespace gridledger::testing
