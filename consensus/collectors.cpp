#include "collectors.h"

#include <utility>

namespace gridledger::consensus {

VoteCollector::Added VoteCollector::add(const Committee& committee, std::size_t index,
                                        const codec::Vote& vote,
                                        std::optional<codec::QuorumCert>& qc) {
    RoundVotes& round = rounds_[vote.round];
    const auto [it, inserted] = round.votedFor.emplace(index, vote.blockId);
    if (!inserted) {
        return it->second == vote.blockId ? Added::kDuplicate : Added::kEquivocation;
    }
    auto& votes = round.byBlock[vote.blockId];
    votes.push_back(vote);
    if (votes.size() >= committee.quorum() && !round.certified.contains(vote.blockId)) {
        auto built = buildQuorumCert(committee, votes);
        if (built) {
            round.certified.insert(vote.blockId);
            qc = std::move(*built);
        }
    }
    return Added::kNew;
}

std::size_t VoteCollector::count(std::uint64_t round, const Hash256& blockId) const {
    const auto it = rounds_.find(round);
    if (it == rounds_.end()) {
        return 0;
    }
    const auto votes = it->second.byBlock.find(blockId);
    return votes == it->second.byBlock.end() ? 0 : votes->second.size();
}

void VoteCollector::pruneBelow(std::uint64_t round) {
    rounds_.erase(rounds_.begin(), rounds_.lower_bound(round));
}

std::optional<codec::TimeoutCert> TimeoutCollector::add(const Committee& committee,
                                                        std::size_t index,
                                                        const codec::Timeout& timeout) {
    RoundTimeouts& round = rounds_[timeout.round];
    if (!round.byMember.emplace(index, timeout).second || round.certified ||
        round.byMember.size() < committee.quorum()) {
        return std::nullopt;
    }
    std::vector<codec::Timeout> timeouts;
    timeouts.reserve(round.byMember.size());
    for (const auto& entry : round.byMember) {
        timeouts.push_back(entry.second);
    }
    auto built = buildTimeoutCert(committee, timeouts);
    if (!built) {
        return std::nullopt;
    }
    round.certified = true;
    return std::move(*built);
}

std::size_t TimeoutCollector::count(std::uint64_t round) const {
    const auto it = rounds_.find(round);
    return it == rounds_.end() ? 0 : it->second.byMember.size();
}

void TimeoutCollector::pruneBelow(std::uint64_t round) {
    rounds_.erase(rounds_.begin(), rounds_.lower_bound(round));
}

}  // namespace gridledger::consensus
