#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <variant>

#include <gridledger/base/error.h>
#include <gridledger/codec/block.h>

namespace gridledger::consensus {

/**
 * What a validator must remember across crashes so that it never votes twice in a round and never
 * abandons a QC it may have helped to lock. The core emits PersistSafety with the new value, and
 * the driver makes it durable (fsync) before it performs any later effect that sends a message.
 */
struct SafetyData {
    std::uint64_t epoch = 0;
    /** Highest round in which this validator voted or signed a timeout. */
    std::uint64_t lastVotedRound = 0;
    /** Highest QC round among the blocks this validator voted for. */
    std::uint64_t oneChainRound = 0;

    bool operator==(const SafetyData&) const = default;
};

/** The rounds of a proposal that the voting rule looks at. */
struct VoteRequest {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    std::uint64_t qcRound = 0;
    /** Round of the block's TC, if it carries one. */
    std::optional<std::uint64_t> tcRound;
    /** The TC's highest hqc round (0 without a TC). */
    std::uint64_t tcHighestHqcRound = 0;

    /** The request for a block header. */
    [[nodiscard]] static VoteRequest of(const codec::BlockHeader& header);
};

/** The rounds the timeout rule looks at. */
struct TimeoutRequest {
    std::uint64_t epoch = 0;
    /** The round to time out. */
    std::uint64_t round = 0;
    /** Round of the validator's highest QC (sent with the timeout). */
    std::uint64_t hqcRound = 0;
    /** Round of the validator's highest TC, if any. */
    std::optional<std::uint64_t> tcRound;
};

/** The voting rule refused; `clause` names the clause, the rounds say why. */
struct NotSafeToVote {
    enum class Clause {
        kWrongEpoch,               // the block's epoch is not the safety data's
        kRoundNotAfterLastVote,    // round <= lastVotedRound
        kNotExtendingCertificate,  // round is neither qcRound + 1 nor tcRound + 1
        kQcBelowTcHighestHqc,      // round == tcRound + 1 but qcRound < the TC's highest hqc round
    };
    Clause clause = Clause::kWrongEpoch;
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    std::uint64_t qcRound = 0;
    std::optional<std::uint64_t> tcRound;
    std::uint64_t tcHighestHqcRound = 0;
    std::uint64_t lastVotedRound = 0;

    bool operator==(const NotSafeToVote&) const = default;
};

/** The timeout rule refused; `clause` names the clause, the rounds say why. */
struct NotSafeToTimeout {
    enum class Clause {
        kWrongEpoch,           // the timeout's epoch is not the safety data's
        kRoundNotJustified,    // round is neither hqcRound + 1 nor tcRound + 1
        kQcBelowOneChain,      // hqcRound < oneChainRound
        kRoundBeforeLastVote,  // round < lastVotedRound
    };
    Clause clause = Clause::kWrongEpoch;
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    std::uint64_t hqcRound = 0;
    std::optional<std::uint64_t> tcRound;
    std::uint64_t oneChainRound = 0;
    std::uint64_t lastVotedRound = 0;

    bool operator==(const NotSafeToTimeout&) const = default;
};

using SafetyError = std::variant<NotSafeToVote, NotSafeToTimeout>;

/**
 * The error for logs: code kNotSafeToVote or kNotSafeToTimeout, and a message with the clause and
 * every round as key=value fields.
 */
[[nodiscard]] Error toError(const SafetyError& error);

/**
 * The voting and timeout rules. Pure: each decision takes the current safety data and returns
 * the data to persist before the vote or timeout may leave, or the refusal. Injected into the
 * core so that a simulator can run a deliberately weakened rule.
 */
class SafetyRules {
  public:
    virtual ~SafetyRules() = default;

    /**
     * Decides whether a validator holding `data` may vote for a block with `request`'s rounds.
     * The caller has already checked that the block is valid and comes from the round's leader.
     */
    [[nodiscard]] virtual std::expected<SafetyData, SafetyError> decideVote(
        const SafetyData& data, const VoteRequest& request) const = 0;

    /** Decides whether a validator holding `data` may sign a timeout for `request.round`. */
    [[nodiscard]] virtual std::expected<SafetyData, SafetyError> decideTimeout(
        const SafetyData& data, const TimeoutRequest& request) const = 0;
};

/**
 * The 2-chain rules of SDBFT (docs/protocol.md).
 * Vote iff epoch matches, round > lastVotedRound, and (round == qcRound + 1, or round == tcRound +
 * 1 and qcRound >= the TC's highest hqc round); then lastVotedRound = round and oneChainRound =
 * max(oneChainRound, qcRound). Time out iff epoch matches, (round == hqcRound + 1 or round ==
 * tcRound + 1), hqcRound >= oneChainRound and round >= lastVotedRound; then lastVotedRound = round.
 */
class TwoChainSafetyRules final : public SafetyRules {
  public:
    [[nodiscard]] std::expected<SafetyData, SafetyError> decideVote(
        const SafetyData& data, const VoteRequest& request) const override;
    [[nodiscard]] std::expected<SafetyData, SafetyError> decideTimeout(
        const SafetyData& data, const TimeoutRequest& request) const override;
};

}  // namespace gridledger::consensus
