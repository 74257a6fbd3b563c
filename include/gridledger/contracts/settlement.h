#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/state.h>
#include <gridledger/contracts/tokenomics.h>
#include <gridledger/ledger/state_tree.h>

/**
 * GFL balances, the reward pool and the epoch settlement run by the executor (docs/tokenomics.md,
 * §6.5; docs/tokenomics.md "Settlement in blocks"). GFL is held by providers only and cannot be
 * transferred: no payload moves it; only a settlement mints or burns it.
 */
namespace gridledger::contracts {

/** The chain-wide tokenomics state. */
struct TokenomicsState {
    /** n, last halving, converted GFL and the reward pool (DPS base units). */
    EmissionState emission;
    /** Epochs settled so far: the next epoch to settle. */
    std::uint64_t nextEpoch = 0;
    /** Σ provider GFL balances, in GFLOP/s. */
    std::uint64_t gflSupply = 0;

    bool operator==(const TokenomicsState&) const = default;
};

/** The summary of one settled epoch, kept in state for audit (its events are on the receipt). */
struct EpochRecord {
    std::uint64_t epoch = 0;
    std::uint64_t boundaryMs = 0;
    /** The block whose system receipt carries this settlement's events. */
    std::uint64_t height = 0;
    /** Providers settled (those holding GFL or with a non-zero median). */
    std::uint64_t providers = 0;
    std::uint64_t supplyAfter = 0;
    std::uint64_t payoutBurned = 0;
    std::uint64_t minted = 0;
    std::uint64_t rebalanceBurned = 0;
    u128 owed = 0;
    u128 paid = 0;
    u128 shortfall = 0;
    /** n after the settlement, and whether (and why) it halved. */
    std::uint32_t halvings = 0;
    bool halvedByPeriod = false;
    bool halvedByThreshold = false;
    u128 rewardPoolAfter = 0;
    std::uint64_t convertedAfter = 0;

    bool operator==(const EpochRecord&) const = default;
};

[[nodiscard]] Result<TokenomicsState> loadTokenomics(const StateLayer& state);
void storeTokenomics(StateLayer& state, const TokenomicsState& tokenomics);
[[nodiscard]] Result<TokenomicsState> readTokenomics(const ledger::StateTree& tree,
                                                     std::uint64_t version);

/** A provider's GFL balance in GFLOP/s (0 if it never held any). */
[[nodiscard]] Result<std::uint64_t> loadGfl(const StateLayer& state, const Address& provider);
[[nodiscard]] Result<std::uint64_t> readGfl(const ledger::StateTree& tree, std::uint64_t version,
                                            const Address& provider);

[[nodiscard]] Result<std::optional<EpochRecord>> readEpochRecord(const ledger::StateTree& tree,
                                                                 std::uint64_t version,
                                                                 std::uint64_t epoch);

/**
 * Settles, in order, every epoch that ended at or before `block.timestampMs` and is not settled
 * yet (none before the first boundary; several after an idle stretch), each as of its boundary
 * time: per provider of the settled index the lower median of its slots, then settleEpoch (payout,
 * rebalance, halving), crediting the DPS paid from the pool to the providers' accounts. Returns
 * the events for the block's system receipt. An epoch whose settlement cannot complete (a sum
 * beyond its integers, a broken invariant) changes nothing but the settled-epoch counter and
 * leaves an `epoch_settlement_failed` event with the reason: the chain never stops on it. Fails
 * only on storage errors.
 */
[[nodiscard]] Result<std::vector<codec::Event>> settleEndedEpochs(StateLayer& state,
                                                                  const BlockContext& block);

}  // namespace gridledger::contracts
