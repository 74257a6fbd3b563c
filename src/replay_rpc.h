#pragma once

// A replay source that fetches a node's stored blocks over JSON-RPC (block_getRaw), for an
// auditor who does not trust the node: only the bytes are used, and replayChain verifies them.

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "replay.h"
#include "rpc_client.h"

namespace gridledger::node {

/**
 * Fetches batches of block_getRaw from one node, the next batch in flight while the replay
 * executes the current one, so that round trips overlap with execution.
 */
class RpcReplaySource final : public ReplaySource {
  public:
    /**
     * Asks the node at `endpoint` for its chain id and executed head. Fails with kUnavailable when
     * the node cannot be reached, and with kInvalidArgument when it serves a chain other than
     * `chainId` (the chain of the auditor's genesis file). `lastHeight`, when given, is the
     * highest height that will be asked (no batch reaches past it).
     */
    [[nodiscard]] static Result<std::unique_ptr<RpcReplaySource>> open(
        const Endpoint& endpoint, const std::string& chainId,
        std::optional<std::uint64_t> lastHeight);

    ~RpcReplaySource() override;
    RpcReplaySource(const RpcReplaySource&) = delete;
    RpcReplaySource& operator=(const RpcReplaySource&) = delete;

    /** The node's executed height when open() asked it. */
    [[nodiscard]] Result<std::uint64_t> executedHeight() override;
    /**
     * The entry at `height` decoded from the bytes the node served; kMalformed when they do not
     * decode or the answer is not what was asked, kUnavailable when the node cannot be reached.
     */
    [[nodiscard]] Result<ReplayEntry> entryAt(std::uint64_t height) override;

  private:
    /** One fetched batch: the entries from `from` on, or why it could not be fetched. */
    struct Batch {
        std::uint64_t from = 0;
        Result<std::vector<Result<ReplayEntry>>> entries;
    };

    RpcReplaySource(Endpoint endpoint, std::uint64_t head, std::uint64_t last);
    /** Starts fetching the batch from `from` in the background (none past last_). */
    void prefetch(std::uint64_t from);

    Endpoint endpoint_;
    std::uint64_t head_ = 0;
    std::uint64_t last_ = 0;
    std::optional<Batch> current_;
    std::optional<std::future<Batch>> next_;
};

}  // namespace gridledger::node
