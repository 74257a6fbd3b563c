#pragma once

// A gridledger node in its own home, run as a real process for integration tests.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "rpc_client.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gridledger::testing {

class NodeProcess {
  public:
    /** Runs `gridledger init` in a fresh home and points its RPC at a free port. */
    NodeProcess();
    /**
     * Copies the initialised home `templateHome` (keys, genesis, config; no data yet) into a fresh
     * directory and points its RPC, metrics and P2P at free ports: two nodes made from one
     * template share the genesis and the keys.
     */
    explicit NodeProcess(const std::filesystem::path& templateHome);

    /**
     * Starts the node and waits until it logs its RPC listener on port() and answers there. A node
     * that exits because a port was taken since it was chosen gets new ports (up to three tries);
     * port(), metricsPort() and adminPort() are read after start().
     */
    void start();
    /** The bearer token every later call sends (a node with rpc.auth_token_file set). */
    void setRpcToken(std::string token) { endpoint_.token = std::move(token); }
    /** Stops the process with `signal` (SIGKILL simulates a crash). */
    void stop(int signal);
    [[nodiscard]] bool running() { return process_ && process_->running(); }

    /** Calls an RPC method; fails the current test on a transport error. */
    [[nodiscard]] Result<boost::json::value> call(const std::string& method,
                                                  const boost::json::value& params) const;
    /** Calls a method on the node's admin listener (node_getPeers). */
    [[nodiscard]] Result<boost::json::value> callAdmin(const std::string& method,
                                                       const boost::json::value& params) const;
    /**
     * Calls an RPC method whose result must be an object, for drivers that run outside a test's
     * assertions: throws std::runtime_error naming the method on any error.
     */
    [[nodiscard]] boost::json::object require(const std::string& method,
                                              const boost::json::value& params) const;
    /**
     * Calls the methods of `calls` as one JSON-RPC batch (at most 100); the results in their
     * order. Fails as a whole on a transport error or a refused batch.
     */
    [[nodiscard]] Result<std::vector<Result<boost::json::value>>> callBatch(
        const std::vector<node::RpcCall>& calls) const;
    /**
     * Runs `gridledger ARGS --home <this node's home>` to its end; returns its exit code and
     * what it printed (stdout and stderr).
     */
    [[nodiscard]] std::pair<int, std::string> cli(std::vector<std::string> args) const;
    [[nodiscard]] const std::filesystem::path& home() const { return home_; }
    [[nodiscard]] const std::filesystem::path& log() const { return log_; }
    [[nodiscard]] std::string bin() const { return GRIDLEDGER_BIN; }
    [[nodiscard]] std::uint16_t port() const { return endpoint_.port; }
    [[nodiscard]] std::uint16_t metricsPort() const { return metricsPort_; }
    [[nodiscard]] std::uint16_t adminPort() const { return adminPort_; }

  private:
    /** Picks free RPC, metrics, admin and P2P ports and writes them into the home's config. */
    void usePorts();
    /** True once the process started after `logged` bytes of log listens and answers. */
    [[nodiscard]] bool awaitListening(std::size_t logged) const;
    /** True when the log past its first `logged` bytes has the node's RPC listening line. */
    [[nodiscard]] bool loggedListening(std::size_t logged) const;
    /** The log past its first `offset` bytes (what this start's process wrote). */
    [[nodiscard]] std::string logSince(std::size_t offset) const;

    TempDir dir_;
    std::filesystem::path home_;
    std::filesystem::path log_;
    node::Endpoint endpoint_;
    std::uint16_t metricsPort_ = 0;
    std::uint16_t adminPort_ = 0;
    std::unique_ptr<Process> process_;
};

}  // namespace gridledger::testing
