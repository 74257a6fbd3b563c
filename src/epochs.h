#pragma once

// The committee of each consensus epoch, derived from the chain itself (docs/protocol.md §12):
// a block whose execution changed the validator set ends its epoch, and the next committee is
// selected from the new set with the next epoch seed, starting from that block. The node, block
// sync and replay use the same derivation, so they agree on every epoch's committee.

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/contracts/genesis.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/state_tree.h>

namespace gridledger::node {

/** The committee of epoch `genesisBlock.header.epoch` from the genesis validators. */
[[nodiscard]] Result<consensus::Committee> genesisCommittee(const contracts::Genesis& genesis,
                                                            const codec::Block& genesisBlock);

/**
 * The validators' consensus keys in the state after executing height `height`, in the order of
 * the validator set (sorted by key), and the height of the block that last changed it (0: never).
 */
struct ValidatorKeys {
    std::vector<PubKey> keys;
    /** The transport id of each key, in the same order. */
    std::vector<NodeId> nodeIds;
    std::uint64_t changedAtHeight = 0;
};
[[nodiscard]] Result<ValidatorKeys> validatorKeysAt(const ledger::StateTree& tree,
                                                    std::uint64_t height);

/**
 * Requires `block` executed into `tree` and `current` the committee of its epoch. When the
 * block's execution changed the validator set, returns the keys of the new set (for
 * consensus::EpochChange), their transport ids and the committee of the next epoch: epoch + 1, seed
 * block `block`, seed nextEpochSeed(chainId, epoch, current.epochSeed()), and the members
 * consensus::selectCommittee(new set, chainId, epoch + 1, that seed, committeeMax).
 * Otherwise nullopt.
 */
struct NextEpoch {
    std::vector<PubKey> validators;
    /** The transport id of each validator, in the same order. */
    std::vector<NodeId> nodeIds;
    consensus::Committee committee;
};
[[nodiscard]] Result<std::optional<NextEpoch>> nextEpochAfter(const ledger::StateTree& tree,
                                                              const codec::Block& block,
                                                              const consensus::Committee& current,
                                                              std::string_view chainId,
                                                              std::size_t committeeMax);

/**
 * The committee of the epoch a ledger executed up to `executedHeight` is in: the genesis
 * committee while the validator set never changed, else the committee of the epoch that starts
 * from the block that last changed it. Fails with kCorrupt when that block is missing.
 */
[[nodiscard]] Result<consensus::Committee> committeeAtHead(const contracts::Genesis& genesis,
                                                           const ledger::BlockStore& blocks,
                                                           const ledger::StateTree& tree,
                                                           std::uint64_t executedHeight);

}  // namespace gridledger::node
