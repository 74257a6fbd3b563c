#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/tokenomics.h>

namespace gridledger::contracts {

/** A validator of the genesis set: consensus key bound to its transport node id. */
struct GenesisValidator {
    std::string name;
    PubKey consensusKey;
    NodeId nodeId;
    /** The account the validator's governance transactions come from ("account" in genesis). */
    Address account;
};

/** An account funded at genesis. */
struct GenesisAccount {
    Address address;
    u128 balance = 0;
};

/** Longest leader reputation window a genesis may set, in blocks. */
inline constexpr std::uint32_t kMaxLeaderReputationWindow = 10'000;

/** Consensus parameters (docs/protocol.md); governance may change them later. */
struct ConsensusParams {
    std::uint64_t roundTimeoutMs = 1000;  // T0
    std::uint64_t emptyBlockIntervalMs = 500;
    std::uint64_t maxClockDriftMs = 2000;
    std::uint32_t committeeMax = 31;
    std::uint32_t maxBlockTxs = 5000;
    std::uint64_t maxBlockBytes = 4U << 20U;
    std::uint64_t maxValidityBlocks = 100000;  // how far ahead valid_until_height may reach
    /**
     * 0: blocks are stamped with the proposer's clock. Otherwise every block's timestamp is exactly
     * its parent's + blockTimeMs (a consensus rule), for deterministic dev and test chains.
     */
    std::uint64_t blockTimeMs = 0;
    /**
     * Leader reputation window in blocks (docs/protocol.md §1; 0: off). A member that neither
     * proposed nor voted in the last this-many blocks leads no round.
     */
    std::uint32_t leaderReputationWindow = 20;
};

/** A provider registered and admitted at genesis. */
struct GenesisProvider {
    Address address;
    codec::RegisterProvider inventory;
};

/** The chain's starting point: identity, validators, balances and parameters. */
struct Genesis {
    std::string chainId;
    std::uint64_t genesisTimeMs = 0;
    std::vector<GenesisValidator> validators;
    std::vector<GenesisAccount> accounts;
    ConsensusParams consensus;
    /** Tokenomics parameters (the paper's defaults unless the file sets them). */
    TokenomicsParams tokenomics;
    /** DPS base units in the reward pool at genesis: part of the total supply, in no account. */
    u128 rewardPool = 0;
    /** The power index (defaultPowerIndex() unless the file sets it). */
    PowerIndexParams powerIndex = defaultPowerIndex();
    GovernanceParams governance;
    TaskParams tasks;
    FeeParams fees;
    /** Provider stake: bond, slashing, unbonding (bonding off unless the file sets a bond). */
    StakeParams stake;
    /** Provider reputation in matching (docs/tokenomics.md "Provider reputation"). */
    ReputationParams reputation{};
    /** Accounts holding the verifier role from genesis. */
    std::vector<Address> verifiers;
    /** Providers admitted from genesis. */
    std::vector<GenesisProvider> providers;

    /** The parameters the system contracts start with. */
    [[nodiscard]] ChainParams chainParams() const;
};

/**
 * Parses genesis JSON (the format of the files in genesis/); every field is checked. The
 * sections `tokenomics`, `power_index`, `governance`, `tasks`, `stake`, `reputation`, `verifiers`
 * and `providers` are optional, and so is every field of `tokenomics`, `governance`, `tasks`,
 * `stake` and `reputation`: an absent one takes its default. Each genesis provider's genesis
 * balance must cover the provider bond, which genesis locks from it. The parameters must validate,
 * verifiers and providers be unique, inventories well formed and valued by the power index, and Σ
 * balances + reward pool fit in 128 bits (kConfig otherwise).
 */
[[nodiscard]] Result<Genesis> parseGenesis(std::string_view json);
/** Renders genesis JSON with every section and field, stable order, amounts as decimal strings. */
[[nodiscard]] std::string genesisToJson(const Genesis& genesis);

/**
 * A provider inventory from its JSON form (the `providers[]` entries of genesis without
 * `address`, and the file `gridledger tx register-provider --inventory` reads):
 * `{"devices": [{"model", "count", "peak_gflops", "memory_bandwidth_gbps", "memory_capacity_gb",
 * "features": [...], "power_watts", "factors": [{"name", "value"}]}], "labels": [{"key",
 * "value"}], "categories": [...]}`; u64 values as decimal strings. kConfig naming the field.
 */
[[nodiscard]] Result<codec::RegisterProvider> parseInventoryJson(std::string_view json);
[[nodiscard]] std::string inventoryToJson(const codec::RegisterProvider& inventory);

/**
 * The genesis hash: SHA-256 of genesisToJson(genesis), the canonical text of the whole document
 * (chain id, validators, balances, parameters). Whitespace and key order of the file do not change
 * it; any value does.
 */
[[nodiscard]] Hash256 genesisHash(const Genesis& genesis);

/**
 * The chain's signing domain, crypto::chainDomain(chain id, genesis hash): every transaction,
 * proposal, vote and timeout of the chain is signed in it.
 */
[[nodiscard]] std::string signingDomainOf(const Genesis& genesis);

/**
 * The genesis block: height 0, round 0, parent id = the genesis hash, timestamp
 * genesisTimeMs, exec roots of the genesis state. Its id is the chain's anchor; the genesis QC
 * (round 0, no signatures) certifies it.
 */
[[nodiscard]] codec::Block genesisBlock(const Genesis& genesis, const Hash256& stateRoot);
[[nodiscard]] codec::QuorumCert genesisQc(const codec::Block& genesisBlock);

}  // namespace gridledger::contracts
