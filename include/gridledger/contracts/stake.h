#pragma once

#include <cstdint>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/state_tree.h>

/**
 * Provider stake (docs/tokenomics.md "Provider stake"): the DPS bond registration locks, the
 * share of it an upheld challenge slashes (burned, to the challenger, to the reward pool), and
 * unbonding, which stops the provider at once and pays the bond back once the delay has passed.
 * Integer-only and deterministic: the unbonding providers are released in address order.
 */
namespace gridledger::contracts {

/** Where one slash goes; refund + burned + toChallenger + toPool == slashed. */
struct SlashSplit {
    /** floor(bond × slash_bps / 10 000). */
    u128 slashed = 0;
    /** min(refund cap, slashed): paid back first to whom the slashed result cost (a spot check). */
    u128 refund = 0;
    /** floor((slashed − refund) × slash_burn_bps / 10 000). */
    u128 burned = 0;
    /** floor((slashed − refund) × slash_challenger_bps / 10 000). */
    u128 toChallenger = 0;
    /** slashed − refund − burned − toChallenger: the pool takes the rounding remainder. */
    u128 toPool = 0;

    bool operator==(const SlashSplit&) const = default;
};

/**
 * The split of a slash of `bond` under `stake` (validated params), `refundCap` of it refunded
 * first. kOverflow never in practice.
 */
[[nodiscard]] Result<SlashSplit> splitSlash(const StakeParams& stake, u128 bond,
                                            u128 refundCap = 0);

/** Who a slash pays besides the burn and the pool. */
struct SlashPayees {
    /**
     * Gets slash_challenger_bps of what the refund leaves. The zero address when the chain
     * decided by itself (a redundant task's majority): that share then goes to the pool.
     */
    Address challenger;
    /** Gets up to refundCap of the slashed DPS back first (a spot check's consumer). */
    Address refundTo;
    u128 refundCap = 0;
};

/** Chain-wide stake totals, kept in state for audit. */
struct StakeTotals {
    /** Σ of every provider's bond. */
    u128 bonded = 0;
    /** DPS burned by slashes since genesis: the only DPS that leaves the supply. */
    u128 burned = 0;

    bool operator==(const StakeTotals&) const = default;
};

[[nodiscard]] Result<StakeTotals> loadStakeTotals(const StateLayer& state);
void storeStakeTotals(StateLayer& state, const StakeTotals& totals);
[[nodiscard]] Result<StakeTotals> readStakeTotals(const ledger::StateTree& tree,
                                                  std::uint64_t version);

/**
 * Whether `provider` may attest or take tasks as far as its stake goes: kProviderUnbonding once
 * it asked to unbond (unbonding or released), kBondTooLow when its bond is below the chain's
 * provider_bond.
 */
[[nodiscard]] Status checkBond(const ChainParams& params, const Provider& provider);

/**
 * Locks the chain's provider_bond from `provider`'s account into its bond (registration).
 * kInsufficientBalance, writing nothing, when the account cannot cover it. Returns the
 * bond_locked event, or none when the bond is 0.
 */
[[nodiscard]] Result<std::vector<codec::Event>> lockBond(StateLayer& state,
                                                         const ChainParams& params,
                                                         Provider& provider);

/**
 * Slashes `provider`'s bond (splitSlash with payees.refundCap): the bond shrinks by `slashed`,
 * payees.refundTo gains the refund, the challenger's account toChallenger (the pool when the
 * challenger is zero), the reward pool toPool, the burned total `burned`. A bond that is unbonding
 * is still slashed; a released one is 0. Every slash also adds reputation.slash_weight fault points
 * to the provider's reputation in the epoch of `block` (docs/tokenomics.md "Provider reputation").
 * Requires the provider to exist (kProviderNotFound otherwise).
 */
[[nodiscard]] Result<codec::Event> slashBond(StateLayer& state, const ChainParams& params,
                                             const BlockContext& block, const Address& provider,
                                             const SlashPayees& payees);

/**
 * Executes provider_unbond: the sender's bond starts unbonding; it is released at the first block
 * whose time is ≥ the request block's time + unbonding_delay_ms. Refusals: kProviderNotFound
 * (not a provider), kProviderUnbonding (already asked).
 */
[[nodiscard]] Result<std::vector<codec::Event>> executeProviderUnbond(
    StateLayer& state, const BlockContext& block, const Address& sender,
    const codec::ProviderUnbond& unbond);

/**
 * The chain's own work at the start of each block: pays back every unbonding bond whose release
 * time is ≤ the block's time, in ascending address order (bond_released events).
 */
[[nodiscard]] Result<std::vector<codec::Event>> releaseDueBonds(StateLayer& state,
                                                                const BlockContext& block);

/** Providers waiting out the unbonding delay, ascending. */
[[nodiscard]] Result<std::vector<Address>> loadUnbonding(const StateLayer& state);

}  // namespace gridledger::contracts
