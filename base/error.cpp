#include <gridledger/base/error.h>

namespace gridledger {

std::string_view reasonOf(ErrorCode code) {
    switch (code) {
        case ErrorCode::kOk:
            return "ok";
        case ErrorCode::kMalformed:
            return "malformed";
        case ErrorCode::kBadHex:
            return "bad_hex";
        case ErrorCode::kBadLength:
            return "bad_length";
        case ErrorCode::kOverflow:
            return "overflow";
        case ErrorCode::kInvalidArgument:
            return "invalid_argument";
        case ErrorCode::kTooLarge:
            return "too_large";
        case ErrorCode::kBadSignature:
            return "bad_signature";
        case ErrorCode::kWrongChainId:
            return "wrong_chain_id";
        case ErrorCode::kNonceTooLow:
            return "nonce_too_low";
        case ErrorCode::kNonceGap:
            return "nonce_gap";
        case ErrorCode::kExpired:
            return "expired";
        case ErrorCode::kInsufficientBalance:
            return "insufficient_balance";
        case ErrorCode::kDuplicateTx:
            return "duplicate_tx";
        case ErrorCode::kMempoolFull:
            return "mempool_full";
        case ErrorCode::kUnknownPayload:
            return "unknown_payload";
        case ErrorCode::kSelfTransfer:
            return "self_transfer";
        case ErrorCode::kZeroAmount:
            return "zero_amount";
        case ErrorCode::kTxTooLarge:
            return "tx_too_large";
        case ErrorCode::kNonceTaken:
            return "nonce_taken";
        case ErrorCode::kNotFound:
            return "not_found";
        case ErrorCode::kStorage:
            return "storage";
        case ErrorCode::kCorrupt:
            return "corrupt";
        case ErrorCode::kIo:
            return "io";
        case ErrorCode::kNotSafeToVote:
            return "not_safe_to_vote";
        case ErrorCode::kNotSafeToTimeout:
            return "not_safe_to_timeout";
        case ErrorCode::kInvalidBlock:
            return "invalid_block";
        case ErrorCode::kInvalidCertificate:
            return "invalid_certificate";
        case ErrorCode::kDoubleSignRisk:
            return "double_sign_risk";
        case ErrorCode::kConfig:
            return "config";
        case ErrorCode::kUnavailable:
            return "unavailable";
        case ErrorCode::kInternal:
            return "internal";
    }
    return "unknown";
}

}  // namespace gridledger
