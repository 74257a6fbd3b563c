#pragma once

// The dev genesis that `gridledger init` and `gridledger testnet` write: genesis/dev.json with the
// validators and the funded dev account filled in, and the keys each validator home holds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/result.h>
#include <gridledger/contracts/genesis.h>

#include "home.h"

namespace gridledger::node {

/** The dev account's genesis balance: one billion DPS (18 decimals). */
inline constexpr u128 kDevBalance = u128{1000000000} * u128{1000000000000000000ULL};

/** Each validator's account in a dev genesis holds this much, to pay its governance fees. */
inline constexpr u128 kValidatorBalance = u128{1000} * u128{1000000000000000000ULL};

/** What a dev genesis may change in genesis/dev.json; unset fields keep the template's value. */
struct DevGenesisOptions {
    std::string chainId;
    std::optional<std::uint64_t> roundTimeoutMs;
    std::optional<std::uint64_t> emptyBlockIntervalMs;
    std::optional<std::uint32_t> leaderReputationWindow;
};

/**
 * Creates a validator's keys in `home`: keys/validator.key (the Schnorr consensus key),
 * keys/validator-account.key (its account, a separate key) and keys/node.key (the Ed25519 P2P
 * identity), all mode 0600 and encrypted if `protection` carries a passphrase. Returns the
 * validator's genesis entry under `name`. Fails, writing nothing more, if a key already exists.
 */
[[nodiscard]] Result<contracts::GenesisValidator> createValidatorKeys(
    const Home& home, const std::string& name, const KeyProtection& protection = {});

/**
 * The dev genesis JSON: the validators in the given order, the account `dev` funded with
 * kDevBalance, each validator's account (its governance key, apart from its consensus key) with
 * kValidatorBalance, the genesis time now. Fails unless the result parses with
 * contracts::parseGenesis (so a node accepts every genesis this returns) and its empty-block
 * interval is below its round timeout.
 */
[[nodiscard]] Result<std::string> buildDevGenesis(
    const std::vector<contracts::GenesisValidator>& validators, const Address& dev,
    const DevGenesisOptions& options);

/** Writes `genesis` as the home's config/genesis.json (mode 0644). */
[[nodiscard]] Status writeGenesis(const Home& home, std::string_view genesis);

}  // namespace gridledger::node
