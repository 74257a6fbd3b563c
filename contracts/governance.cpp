#include <algorithm>

#include <gridledger/base/overloaded.h>
#include <gridledger/contracts/governance.h>
#include <gridledger/contracts/params.h>
#include <gridledger/crypto/schnorr.h>

#include "record.h"

namespace gridledger::contracts {
namespace {

// 2: validators and add-validator proposals carry the validator's account.
constexpr std::uint8_t kGovernanceFormat = 2;

Hash256 validatorSetKey() {
    return detail::stateKey("gridledger/state/validator_set");
}

Hash256 proposalCountKey() {
    return detail::stateKey("gridledger/state/proposal_count");
}

Hash256 proposalKey(std::uint64_t id) {
    Bytes bytes;
    appendU64(bytes, id);
    return detail::stateKey("gridledger/state/proposal", bytes);
}

Bytes encodeValidatorSet(const ValidatorSet& set) {
    detail::RecordWriter w(kGovernanceFormat);
    w.u64(set.version).u64(set.changedAtHeight);
    w.list(set.validators, [](detail::RecordWriter& out, const ValidatorEntry& v) {
        out.text(v.name).fixed(v.consensusKey).fixed(v.nodeId).fixed(v.account);
    });
    return w.take();
}

Result<ValidatorSet> decodeValidatorSet(ByteView bytes) {
    detail::RecordReader r(bytes, "validator set");
    r.format(kGovernanceFormat);
    ValidatorSet set;
    set.version = r.u64();
    set.changedAtHeight = r.u64();
    set.validators = r.list<ValidatorEntry>([](detail::RecordReader& in) {
        ValidatorEntry v;
        v.name = in.text();
        v.consensusKey = in.fixed<PubKey>();
        v.nodeId = in.fixed<NodeId>();
        v.account = in.fixed<Address>();
        return v;
    });
    GL_TRY(r.finish());
    return set;
}

void writeAction(detail::RecordWriter& w, const codec::ProposalAction& action) {
    w.u8(static_cast<std::uint8_t>(action.index()));
    std::visit(Overloaded{
                   [&w](const codec::AddValidator& a) {
                       w.text(a.name).fixed(a.consensusKey).fixed(a.nodeId).fixed(a.account);
                   },
                   [&w](const codec::RemoveValidator& a) { w.fixed(a.consensusKey); },
                   [&w](const codec::AdmitProvider& a) { w.fixed(a.provider); },
                   [&w](const codec::SuspendProvider& a) { w.fixed(a.provider); },
                   [&w](const codec::ReinstateProvider& a) { w.fixed(a.provider); },
                   [&w](const codec::GrantVerifier& a) { w.fixed(a.account); },
                   [&w](const codec::RevokeVerifier& a) { w.fixed(a.account); },
                   [&w](const codec::SetParameter& a) { w.text(a.name).text(a.value); },
               },
               action);
}

Result<codec::ProposalAction> readAction(detail::RecordReader& r) {
    switch (r.u8()) {
        case 0: {
            codec::AddValidator a;
            a.name = r.text();
            a.consensusKey = r.fixed<PubKey>();
            a.nodeId = r.fixed<NodeId>();
            a.account = r.fixed<Address>();
            return a;
        }
        case 1:
            return codec::RemoveValidator{r.fixed<PubKey>()};
        case 2:
            return codec::AdmitProvider{r.fixed<Address>()};
        case 3:
            return codec::SuspendProvider{r.fixed<Address>()};
        case 4:
            return codec::ReinstateProvider{r.fixed<Address>()};
        case 5:
            return codec::GrantVerifier{r.fixed<Address>()};
        case 6:
            return codec::RevokeVerifier{r.fixed<Address>()};
        case 7: {
            codec::SetParameter a;
            a.name = r.text();
            a.value = r.text();
            return a;
        }
        default:
            return fail(ErrorCode::kCorrupt, "stored proposal has an unknown action");
    }
}

Bytes encodeProposal(const Proposal& p) {
    detail::RecordWriter w(kGovernanceFormat);
    w.u64(p.id).fixed(p.proposer);
    writeAction(w, p.action);
    w.u64(p.createdHeight).u64(p.createdMs).u64(p.expiresMs);
    w.u8(static_cast<std::uint8_t>(p.status)).u64(p.closedHeight);
    const auto address = [](detail::RecordWriter& out, const Address& a) { out.fixed(a); };
    w.list(p.yes, address).list(p.no, address).text(p.outcome);
    return w.take();
}

Result<Proposal> decodeProposal(ByteView bytes) {
    detail::RecordReader r(bytes, "proposal");
    r.format(kGovernanceFormat);
    Proposal p;
    p.id = r.u64();
    p.proposer = r.fixed<Address>();
    GL_ASSIGN_OR_RETURN(action, readAction(r));
    p.action = std::move(action);
    p.createdHeight = r.u64();
    p.createdMs = r.u64();
    p.expiresMs = r.u64();
    const std::uint8_t status = r.u8();
    if (status > static_cast<std::uint8_t>(ProposalStatus::kFailed)) {
        return fail(ErrorCode::kCorrupt, "stored proposal has an unknown status");
    }
    p.status = static_cast<ProposalStatus>(status);
    p.closedHeight = r.u64();
    const auto address = [](detail::RecordReader& in) { return in.fixed<Address>(); };
    p.yes = r.list<Address>(address);
    p.no = r.list<Address>(address);
    p.outcome = r.text();
    GL_TRY(r.finish());
    return p;
}

void storeProposal(StateLayer& state, const Proposal& p) {
    state.put(proposalKey(p.id), encodeProposal(p));
}

/** The attributes that describe an action on the proposal_created event. */
std::vector<std::pair<std::string, std::string>> actionAttributes(
    const codec::ProposalAction& action) {
    using Attrs = std::vector<std::pair<std::string, std::string>>;
    return std::visit(Overloaded{
                          [](const codec::AddValidator& a) {
                              return Attrs{{"name", a.name},
                                           {"consensus_key", a.consensusKey.hex()},
                                           {"node_id", a.nodeId.hex()},
                                           {"account", a.account.hex()}};
                          },
                          [](const codec::RemoveValidator& a) {
                              return Attrs{{"consensus_key", a.consensusKey.hex()}};
                          },
                          [](const codec::AdmitProvider& a) {
                              return Attrs{{"provider", a.provider.hex()}};
                          },
                          [](const codec::SuspendProvider& a) {
                              return Attrs{{"provider", a.provider.hex()}};
                          },
                          [](const codec::ReinstateProvider& a) {
                              return Attrs{{"provider", a.provider.hex()}};
                          },
                          [](const codec::GrantVerifier& a) {
                              return Attrs{{"account", a.account.hex()}};
                          },
                          [](const codec::RevokeVerifier& a) {
                              return Attrs{{"account", a.account.hex()}};
                          },
                          [](const codec::SetParameter& a) {
                              return Attrs{{"parameter", a.name}, {"value", a.value}};
                          },
                      },
                      action);
}

codec::Event validatorEvent(std::string kind, const ValidatorEntry& v, const ValidatorSet& set) {
    return codec::Event{std::move(kind),
                        {{"name", v.name},
                         {"consensus_key", v.consensusKey.hex()},
                         {"address", v.address().hex()},
                         {"node_id", v.nodeId.hex()},
                         {"set_version", std::to_string(set.version)},
                         {"validators", std::to_string(set.validators.size())},
                         {"effective", "next consensus epoch"}}};
}

Result<codec::Event> addValidator(StateLayer& state, const BlockContext& block,
                                  const codec::AddValidator& a) {
    GL_ASSIGN_OR_RETURN(set, loadValidatorSet(state));
    for (const auto& v : set.validators) {
        if (v.consensusKey == a.consensusKey || v.nodeId == a.nodeId || v.account == a.account) {
            return fail(
                ErrorCode::kInvalidProposal,
                "the consensus key, node id or account already belongs to validator " + v.name);
        }
    }
    const ValidatorEntry entry{a.name, a.consensusKey, a.nodeId, a.account};
    const auto at = std::lower_bound(
        set.validators.begin(), set.validators.end(), a.consensusKey,
        [](const ValidatorEntry& v, const PubKey& key) { return v.consensusKey < key; });
    set.validators.insert(at, entry);
    set.version += 1;
    set.changedAtHeight = block.height;
    storeValidatorSet(state, set);
    return validatorEvent("validator_added", entry, set);
}

Result<codec::Event> removeValidator(StateLayer& state, const BlockContext& block,
                                     const codec::RemoveValidator& a) {
    GL_ASSIGN_OR_RETURN(set, loadValidatorSet(state));
    const auto it = std::find_if(set.validators.begin(), set.validators.end(),
                                 [&](const auto& v) { return v.consensusKey == a.consensusKey; });
    if (it == set.validators.end()) {
        return fail(ErrorCode::kInvalidProposal, a.consensusKey.hex() + " is not a validator");
    }
    if (set.validators.size() == 1) {
        return fail(ErrorCode::kInvalidProposal, "the last validator cannot be removed");
    }
    const ValidatorEntry removed = *it;
    set.validators.erase(it);
    set.version += 1;
    set.changedAtHeight = block.height;
    storeValidatorSet(state, set);
    return validatorEvent("validator_removed", removed, set);
}

Result<codec::Event> setParameter(StateLayer& state, const codec::SetParameter& a) {
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    GL_ASSIGN_OR_RETURN(changed, withParameter(params, a));
    storeParams(state, changed);
    return codec::Event{"parameter_set",
                        {{"parameter", a.name},
                         {"old", parameterValue(params, a.name)},
                         {"new", parameterValue(changed, a.name)}}};
}

/** Applies `action` to `state`; on error `state` may hold partial writes (use a child layer). */
Result<codec::Event> applyAction(StateLayer& state, const BlockContext& block,
                                 const codec::ProposalAction& action) {
    using S = ProviderStatus;
    return std::visit(
        Overloaded{
            [&](const codec::AddValidator& a) { return addValidator(state, block, a); },
            [&](const codec::RemoveValidator& a) { return removeValidator(state, block, a); },
            [&](const codec::AdmitProvider& a) {
                return changeProviderStatus(state, block, a.provider, S::kRegistered, S::kAdmitted);
            },
            [&](const codec::SuspendProvider& a) {
                return changeProviderStatus(state, block, a.provider, S::kAdmitted, S::kSuspended);
            },
            [&](const codec::ReinstateProvider& a) {
                return changeProviderStatus(state, block, a.provider, S::kSuspended, S::kAdmitted);
            },
            [&](const codec::GrantVerifier& a) { return setVerifier(state, a.account, true); },
            [&](const codec::RevokeVerifier& a) { return setVerifier(state, a.account, false); },
            [&](const codec::SetParameter& a) { return setParameter(state, a); },
        },
        action);
}

std::size_t countMembers(const std::vector<Address>& voters, const ValidatorSet& set) {
    return static_cast<std::size_t>(std::count_if(
        voters.begin(), voters.end(), [&set](const Address& a) { return set.contains(a); }));
}

/** Closes a proposal that just passed: applies its action, or records why it could not. */
Result<std::vector<codec::Event>> closePassed(StateLayer& state, const BlockContext& block,
                                              Proposal& p) {
    const std::string id = std::to_string(p.id);
    StateLayer attempt(state);
    auto applied = applyAction(attempt, block, p.action);
    if (!applied && detail::isStorageError(applied.error())) {
        return std::unexpected(applied.error());
    }
    p.closedHeight = block.height;
    if (!applied) {
        p.status = ProposalStatus::kFailed;
        p.outcome = applied.error().message;
        return std::vector<codec::Event>{
            codec::Event{"proposal_failed",
                         {{"id", id},
                          {"reason", std::string(applied.error().reason())},
                          {"message", applied.error().message}}}};
    }
    attempt.mergeIntoParent();
    p.status = ProposalStatus::kPassed;
    return std::vector<codec::Event>{
        codec::Event{"proposal_passed",
                     {{"id", id}, {"action", std::string(actionKind(p.action))}}},
        std::move(*applied)};
}

}  // namespace

bool ValidatorSet::contains(const Address& account) const {
    return std::any_of(validators.begin(), validators.end(),
                       [&account](const ValidatorEntry& v) { return v.address() == account; });
}

std::string_view statusName(ProposalStatus status) {
    switch (status) {
        case ProposalStatus::kOpen:
            return "open";
        case ProposalStatus::kPassed:
            return "passed";
        case ProposalStatus::kRejected:
            return "rejected";
        case ProposalStatus::kFailed:
            return "failed";
    }
    return "unknown";
}

Result<ValidatorSet> loadValidatorSet(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(value, state.get(validatorSetKey()));
    if (!value) {
        return fail(ErrorCode::kCorrupt, "the state holds no validator set");
    }
    return decodeValidatorSet(*value);
}

void storeValidatorSet(StateLayer& state, const ValidatorSet& set) {
    state.put(validatorSetKey(), encodeValidatorSet(set));
}

Result<ValidatorSet> readValidatorSet(const ledger::StateTree& tree, std::uint64_t version) {
    GL_ASSIGN_OR_RETURN(value, tree.get(validatorSetKey(), version));
    if (!value) {
        return fail(ErrorCode::kNotFound, "no validator set at this height");
    }
    return decodeValidatorSet(*value);
}

Result<std::uint64_t> loadProposalCount(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(value, state.get(proposalCountKey()));
    if (!value) {
        return std::uint64_t{0};
    }
    if (value->size() != 8) {
        return fail(ErrorCode::kCorrupt, "stored proposal count is corrupt");
    }
    return readU64(*value);
}

Result<std::optional<Proposal>> loadProposal(const StateLayer& state, std::uint64_t id) {
    GL_ASSIGN_OR_RETURN(value, state.get(proposalKey(id)));
    if (!value) {
        return std::optional<Proposal>();
    }
    GL_ASSIGN_OR_RETURN(proposal, decodeProposal(*value));
    return std::optional<Proposal>(std::move(proposal));
}

Result<std::optional<Proposal>> readProposal(const ledger::StateTree& tree, std::uint64_t version,
                                             std::uint64_t id) {
    GL_ASSIGN_OR_RETURN(value, tree.get(proposalKey(id), version));
    if (!value) {
        return std::optional<Proposal>();
    }
    GL_ASSIGN_OR_RETURN(proposal, decodeProposal(*value));
    return std::optional<Proposal>(std::move(proposal));
}

Result<std::vector<codec::Event>> executePropose(StateLayer& state, const BlockContext& block,
                                                 const Address& sender,
                                                 const codec::Propose& propose) {
    GL_ASSIGN_OR_RETURN(set, loadValidatorSet(state));
    if (!set.contains(sender)) {
        return fail(ErrorCode::kNotValidator, sender.hex() + " is not a validator");
    }
    {
        // The action must apply now; the trial's writes are discarded.
        StateLayer trial(state);
        GL_TRY(applyAction(trial, block, propose.action));
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    GL_ASSIGN_OR_RETURN(id, loadProposalCount(state));
    Proposal p;
    p.id = id;
    p.proposer = sender;
    p.action = propose.action;
    p.createdHeight = block.height;
    p.createdMs = block.timestampMs;
    p.expiresMs =
        checkedAdd(block.timestampMs, params.governance.proposalTtlMs).value_or(UINT64_MAX);
    storeProposal(state, p);
    Bytes count;
    appendU64(count, id + 1);
    state.put(proposalCountKey(), std::move(count));
    codec::Event event{"proposal_created",
                       {{"id", std::to_string(id)},
                        {"proposer", sender.hex()},
                        {"action", std::string(actionKind(p.action))},
                        {"expires_ms", std::to_string(p.expiresMs)}}};
    for (auto& attribute : actionAttributes(p.action)) {
        event.attributes.push_back(std::move(attribute));
    }
    return std::vector<codec::Event>{std::move(event)};
}

Result<std::vector<codec::Event>> executeVote(StateLayer& state, const BlockContext& block,
                                              const Address& sender,
                                              const codec::ProposalVote& vote) {
    GL_ASSIGN_OR_RETURN(set, loadValidatorSet(state));
    if (!set.contains(sender)) {
        return fail(ErrorCode::kNotValidator, sender.hex() + " is not a validator");
    }
    const std::string id = std::to_string(vote.proposalId);
    GL_ASSIGN_OR_RETURN(found, loadProposal(state, vote.proposalId));
    if (!found) {
        return fail(ErrorCode::kProposalNotFound, "no proposal " + id);
    }
    Proposal p = std::move(*found);
    if (p.status != ProposalStatus::kOpen) {
        return fail(ErrorCode::kProposalClosed,
                    "proposal " + id + " is " + std::string(statusName(p.status)));
    }
    if (block.timestampMs >= p.expiresMs) {
        return fail(ErrorCode::kProposalExpired,
                    "proposal " + id + " expired at " + std::to_string(p.expiresMs) + " ms");
    }
    if (detail::containsSorted(p.yes, sender) || detail::containsSorted(p.no, sender)) {
        return fail(ErrorCode::kAlreadyVoted, sender.hex() + " already voted on proposal " + id);
    }
    detail::insertSorted(vote.approve ? p.yes : p.no, sender);
    const std::size_t n = set.validators.size();
    const std::size_t yes = countMembers(p.yes, set);
    const std::size_t no = countMembers(p.no, set);
    std::vector<codec::Event> events{codec::Event{"vote_cast",
                                                  {{"id", id},
                                                   {"voter", sender.hex()},
                                                   {"approve", vote.approve ? "true" : "false"},
                                                   {"yes", std::to_string(yes)},
                                                   {"no", std::to_string(no)},
                                                   {"validators", std::to_string(n)}}}};
    if (passes(yes, n)) {
        GL_ASSIGN_OR_RETURN(closed, closePassed(state, block, p));
        events.insert(events.end(), closed.begin(), closed.end());
    } else if (cannotPass(no, n)) {
        p.status = ProposalStatus::kRejected;
        p.closedHeight = block.height;
        events.push_back(codec::Event{"proposal_rejected", {{"id", id}}});
    }
    storeProposal(state, p);
    return events;
}

}  // namespace gridledger::contracts
