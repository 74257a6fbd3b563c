#include "support/testnet.h"

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gridledger/base/amount.h>

namespace gridledger::testing {
namespace {

constexpr std::size_t kPortsPerNode = 4;
constexpr auto kStartTimeout = std::chrono::seconds(30);

std::string readAll(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    return addr;
}

/** Replaces the value of every `level = ...` line (only [log] has that key). */
void setLogLevel(const std::filesystem::path& config, const std::string& level) {
    std::istringstream in(readAll(config));
    std::string out;
    for (std::string line; std::getline(in, line);) {
        out += (line.starts_with("level =") ? "level = " + level : line) + "\n";
    }
    std::ofstream(config, std::ios::trunc) << out;
}

/** The answer to `GET target` on 127.0.0.1:port (HTTP/1.0, 5 s bounds), whatever its status. */
std::optional<HttpAnswer> httpAnswer(std::uint16_t port, const std::string& target) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return std::nullopt;
    }
    const timeval timeout{.tv_sec = 5, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    const auto addr = loopback(port);
    std::string reply;
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
        const std::string request = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
        if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(request.size())) {
            char buffer[4096];
            for (ssize_t n = 0; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) {
                reply.append(buffer, static_cast<std::size_t>(n));
            }
        }
    }
    close(fd);
    const auto headerEnd = reply.find("\r\n\r\n");
    // "HTTP/1.x NNN ...": the status code is at offset 9.
    const auto status = reply.size() > 12 ? parseU64(std::string_view(reply).substr(9, 3))
                                          : Result<std::uint64_t>{};
    if (!reply.starts_with("HTTP/1.") || !status || *status == 0 ||
        headerEnd == std::string::npos) {
        return std::nullopt;
    }
    return HttpAnswer{static_cast<unsigned>(*status), reply.substr(headerEnd + 4)};
}

/** The body of a 200 answer to `GET target` on 127.0.0.1:port. */
std::optional<std::string> httpGet(std::uint16_t port, const std::string& target) {
    auto answer = httpAnswer(port, target);
    if (!answer || answer->status != 200) {
        return std::nullopt;
    }
    return std::move(answer->body);
}

}  // namespace

Testnet::Testnet(const TestnetOptions& options) {
    const std::size_t count = options.validators + options.fullNodes;
    const auto base = freePortRange(kPortsPerNode * count);
    std::vector<std::string> args{"testnet",
                                  "--validators",
                                  std::to_string(options.validators),
                                  "--full-nodes",
                                  std::to_string(options.fullNodes),
                                  "--out",
                                  dir().string(),
                                  "--base-port",
                                  std::to_string(base)};
    if (options.roundTimeoutMs) {
        args.insert(args.end(), {"--round-timeout-ms", std::to_string(*options.roundTimeoutMs)});
    }
    if (options.emptyBlockIntervalMs) {
        args.insert(args.end(),
                    {"--empty-block-interval-ms", std::to_string(*options.emptyBlockIntervalMs)});
    }
    if (options.leaderReputationWindow) {
        args.insert(args.end(), {"--leader-reputation-window",
                                 std::to_string(*options.leaderReputationWindow)});
    }
    if (!options.hostnames.empty()) {
        std::string names;
        for (const auto& name : options.hostnames) {
            names += (names.empty() ? "" : ",") + name;
        }
        args.insert(args.end(), {"--hostnames", names});
    }
    const auto output = dir_.path() / "testnet.out";
    if (runCommand(bin(), args, output) != 0) {
        throw std::runtime_error("gridledger testnet failed:\n" + readAll(output));
    }
    for (std::size_t i = 0; i < count; ++i) {
        Node n;
        n.home = dir() / ("node" + std::to_string(i));
        n.log = dir() / ("node" + std::to_string(i) + ".log");
        const node::Home home(n.home);
        if (!options.logLevel.empty()) {
            setLogLevel(home.configFile(), options.logLevel);
        }
        auto config = home.loadConfig();
        if (!config) {
            throw std::runtime_error(config.error().message);
        }
        n.config = std::move(*config);
        nodes_.push_back(std::move(n));
    }
}

Testnet::~Testnet() {
    stopAll(SIGKILL);
}

const Testnet::Node& Testnet::node(std::size_t i) const {
    if (i >= nodes_.size()) {
        throw std::out_of_range("no node " + std::to_string(i) + " in the testnet");
    }
    return nodes_[i];
}

Testnet::Node& Testnet::node(std::size_t i) {
    return const_cast<Node&>(std::as_const(*this).node(i));
}

void Testnet::start(std::size_t i, const std::vector<std::string>& extraArgs) {
    auto& n = node(i);
    if (n.process && n.process->running()) {
        return;
    }
    std::vector<std::string> args{"start", "--home", n.home.string()};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    n.process = std::make_unique<Process>(bin(), std::move(args), n.log);
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (call(i, "node_getStatus", boost::json::array{})) {
            return;
        }
        if (!n.process->running()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    throw std::runtime_error("node" + std::to_string(i) + " did not start; its log:\n" +
                             readAll(n.log));
}

void Testnet::startAll() {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        start(i);
    }
}

void Testnet::stop(std::size_t i, int signal) {
    auto& n = node(i);
    if (n.process) {
        n.process->stop(signal);
        n.process.reset();
    }
}

void Testnet::signal(std::size_t i, int signal) {
    auto& n = node(i);
    if (n.process) {
        ::kill(n.process->pid(), signal);
    }
}

void Testnet::stopAll(int signal) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        stop(i, signal);
    }
}

bool Testnet::running(std::size_t i) {
    auto& n = node(i);
    return n.process && n.process->running();
}

pid_t Testnet::pid(std::size_t i) const {
    const auto& n = node(i);
    return n.process ? n.process->pid() : -1;
}

Result<boost::json::value> Testnet::call(std::size_t i, const std::string& method,
                                         const boost::json::value& params) const {
    const auto& config = node(i).config;
    return node::callRpc(node::Endpoint{config.rpcAddress, config.rpcPort, {}}, method, params);
}

Result<boost::json::value> Testnet::callAdmin(std::size_t i, const std::string& method,
                                              const boost::json::value& params) const {
    const auto& config = node(i).config;
    return node::callRpc(node::Endpoint{config.rpcAdminAddress, config.rpcAdminPort, {}}, method,
                         params);
}

std::optional<HttpAnswer> Testnet::get(std::size_t i, const std::string& target) const {
    return httpAnswer(rpcPort(i), target);
}

std::optional<double> Testnet::metric(std::size_t i, const std::string& name) const {
    return scrapeMetric(metricsPort(i), name);
}

std::optional<double> scrapeMetric(std::uint16_t port, const std::string& name) {
    const auto body = httpGet(port, "/metrics");
    if (!body) {
        return std::nullopt;
    }
    std::istringstream in(*body);
    for (std::string line; std::getline(in, line);) {
        if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ' ') {
            try {
                return std::stod(line.substr(name.size() + 1));
            } catch (const std::exception&) {
                return std::nullopt;
            }
        }
    }
    return std::nullopt;
}

}  // namespace gridledger::testing
