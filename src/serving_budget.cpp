#include "serving_budget.h"

#include <algorithm>

namespace gridledger::node {

ServingBudget::Peer& ServingBudget::peerLocked(const NodeId& peer, Clock::time_point now) {
    auto it = peers_.find(peer);
    if (it == peers_.end()) {
        it = peers_
                 .emplace(peer, Peer{TokenBucket(limits_.blocksPerSecond, limits_.blocksBurst, now),
                                     TokenBucket(limits_.bytesPerSecond, limits_.bytesBurst, now)})
                 .first;
    }
    return it->second;
}

ServingBudget::Decision ServingBudget::admit(const NodeId& peer, Clock::time_point now) {
    const std::lock_guard lock(mutex_);
    Peer& state = peerLocked(peer, now);
    const std::chrono::milliseconds wait =
        std::max(state.blocks.waitFor(now), state.bytes.waitFor(now));
    if (wait == std::chrono::milliseconds::zero()) {
        return {Verdict::kServe, wait};
    }
    if (state.waiting >= limits_.maxWaiting) {
        return {Verdict::kRefuse, wait};
    }
    ++state.waiting;
    return {Verdict::kWait, wait};
}

void ServingBudget::resumed(const NodeId& peer) {
    const std::lock_guard lock(mutex_);
    const auto it = peers_.find(peer);
    if (it != peers_.end() && it->second.waiting > 0) {
        --it->second.waiting;
    }
}

void ServingBudget::charge(const NodeId& peer, std::size_t blocks, std::size_t bytes,
                           Clock::time_point now) {
    const std::lock_guard lock(mutex_);
    Peer& state = peerLocked(peer, now);
    state.blocks.charge(static_cast<double>(std::max<std::size_t>(blocks, 1)), now);
    state.bytes.charge(static_cast<double>(bytes), now);
}

}  // namespace gridledger::node
