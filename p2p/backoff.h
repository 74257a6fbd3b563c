#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace gridledger::p2p {

/**
 * The re-dial delay after `attempt` failed attempts (0 after a disconnect of an up peer):
 * d = min(cap, base · 2^attempt), then a uniformly random delay in [d/2, d] drawn from `rng`,
 * so nodes that lost each other at once do not re-dial in lock-step.
 */
[[nodiscard]] std::chrono::milliseconds backoffDelay(std::uint32_t attempt,
                                                     std::chrono::milliseconds base,
                                                     std::chrono::milliseconds cap,
                                                     std::mt19937_64& rng);

}  // namespace gridledger::p2p
