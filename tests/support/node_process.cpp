#include "support/node_process.h"

#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
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
    const auto config = home_ / "config" / "node.conf";
    std::ifstream in(config);
    std::stringstream text;
    text << in.rdbuf();
    in.close();
    std::ofstream out(config, std::ios::trunc);
    metricsPort_ = freePort();
    const std::string withRpc = std::regex_replace(text.str(), std::regex("port = 8545"),
                                                   "port = " + std::to_string(endpoint_.port));
    const std::string withMetrics = std::regex_replace(withRpc, std::regex("port = 9464"),
                                                       "port = " + std::to_string(metricsPort_));
    adminPort_ = freePort();
    const std::string withAdmin = std::regex_replace(withMetrics, std::regex("admin_port = 8546"),
                                                     "admin_port = " + std::to_string(adminPort_));
    out << std::regex_replace(withAdmin, std::regex("port = 26656"),
                              "port = " + std::to_string(freePort()));
}

void NodeProcess::start() {
    process_ = std::make_unique<Process>(
        bin(), std::vector<std::string>{"start", "--home", home_.string()}, log_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
        if (node::callRpc(endpoint_, "node_getStatus", boost::json::array{})) {
            return;
        }
        if (!process_->running()) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ifstream log(log_);
    std::stringstream text;
    text << log.rdbuf();
    throw std::runtime_error("node did not start; its log:\n" + text.str());
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
