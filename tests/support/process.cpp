#include "support/process.h"

#include <random>
#include <stdexcept>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
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

pid_t spawn(const std::string& program, const std::vector<std::string>& args,
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
    const pid_t pid = fork();
    if (pid < 0) {
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
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

std::uint16_t freePortRange(std::size_t count) {
    constexpr std::size_t kLow = 10000;
    constexpr std::size_t kHigh = 32768;
    constexpr int kTries = 200;
    if (count == 0 || count > kHigh - kLow) {
        throw std::invalid_argument("freePortRange: bad count");
    }
    std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<std::size_t> pick(kLow, kHigh - count);
    for (int attempt = 0; attempt < kTries; ++attempt) {
        const auto base = static_cast<std::uint16_t>(pick(rng));
        std::vector<int> fds;
        bool free = true;
        for (std::size_t k = 0; k < count && free; ++k) {
            int fd = -1;
            free = bindPort(static_cast<std::uint16_t>(base + k), fd);
            if (fd >= 0) {
                fds.push_back(fd);
            }
        }
        for (const int fd : fds) {
            close(fd);
        }
        if (free) {
            return base;
        }
    }
    throw std::runtime_error("no " + std::to_string(count) + " consecutive free ports found");
}

std::uint16_t freePort() {
    return freePortRange(1);
}

}  // namespace gridledger::testing
