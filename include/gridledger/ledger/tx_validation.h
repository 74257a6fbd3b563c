#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/tx.h>

namespace gridledger::ledger {

/** Nonces a sender may run ahead of its committed next nonce: [next, next + window). */
inline constexpr std::uint64_t kDefaultNonceWindow = 64;

/** How far ahead of the next height a transaction may set its expiry (one day at 1 block/s). */
inline constexpr std::uint64_t kDefaultMaxValidityBlocks = 86'400;

/** Bounds on the text and lists of system-contract payloads (checkPayloadShape). */
inline constexpr std::size_t kMaxNameBytes = 64;
inline constexpr std::size_t kMaxTextBytes = 256;
inline constexpr std::size_t kMaxInventoryModels = 64;
inline constexpr std::size_t kMaxDeviceFeatures = 16;
inline constexpr std::size_t kMaxDeviceFactors = 16;
inline constexpr std::size_t kMaxLabels = 32;
inline constexpr std::size_t kMaxCategories = 16;
inline constexpr std::size_t kMaxEvidence = 16;
/** The most providers one redundant task may ask for (tasks.max_replicas is at most this). */
inline constexpr std::uint32_t kMaxTaskReplicas = 16;
/**
 * Bounds on a registered device model: at most 10^6 devices of at most 10^9 GFLOP/s (1 EFLOP/s,
 * a thousand times today's largest accelerators) each, so one provider declares at most
 * 64 × 10^15 GFLOP/s and the sums of settlement stay far inside their integers for any real
 * grid. A grid that still overflows them fails that epoch's settlement with an event; the chain
 * goes on (docs/tokenomics.md).
 */
inline constexpr std::uint64_t kMaxDeviceCount = 1'000'000;
inline constexpr std::uint64_t kMaxPeakGflops = 1'000'000'000;

/**
 * The admission rules a transaction's shape is checked against. `nextHeight` is the height of
 * the next block to be built (last committed height + 1); the rest is configuration.
 */
struct TxRules {
    std::string chainId;
    /** Largest accepted encoded transaction; values above codec::kMaxTxBytes act as that bound. */
    std::size_t maxTxBytes = codec::kMaxTxBytes;
    std::uint64_t nextHeight = 1;
    std::uint64_t maxValidityBlocks = kDefaultMaxValidityBlocks;
};

/**
 * Stateless checks of a decoded transaction, in this order:
 * - chain id differs from rules.chainId: kWrongChainId;
 * - encoded size above min(rules.maxTxBytes, codec::kMaxTxBytes): kTxTooLarge;
 * - payload: checkPayloadShape;
 * - validUntilHeight < rules.nextHeight: kExpired;
 * - validUntilHeight > rules.nextHeight + rules.maxValidityBlocks: kInvalidArgument.
 *
 * Requires nothing of `tx` beyond what codec::decodeTx guarantees. Does not look at the signature
 * or the nonce. Pure: the same inputs always give the same answer.
 */
[[nodiscard]] Status checkShape(const codec::SignedTx& tx, const TxRules& rules);

/**
 * Stateless checks of a payload sent by `sender`; the executor runs them again before executing
 * a payload, so a block carrying a malformed payload fails it with the same code.
 * - transfer: zero amount kZeroAmount; to the sender itself kSelfTransfer;
 * - propose: kInvalidProposal for an empty or oversized name or value, a zero key or address;
 * - register_provider: kInvalidInventory unless it has 1 … kMaxInventoryModels devices with unique
 *   non-empty model names, each with a count in 1 … kMaxDeviceCount, a peak in
 *   1 … kMaxPeakGflops, unique non-empty features and factor
 *   names (at most 16 each), at most kMaxLabels labels with unique non-empty keys, and
 *   1 … kMaxCategories unique non-empty categories;
 * - attest: kInvalidArgument unless the category is non-empty, 1 … kMaxInventoryModels devices
 *   have unique non-empty models and counts > 0, the renewable share is ≤ 10 000 bps and there are
 *   at most kMaxEvidence evidence hashes;
 * - challenge: kInvalidArgument for a reason above kMaxTextBytes;
 * - task payloads: kInvalidTask for a zero task id, a task_create without a category, with 0
 *   GFLOP/s, 0 minutes or more than kMaxLabels constraints (each non-empty), a top-up of 0
 *   minutes, a result with a zero result hash, or a text (output uri, reason, error) above
 *   kMaxTextBytes. Constraints are parsed at execution (docs/tasks.md).
 * Every text (names, labels, reasons, values) must be printable ASCII, names at most
 * kMaxNameBytes and other texts at most kMaxTextBytes. Pure.
 */
[[nodiscard]] Status checkPayloadShape(const codec::Payload& payload, const Address& sender);

/** The nonces one sender has pending (not yet committed), each with the hash of its tx. */
using PendingNonces = std::map<std::uint64_t, Hash256>;

/**
 * Checks a transaction nonce against its sender's committed next nonce `accountNonce` (the number
 * of the sender's committed transactions) and the sender's pending transactions:
 * - txNonce < accountNonce: kNonceTooLow (already used);
 * - txNonce >= accountNonce + window: kNonceGap (too far ahead; the sum saturates, never wraps);
 * - txNonce already in pendingFromSender: kNonceTaken (held by another pending transaction).
 *
 * Requires the caller to have refused an exact duplicate (same tx hash) before, with
 * kDuplicateTx: any pending entry at txNonce counts as a different transaction. A window of 0
 * admits nothing. Pure.
 */
[[nodiscard]] Status checkNonce(std::uint64_t txNonce, std::uint64_t accountNonce,
                                const PendingNonces& pendingFromSender,
                                std::uint64_t window = kDefaultNonceWindow);

}  // namespace gridledger::ledger
