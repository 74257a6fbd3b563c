#include "state_sync.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include <gridledger/p2p/network.h>

#include "epochs.h"

namespace gridledger::node {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/** Ban points of a chunk or manifest that does not verify (as a sync response that does not). */
constexpr std::uint32_t kRefusedAnswerPoints = 50;

/** The answers that reach the sync, in arrival order. */
class Inbox {
  public:
    void push(const NodeId& from, p2p::Message message) {
        {
            const std::lock_guard lock(mutex_);
            messages_.emplace_back(from, std::move(message));
        }
        ready_.notify_all();
    }

    /** The first message `accept` takes before `until`, others left in place; nullopt at the end.
     */
    template <typename Accept>
    std::optional<std::pair<NodeId, p2p::Message>> waitFor(Clock::time_point until,
                                                           const Accept& accept) {
        std::unique_lock lock(mutex_);
        while (true) {
            for (auto it = messages_.begin(); it != messages_.end(); ++it) {
                if (accept(it->first, it->second)) {
                    auto out = std::move(*it);
                    messages_.erase(it);
                    return out;
                }
            }
            if (ready_.wait_until(lock, until) == std::cv_status::timeout) {
                return std::nullopt;
            }
        }
    }

  private:
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::pair<NodeId, p2p::Message>> messages_;
};

class StateSync {
  public:
    StateSync(const contracts::Genesis& genesis, const codec::Block& genesisBlock,
              p2p::Network& network, Inbox& inbox, std::shared_ptr<spdlog::logger> log,
              const StateSyncLimits& limits)
        : genesis_(genesis),
          genesisBlock_(genesisBlock),
          network_(network),
          inbox_(inbox),
          log_(std::move(log)),
          limits_(limits) {}

    /** The highest verified manifest the peers serve. */
    Result<SnapshotManifest> manifest(const std::vector<NodeId>& peers) {
        for (const NodeId& peer : peers) {
            (void)network_.send(peer, p2p::Message{codec::MessageKind::kStateManifestRequest, {}});
        }
        std::set<NodeId> waiting(peers.begin(), peers.end());
        std::optional<SnapshotManifest> best;
        const auto until = Clock::now() + limits_.answer;
        while (!waiting.empty()) {
            auto answer = inbox_.waitFor(until, [&](const NodeId& from, const p2p::Message& m) {
                return m.kind == codec::MessageKind::kStateManifest && waiting.contains(from);
            });
            if (!answer) {
                break;
            }
            const NodeId& from = answer->first;
            waiting.erase(from);
            auto checked = checkManifest(answer->second.payload);
            if (!checked) {
                log_->warn("state sync: manifest of peer={} refused: {}", from.hex(),
                           checked.error().message);
                refuse(from);
                continue;
            }
            if (*checked && (!best || (*checked)->height > best->height)) {
                best = std::move(**checked);
            }
        }
        if (!best) {
            return fail(ErrorCode::kUnavailable,
                        "no peer served a state manifest that verifies against the genesis");
        }
        return std::move(*best);
    }

    /** Every chunk of `manifest`, verified, into `writer`; peers asked in turn. */
    Status chunks(const SnapshotManifest& manifest, std::vector<NodeId> peers,
                  SnapshotWriter& writer) {
        std::set<NodeId> served;
        std::size_t turn = 0;
        std::optional<Hash256> start = Hash256{};
        while (start) {
            std::erase_if(peers, [&](const NodeId& peer) { return dropped_.contains(peer); });
            if (peers.empty()) {
                return fail(ErrorCode::kUnavailable,
                            "every peer was dropped from the state sync at chunk " +
                                std::to_string(writer.chunks()));
            }
            const NodeId peer = peers[turn++ % peers.size()];
            auto range = chunkFrom(peer, manifest, *start);
            if (!range) {
                log_->warn("state sync: chunk {} from peer={} refused: {}", writer.chunks(),
                           peer.hex(), range.error().message);
                refuse(peer);
                continue;
            }
            GL_TRY(writer.add(*range));
            served.insert(peer);
            start = ledger::keyAfter(range->end);
        }
        servingPeers_ = served.size();
        return {};
    }

    [[nodiscard]] std::size_t refused() const { return refused_; }
    [[nodiscard]] std::size_t servingPeers() const { return servingPeers_; }

  private:
    /** A manifest that verifies; nullopt for an empty answer (the peer has none to give). */
    Result<std::optional<SnapshotManifest>> checkManifest(ByteView payload) const {
        GL_ASSIGN_OR_RETURN(answer, codec::decodeStateManifest(payload));
        if (answer.manifest.empty()) {
            return std::optional<SnapshotManifest>{};
        }
        GL_ASSIGN_OR_RETURN(manifest, decodeManifest(answer.manifest));
        GL_ASSIGN_OR_RETURN(
            committee,
            snapshotCommittee(genesis_, genesisBlock_, manifest.anchor.header.epoch, std::nullopt));
        GL_TRY(verifyManifest(manifest, genesis_, committee));
        return std::optional<SnapshotManifest>{std::move(manifest)};
    }

