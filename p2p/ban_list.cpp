#include "ban_list.h"

#include <algorithm>

namespace gridledger::p2p {

BanList::BanList(BanPolicy policy) : policy_(policy) {}

std::uint32_t BanList::decayed(const Record& record, Clock::time_point now) const {
    if (now <= record.scoredAt || policy_.decayPerMinute == 0) {
        return record.score;
    }
    const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(now - record.scoredAt);
    const auto forgiven = static_cast<std::uint64_t>(minutes.count()) * policy_.decayPerMinute;
    return forgiven >= record.score ? 0 : record.score - static_cast<std::uint32_t>(forgiven);
}

bool BanList::add(const NodeId& nodeId, std::uint32_t points, Clock::time_point now) {
    prune(now);
    Record& record = records_[nodeId];
    if (record.bannedUntil > now) {
        return false;
    }
    const std::uint64_t total = std::uint64_t{decayed(record, now)} + points;
    record.score = static_cast<std::uint32_t>(std::min<std::uint64_t>(total, UINT32_MAX));
    record.scoredAt = now;
    if (record.score < policy_.threshold) {
        return false;
    }
    record.score = 0;
    record.bannedUntil = now + policy_.banDuration;
    return true;
}

bool BanList::isBanned(const NodeId& nodeId, Clock::time_point now) const {
    return bannedUntil(nodeId, now).has_value();
}

std::optional<BanList::Clock::time_point> BanList::bannedUntil(const NodeId& nodeId,
                                                               Clock::time_point now) const {
    const auto it = records_.find(nodeId);
    if (it == records_.end() || it->second.bannedUntil <= now) {
        return std::nullopt;
    }
    return it->second.bannedUntil;
}

std::uint32_t BanList::score(const NodeId& nodeId, Clock::time_point now) const {
    const auto it = records_.find(nodeId);
    if (it == records_.end() || it->second.bannedUntil > now) {
        return 0;
    }
    return decayed(it->second, now);
}

void BanList::prune(Clock::time_point now) {
    std::erase_if(records_, [this, now](const auto& entry) {
        return entry.second.bannedUntil <= now && decayed(entry.second, now) == 0;
    });
}

}  // namespace gridledger::p2p
