#include <boost/json/serialize.hpp>

#include <gridledger/rpc/errors.h>

namespace gridledger::rpc {

// The one table from GridLedger error codes to JSON-RPC codes.
//
// Clients and tooling key on these numbers: a number, once published, is never renumbered or
// reused. A new ErrorCode gets a row here (the compiler refuses a switch that misses one) and a
// line in docs/rpc.md. Codes that fit no EIP-1474 category take the next free number of the
// domain band -32010...-32099 (the next is -32017; -32016 is the framework's
// response_too_large, errors.h).
std::int32_t rpcCodeOf(ErrorCode code) {
    switch (code) {
        // Encoding and input shape.
        case ErrorCode::kMalformed:
        case ErrorCode::kBadHex:
        case ErrorCode::kBadLength:
        case ErrorCode::kOverflow:
        case ErrorCode::kInvalidArgument:
            return kInvalidParams;
        case ErrorCode::kTooLarge:
            return kLimitExceeded;
        // Transactions.
        case ErrorCode::kBadSignature:
        case ErrorCode::kWrongChainId:
        case ErrorCode::kNonceTooLow:
        case ErrorCode::kNonceGap:
        case ErrorCode::kExpired:
        case ErrorCode::kInsufficientBalance:
        case ErrorCode::kDuplicateTx:
            return kTransactionRejected;
        case ErrorCode::kMempoolFull:
            return kLimitExceeded;
        case ErrorCode::kUnknownPayload:
        case ErrorCode::kSelfTransfer:
        case ErrorCode::kZeroAmount:
        case ErrorCode::kTxTooLarge:
        case ErrorCode::kNonceTaken:
        case ErrorCode::kFeeTooLow:
        case ErrorCode::kInsufficientFee:
            return kTransactionRejected;
        // Storage and state.
        case ErrorCode::kNotFound:
            return kResourceNotFound;
        case ErrorCode::kStorage:
        case ErrorCode::kCorrupt:
        case ErrorCode::kIo:
        case ErrorCode::kDiverged:
            return kInternalError;
        // Consensus (domain band).
        case ErrorCode::kInvalidBlock:
            return kInvalidBlock;
        case ErrorCode::kInvalidCertificate:
            return kInvalidCertificate;
        case ErrorCode::kNotSafeToVote:
            return kNotSafeToVote;
        case ErrorCode::kNotSafeToTimeout:
            return kNotSafeToTimeout;
        case ErrorCode::kDoubleSignRisk:
            return kDoubleSignRisk;
        // Configuration and availability.
        case ErrorCode::kConfig:
            return kConfigError;
        case ErrorCode::kUnavailable:
            return kResourceUnavailable;
        case ErrorCode::kTooManySubscriptions:
            return kLimitExceeded;
        // System contracts: refusals at execution; the not-found ones as resources.
        case ErrorCode::kNotValidator:
        case ErrorCode::kAlreadyVoted:
            return kTransactionRejected;
        case ErrorCode::kProposalNotFound:
            return kResourceNotFound;
        case ErrorCode::kProposalClosed:
        case ErrorCode::kProposalExpired:
        case ErrorCode::kInvalidProposal:
        case ErrorCode::kProviderExists:
            return kTransactionRejected;
        case ErrorCode::kProviderNotFound:
            return kResourceNotFound;
        case ErrorCode::kProviderNotAdmitted:
        case ErrorCode::kProviderSuspended:
        case ErrorCode::kBeyondInventory:
        case ErrorCode::kSlotAlreadyAttested:
        case ErrorCode::kFutureSlot:
        case ErrorCode::kWrongEpoch:
        case ErrorCode::kNotVerifier:
            return kTransactionRejected;
        case ErrorCode::kAttestationNotFound:
            return kResourceNotFound;
        case ErrorCode::kAlreadyChallenged:
        case ErrorCode::kInvalidInventory:
        case ErrorCode::kUnknownCategory:
            return kTransactionRejected;
        case ErrorCode::kTaskNotFound:
            return kResourceNotFound;
        case ErrorCode::kInvalidTaskTransition:
        case ErrorCode::kNotTaskParty:
        case ErrorCode::kInvalidTask:
        case ErrorCode::kTooManyPendingTasks:
        case ErrorCode::kBondTooLow:
        case ErrorCode::kProviderUnbonding:
        case ErrorCode::kRedundantTask:
        case ErrorCode::kSpotCheckClosed:
        case ErrorCode::kNoSpotCheck:
            return kTransactionRejected;
        // A handler that fails with kOk is a bug in the handler: report it as internal.
        case ErrorCode::kOk:
        case ErrorCode::kInternal:
            return kInternalError;
    }
    return kInternalError;
}

RpcError toRpcError(const Error& error) {
    // An "error" with kOk is a handler bug; it must not reach a client as reason "ok".
    const ErrorCode code = error.code == ErrorCode::kOk ? ErrorCode::kInternal : error.code;
    RpcError out;
    out.code = rpcCodeOf(code);
    out.reason = std::string(reasonOf(code));
    out.message = error.message.empty() ? out.reason : error.message;
    return out;
}

boost::json::object toJson(const RpcError& error) {
    boost::json::object data;
    data["reason"] = error.reason;
    boost::json::object out;
    out["code"] = error.code;
    out["message"] = error.message;
    out["data"] = std::move(data);
    return out;
}

boost::json::object makeErrorResponse(const boost::json::value& id, const RpcError& error) {
    boost::json::object out;
    out["jsonrpc"] = "2.0";
    out["id"] = id;
    out["error"] = toJson(error);
    return out;
}

std::string errorResponseText(const RpcError& error) {
    return boost::json::serialize(makeErrorResponse(nullptr, error));
}

}  // namespace gridledger::rpc
