#include "support/process.h"

#include <condition_variable>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "home.h"

namespace gridledger::testing {
namespace {

/** True when a TCP socket could be bound to 127.0.0.1:port; `fd` keeps it bound. */
bool bindPort(std::uint16_t port, int& fd) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return false;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    return bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
}

/** Forks and executes `program args...` with its output appended to `logFile`. */
pid_t forkAndExec(const std::string& program, const std::vector<std::string>& args,
                  const std::filesystem::path& logFile) {
    std::vector<std::string> argvStrings;
    argvStrings.push_back(program);
    argvStrings.insert(argvStrings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    argv.reserve(argvStrings.size() + 1);
    for (auto& s : argvStrings) {
        argv.push_back(s.data());
    }
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        // The child dies with the thread that forked it, which lives as long as the process
        // (Spawner): a test or a benchmark that crashes, so that no destructor runs, would
        // otherwise leave its nodes running, holding their ports and the cores, beside every run
        // after it. A parent that died before this call is already gone: the child ends too.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
            _exit(127);
        }
        const int fd = open(logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        // Nothing else of the test process goes with the child: a socket of the test's own (a
        // relay's end of a link, an RPC client) held open by a node would keep the connection
        // alive after the test closed it, and its peer would never see it end.
        if (close_range(3, ~0U, 0) != 0) {
            for (int open = 3; open < static_cast<int>(sysconf(_SC_OPEN_MAX)); ++open) {
                close(open);
            }
        }
        execv(program.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

/**
 * The one thread that forks every child. Linux sends a parent-death signal when the thread that
 * forked the child ends, not its process: a node restarted from a test's worker thread would be
 * killed as that thread returned. This thread is never joined and ends only with the process.
 */
class Spawner {
  public:
    static Spawner& instance() {
        static auto* const spawner = new Spawner();  // never destroyed: its thread never ends
        return *spawner;
    }

    /** Runs forkAndExec on the spawner's thread; rethrows what it threw. */
    pid_t spawn(const std::string& program, const std::vector<std::string>& args,
                const std::filesystem::path& logFile) {
        const std::lock_guard caller(callerMutex_);
        std::unique_lock lock(mutex_);
        job_ = [&] { return forkAndExec(program, args, logFile); };
        done_ = false;
        changed_.notify_all();
        changed_.wait(lock, [this] { return done_; });
        job_ = nullptr;
        if (error_) {
            std::rethrow_exception(std::exchange(error_, nullptr));
        }
        return pid_;
    }

    /** The process that made the spawner and its thread. */
    [[nodiscard]] pid_t owner() const { return owner_; }

    Spawner(const Spawner&) = delete;
    Spawner& operator=(const Spawner&) = delete;

  private:
    Spawner() : owner_(getpid()) {
        std::thread([this] { run(); }).detach();
    }

    [[noreturn]] void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [this] { return job_ && !done_; });
            try {
                pid_ = job_();
            } catch (...) {
                error_ = std::current_exception();
            }
            done_ = true;
            changed_.notify_all();
        }
    }

    const pid_t owner_;
    std::mutex callerMutex_;  // one spawn at a time
    std::mutex mutex_;
    std::condition_variable changed_;
    std::function<pid_t()> job_;
    bool done_ = true;
    pid_t pid_ = -1;
    std::exception_ptr error_;
};

pid_t spawn(const std::string& program, const std::vector<std::string>& args,
            const std::filesystem::path& logFile) {
    Spawner& spawner = Spawner::instance();
    if (spawner.owner() != getpid()) {
        // A process forked from the one that made the spawner holds the object but not its
        // thread; its one thread lives as long as it does.
        return forkAndExec(program, args, logFile);
    }
    return spawner.spawn(program, args, logFile);
}

}  // namespace

Process::Process(const std::string& program, const std::vector<std::string>& args,
                 const std::filesystem::path& logFile)
    : pid_(spawn(program, args, logFile)) {}

Process::~Process() {
    if (!reaped_) {
        stop(SIGKILL);
    }
}

bool Process::running() {
    if (reaped_) {
        return false;
    }
    const pid_t done = waitpid(pid_, &status_, WNOHANG);
    if (done == pid_) {
        reaped_ = true;
        return false;
    }
    return true;
}

