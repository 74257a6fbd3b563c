#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>

namespace gridledger::contracts {

/** A validator of the genesis set: consensus key bound to its transport node id. */
struct GenesisValidator {
    std::string name;
    PubKey consensusKey;
    NodeId nodeId;
};

/** An account funded at genesis. */
struct GenesisAccount {
    Address address;
    u128 balance = 0;
};

/** Consensus parameters (DESIGN.md §4); governance may change them later. */
struct ConsensusParams {
    std::uint64_t roundTimeoutMs = 1000;  // T0
    std::uint64_t emptyBlockIntervalMs = 500;
    std::uint64_t maxClockDriftMs = 2000;
    std::uint32_t committeeMax = 31;
    std::uint32_t maxBlockTxs = 5000;
    std::uint64_t maxBlockBytes = 4U << 20U;
    std::uint64_t maxValidityBlocks = 100000;  // how far ahead valid_until_height may reach
};

/** The chain's starting point: identity, validators, balances and parameters. */
struct Genesis {
    std::string chainId;
    std::uint64_t genesisTimeMs = 0;
    std::vector<GenesisValidator> validators;
    std::vector<GenesisAccount> accounts;
    ConsensusParams consensus;
};

/** Parses genesis JSON (the format of the files in genesis/); every field is checked. */
[[nodiscard]] Result<Genesis> parseGenesis(std::string_view json);
/** Renders genesis JSON, stable field order, amounts as decimal strings. */
[[nodiscard]] std::string genesisToJson(const Genesis& genesis);

/**
 * The genesis block: height 0, round 0, parent id = SHA-256 of genesisToJson(genesis), timestamp
 * genesisTimeMs, exec roots of the genesis state. Its id is the chain's anchor; the genesis QC
 * (round 0, no signatures) certifies it.
 */
[[nodiscard]] codec::Block genesisBlock(const Genesis& genesis, const Hash256& stateRoot);
[[nodiscard]] codec::QuorumCert genesisQc(const codec::Block& genesisBlock);

}  // namespace gridledger::contracts
