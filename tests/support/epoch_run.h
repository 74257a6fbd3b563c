#pragma once

// A deterministic tokenomics run on a real node (docs/operations.md "A deterministic epoch run"):
// a genesis with a fixed block time and short epochs, two providers admitted by governance, and a
// driver that sends one transaction at a time, chosen from the head alone.

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include <gridledger/base/bytes.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/crypto/schnorr.h>

namespace gridledger::testing {

/** The shape of the chain a run drives. Two transactions fit in a slot (each moves 2 blocks). */
struct EpochRunPlan {
    std::uint64_t genesisTimeMs = 1'600'000'000'000;
    std::uint64_t blockTimeMs = 1000;
    std::uint64_t slotMs = 4000;
    std::uint64_t slotsPerEpoch = 3;
    /** A halving every 10 epochs, unless the threshold comes first. */
    std::uint64_t halvingPeriodMs = 120'000;
    std::uint64_t halvingGflThreshold = 5'000'000;
    /** Epochs 0 … lastEpoch are settled by the end of the run. */
    std::uint64_t lastEpoch = 81;
    /**
     * Idle for half an hour by default: the chain moves only for a transaction. A short interval
     * (below the round timeout) makes empty blocks come as fast as the node can make them.
     */
    std::uint64_t emptyBlockIntervalMs = 1'800'000;
    std::uint64_t roundTimeoutMs = 3'600'000;

    [[nodiscard]] std::uint64_t epochMs() const { return slotMs * slotsPerEpoch; }
};

/** The providers of a run, in ascending address order, and their per-device corrected GFLOP/s. */
inline constexpr std::size_t kRunProviders = 2;

/** What the driver attested for one provider in one epoch: corrected GFLOP/s per slot (0: none). */
using SlotValues = std::vector<std::uint64_t>;

/** Everything a run produced, for comparing two runs and checking figures by hand. */
struct EpochRunResult {
    /** `gridledger export epochs --format csv` and `--format json` against the node at the end. */
    std::string csv;
    std::string json;
    /** The block height of every transaction the driver sent, in order. */
    std::vector<std::uint64_t> txHeights;
    /** The providers' addresses, ascending (the settlement order). */
    std::array<Address, kRunProviders> providers;
    /** fed[epoch][provider]: the slot values the driver attested, challenged slots as 0. */
    std::vector<std::array<SlotValues, kRunProviders>> fed;
    /** The corrected GFLOP/s the node reported on each accepted attestation, in order. */
    std::vector<std::uint64_t> attestedGflops;
    std::uint64_t challenges = 0;
    /** The output of `gridledger replay` of the run's home once the node stopped. */
    std::string replay;
};

/** The workload category every provider of a run serves and attests. */
inline constexpr const char* kRunCategory = "ml_training";

/** The providers' keys, ascending by address (the settlement order); the same in every run. */
[[nodiscard]] std::array<crypto::SecretKey, kRunProviders> runProviderKeys();

/** The verifier of a run's genesis. */
[[nodiscard]] crypto::SecretKey runVerifierKey();

/** The registration of provider `i`: one device model, its region label, kRunCategory. */
[[nodiscard]] codec::RegisterProvider providerInventory(std::size_t provider);

/**
 * Sends one transaction signed by the key and returns its receipt once committed; throws unless
 * it succeeded.
 */
using SendAndWait =
    std::function<boost::json::object(const crypto::SecretKey&, const codec::Payload&)>;

/**
 * Registers every provider of `keys` (providerInventory) and admits each through a proposal and
 * the validator's vote, through `send`. Throws when an admission is not reported.
 */
void admitRunProviders(const SendAndWait& send, const crypto::SecretKey& validator,
                       const std::array<crypto::SecretKey, kRunProviders>& keys);

/** The attribute `key` of the first event of `kind` on `receipt`; throws when there is none. */
[[nodiscard]] std::string eventAttribute(const boost::json::object& receipt,
                                         const std::string& kind, const std::string& key);

/**
 * Writes an initialised home at `home` (which must not exist) whose genesis is the run's: one
 * validator (the home's), the plan's parameters, the verifier in genesis. Requires GRIDLEDGER_BIN.
 */
void writeEpochRunHome(const std::filesystem::path& home, const EpochRunPlan& plan);

/**
 * Starts a node on a copy of `templateHome`, drives it through every epoch of the plan, exports
 * the epochs and stops the node. Throws std::runtime_error on any refusal, timeout, or a
 * transaction landing at another height or time than the fixed block time predicts.
 */
[[nodiscard]] EpochRunResult runEpochs(const std::filesystem::path& templateHome,
                                       const EpochRunPlan& plan);

/** The provider `i`'s corrected GFLOP/s of one device (hand-computed from the inventory). */
[[nodiscard]] std::uint64_t deviceGflops(std::size_t provider);

}  // namespace gridledger::testing
