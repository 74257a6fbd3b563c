#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include <gridledger/rpc/errors.h>

namespace gridledger::rpc::errors_test {
namespace {

TEST(RpcErrors, StandardAndEip1474CodesKeepTheirNumbers) {
    EXPECT_EQ(kParseError, -32700);
    EXPECT_EQ(kInvalidRequest, -32600);
    EXPECT_EQ(kMethodNotFound, -32601);
    EXPECT_EQ(kInvalidParams, -32602);
    EXPECT_EQ(kInternalError, -32603);
    EXPECT_EQ(kInvalidInput, -32000);
    EXPECT_EQ(kResourceNotFound, -32001);
    EXPECT_EQ(kResourceUnavailable, -32002);
    EXPECT_EQ(kTransactionRejected, -32003);
    EXPECT_EQ(kMethodNotSupported, -32004);
    EXPECT_EQ(kLimitExceeded, -32005);
    EXPECT_EQ(kVersionNotSupported, -32006);
}

TEST(RpcErrors, InputErrorsMapToInvalidParams) {
    for (ErrorCode code : {ErrorCode::kMalformed, ErrorCode::kBadHex, ErrorCode::kBadLength,
                           ErrorCode::kInvalidArgument, ErrorCode::kOverflow}) {
        EXPECT_EQ(rpcCodeOf(code), kInvalidParams) << reasonOf(code);
    }
}

TEST(RpcErrors, TransactionErrorsMapToTransactionRejected) {
    for (ErrorCode code :
         {ErrorCode::kBadSignature, ErrorCode::kWrongChainId, ErrorCode::kNonceTooLow,
          ErrorCode::kNonceGap, ErrorCode::kExpired, ErrorCode::kDuplicateTx,
          ErrorCode::kTxTooLarge, ErrorCode::kInsufficientBalance, ErrorCode::kNonceTaken,
          ErrorCode::kUnknownPayload, ErrorCode::kSelfTransfer, ErrorCode::kZeroAmount,
          ErrorCode::kFeeTooLow, ErrorCode::kInsufficientFee}) {
        EXPECT_EQ(rpcCodeOf(code), kTransactionRejected) << reasonOf(code);
    }
}

TEST(RpcErrors, ContractRefusalsMapToTransactionRejectedAndTheirNotFoundsToNotFound) {
    for (ErrorCode code :
         {ErrorCode::kNotValidator, ErrorCode::kAlreadyVoted, ErrorCode::kProposalClosed,
          ErrorCode::kProposalExpired, ErrorCode::kInvalidProposal, ErrorCode::kProviderExists,
          ErrorCode::kProviderNotAdmitted, ErrorCode::kProviderSuspended,
          ErrorCode::kBeyondInventory, ErrorCode::kSlotAlreadyAttested, ErrorCode::kFutureSlot,
          ErrorCode::kWrongEpoch, ErrorCode::kNotVerifier, ErrorCode::kAlreadyChallenged,
          ErrorCode::kInvalidInventory, ErrorCode::kUnknownCategory}) {
        EXPECT_EQ(rpcCodeOf(code), kTransactionRejected) << reasonOf(code);
    }
    for (ErrorCode code : {ErrorCode::kProposalNotFound, ErrorCode::kProviderNotFound,
                           ErrorCode::kAttestationNotFound}) {
        EXPECT_EQ(rpcCodeOf(code), kResourceNotFound) << reasonOf(code);
    }
}

TEST(RpcErrors, ResourceLimitAndInternalErrorsMapToTheirCategories) {
    EXPECT_EQ(rpcCodeOf(ErrorCode::kNotFound), kResourceNotFound);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kMempoolFull), kLimitExceeded);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kTooLarge), kLimitExceeded);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kUnavailable), kResourceUnavailable);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kInternal), kInternalError);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kStorage), kInternalError);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kCorrupt), kInternalError);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kIo), kInternalError);
}

TEST(RpcErrors, DomainCodesStayInTheDomainBand) {
    for (ErrorCode code :
         {ErrorCode::kInvalidBlock, ErrorCode::kInvalidCertificate, ErrorCode::kNotSafeToVote,
          ErrorCode::kNotSafeToTimeout, ErrorCode::kDoubleSignRisk, ErrorCode::kConfig}) {
        const std::int32_t rpc = rpcCodeOf(code);
        EXPECT_GE(rpc, kDomainFirst) << reasonOf(code);
        EXPECT_LE(rpc, kDomainLast) << reasonOf(code);
    }
    EXPECT_EQ(rpcCodeOf(ErrorCode::kInvalidBlock), -32010);
    EXPECT_EQ(rpcCodeOf(ErrorCode::kConfig), -32015);
}

TEST(RpcErrors, ConvertedErrorCarriesTheStableReasonAndMessage) {
    const RpcError error = toRpcError(Error{ErrorCode::kNonceGap, "expected nonce 7"});
    EXPECT_EQ(error.code, kTransactionRejected);
    EXPECT_EQ(error.reason, "nonce_gap");
    EXPECT_EQ(error.message, "expected nonce 7");

    const RpcError noMessage = toRpcError(Error{ErrorCode::kNotFound, ""});
    EXPECT_EQ(noMessage.message, "not_found");
}

TEST(RpcErrors, AnErrorWithCodeOkIsReportedAsInternal) {
    const RpcError error = toRpcError(Error{ErrorCode::kOk, "oops"});
    EXPECT_EQ(error.code, kInternalError);
    EXPECT_EQ(error.reason, "internal");
}

TEST(RpcErrors, ErrorResponseHasIdCodeMessageAndReason) {
    const std::string text =
        errorResponseText(RpcError{kLimitExceeded, "too big", "body_too_large"});
    const boost::json::value json = boost::json::parse(text);
    EXPECT_EQ(json.at("jsonrpc"), "2.0");
    EXPECT_TRUE(json.at("id").is_null());
    EXPECT_EQ(json.at("error").at("code"), kLimitExceeded);
    EXPECT_EQ(json.at("error").at("message"), "too big");
    EXPECT_EQ(json.at("error").at("data").at("reason"), "body_too_large");
}

}  // namespace
}  // namespace gridledger::rpc::errors_test
