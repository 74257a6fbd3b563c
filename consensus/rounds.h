#pragma once

// Private to consensus/: the successor test shared by the core and its safety rules.

#include <cstdint>

namespace gridledger::consensus {

/** True iff `round` == `previous` + 1, without overflow. */
[[nodiscard]] inline bool follows(std::uint64_t round, std::uint64_t previous) {
    return round > previous && round - previous == 1;
}

}  // namespace gridledger::consensus
