#pragma once

// What tests know of the chain that `gridledger init` and `gridledger testnet` write.

#include <cstdint>

namespace gridledger::testing {

/**
 * The fee of every payload kind in genesis/dev.json; the testnet CLI test checks each kind of a
 * written genesis against it.
 */
inline constexpr std::uint64_t kDevFee = 1'000'000'000;

}  // namespace gridledger::testing
