#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/mempool.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/rpc/block_answers.h>
#include <gridledger/rpc/method_table.h>

namespace gridledger::rpc {

/** The most blocks one block_getRaw call returns. */
inline constexpr std::uint64_t kMaxRawBlocks = 256;
/**
 * block_getRaw stops adding blocks once the block and certificate bytes of its answer reach
 * this (the first block is always returned, whatever its size).
 */
inline constexpr std::size_t kMaxRawBlockBytes = std::size_t{1} << 20;

/** What node_getStatus reports besides the chain itself. */
struct NodeStatus {
    std::string version;
    PubKey validator;
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    std::uint64_t highestQcRound = 0;
    /** The P2P node id and the number of peers connected now. */
    NodeId nodeId;
    std::size_t peers = 0;
    /** True while block sync executes verified committed blocks (consensus runs on). */
    bool syncing = false;
};

/** One connected P2P peer as node_getPeers shows it. */
struct PeerView {
    NodeId nodeId;
    /** True when this node dialed the connection in use. */
    bool outbound = false;
    /** The remote host:port of the connection. */
    std::string address;
};

/**
 * What the chain methods read: the committed chain and state, the mempool, and the node's live
 * status. Every pointer must outlive the method table built from it.
 */
struct ChainContext {
    std::string chainId;
    /** The genesis hash, which every signature of the chain binds (node_getStatus shows it). */
    Hash256 genesisHash;
    ledger::Mempool* mempool = nullptr;
    const ledger::BlockStore* blocks = nullptr;
    const ledger::StateTree* tree = nullptr;
    std::function<NodeStatus()> status;
    /** The peers connected now, sorted by node id (node_getPeers); none when unset. */
    std::function<std::vector<PeerView>()> peers;
    /**
     * Called with the hash and raw bytes after tx_submit admitted a transaction (to journal it,
     * wake the block proposer and gossip it to peers).
     */
    std::function<void(const Hash256& hash, ByteView raw)> txAdmitted;
    /** block_get answers of final blocks, shared by every copy of the context; none: kept
     * nowhere. */
    std::shared_ptr<BlockAnswers> blockAnswers;
};

/**
 * Registers node_getStatus, node_getPeers, tx_submit, tx_get, account_get, chain_getHead,
 * block_get, block_getRaw, state_getProof, the system-contract reads validator_getSet,
 * proposal_get, provider_get, tokenomics_get, epoch_get and task_get, and the
 * paged lists (docs/rpc.md section 6.1) block_list, task_list, provider_list,
 * attestation_list, proposal_list and epoch_list; the handlers live under rpc/handlers/.
 */
[[nodiscard]] Status addChainMethods(MethodTable& table, const ChainContext& context);

}  // namespace gridledger::rpc
