#include "sim/checker.h"

#include <algorithm>

namespace gridledger::sim {
namespace {

std::string shortId(const Hash256& id) {
    return id.hex().substr(2, 8);
}

std::string at(std::size_t i, std::uint64_t round) {
    return "instance=i" + std::to_string(i) + " round=" + std::to_string(round);
}

}  // namespace

Checker::Checker(const Scenario& scenario, const Verifier::Committees& committees,
                 const Verifier& verifier)
    : scenario_(scenario),
      committees_(committees),
      verifier_(verifier),
      height_(scenario.instances(), 0),
      heightAtGst_(scenario.instances(), 0),
      firstCommitAfterGst_(scenario.instances()) {}

void Checker::flag(std::string invariant, std::string detail, std::uint64_t nowMs) {
    if (all_.contains(invariant) || (only_ && invariant != *only_)) {
        return;
    }
    Violation violation{invariant, std::move(detail), nowMs};
    if (!violation_) {
        violation_ = violation;
    }
    all_.emplace(std::move(invariant), std::move(violation));
}

bool Checker::livenessChecked(std::size_t i) const {
    return scenario_.checkLiveness && scenario_.roles[i] == Role::kHonest;
}

void Checker::onProposalSigned(const consensus::BlockPtr& block) {
    signed_.emplace(block->id, block);
}

void Checker::onProposalSent(std::size_t i, const codec::Block& block, std::uint64_t nowMs) {
    if (!safetyChecked(scenario_.roles[i])) {
        return;
    }
    const auto& h = block.header;
    const auto [it, inserted] =
        proposals_.emplace(SignedRound{scenario_.keyOf[i], h.epoch, h.round}, block.id);
    if (!inserted && it->second != block.id) {
        flag("double-proposal",
             at(i, h.round) + ": proposed " + shortId(it->second) + " and " + shortId(block.id),
             nowMs);
    }
}

void Checker::onVoteSent(std::size_t i, const codec::Vote& vote,
                         const consensus::SafetyData& persisted, std::uint64_t nowMs) {
    if (!safetyChecked(scenario_.roles[i])) {
        return;
    }
    if (persisted.epoch != vote.epoch || persisted.lastVotedRound < vote.round) {
        flag("unpersisted-send", at(i, vote.round) + ": vote left before its safety data", nowMs);
    }
    const std::size_t signer = scenario_.keyOf[i];
    const SignedRound key{signer, vote.epoch, vote.round};
    const auto [it, inserted] = votes_.emplace(key, vote.blockId);
    if (!inserted && it->second != vote.blockId) {
        flag("double-vote",
             at(i, vote.round) + ": votes for " + shortId(it->second) + " and " +
                 shortId(vote.blockId),
             nowMs);
    }
    if (timeouts_.contains(key)) {
        flag("vote-after-timeout", at(i, vote.round) + ": voted in a round it timed out", nowMs);
    }
    SignedRounds& rounds = signedRounds_[{signer, vote.epoch}];
    if (inserted && vote.round <= std::max(rounds.vote, rounds.timeout)) {
        flag("vote-rule",
             at(i, vote.round) + ": V1, voted after signing round " +
                 std::to_string(std::max(rounds.vote, rounds.timeout)),
             nowMs);
    }
    rounds.vote = std::max(rounds.vote, vote.round);
    const auto block = signed_.find(vote.blockId);
    if (block == signed_.end()) {
        flag("vote-rule", at(i, vote.round) + ": voted for a block nobody proposed", nowMs);
        return;
    }
    const codec::BlockHeader& h = block->second->header;
    const bool direct = h.round == h.qc.round + 1;
    const bool afterTc = h.tc && h.round == h.tc->round + 1;
    if (!direct && !(afterTc && h.qc.round >= h.tc->highestHqcRound())) {
        flag("vote-rule",
             at(i, vote.round) + ": V2, voted for a block whose qc_round=" +
                 std::to_string(h.qc.round) + " is below its tc's highest hqc round=" +
                 std::to_string(afterTc ? h.tc->highestHqcRound() : 0),
             nowMs);
    }
}

void Checker::onTimeoutSent(std::size_t i, const codec::Timeout& timeout,
                            const consensus::SafetyData& persisted, std::uint64_t incarnation,
                            std::uint64_t nowMs) {
    if (!safetyChecked(scenario_.roles[i])) {
        return;
    }
    if (persisted.epoch != timeout.epoch || persisted.lastVotedRound < timeout.round) {
        flag("unpersisted-send", at(i, timeout.round) + ": timeout left before its safety data",
             nowMs);
    }
    const SignedRound key{scenario_.keyOf[i], timeout.epoch, timeout.round};
    SignedRounds& rounds = signedRounds_[{scenario_.keyOf[i], timeout.epoch}];
    if (timeout.round < rounds.vote) {
        flag("timeout-rule",
             at(i, timeout.round) + ": timed out after voting in round " +
                 std::to_string(rounds.vote),
             nowMs);
    }
    rounds.timeout = std::max(rounds.timeout, timeout.round);
    const SentTimeout sent{timeout.highQc.round, incarnation, i};
    const auto [it, inserted] = timeouts_.emplace(key, sent);
    if (inserted || it->second.hqcRound == sent.hqcRound) {
        return;
    }
    const bool resigned = it->second.instance == i && it->second.incarnation < incarnation &&
                          it->second.hqcRound < sent.hqcRound;
    if (!resigned) {
        flag("double-timeout",
             at(i, timeout.round) + ": timeouts with hqc rounds " +
                 std::to_string(it->second.hqcRound) + " and " + std::to_string(sent.hqcRound),
             nowMs);
    }
    it->second = sent;
}

const PubKey& Checker::leaderFor(const codec::Block& block,
                                 const consensus::Committee& committee) const {
    const std::size_t window = scenario_.options.leaderReputationWindow;
    std::vector<const codec::BlockHeader*> recent;
    for (auto it = signed_.find(block.header.parentId);
         window > 0 && it != signed_.end() && recent.size() < window &&
         it->second->header.epoch + 1 >= committee.epoch();
         it = signed_.find(it->second->header.parentId)) {
        recent.push_back(&it->second->header);
    }
    const auto previous =
        committee.epoch() > 0 ? committees_.find(committee.epoch() - 1) : committees_.end();
    return committee.member(committee.reputationLeaderIndex(
        block.header.round, recent, window,
        previous != committees_.end() ? &previous->second : nullptr));
}

void Checker::checkValidity(const consensus::Commit& commit, std::size_t i, std::uint64_t nowMs) {
    const auto& blocks = commit.blocks;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const codec::Block& block = *blocks[k];
        if (validated_.contains(block.id)) {
            continue;
        }
        const std::string where = at(i, block.header.round) + " block=" + shortId(block.id);
        const codec::QuorumCert& cert =
            k + 1 < blocks.size() ? blocks[k + 1]->header.qc : commit.qc;
        const auto committee = committees_.find(block.header.epoch);
        if (!signed_.contains(block.id)) {
            flag("validity", where + ": committed block was never proposed", nowMs);
        } else if (committee == committees_.end() ||
                   block.header.author != leaderFor(block, committee->second)) {
            flag("validity", where + ": committed block is not from its round's leader", nowMs);
        } else if (!verifier_.proposal(block)) {
            flag("validity", where + ": committed block does not verify", nowMs);
        } else if (cert.blockId != block.id || cert.round != block.header.round ||
                   !verifier_.quorumCert(cert)) {
            flag("validity", where + ": committed block is not certified", nowMs);
        }
        validated_.insert(block.id);
    }
    const codec::Block& last = *blocks.back();
    const auto child = signed_.find(commit.commitQc.blockId);
    if (child == signed_.end() || child->second->header.parentId != last.id ||
        child->second->header.round != last.header.round + 1 ||
        !verifier_.quorumCert(commit.commitQc)) {
        flag("validity",
             at(i, last.header.round) + ": commit without a certified child in the next round",
             nowMs);
    }
}

