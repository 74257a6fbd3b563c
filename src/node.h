#pragma once

// The node assembly: the only place that knows storage, ledger, contracts, consensus and RPC
// together. It drives the consensus core on one thread and performs its effects.

#include <memory>

#include <gridledger/base/result.h>

#include "home.h"

namespace gridledger::node {

class NodeImpl;

/** A running GridLedger node. */
class Node {
  public:
    /**
     * Opens the home's database (writing the genesis state on first start), recovers consensus
     * from what was persisted and starts the RPC server and the consensus loop.
     */
    [[nodiscard]] static Result<std::unique_ptr<Node>> start(const Home& home);
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    /** Blocks until SIGINT or SIGTERM, then stops cleanly; fails if storage failed meanwhile. */
    [[nodiscard]] Status runUntilSignalled();

  private:
    explicit Node(std::unique_ptr<NodeImpl> impl);
    std::unique_ptr<NodeImpl> impl_;
};

}  // namespace gridledger::node
