#pragma once

// A network of gridledger validators on 127.0.0.1, each a real process, for multi-process tests.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <sys/types.h>

#include "home.h"
#include "rpc_client.h"
#include "support/dev_chain.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gridledger::testing {

/** The chain id `gridledger testnet` writes into its genesis. */
inline constexpr std::string_view kTestnetChainId = "gridledger-testnet";

/** An HTTP answer: its status code and body. */
struct HttpAnswer {
    unsigned status = 0;
    std::string body;
};

/**
 * The value of the unlabelled sample `name` on the /metrics of 127.0.0.1:port, or std::nullopt
 * when the scrape fails or has no such sample.
 */
[[nodiscard]] std::optional<double> scrapeMetric(std::uint16_t port, const std::string& name);

/** How Testnet sets up its network. Unset fields keep `gridledger testnet`'s defaults. */
struct TestnetOptions {
    std::size_t validators = 4;
    /** Full nodes after the validators (`gridledger testnet --full-nodes`): nodes
     * validators..validators+fullNodes-1, each with validator keys governance may add. */
    std::size_t fullNodes = 0;
    /** Genesis consensus.round_timeout_ms. */
    std::optional<std::uint64_t> roundTimeoutMs;
    /** Genesis consensus.empty_block_interval_ms; must stay below the round timeout. */
    std::optional<std::uint64_t> emptyBlockIntervalMs;
    /** Written as `[log] level` into every node.conf when not empty (e.g. "debug"). */
    std::string logLevel;
    /** Genesis consensus.leader_reputation_window (0: off). */
    std::optional<std::uint32_t> leaderReputationWindow;
    /** `gridledger testnet --hostnames`, one per node, when not empty: the names peers dial. */
    std::vector<std::string> hostnames{};
};

/**
 * Runs `gridledger testnet` into a fresh temp dir, on a base port whose 3N consecutive ports were
 * free when it was chosen. No node runs until start(i); the destructor kills the ones still
 * running and removes the dir. Node indices are 0..size()-1; an index out of range throws.
 */
class Testnet {
  public:
    /** Throws std::runtime_error when `gridledger testnet` fails or no free ports are found. */
    explicit Testnet(const TestnetOptions& options = {});
    ~Testnet();
    Testnet(const Testnet&) = delete;
    Testnet& operator=(const Testnet&) = delete;

    [[nodiscard]] std::size_t size() const { return nodes_.size(); }

    /**
     * Starts node i (`gridledger start --home <home>` and `extraArgs`) and waits (at most 30 s)
     * until its node_getStatus answers; throws with the log when it does not. A node that is
     * running is left alone.
     */
    void start(std::size_t i, const std::vector<std::string>& extraArgs = {});
    /** Starts every node in index order. */
    void startAll();
    /** Sends `signal` to node i (SIGKILL simulates a crash) and waits for it to exit. */
    void stop(std::size_t i, int signal);
    /** Stops every running node with `signal`. */
    void stopAll(int signal);
    /** Sends `signal` to node i without waiting (SIGSTOP pauses it, SIGCONT resumes it). */
    void signal(std::size_t i, int signal);
    [[nodiscard]] bool running(std::size_t i);
    /** Node i's process id, or -1 when it does not run. */
    [[nodiscard]] pid_t pid(std::size_t i) const;

    /** Calls a JSON-RPC method on node i; a transport or JSON-RPC error is the Error. */
    [[nodiscard]] Result<boost::json::value> call(std::size_t i, const std::string& method,
                                                  const boost::json::value& params) const;
    /** Calls an admin method (node_getPeers) on node i's admin listener. */
    [[nodiscard]] Result<boost::json::value> callAdmin(std::size_t i, const std::string& method,
                                                       const boost::json::value& params) const;
    /**
     * The value of the unlabelled sample `name` on node i's /metrics, or std::nullopt when the
     * scrape fails or has no such sample.
     */
    [[nodiscard]] std::optional<double> metric(std::size_t i, const std::string& name) const;
    /** The answer to `GET target` on node i's RPC port, or std::nullopt when none came. */
    [[nodiscard]] std::optional<HttpAnswer> get(std::size_t i, const std::string& target) const;

    [[nodiscard]] std::uint16_t p2pPort(std::size_t i) const { return node(i).config.p2pPort; }
    [[nodiscard]] std::uint16_t rpcPort(std::size_t i) const { return node(i).config.rpcPort; }
    [[nodiscard]] std::uint16_t metricsPort(std::size_t i) const {
        return node(i).config.metricsPort;
    }
    /** Node i's home: dir()/node<i>. */
    [[nodiscard]] const std::filesystem::path& home(std::size_t i) const { return node(i).home; }
    /** Node i's output; each start appends to it. */
    [[nodiscard]] const std::filesystem::path& log(std::size_t i) const { return node(i).log; }
    /** The directory holding the homes and the logs. */
    [[nodiscard]] std::filesystem::path dir() const { return dir_.path() / "net"; }
    [[nodiscard]] std::string bin() const { return GRIDLEDGER_BIN; }

  private:
    struct Node {
        std::filesystem::path home;
        std::filesystem::path log;
        node::NodeConfig config;
        std::unique_ptr<Process> process;
    };

    [[nodiscard]] const Node& node(std::size_t i) const;
    [[nodiscard]] Node& node(std::size_t i);

    TempDir dir_;
    std::vector<Node> nodes_;
};

}  // namespace gridledger::testing
