#pragma once

// Test support for the P2P unit tests: nodes on 127.0.0.1 with ephemeral ports, and a recorder
// of their callbacks that tests wait on with condition variables and generous upper bounds.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/crypto/ed25519.h>
#include <gridledger/p2p/network.h>

namespace gridledger::p2p::test {

/** Upper bound of every wait: generous, so a slow machine never fails a correct run. */
inline constexpr std::chrono::seconds kWait{30};

/** A deterministic node key: seed bytes all equal to `n`. */
inline crypto::NodeKey keyOf(std::uint8_t n) {
    FixedBytes<32> seed;
    for (std::size_t i = 0; i < seed.size(); ++i) {
        seed[i] = n;
    }
    return *crypto::NodeKey::fromSeed(seed.view());
}

/** A message with a text payload. */
inline Message textMessage(MessageKind kind, const std::string& text) {
    return Message{kind, Bytes(text.begin(), text.end())};
}

inline std::string textOf(const Message& message) {
    return {message.payload.begin(), message.payload.end()};
}

/** Options with short timers, for tests. */
inline Options fastOptions(std::set<NodeId> allowed, std::vector<PeerAddress> persistent = {},
                           std::uint64_t seed = 1) {
    Options options;
    options.allowed = std::move(allowed);
    options.persistentPeers = std::move(persistent);
    options.timers.handshakeTimeout = std::chrono::milliseconds(5'000);
    options.timers.reconnectBase = std::chrono::milliseconds(50);
    options.timers.reconnectCap = std::chrono::milliseconds(400);
    options.timers.peerExchangeInterval = std::chrono::milliseconds(500);
    options.seed = seed;
    return options;
}

/** Everything a node's callbacks reported, with waits on it. */
class Recorder {
  public:
    struct Received {
        NodeId from;
        Message message;
    };

    void attach(Network& network) {
        network.onMessage([this](const NodeId& from, Message message) {
            update([&] { messages_.push_back({from, std::move(message)}); });
        });
        network.onPeerUp([this](const NodeId& peer) {
            update([&] {
                ++ups_[peer];
                upNow_.insert(peer);
            });
        });
        network.onPeerDown([this](const NodeId& peer, CloseReason reason) {
            update([&] {
                downs_.emplace_back(peer, reason);
                upNow_.erase(peer);
            });
        });
        network.onConnectionFailed([this](const ConnectionFailure& failure) {
            update([&] { failures_.push_back(failure); });
        });
    }

    /** Waits until `predicate(*this)` holds (checked under the lock); false on timeout. */
    template <class Predicate>
    bool waitFor(Predicate predicate, std::chrono::seconds timeout = kWait) {
        std::unique_lock lock(mutex_);
        return cv_.wait_for(lock, timeout, [&] { return predicate(*this); });
    }

    bool waitUp(const NodeId& peer, int times = 1) {
        return waitFor([&](const Recorder& r) { return r.upsLocked(peer) >= times; });
    }
    bool waitDown(const NodeId& peer, std::size_t times = 1) {
        return waitFor([&](const Recorder& r) { return r.downsLocked(peer) >= times; });
    }
    bool waitMessages(std::size_t count) {
        return waitFor([&](const Recorder& r) { return r.messages_.size() >= count; });
    }
    bool waitFailure(const NodeId& peer, CloseReason reason) {
        return waitFor([&](const Recorder& r) {
            for (const auto& failure : r.failures_) {
                if (failure.nodeId == peer && failure.reason == reason) {
                    return true;
                }
            }
            return false;
        });
    }

    std::vector<Received> messages() const {
        return locked([&] { return messages_; });
    }
    std::vector<ConnectionFailure> failures() const {
        return locked([&] { return failures_; });
    }
    std::vector<std::pair<NodeId, CloseReason>> downs() const {
        return locked([&] { return downs_; });
    }
    int ups(const NodeId& peer) const {
        return locked([&] { return upsLocked(peer); });
    }
    std::size_t upCount() const {
        return locked([&] {
            std::size_t total = 0;
            for (const auto& [id, n] : ups_) {
                total += static_cast<std::size_t>(n);
            }
            return total;
        });
    }

    // For predicates (called with the lock held).
    int upsLocked(const NodeId& peer) const {
        const auto it = ups_.find(peer);
        return it == ups_.end() ? 0 : it->second;
    }
    std::size_t downsLocked(const NodeId& peer) const {
        std::size_t n = 0;
        for (const auto& [id, reason] : downs_) {
            n += id == peer ? 1U : 0U;
        }
        return n;
    }
    const std::vector<Received>& messagesLocked() const { return messages_; }
    const std::vector<std::pair<NodeId, CloseReason>>& downsListLocked() const { return downs_; }
    const std::set<NodeId>& upNowLocked() const { return upNow_; }
    std::size_t failuresLocked(const NodeId& peer) const {
        return static_cast<std::size_t>(
            std::count_if(failures_.begin(), failures_.end(),
                          [&](const ConnectionFailure& f) { return f.nodeId == peer; }));
    }

  private:
    template <class F>
    void update(F f) {
        {
            const std::lock_guard lock(mutex_);
            f();
        }
        cv_.notify_all();
    }
    template <class F>
    auto locked(F f) const -> decltype(f()) {
        const std::lock_guard lock(mutex_);
        return f();
    }

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Received> messages_;
    std::map<NodeId, int> ups_;
    std::set<NodeId> upNow_;
    std::vector<std::pair<NodeId, CloseReason>> downs_;
    std::vector<ConnectionFailure> failures_;
};

/** A started network with its recorder. */
class TestNode {
  public:
    TestNode(const crypto::NodeKey& key, Options options)
        : id_(key.nodeId()), network_(std::make_unique<Network>(std::move(options), key)) {
        recorder_.attach(*network_);
    }

    /** Starts the network; fails the test on error. */
    void start() {
        const Status started = network_->start();
        ASSERT_TRUE(started) << started.error().message;
        ASSERT_NE(network_->port(), 0);
    }

    [[nodiscard]] const NodeId& id() const { return id_; }
    [[nodiscard]] Network& net() { return *network_; }
    [[nodiscard]] Recorder& events() { return recorder_; }
    [[nodiscard]] PeerAddress address() const {
        return PeerAddress{id_, "127.0.0.1", network_->port()};
    }

  private:
    NodeId id_;
    Recorder recorder_;  // outlives the network, whose callbacks use it
    std::unique_ptr<Network> network_;
};

/**
 * Waits for a condition that has no callback (e.g. a queue drained), polling it. The poll
 * interval only bounds latency; correctness never depends on it.
 */
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::seconds timeout = kWait) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!predicate()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

}  // namespace gridledger::p2p::test
