#include <algorithm>
#include <string>

#include <gridledger/consensus/safety_rules.h>

#include "rounds.h"

namespace gridledger::consensus {
namespace {

std::string optionalRound(const std::optional<std::uint64_t>& round) {
    return round ? std::to_string(*round) : std::string("none");
}

std::string_view clauseName(NotSafeToVote::Clause clause) {
    switch (clause) {
        case NotSafeToVote::Clause::kWrongEpoch:
            return "wrong_epoch";
        case NotSafeToVote::Clause::kRoundNotAfterLastVote:
            return "round_not_after_last_vote";
        case NotSafeToVote::Clause::kNotExtendingCertificate:
            return "not_extending_certificate";
        case NotSafeToVote::Clause::kQcBelowTcHighestHqc:
            return "qc_below_tc_highest_hqc";
    }
    return "unknown";
}

std::string_view clauseName(NotSafeToTimeout::Clause clause) {
    switch (clause) {
        case NotSafeToTimeout::Clause::kWrongEpoch:
            return "wrong_epoch";
        case NotSafeToTimeout::Clause::kRoundNotJustified:
            return "round_not_justified";
        case NotSafeToTimeout::Clause::kQcBelowOneChain:
            return "qc_below_one_chain";
        case NotSafeToTimeout::Clause::kRoundBeforeLastVote:
            return "round_before_last_vote";
    }
    return "unknown";
}

Error describe(const NotSafeToVote& e) {
    return Error{ErrorCode::kNotSafeToVote,
                 "not safe to vote: clause=" + std::string(clauseName(e.clause)) +
                     " epoch=" + std::to_string(e.epoch) + " round=" + std::to_string(e.round) +
                     " qc_round=" + std::to_string(e.qcRound) +
                     " tc_round=" + optionalRound(e.tcRound) +
                     " tc_highest_hqc_round=" + std::to_string(e.tcHighestHqcRound) +
                     " last_voted_round=" + std::to_string(e.lastVotedRound)};
}

Error describe(const NotSafeToTimeout& e) {
    return Error{ErrorCode::kNotSafeToTimeout,
                 "not safe to time out: clause=" + std::string(clauseName(e.clause)) +
                     " epoch=" + std::to_string(e.epoch) + " round=" + std::to_string(e.round) +
                     " hqc_round=" + std::to_string(e.hqcRound) +
                     " tc_round=" + optionalRound(e.tcRound) +
                     " one_chain_round=" + std::to_string(e.oneChainRound) +
                     " last_voted_round=" + std::to_string(e.lastVotedRound)};
}

}  // namespace

VoteRequest VoteRequest::of(const codec::BlockHeader& header) {
    VoteRequest request;
    request.epoch = header.epoch;
    request.round = header.round;
    request.qcRound = header.qc.round;
    if (header.tc) {
        request.tcRound = header.tc->round;
        request.tcHighestHqcRound = header.tc->highestHqcRound();
    }
    return request;
}

Error toError(const SafetyError& error) {
    return std::visit([](const auto& e) { return describe(e); }, error);
}

std::expected<SafetyData, SafetyError> TwoChainSafetyRules::decideVote(
    const SafetyData& data, const VoteRequest& request) const {
    const auto refuse = [&](NotSafeToVote::Clause clause) {
        return std::unexpected<SafetyError>(
            NotSafeToVote{clause, request.epoch, request.round, request.qcRound, request.tcRound,
                          request.tcHighestHqcRound, data.lastVotedRound});
    };
    if (request.epoch != data.epoch) {
        return refuse(NotSafeToVote::Clause::kWrongEpoch);
    }
    if (request.round <= data.lastVotedRound) {
        return refuse(NotSafeToVote::Clause::kRoundNotAfterLastVote);
    }
    if (!follows(request.round, request.qcRound)) {
        if (!request.tcRound || !follows(request.round, *request.tcRound)) {
            return refuse(NotSafeToVote::Clause::kNotExtendingCertificate);
        }
        if (request.qcRound < request.tcHighestHqcRound) {
            return refuse(NotSafeToVote::Clause::kQcBelowTcHighestHqc);
        }
    }
    SafetyData next = data;
    next.lastVotedRound = request.round;
    next.oneChainRound = std::max(data.oneChainRound, request.qcRound);
    return next;
}

std::expected<SafetyData, SafetyError> TwoChainSafetyRules::decideTimeout(
    const SafetyData& data, const TimeoutRequest& request) const {
    const auto refuse = [&](NotSafeToTimeout::Clause clause) {
        return std::unexpected<SafetyError>(
            NotSafeToTimeout{clause, request.epoch, request.round, request.hqcRound,
                             request.tcRound, data.oneChainRound, data.lastVotedRound});
    };
    if (request.epoch != data.epoch) {
        return refuse(NotSafeToTimeout::Clause::kWrongEpoch);
    }
    const bool afterQc = follows(request.round, request.hqcRound);
    const bool afterTc = request.tcRound && follows(request.round, *request.tcRound);
    if (!afterQc && !afterTc) {
        return refuse(NotSafeToTimeout::Clause::kRoundNotJustified);
    }
    if (request.hqcRound < data.oneChainRound) {
        return refuse(NotSafeToTimeout::Clause::kQcBelowOneChain);
    }
    if (request.round < data.lastVotedRound) {
        return refuse(NotSafeToTimeout::Clause::kRoundBeforeLastVote);
    }
    SafetyData next = data;
    next.lastVotedRound = request.round;
    return next;
}

}  // namespace gridledger::consensus
