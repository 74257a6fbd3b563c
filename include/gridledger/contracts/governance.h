#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/codec/payloads.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/state_tree.h>

/**
 * Roles and governance (docs/tokenomics.md "Governance"): the validator set of
 * record, proposals and validators' votes. A proposal passes with yes votes of more than 2/3 of
 * the validators and is applied by the vote that passes it.
 */
namespace gridledger::contracts {

/** A validator: consensus key (its account signs governance txs) bound to its node id. */
struct ValidatorEntry {
    std::string name;
    PubKey consensusKey;
    NodeId nodeId;
    /** The account the validator proposes and votes from: a key of its own, not the consensus
     * key (docs/operations.md). */
    Address account;

    /** The account address governance votes come from: `account`. */
    [[nodiscard]] Address address() const { return account; }
    bool operator==(const ValidatorEntry&) const = default;
};

/**
 * The validator set of record. Governance counts votes over it from the block that changed it;
 * consensus adopts it at the first consensus epoch that starts after `changedAtHeight` (the
 * reconfiguration itself is not done here: docs/protocol.md).
 */
struct ValidatorSet {
    /** 0 at genesis, +1 at every change. */
    std::uint64_t version = 0;
    /** Height of the block that applied the last change (0: genesis). */
    std::uint64_t changedAtHeight = 0;
    /** Sorted by consensus key. */
    std::vector<ValidatorEntry> validators;

    [[nodiscard]] bool contains(const Address& account) const;
    bool operator==(const ValidatorSet&) const = default;
};

enum class ProposalStatus : std::uint8_t {
    kOpen = 0,
    kPassed = 1,    // applied by the vote that passed it
    kRejected = 2,  // enough no votes that it can no longer pass
    kFailed = 3,    // passed, but its action could no longer be applied (see `outcome`)
};

/** "open", "passed", "rejected" or "failed". */
[[nodiscard]] std::string_view statusName(ProposalStatus status);

struct Proposal {
    std::uint64_t id = 0;
    Address proposer;
    codec::ProposalAction action;
    std::uint64_t createdHeight = 0;
    std::uint64_t createdMs = 0;
    /** Votes are refused from the first block with timestamp ≥ expiresMs. */
    std::uint64_t expiresMs = 0;
    ProposalStatus status = ProposalStatus::kOpen;
    std::uint64_t closedHeight = 0;
    /** Voters' addresses, each sorted. */
    std::vector<Address> yes;
    std::vector<Address> no;
    /** Why a passed proposal failed to apply; empty otherwise. */
    std::string outcome;

    bool operator==(const Proposal&) const = default;
};

/** More than 2/3: 3·yes > 2·validators. */
[[nodiscard]] constexpr bool passes(std::size_t yes, std::size_t validators) {
    return 3 * yes > 2 * validators;
}

/** No longer able to pass: 3·no ≥ validators (the remaining voters cannot exceed 2/3). */
[[nodiscard]] constexpr bool cannotPass(std::size_t no, std::size_t validators) {
    return 3 * no >= validators;
}

[[nodiscard]] Result<ValidatorSet> loadValidatorSet(const StateLayer& state);
void storeValidatorSet(StateLayer& state, const ValidatorSet& set);
[[nodiscard]] Result<ValidatorSet> readValidatorSet(const ledger::StateTree& tree,
                                                    std::uint64_t version);

/** The number of proposals ever made (ids are 0 … count−1). */
[[nodiscard]] Result<std::uint64_t> loadProposalCount(const StateLayer& state);
[[nodiscard]] Result<std::optional<Proposal>> loadProposal(const StateLayer& state,
                                                           std::uint64_t id);
[[nodiscard]] Result<std::optional<Proposal>> readProposal(const ledger::StateTree& tree,
                                                           std::uint64_t version, std::uint64_t id);

/**
 * Executes a proposal by `sender`. kNotValidator unless the sender is in the validator set; the
 * action must apply to the current state (it is tried and discarded), else its error:
 * kInvalidProposal (e.g. adding a validator twice, removing the last one, an unknown parameter),
 * kProviderNotFound. The proposal gets the next id and expires proposalTtlMs after the block.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executePropose(StateLayer& state,
                                                               const BlockContext& block,
                                                               const Address& sender,
                                                               const codec::Propose& propose);

/**
 * Executes a vote by `sender`. Refusals: kNotValidator, kProposalNotFound, kProposalClosed (passed,
 * rejected or failed), kProposalExpired (block time ≥ expiresMs), kAlreadyVoted. Votes count only
 * from current validators. The vote that passes a proposal applies its action; if the action no
 * longer applies the proposal becomes kFailed and the vote still succeeds.
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeVote(StateLayer& state,
                                                            const BlockContext& block,
                                                            const Address& sender,
                                                            const codec::ProposalVote& vote);

}  // namespace gridledger::contracts
