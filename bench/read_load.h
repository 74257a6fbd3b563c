#pragma once

// The two read loads of `gridledger_node_load --reads`, run against a node on 127.0.0.1 while it
// commits transfers: wrk's JSON-RPC reads, and WebSocket newHeads subscribers.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

namespace gridledger::bench {

/** What wrk measured, and the answers that were not results. */
struct WrkReport {
    double requestsPerS = 0;
    double p50Ms = 0;
    double p99Ms = 0;
    /** Answers that were not HTTP 2xx, socket errors, and HTTP 200 answers without a result. */
    std::size_t non2xx = 0;
    std::size_t socketErrors = 0;
    std::size_t rpcErrors = 0;
};

/**
 * Runs wrk for `seconds` against the JSON-RPC at 127.0.0.1:`port` with bench/wrk/rpc_reads.lua:
 * account_get of `accounts` and block_get of heights 1..`height`, alternated. Its output
 * goes to `log`. Nullopt when wrk failed or printed no figures.
 */
[[nodiscard]] std::optional<WrkReport> runWrk(std::uint16_t port, std::uint64_t height,
                                              const std::vector<std::string>& accounts, int seconds,
                                              const std::string& log);

/** The delays of every newHeads notification, in ms (see HeadSubscribers). */
struct HeadDelays {
    std::size_t notifications = 0;
    /** From the block's timestamp (the proposer's clock, the same machine) to its arrival. */
    double p50Ms = 0;
    double p99Ms = 0;
    double maxMs = 0;
    /** From the first subscriber's receipt of the head to each other's. */
    double fanOutP99Ms = 0;
    double fanOutMaxMs = 0;
};

/**
 * `count` WebSocket connections to 127.0.0.1:`port`/ws, each subscribed to newHeads, served by
 * one I/O thread. Each records every notification's height and its arrival (system clock).
 */
class HeadSubscribers {
  public:
    /** Connects and subscribes all of them; throws when one fails or the deadline passes. */
    HeadSubscribers(std::uint16_t port, std::size_t count,
                    std::chrono::steady_clock::time_point deadline);
    ~HeadSubscribers();
    HeadSubscribers(const HeadSubscribers&) = delete;
    HeadSubscribers& operator=(const HeadSubscribers&) = delete;

    /**
     * Waits until every subscriber has seen `last`, closes the connections, and checks that each
     * saw every height from `first` to `last`, once and in order (it may have seen earlier ones
     * too). Returns the delays of the notifications of those heights; nullopt, with the reason on
     * stderr, when a subscriber failed, missed a height, or `deadline` passed first.
     */
    [[nodiscard]] std::optional<HeadDelays> finish(std::uint64_t first, std::uint64_t last,
                                                   std::chrono::steady_clock::time_point deadline);

  private:
    struct Subscriber;

    void closeAll();

    boost::asio::io_context io_;
    std::vector<std::unique_ptr<Subscriber>> subscribers_;
    std::atomic<std::size_t> subscribed_{0};
    std::atomic<std::size_t> failed_{0};
    std::atomic<bool> closing_{false};
    std::thread thread_;
};

}  // namespace gridledger::bench
