#include "support/process.h"

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

pid_t spawn(const std::string& program, const std::vector<std::string>& args,
            const std::filesystem::path& logFile) {
    std::vector<std::string> argvStrings;
    argvStrings.push_back(program);
    argvStrings.insert(argvStrings.end(), args.begin(), args.end());
    std::vector<char*> argv;
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

unsigned short freePort() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
}

}  // namespace gridledger::testing