void Checker::onCommit(std::size_t i, const consensus::Commit& commit, std::uint64_t nowMs) {
    if (!safetyChecked(scenario_.roles[i]) || commit.blocks.empty()) {
        if (commit.blocks.empty()) {
            flag("validity", "instance=i" + std::to_string(i) + ": empty commit", nowMs);
        }
        return;
    }
    checkValidity(commit, i, nowMs);
    for (const auto& block : commit.blocks) {
        const std::uint64_t h = block->header.height;
        if (scenario_.discarded(block->header.epoch, h)) {
            continue;  // above its epoch's reconfiguration block: no ledger holds it
        }
        if (h > height_[i] + 1) {
            flag("agreement",
                 "instance=i" + std::to_string(i) + " skipped from height " +
                     std::to_string(height_[i]) + " to " + std::to_string(h),
                 nowMs);
        }
        const auto [it, inserted] = canonical_.try_emplace(h, block->id, i);
        if (!inserted && it->second.first != block->id) {
            flag("agreement",
                 "height=" + std::to_string(h) + ": instance=i" + std::to_string(i) +
                     " committed " + shortId(block->id) + ", instance=i" +
                     std::to_string(it->second.second) + " committed " + shortId(it->second.first),
                 nowMs);
        }
        const auto parent = canonical_.find(h - 1);
        if (h > 1 && parent != canonical_.end() && parent->second.first != block->header.parentId) {
            flag("agreement",
                 "height=" + std::to_string(h) + ": instance=i" + std::to_string(i) +
                     " committed a block whose parent is not the committed block below",
                 nowMs);
        }
        if (h > height_[i]) {
            height_[i] = h;
            if (gstSeen_ && !firstCommitAfterGst_[i]) {
                firstCommitAfterGst_[i] = nowMs;
            }
        }
    }
}