int Process::stop(int signal) {
    if (!reaped_) {
        kill(pid_, signal);
        waitpid(pid_, &status_, 0);
        reaped_ = true;
    }
    return status_;
}

std::string readText(const std::filesystem::path& path) {
    return node::readFile(path).value_or(std::string());
}

int runCommand(const std::string& program, const std::vector<std::string>& args,
               const std::filesystem::path& logFile) {
    const pid_t pid = spawn(program, args, logFile);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

namespace {

constexpr std::size_t kLowPort = 10000;
constexpr std::size_t kHighPort = 32768;
constexpr std::size_t kBlockPorts = 16;
constexpr int kClaimTries = 200;

/** True when every port of base..base+count-1 could be bound on 127.0.0.1 just now. */
bool allBindable(std::size_t base, std::size_t count) {
    bool free = true;
    for (std::size_t k = 0; k < count && free; ++k) {
        int fd = -1;
        free = bindPort(static_cast<std::uint16_t>(base + k), fd);
        if (fd >= 0) {
            close(fd);
        }
    }
    return free;
}

/**
 * The ports this process hands out, taken from blocks of kBlockPorts that it claims among the test
 * processes of the machine: an exclusive flock on <tmp>/gridledger-test-ports/<block's first
 * port>, held open until the process ends, when the kernel drops it however the process ends.
 * A port that a test's node leaves unbound for a while (a node stopped and started again) is
 * then never handed to a test running beside it. Each port is handed out once.
 */
class PortClaims {
  public:
    std::uint16_t take(std::size_t count) {
        const std::lock_guard lock(mutex_);
        if (count > end_ - next_ || !allBindable(next_, count)) {
            claim(count);
        }
        const std::size_t base = next_;
        next_ += count;
        return static_cast<std::uint16_t>(base);
    }

  private:
    /** The directory of the locks, made on first use (a failure shows as no claim). */
    static std::filesystem::path lockDir() {
        std::filesystem::path dir =
            std::filesystem::temp_directory_path() / "gridledger-test-ports";
        std::error_code ignored;
        std::filesystem::create_directories(dir, ignored);
        return dir;
    }

    /** The lock of the block starting at `port`, or -1 when another process holds it. */
    int lockBlock(std::size_t port) const {
        const std::string path = (dir_ / std::to_string(port)).string();
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return -1;
        }
        return fd;
    }

    void claim(std::size_t count) {
        const std::size_t blocks = (count + kBlockPorts - 1) / kBlockPorts;
        std::uniform_int_distribution<std::size_t> pick(
            0, (kHighPort - kLowPort) / kBlockPorts - blocks);
        for (int attempt = 0; attempt < kClaimTries; ++attempt) {
            const std::size_t first = pick(rng_);
            std::vector<int> locks;
            for (std::size_t b = first; b < first + blocks; ++b) {
                const int fd = lockBlock(kLowPort + b * kBlockPorts);
                if (fd < 0) {
                    break;
                }
                locks.push_back(fd);
            }
            const std::size_t base = kLowPort + first * kBlockPorts;
            if (locks.size() == blocks && allBindable(base, count)) {
                held_.insert(held_.end(), locks.begin(), locks.end());
                next_ = base;
                end_ = base + blocks * kBlockPorts;
                return;
            }
            for (const int fd : locks) {
                close(fd);
            }
        }
        throw std::runtime_error("no " + std::to_string(count) +
                                 " consecutive free ports could be claimed");
    }

    std::mutex mutex_;
    const std::filesystem::path dir_ = lockDir();
    std::mt19937 rng_{std::random_device{}()};
    std::vector<int> held_;  // the claims' locks, open for the life of the process
    std::size_t next_ = 0;
    std::size_t end_ = 0;
};

}  // namespace

std::uint16_t freePortRange(std::size_t count) {
    if (count == 0 || count > kHighPort - kLowPort) {
        throw std::invalid_argument("freePortRange: bad count");
    }
    static PortClaims claims;
    return claims.take(count);
}

std::uint16_t freePort() {
    return freePortRange(1);
}

}  // namespace gridledger::testing
