#include <algorithm>

#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/settlement.h>
#include <gridledger/contracts/stake.h>

#include "provider_records.h"

namespace gridledger::contracts {
namespace {

constexpr std::uint8_t kTotalsFormat = 1;

Hash256 totalsKey() {
    return detail::stateKey("gridledger/state/stake_totals");
}

Hash256 unbondingKey() {
    return detail::stateKey("gridledger/state/unbonding_providers");
}

Bytes encodeTotals(const StakeTotals& totals) {
    detail::RecordWriter w(kTotalsFormat);
    w.u128v(totals.bonded).u128v(totals.burned);
    return w.take();
}

Result<StakeTotals> decodeTotals(ByteView bytes) {
    detail::RecordReader r(bytes, "stake totals");
    r.format(kTotalsFormat);
    StakeTotals totals;
    totals.bonded = r.u128v();
    totals.burned = r.u128v();
    GL_TRY(r.finish());
    return totals;
}

/** floor(amount × bps / 10 000). */
Result<u128> shareOf(u128 amount, std::uint32_t bps) {
    GL_ASSIGN_OR_RETURN(share, mulDiv(amount, bps, kBps));
    return share.quotient;
}

Status creditPool(StateLayer& state, u128 amount) {
    GL_ASSIGN_OR_RETURN(tokenomics, loadTokenomics(state));
    const auto pool = checkedAdd(tokenomics.emission.rewardPool, amount);
    if (!pool) {
        return fail(ErrorCode::kOverflow, "reward pool would overflow");
    }
    tokenomics.emission.rewardPool = *pool;
    storeTokenomics(state, tokenomics);
    return {};
}

}  // namespace

Result<SlashSplit> splitSlash(const StakeParams& stake, u128 bond, u128 refundCap) {
    SlashSplit split;
    GL_ASSIGN_OR_RETURN(slashed, shareOf(bond, stake.slashBps));
    const u128 refund = std::min(refundCap, slashed);
    const u128 rest = slashed - refund;
    GL_ASSIGN_OR_RETURN(burned, shareOf(rest, stake.slashBurnBps));
    GL_ASSIGN_OR_RETURN(toChallenger, shareOf(rest, stake.slashChallengerBps));
    split.slashed = slashed;
    split.refund = refund;
    split.burned = burned;
    split.toChallenger = toChallenger;
    // burned + toChallenger ≤ rest × (burn + challenger) / 10 000 ≤ rest.
    split.toPool = rest - burned - toChallenger;
    return split;
}

Result<StakeTotals> loadStakeTotals(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(value, state.get(totalsKey()));
    if (!value) {
        return StakeTotals{};
    }
    return decodeTotals(*value);
}

void storeStakeTotals(StateLayer& state, const StakeTotals& totals) {
    state.put(totalsKey(), encodeTotals(totals));
}

Result<StakeTotals> readStakeTotals(const ledger::StateTree& tree, std::uint64_t version) {
    return loadStakeTotals(StateLayer(tree, version));
}

Result<std::vector<Address>> loadUnbonding(const StateLayer& state) {
    return detail::loadAddresses(state, unbondingKey(), "unbonding providers");
}

Status checkBond(const ChainParams& params, const Provider& provider) {
    if (provider.bondState != BondState::kBonded) {
        return fail(ErrorCode::kProviderUnbonding,
                    provider.address.hex() + " is " +
                        std::string(bondStateName(provider.bondState)) + " its bond");
    }
    if (provider.bond < params.stake.providerBond) {
        return fail(ErrorCode::kBondTooLow, "bond " + toDecimal(provider.bond) + " of " +
                                                provider.address.hex() + " is below " +
                                                toDecimal(params.stake.providerBond));
    }
    return {};
}

Result<std::vector<codec::Event>> lockBond(StateLayer& state, const ChainParams& params,
                                           Provider& provider) {
    const u128 bond = params.stake.providerBond;
    if (bond == 0) {
        return std::vector<codec::Event>{};
    }
    GL_ASSIGN_OR_RETURN(account, loadAccount(state, provider.address));
    if (account.balance < bond) {
        return fail(ErrorCode::kInsufficientBalance, "balance " + toDecimal(account.balance) +
                                                         " cannot lock the provider bond " +
                                                         toDecimal(bond));
    }
    GL_ASSIGN_OR_RETURN(totals, loadStakeTotals(state));
    const auto bonded = checkedAdd(totals.bonded, bond);
    const auto held = checkedAdd(provider.bond, bond);
    if (!bonded || !held) {
        return fail(ErrorCode::kOverflow, "bonds would overflow");
    }
    account.balance -= bond;
    storeAccount(state, provider.address, account);
    provider.bond = *held;
    totals.bonded = *bonded;
    storeStakeTotals(state, totals);
    return std::vector<codec::Event>{codec::Event{
        "bond_locked", {{"provider", provider.address.hex()}, {"amount", toDecimal(bond)}}}};
}

Result<codec::Event> slashBond(StateLayer& state, const ChainParams& params,
                               const BlockContext& block, const Address& address,
                               const SlashPayees& payees) {
    GL_ASSIGN_OR_RETURN(provider, loadProvider(state, address));
    if (!provider) {
        return fail(ErrorCode::kProviderNotFound, "no provider " + address.hex());
    }
    GL_ASSIGN_OR_RETURN(split, splitSlash(params.stake, provider->bond, payees.refundCap));
    GL_ASSIGN_OR_RETURN(totals, loadStakeTotals(state));
    const auto bonded = checkedSub(totals.bonded, split.slashed);
    const auto burned = checkedAdd(totals.burned, split.burned);
    const auto slashed = checkedAdd(provider->slashed, split.slashed);
    if (!bonded || !burned || !slashed) {
        return fail(ErrorCode::kCorrupt, "stake totals disagree with the provider's bond");
    }
    provider->bond -= split.slashed;  // slashed ≤ bond: slash_bps ≤ 10 000
    provider->slashed = *slashed;
    GL_ASSIGN_OR_RETURN(reputation, addFaultPoints(provider->reputation, params.reputation,
                                                   reputationEpoch(params, block.timestampMs),
                                                   params.reputation.slashWeight));
    provider->reputation = reputation;
    storeProvider(state, *provider);
    totals.bonded = *bonded;
    totals.burned = *burned;
    storeStakeTotals(state, totals);
    const bool chain = payees.challenger.isZero();
    GL_TRY(creditAccount(state, payees.refundTo, split.refund));
    if (!chain) {
        GL_TRY(creditAccount(state, payees.challenger, split.toChallenger));
    }
    const u128 toPool = chain ? split.toPool + split.toChallenger : split.toPool;
    GL_TRY(creditPool(state, toPool));
    codec::Event event{"provider_slashed",
                       {{"provider", address.hex()},
                        {"challenger", chain ? std::string("system") : payees.challenger.hex()},
                        {"slashed", toDecimal(split.slashed)},
                        {"burned", toDecimal(split.burned)},
                        {"to_challenger", toDecimal(chain ? u128{0} : split.toChallenger)},
                        {"to_pool", toDecimal(toPool)},
                        {"bond", toDecimal(provider->bond)}}};
    if (split.refund != 0) {
        event.attributes.emplace_back("refund", toDecimal(split.refund));
        event.attributes.emplace_back("refund_to", payees.refundTo.hex());
    }
    return event;
}

Result<std::vector<codec::Event>> executeProviderUnbond(StateLayer& state,
                                                        const BlockContext& block,
                                                        const Address& sender,
                                                        const codec::ProviderUnbond& /*unbond*/) {
    GL_ASSIGN_OR_RETURN(provider, loadProvider(state, sender));
    if (!provider) {
        return fail(ErrorCode::kProviderNotFound, sender.hex() + " is not a provider");
    }
    if (provider->bondState != BondState::kBonded) {
        return fail(ErrorCode::kProviderUnbonding,
                    sender.hex() + " already asked to unbond (" +
                        std::string(bondStateName(provider->bondState)) + ")");
    }
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    // Past 2^64 ms the bond would never return; saturating keeps the rule total.
    const std::uint64_t releaseMs =
        checkedAdd(block.timestampMs, params.stake.unbondingDelayMs).value_or(~std::uint64_t{0});
    provider->bondState = BondState::kUnbonding;
    provider->unbondReleaseMs = releaseMs;
    storeProvider(state, *provider);
    GL_ASSIGN_OR_RETURN(unbonding, loadUnbonding(state));
    detail::insertSorted(unbonding, sender);
    state.put(unbondingKey(), detail::encodeAddresses(unbonding));
    return std::vector<codec::Event>{codec::Event{"unbond_requested",
                                                  {{"provider", sender.hex()},
                                                   {"bond", toDecimal(provider->bond)},
                                                   {"release_ms", std::to_string(releaseMs)}}}};
}

Result<std::vector<codec::Event>> releaseDueBonds(StateLayer& state, const BlockContext& block) {
    std::vector<codec::Event> events;
    GL_ASSIGN_OR_RETURN(unbonding, loadUnbonding(state));
    std::vector<Address> waiting;
    for (const auto& address : unbonding) {
        GL_ASSIGN_OR_RETURN(provider, loadProvider(state, address));
        if (!provider || provider->bondState != BondState::kUnbonding) {
            return fail(ErrorCode::kCorrupt, "unbonding list names " + address.hex());
        }
        if (block.timestampMs < provider->unbondReleaseMs) {
            waiting.push_back(address);
            continue;
        }
        GL_ASSIGN_OR_RETURN(totals, loadStakeTotals(state));
        const auto bonded = checkedSub(totals.bonded, provider->bond);
        if (!bonded) {
            return fail(ErrorCode::kCorrupt, "stake totals disagree with the provider's bond");
        }
        totals.bonded = *bonded;
        storeStakeTotals(state, totals);
        GL_TRY(creditAccount(state, address, provider->bond));
        events.push_back(codec::Event{
            "bond_released", {{"provider", address.hex()}, {"amount", toDecimal(provider->bond)}}});
        provider->bond = 0;
        provider->bondState = BondState::kReleased;
        storeProvider(state, *provider);
    }
    if (waiting.size() != unbonding.size()) {
        state.put(unbondingKey(), detail::encodeAddresses(waiting));
    }
    return events;
}

}  // namespace gridledger::contracts
