#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gridledger {

/**
 * Error codes of GridLedger. They reach receipts on disk, the RPC and peers, so each keeps its
 * number forever: new codes are appended, none is ever renumbered or reused.
 */
enum class ErrorCode : std::uint16_t {
    kOk = 0,
    // Encoding and input shape.
    kMalformed = 1,
    kBadHex = 2,
    kBadLength = 3,
    kOverflow = 4,
    kInvalidArgument = 5,
    kTooLarge = 6,
    // Transactions.
    kBadSignature = 20,
    kWrongChainId = 21,
    kNonceTooLow = 22,
    kNonceGap = 23,
    kExpired = 24,
    kInsufficientBalance = 25,
    kDuplicateTx = 26,
    kMempoolFull = 27,
    kUnknownPayload = 28,
    kSelfTransfer = 29,
    kZeroAmount = 30,
    kTxTooLarge = 31,
    kNonceTaken = 32,
    /** The transaction offers less than the chain's fee for its payload kind. */
    kFeeTooLow = 33,
    /** The sender's balance cannot pay the offered fee (with its other pending fees). */
    kInsufficientFee = 34,
    // Storage and state.
    kNotFound = 40,
    kStorage = 41,
    kCorrupt = 42,
    kIo = 43,
    // Consensus.
    kNotSafeToVote = 60,
    kNotSafeToTimeout = 61,
    kInvalidBlock = 62,
    kInvalidCertificate = 63,
    kDoubleSignRisk = 64,
    /** This node's executed state differs from the state a quorum certified. */
    kDiverged = 65,
    // Configuration.
    kConfig = 80,
    kUnavailable = 81,
    /** A connection asked for more subscriptions than the node allows it. */
    kTooManySubscriptions = 82,
    kInternal = 99,
    // System contracts (docs/tokenomics.md): refusals recorded on receipts.
    kNotValidator = 100,
    kAlreadyVoted = 101,
    kProposalNotFound = 102,
    kProposalClosed = 103,
    kProposalExpired = 104,
    kInvalidProposal = 105,
    kProviderExists = 106,
    kProviderNotFound = 107,
    kProviderNotAdmitted = 108,
    kProviderSuspended = 109,
    kBeyondInventory = 110,
    kSlotAlreadyAttested = 111,
    kFutureSlot = 112,
    kWrongEpoch = 113,
    kNotVerifier = 114,
    kAttestationNotFound = 115,
    kAlreadyChallenged = 116,
    kInvalidInventory = 117,
    kUnknownCategory = 118,
    // Task lifecycle (docs/tasks.md).
    kTaskNotFound = 119,
    kInvalidTaskTransition = 120,
    kNotTaskParty = 121,
    kInvalidTask = 122,
    kTooManyPendingTasks = 123,
    // Provider stake (docs/tokenomics.md "Provider stake").
    /** The provider's bond is below the chain's provider_bond. */
    kBondTooLow = 124,
    /** The provider asked to unbond: it may no longer attest or take tasks. */
    kProviderUnbonding = 125,
    // Checked results (docs/tasks.md "Redundant tasks", "Spot checks").
    /** A verdict on one replica of a redundant task, or a group verdict that does not fit. */
    kRedundantTask = 126,
    /** A spot check of a task that is not settled, past its window, or already checked. */
    kSpotCheckClosed = 127,
    /** A spot-check verdict on a task with no open spot check. */
    kNoSpotCheck = 128,
};

/** The stable snake_case token of a code, e.g. "bad_signature". Never changes once published. */
[[nodiscard]] std::string_view reasonOf(ErrorCode code);

/** An expected failure: a stable code and a human-readable message for logs and clients. */
struct Error {
    ErrorCode code = ErrorCode::kInternal;
    std::string message;

    [[nodiscard]] std::string_view reason() const { return reasonOf(code); }
};

}  // namespace gridledger