    Result<ledger::StateRange> chunkFrom(const NodeId& peer, const SnapshotManifest& manifest,
                                         const Hash256& start) {
        const codec::StateChunkRequest request{manifest.height, start, limits_.chunkKeys};
        GL_TRY(network_.send(peer, p2p::Message{codec::MessageKind::kStateChunkRequest,
                                                codec::encodeStateChunkRequest(request)}));
        auto answer = inbox_.waitFor(
            Clock::now() + limits_.answer, [&](const NodeId& from, const p2p::Message& m) {
                return from == peer && m.kind == codec::MessageKind::kStateChunk;
            });
        if (!answer) {
            return fail(ErrorCode::kUnavailable,
                        "no answer within " + std::to_string(limits_.answer.count()) + " ms");
        }
        GL_ASSIGN_OR_RETURN(chunk, codec::decodeStateChunk(answer->second.payload));
        if (chunk.height != manifest.height || chunk.start != start || chunk.range.empty()) {
            return fail(ErrorCode::kUnavailable, "the peer does not serve that range");
        }
        GL_ASSIGN_OR_RETURN(range, ledger::decodeRange(chunk.range));
        if (range.start != start) {
            return fail(ErrorCode::kInvalidArgument, "the range starts at " + range.start.hex());
        }
        GL_TRY(ledger::verifyRange(manifest.stateRoot, range));
        return range;
    }

    void refuse(const NodeId& peer) {
        ++refused_;
        dropped_.insert(peer);
        network_.reportMisbehaviour(peer, kRefusedAnswerPoints);
    }

    const contracts::Genesis& genesis_;
    const codec::Block& genesisBlock_;
    p2p::Network& network_;
    Inbox& inbox_;
    std::shared_ptr<spdlog::logger> log_;
    StateSyncLimits limits_;
    std::set<NodeId> dropped_;
    std::size_t refused_ = 0;
    std::size_t servingPeers_ = 0;
};

/** The persistent peers whose dial failed (refused, unreachable, or a failed handshake). */
class FailedDials {
  public:
    void add(const NodeId& peer) {
        const std::lock_guard lock(mutex_);
        failed_.insert(peer);
    }
    [[nodiscard]] bool contains(const NodeId& peer) const {
        const std::lock_guard lock(mutex_);
        return failed_.contains(peer);
    }

  private:
    mutable std::mutex mutex_;
    std::set<NodeId> failed_;
};

/**
 * The connected peers once the first is in and every other persistent peer is in too or failed
 * its dial, or had `settle` to follow.
 */
std::vector<NodeId> awaitPeers(const p2p::Network& network, const std::vector<NodeId>& expected,
                               const FailedDials& failed, const StateSyncLimits& limits) {
    const auto until = Clock::now() + limits.connect;
    std::optional<Clock::time_point> settled;
    while (Clock::now() < until) {
        const auto connected = network.connectedPeers();
        const std::set<NodeId> in(connected.begin(), connected.end());
        if (!in.empty() && !settled) {
            settled = Clock::now() + limits.settle;
        }
        const bool allHeard = std::ranges::all_of(expected, [&](const NodeId& peer) {
            return in.contains(peer) || failed.contains(peer);
        });
        if ((!in.empty() && allHeard) || (settled && Clock::now() >= *settled)) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    auto peers = network.connectedPeers();
    std::sort(peers.begin(), peers.end());
    return peers;
}

}  // namespace

Result<StateSyncReport> fetchSnapshot(const Home& home, const NodeConfig& config,
                                      const contracts::Genesis& genesis, const fs::path& file,
                                      const std::shared_ptr<spdlog::logger>& log,
                                      const StateSyncLimits& limits) {
    GL_ASSIGN_OR_RETURN(genesisBlock, computeGenesisBlock(genesis));
    GL_ASSIGN_OR_RETURN(nodeKey, home.loadNodeKey());
    p2p::Options options;
    options.listenHost = config.p2pAddress;
    options.listenPort = 0;  // asks, never serves: no listener on the node's port
    for (const auto& validator : genesis.validators) {
        options.allowed.insert(validator.nodeId);
    }
    options.allowed.insert(config.allowedNodes.begin(), config.allowedNodes.end());
    options.persistentPeers = config.persistentPeers;
    options.dialExchangedPeers = false;
    options.logger = log;
    Inbox inbox;
    p2p::Network network(std::move(options), nodeKey);
    network.onMessage([&inbox](const NodeId& from, p2p::Message message) {
        if (message.kind == codec::MessageKind::kStateManifest ||
            message.kind == codec::MessageKind::kStateChunk) {
            inbox.push(from, std::move(message));
        }
    });
    FailedDials failed;
    network.onConnectionFailed([&failed](const p2p::ConnectionFailure& failure) {
        if (failure.outbound) {
            failed.add(failure.nodeId);
        }
    });
    GL_TRY(network.start());
    struct Stop {
        p2p::Network& network;
        ~Stop() { network.stop(); }
    } stop{network};
    const auto started = Clock::now();
    std::vector<NodeId> expected;
    expected.reserve(config.persistentPeers.size());
    for (const auto& peer : config.persistentPeers) {
        expected.push_back(peer.nodeId);
    }
    const auto peers = awaitPeers(network, expected, failed, limits);
    if (peers.empty()) {
        return fail(ErrorCode::kUnavailable, "state sync reached no peer");
    }
    StateSync sync(genesis, genesisBlock, network, inbox, log, limits);
    GL_ASSIGN_OR_RETURN(manifest, sync.manifest(peers));
    log->info("state sync manifest height={} state_root={} peers={}", manifest.height,
              manifest.stateRoot.hex(), peers.size());
    GL_ASSIGN_OR_RETURN(writer, SnapshotWriter::create(file, manifest));
    GL_TRY(sync.chunks(manifest, peers, writer));
    GL_ASSIGN_OR_RETURN(summary, writer.finish());
    log->info("state sync fetched height={} chunks={} keys={} bytes={} refused={} seconds={:.3f}",
              summary.height, summary.chunks, summary.entries, summary.bytes, sync.refused(),
              std::chrono::duration<double>(Clock::now() - started).count());
    return StateSyncReport{summary, sync.refused(), sync.servingPeers()};
}

}  // namespace gridledger::node