void Checker::onAppended(std::size_t i, const codec::Block& block, std::uint64_t nowMs) {
    if (!safetyChecked(scenario_.roles[i])) {
        return;
    }
    const std::uint64_t h = block.header.height;
    const auto [it, inserted] = canonical_.try_emplace(h, block.id, i);
    if (!inserted && it->second.first != block.id) {
        flag("agreement",
             "height=" + std::to_string(h) + ": instance=i" + std::to_string(i) + " appended " +
                 shortId(block.id) + " to its ledger, instance=i" +
                 std::to_string(it->second.second) + " committed " + shortId(it->second.first),
             nowMs);
    }
    if (h > height_[i]) {
        height_[i] = h;
        if (gstSeen_ && !firstCommitAfterGst_[i]) {
            firstCommitAfterGst_[i] = nowMs;
        }
    }
}

void Checker::startLiveness(std::uint64_t nowMs, std::uint64_t boundMs) {
    gstSeen_ = true;
    gstAtMs_ = nowMs;
    boundMs_ = boundMs;
    heightAtGst_ = height_;
}

void Checker::onClock(std::uint64_t nowMs) {
    if (!gstSeen_ || nowMs <= gstAtMs_ + boundMs_ || failed()) {
        return;
    }
    for (std::size_t i = 0; i < scenario_.instances(); ++i) {
        if (livenessChecked(i) && height_[i] < heightAtGst_[i] + scenario_.liveCommits) {
            flag("liveness",
                 "instance=i" + std::to_string(i) + " committed " +
                     std::to_string(height_[i] - heightAtGst_[i]) + " of " +
                     std::to_string(scenario_.liveCommits) + " new heights within " +
                     std::to_string(boundMs_) + " ms after GST",
                 nowMs);
            return;
        }
    }
}

bool Checker::liveDone() const {
    if (!gstSeen_) {
        return false;
    }
    for (std::size_t i = 0; i < scenario_.instances(); ++i) {
        if (livenessChecked(i) && height_[i] < heightAtGst_[i] + scenario_.liveCommits) {
            return false;
        }
    }
    return true;
}

std::uint64_t Checker::recoveryMs() const {
    std::uint64_t worst = 0;
    for (std::size_t i = 0; i < scenario_.instances(); ++i) {
        const auto& first = firstCommitAfterGst_[i];
        if (livenessChecked(i) && first.has_value()) {
            worst = std::max(worst, first.value() - gstAtMs_);
        }
    }
    return worst;
}

}  // namespace gridledger::sim
