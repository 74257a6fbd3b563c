#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/contracts/reputation.h>
#include <gridledger/contracts/state.h>
#include <gridledger/contracts/task_lifecycle.h>
#include <gridledger/contracts/tokenomics.h>
#include <gridledger/ledger/state_tree.h>

/**
 * The chain parameters the system contracts run on (docs/tokenomics.md): written at genesis into
 * the state tree and changed only by governance (`set_parameter` proposals), so every node reads
 * the same values at the same height.
 */
namespace gridledger::contracts {

/** Governance parameters (docs/tokenomics.md). */
struct GovernanceParams {
    /** A proposal takes votes for this long after the block that created it (7 days). */
    std::uint64_t proposalTtlMs = 7 * kDayMs;

    bool operator==(const GovernanceParams&) const = default;
};

/**
 * Provider stake (docs/tokenomics.md "Provider stake"): the bond registration locks, the share of
 * it an upheld challenge slashes and where the slashed DPS goes, and how long an unbonding bond
 * stays slashable.
 */
struct StakeParams {
    /** DPS base units a provider locks at registration; 0 turns bonding off. */
    u128 providerBond = 0;
    /** Share of the bond an upheld challenge slashes (10%). */
    std::uint32_t slashBps = 1'000;
    /** How the slashed DPS is split: burned, to the challenger, to the reward pool (Σ = 10 000). */
    std::uint32_t slashBurnBps = 5'000;
    std::uint32_t slashChallengerBps = 2'500;
    std::uint32_t slashPoolBps = 2'500;
    /** Block time from an unbond request to the bond's release; at least one epoch (15 days). */
    std::uint64_t unbondingDelayMs = 15 * kDayMs;

    bool operator==(const StakeParams&) const = default;
};

/**
 * The fee of each payload kind in DPS base units (docs/tokenomics.md, "Fees"): the least a
 * transaction of that kind must offer in its `fee`. Every applied transaction pays its whole
 * offered fee to the reward pool. The defaults price changing the registry (providers, proposals)
 * above the everyday task traffic.
 */
struct FeeParams {
    /** Indexed like codec::kPayloadKinds. */
    std::array<std::uint64_t, codec::kPayloadKindCount> byKind = {
        100'000'000'000'000,      // transfer: 0.0001 DPS
        10'000'000'000'000'000,   // propose: 0.01 DPS
        100'000'000'000'000,      // vote
        100'000'000'000'000'000,  // register_provider: 0.1 DPS
        100'000'000'000'000,      // attest
        1'000'000'000'000'000,    // challenge: 0.001 DPS
        1'000'000'000'000'000,    // task_create
        100'000'000'000'000,      // task_start
        100'000'000'000'000,      // task_refuse
        100'000'000'000'000,      // task_top_up
        100'000'000'000'000,      // task_submit_result
        100'000'000'000'000,      // task_verify
        100'000'000'000'000,      // task_report_failure
        100'000'000'000'000,      // task_cancel
        100'000'000'000'000,      // provider_unbond
        1'000'000'000'000'000,    // task_spot_check: 0.001 DPS, like a challenge
        100'000'000'000'000,      // task_spot_check_verdict
    };

    /** The fee of `payload`'s kind. */
    [[nodiscard]] std::uint64_t of(const codec::Payload& payload) const {
        return byKind[payload.index()];
    }
    /** The fee of the kind named `kind` (codec::kPayloadKinds), or nullptr. */
    [[nodiscard]] std::uint64_t* named(std::string_view kind);

    bool operator==(const FeeParams&) const = default;
};

/** Everything the system contracts read besides the state itself. */
struct ChainParams {
    /** Genesis time: tokenomics epoch 0 starts here. Fixed for the life of the chain. */
    std::uint64_t genesisTimeMs = 0;
    TokenomicsParams tokenomics;
    PowerIndexParams index;
    GovernanceParams governance;
    /** The task lifecycle's timeouts and cancellation fee (docs/tasks.md). */
    TaskParams tasks;
    FeeParams fees;
    StakeParams stake;
    /** Provider reputation in matching (docs/tokenomics.md "Provider reputation"). */
    ReputationParams reputation{};

    /**
     * Checks tokenomics, index, governance, task, stake and reputation parameters
     * (kInvalidArgument naming it): slash_bps ≤ 10 000, the three slash shares summing to exactly
     * 10 000, the unbonding delay at least one epoch, validateReputation.
     */
    [[nodiscard]] Status validate() const;
};

/**
 * GridLedger's default power index (the paper gives no values; docs/tokenomics.md): factors
 * memory_bandwidth (4000 GB/s), memory_capacity (80 GB) and feature.tensor_cores (1), and the
 * categories ml_training, inference and hpc.
 */
[[nodiscard]] PowerIndexParams defaultPowerIndex();

/** State key of the chain parameters: SHA-256("gridledger/state/params"). */
[[nodiscard]] Hash256 paramsKey();

[[nodiscard]] Bytes encodeParams(const ChainParams& params);
[[nodiscard]] Result<ChainParams> decodeParams(ByteView bytes);

/** The parameters in `state`; kCorrupt if absent (genesis always writes them). */
[[nodiscard]] Result<ChainParams> loadParams(const StateLayer& state);
void storeParams(StateLayer& state, const ChainParams& params);
[[nodiscard]] Result<ChainParams> readParams(const ledger::StateTree& tree, std::uint64_t version);

/**
 * `params` with one parameter set (the names and value forms of docs/tokenomics.md), validated.
 * kInvalidProposal for an unknown name, a parameter fixed at genesis (tokenomics.epoch_ms,
 * tokenomics.slot_ms), a value that does not parse, or a result that fails validate().
 */
[[nodiscard]] Result<ChainParams> withParameter(const ChainParams& params,
                                                const codec::SetParameter& change);

/** The current text value of a governable parameter (as withParameter reads it), or "". */
[[nodiscard]] std::string parameterValue(const ChainParams& params, std::string_view name);

}  // namespace gridledger::contracts
