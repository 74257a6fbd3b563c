#include "backoff.h"

#include <algorithm>

namespace gridledger::p2p {

std::chrono::milliseconds backoffDelay(std::uint32_t attempt, std::chrono::milliseconds base,
                                       std::chrono::milliseconds cap, std::mt19937_64& rng) {
    const std::int64_t capMs = std::max<std::int64_t>(cap.count(), 1);
    std::int64_t delay = std::clamp<std::int64_t>(base.count(), 1, capMs);
    for (std::uint32_t i = 0; i < attempt && delay < capMs; ++i) {
        delay = std::min(delay * 2, capMs);
    }
    std::uniform_int_distribution<std::int64_t> jitter(delay / 2, delay);
    return std::chrono::milliseconds(jitter(rng));
}

}  // namespace gridledger::p2p
