#pragma once

// What tests know of the chain that `gridledger init` and `gridledger testnet` write.

#include <cstdint>
#include <filesystem>
#include <string>

#include <boost/json/value.hpp>

#include <gridledger/contracts/genesis.h>
#include <gridledger/crypto/schnorr.h>

#include "home.h"

namespace gridledger::testing {

/**
 * The fee of every payload kind in genesis/dev.json; the testnet CLI test checks each kind of a
 * written genesis against it.
 */
inline constexpr std::uint64_t kDevFee = 1'000'000'000;

/** The signing domain of the chain of the node home `home`, from its config/genesis.json. */
[[nodiscard]] inline std::string signingDomainOfHome(const std::filesystem::path& home) {
    auto text = node::readFile(home / "config" / "genesis.json");
    auto genesis = text ? contracts::parseGenesis(*text) : std::unexpected(text.error());
    return genesis ? contracts::signingDomainOf(*genesis) : std::string();
}

/** The signing domain a node serves, from its node_getStatus answer (chain_id, genesis_hash). */
[[nodiscard]] inline std::string signingDomainOfStatus(const boost::json::value& status) {
    const auto hash = Hash256::fromHex(status.at("genesis_hash").as_string());
    return hash ? crypto::chainDomain(status.at("chain_id").as_string(), *hash) : std::string();
}

}  // namespace gridledger::testing
