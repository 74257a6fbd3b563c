#include "support/node_process.h"

#include <csignal>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <gtest/gtest.h>

namespace gridledger::testing {

NodeProcess::NodeProcess() : home_(dir_.path() / "home"), log_(dir_.path() / "node.log") {
    const int code = runCommand(bin(), {"init", "--home", home_.string()}, log_);
    if (code != 0) {
        throw std::runtime_error("gridledger init failed");
    }
    usePorts();
}

NodeProcess::NodeProcess(const std::filesystem::path& templateHome)
    : home_(dir_.path() / "home"), log_(dir_.path() / "node.log") {
    std::filesystem::copy(templateHome, home_, std::filesystem::copy_options::recursive);
    usePorts();
}

void NodeProcess::usePorts() {
    endpoint_.port = freePort();
    metricsPort_ = freePort();
    adminPort_ = freePort();
    const std::uint16_t p2pPort = freePort();
    std::istringstream in(readText(home_ / "config" / "node.conf"));
    std::string out;
    std::string section;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("[")) {
            section = line;
        } else if (line.starts_with("port = ")) {
            const std::uint16_t port = section == "[rpc]"       ? endpoint_.port
                                       : section == "[metrics]" ? metricsPort_
                                       : section == "[p2p]"     ? p2pPort
                                                                : 0;
            if (port != 0) {
                line = "port = " + std::to_string(port);
            }
        } else if (line.starts_with("admin_port = ") && section == "[rpc]") {
            line = "admin_port = " + std::to_string(adminPort_);
        }
        out += line + "\n";
    }
    std::ofstream(home_ / "config" / "node.conf", std::ios::trunc) << out;
}

void NodeProcess::start() {
    constexpr int kTries = 3;
    for (int attempt = 1;; ++attempt) {
        std::error_code noLog;  // none yet: nothing logged before this start
        const auto size = std::filesystem::file_size(log_, noLog);
        const std::size_t logged = noLog ? 0 : static_cast<std::size_t>(size);
        process_ = std::make_unique<Process>(
            bin(), std::vector<std::string>{"start", "--home", home_.string()}, log_);
        if (awaitListening(logged)) {
            return;
        }
        // Another process took a port between freePort() and the node's bind: new ports.
        if (!process_->running() && attempt < kTries &&
            logSince(logged).find("cannot listen on") != std::string::npos) {
            usePorts();
            continue;
        }
        stop(SIGKILL);
        throw std::runtime_error("node did not start; its log:\n" + readText(log_));
    }
}

bool NodeProcess::awaitListening(std::size_t logged) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        if (loggedListening(logged) &&
            node::callRpc(endpoint_, "node_getStatus", boost::json::array{})) {
            return true;
        }
        if (!process_->running()) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

bool NodeProcess::loggedListening(std::size_t logged) const {
    // The node's own line (text or JSON format), so that another process on the port is not
    // taken for it.
    const std::string address = "127.0.0.1:" + std::to_string(endpoint_.port);
    std::istringstream lines(logSince(logged));
    for (std::string line; std::getline(lines, line);) {
        if (line.find("rpc listening") != std::string::npos &&
            (line.find("address=" + address + " ") != std::string::npos ||
             line.find("\"address\":\"" + address + "\"") != std::string::npos)) {
            return true;
        }
    }
    return false;
}

std::string NodeProcess::logSince(std::size_t offset) const {
    std::ifstream in(log_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

void NodeProcess::stop(int signal) {
    if (process_) {
        process_->stop(signal);
        process_.reset();
    }
}

Result<boost::json::value> NodeProcess::call(const std::string& method,
                                             const boost::json::value& params) const {
    return node::callRpc(endpoint_, method, params);
}

Result<boost::json::value> NodeProcess::callAdmin(const std::string& method,
                                                  const boost::json::value& params) const {
    return node::callRpc(node::Endpoint{"127.0.0.1", adminPort_, {}}, method, params);
}

boost::json::object NodeProcess::require(const std::string& method,
                                         const boost::json::value& params) const {
    auto answer = call(method, params);
    if (!answer) {
        throw std::runtime_error(method + ": " + answer.error().message);
    }
    if (!answer->is_object()) {
        throw std::runtime_error(method + ": the result is not an object");
    }
    return answer->as_object();
}

Result<std::vector<Result<boost::json::value>>> NodeProcess::callBatch(
    const std::vector<node::RpcCall>& calls) const {
    return node::callRpcBatch(endpoint_, calls);
}

std::pair<int, std::string> NodeProcess::cli(std::vector<std::string> args) const {
    const auto out = dir_.path() / "cli.out";
    std::filesystem::remove(out);
    args.push_back("--home");
    args.push_back(home_.string());
    const int code = runCommand(bin(), args, out);
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    return {code, text.str()};
}

}  // namespace gridledger::testing
