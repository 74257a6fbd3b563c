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
 * - payload: a transfer of zero: kZeroAmount; a transfer to the sender itself: kSelfTransfer;
 * - validUntilHeight < rules.nextHeight: kExpired;
 * - validUntilHeight > rules.nextHeight + rules.maxValidityBlocks: kInvalidArgument.
 *
 * Requires nothing of `tx` beyond what codec::decodeTx guarantees. Does not look at the signature
 * or the nonce. Pure: the same inputs always give the same answer.
 */
[[nodiscard]] Status checkShape(const codec::SignedTx& tx, const TxRules& rules);

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
