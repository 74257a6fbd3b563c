#include <algorithm>
#include <limits>
#include <variant>

#include <gridledger/ledger/tx_validation.h>

namespace gridledger::ledger {
namespace {

Status checkPayload(const codec::Transfer& transfer, const Address& sender) {
    if (transfer.amount == 0) {
        return fail(ErrorCode::kZeroAmount, "transfer of zero");
    }
    if (transfer.to == sender) {
        return fail(ErrorCode::kSelfTransfer, "transfer to the sender itself");
    }
    return {};
}

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b) {
    return checkedAdd(a, b).value_or(std::numeric_limits<std::uint64_t>::max());
}

}  // namespace

Status checkShape(const codec::SignedTx& tx, const TxRules& rules) {
    if (tx.body.chainId != rules.chainId) {
        return fail(ErrorCode::kWrongChainId,
                    "chain id '" + tx.body.chainId + "' is not '" + rules.chainId + "'");
    }
    const std::size_t maxBytes = std::min(rules.maxTxBytes, codec::kMaxTxBytes);
    if (tx.raw.size() > maxBytes) {
        return fail(ErrorCode::kTxTooLarge, "transaction of " + std::to_string(tx.raw.size()) +
                                                " bytes exceeds " + std::to_string(maxBytes));
    }
    GL_TRY(std::visit([&tx](const auto& payload) { return checkPayload(payload, tx.sender); },
                      tx.body.payload));
    if (tx.body.validUntilHeight < rules.nextHeight) {
        return fail(ErrorCode::kExpired,
                    "valid until height " + std::to_string(tx.body.validUntilHeight) +
                        ", next height is " + std::to_string(rules.nextHeight));
    }
    const std::uint64_t furthest = saturatingAdd(rules.nextHeight, rules.maxValidityBlocks);
    if (tx.body.validUntilHeight > furthest) {
        return fail(ErrorCode::kInvalidArgument,
                    "valid until height " + std::to_string(tx.body.validUntilHeight) +
                        " is beyond the furthest allowed " + std::to_string(furthest));
    }
    return {};
}

Status checkNonce(std::uint64_t txNonce, std::uint64_t accountNonce,
                  const PendingNonces& pendingFromSender, std::uint64_t window) {
    if (txNonce < accountNonce) {
        return fail(ErrorCode::kNonceTooLow, "nonce " + std::to_string(txNonce) +
                                                 " already used; next is " +
                                                 std::to_string(accountNonce));
    }
    if (txNonce >= saturatingAdd(accountNonce, window)) {
        return fail(ErrorCode::kNonceGap, "nonce " + std::to_string(txNonce) + " is " +
                                              std::to_string(window) + " or more ahead of " +
                                              std::to_string(accountNonce));
    }
    if (pendingFromSender.contains(txNonce)) {
        return fail(ErrorCode::kNonceTaken,
                    "nonce " + std::to_string(txNonce) + " is taken by another pending tx");
    }
    return {};
}

}  // namespace gridledger::ledger
