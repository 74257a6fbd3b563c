#include "epochs.h"

#include <string>
#include <utility>

#include <gridledger/contracts/governance.h>

namespace gridledger::node {
namespace {

/**
 * The committee of `epoch`, which starts from block `seedId` and has the seed `epochSeed`,
 * among `validators` (docs/protocol.md §1).
 */
Result<consensus::Committee> committeeOf(const std::vector<PubKey>& validators,
                                         std::string_view chainId, std::uint64_t epoch,
                                         const Hash256& seedId, const Hash256& epochSeed,
                                         std::size_t committeeMax) {
    GL_ASSIGN_OR_RETURN(
        members, consensus::selectCommittee(validators, chainId, epoch, epochSeed, committeeMax));
    return consensus::Committee::create(chainId, epoch, seedId, epochSeed, members);
}

}  // namespace

Result<consensus::Committee> genesisCommittee(const contracts::Genesis& genesis,
                                              const codec::Block& genesisBlock) {
    std::vector<PubKey> validators;
    validators.reserve(genesis.validators.size());
    for (const auto& v : genesis.validators) {
        validators.push_back(v.consensusKey);
    }
    const std::uint64_t epoch = genesisBlock.header.epoch;
    const std::string domain = contracts::signingDomainOf(genesis);
    return committeeOf(validators, domain, epoch, genesisBlock.id,
                       consensus::epochSeedOf(domain, genesisBlock.id, epoch),
                       genesis.consensus.committeeMax);
}

Result<ValidatorKeys> validatorKeysAt(const ledger::StateTree& tree, std::uint64_t height) {
    GL_ASSIGN_OR_RETURN(set, contracts::readValidatorSet(tree, height));
    ValidatorKeys out;
    out.changedAtHeight = set.changedAtHeight;
    out.keys.reserve(set.validators.size());
    out.nodeIds.reserve(set.validators.size());
    for (const auto& v : set.validators) {
        out.keys.push_back(v.consensusKey);
        out.nodeIds.push_back(v.nodeId);
    }
    return out;
}

Result<std::optional<NextEpoch>> nextEpochAfter(const ledger::StateTree& tree,
                                                const codec::Block& block,
                                                const consensus::Committee& current,
                                                std::string_view chainId,
                                                std::size_t committeeMax) {
    const std::uint64_t height = block.header.height;
    GL_ASSIGN_OR_RETURN(set, validatorKeysAt(tree, height));
    if (height == 0 || set.changedAtHeight != height) {
        return std::optional<NextEpoch>{};
    }
    const Hash256 seed = consensus::nextEpochSeed(chainId, current.epoch(), current.epochSeed());
    GL_ASSIGN_OR_RETURN(committee, committeeOf(set.keys, chainId, current.epoch() + 1, block.id,
                                               seed, committeeMax));
    return std::optional<NextEpoch>{
        NextEpoch{std::move(set.keys), std::move(set.nodeIds), std::move(committee)}};
}

Result<consensus::Committee> committeeAtHead(const contracts::Genesis& genesis,
                                             const ledger::BlockStore& blocks,
                                             const ledger::StateTree& tree,
                                             std::uint64_t executedHeight) {
    GL_ASSIGN_OR_RETURN(genesisBlock, blocks.blockAt(0));
    if (!genesisBlock) {
        return fail(ErrorCode::kCorrupt, "the genesis block is missing");
    }
    GL_ASSIGN_OR_RETURN(set, validatorKeysAt(tree, executedHeight));
    if (set.changedAtHeight == 0) {
        return genesisCommittee(genesis, *genesisBlock);
    }
    GL_ASSIGN_OR_RETURN(seed, blocks.blockAt(set.changedAtHeight));
    if (!seed) {
        return fail(ErrorCode::kCorrupt, "the block at height " +
                                             std::to_string(set.changedAtHeight) +
                                             " that changed the validator set is missing");
    }
    const std::uint64_t epoch = seed->header.epoch + 1;
    const std::string domain = contracts::signingDomainOf(genesis);
    return committeeOf(set.keys, domain, epoch, seed->id,
                       consensus::epochSeedOf(domain, genesisBlock->id, epoch),
                       genesis.consensus.committeeMax);
}

}  // namespace gridledger::node
