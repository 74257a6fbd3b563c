#pragma once

// State sync (docs/snapshots.md, "State sync"): a snapshot fetched from peers over the P2P
// transport, its manifest and every chunk verified as they arrive, written as a snapshot file
// that `importSnapshot` then turns into a ledger.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>

#include <spdlog/logger.h>

#include <gridledger/contracts/genesis.h>

#include "home.h"
#include "snapshot.h"

namespace gridledger::node {

struct StateSyncLimits {
    /** How long to wait for the first peer, and for the others after it. */
    std::chrono::milliseconds connect{30'000};
    std::chrono::milliseconds settle{500};
    /** How long one peer may take to answer one request. */
    std::chrono::milliseconds answer{10'000};
    /** Keys asked for per chunk (peers give at most kSnapshotChunkKeys). */
    std::uint32_t chunkKeys = kSnapshotChunkKeys;
};

/** What a state sync fetched, and from whom. */
struct StateSyncReport {
    SnapshotSummary summary;
    /** Chunks refused (a proof that did not verify, a wrong range) or not answered. */
    std::size_t refused = 0;
    /** Peers that served at least one verified chunk. */
    std::size_t servingPeers = 0;
};

/**
 * Fetches the latest snapshot the peers of `config` (p2p.persistent_peers, allowed as the node
 * allows them) serve, with this home's node key, and writes it to `file` (which must not
 * exist). Every peer is asked for its manifest; the highest one that verifies against the
 * genesis committee is taken. Its chunks are asked of the peers in turn, one at a time: a chunk
 * that does not verify against the manifest's root, or that does not come, drops its peer from
 * the sync (and costs it ban points) and is asked of the next. kUnavailable when no peer is
 * reached, none serves a verifiable manifest, or every peer was dropped.
 */
[[nodiscard]] Result<StateSyncReport> fetchSnapshot(const Home& home, const NodeConfig& config,
                                                    const contracts::Genesis& genesis,
                                                    const std::filesystem::path& file,
                                                    const std::shared_ptr<spdlog::logger>& log,
                                                    const StateSyncLimits& limits = {});

}  // namespace gridledger::node
