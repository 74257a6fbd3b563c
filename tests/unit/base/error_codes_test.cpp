// The system-contract error codes reach receipts on disk and clients: their numbers and reason
// tokens are pinned here so that a renumbering fails a test.

#include <set>
#include <string>

#include <gtest/gtest.h>

#include <gridledger/base/error.h>

namespace gridledger::error_codes_test {
namespace {

TEST(ErrorCodes, ContractRefusalsKeepTheirNumbersAndReasons) {
    const std::vector<std::pair<ErrorCode, std::pair<int, std::string>>> pinned{
        {ErrorCode::kFeeTooLow, {33, "fee_too_low"}},
        {ErrorCode::kInsufficientFee, {34, "insufficient_fee"}},
        {ErrorCode::kNotValidator, {100, "not_validator"}},
        {ErrorCode::kAlreadyVoted, {101, "already_voted"}},
        {ErrorCode::kProposalNotFound, {102, "proposal_not_found"}},
        {ErrorCode::kProposalClosed, {103, "proposal_closed"}},
        {ErrorCode::kProposalExpired, {104, "proposal_expired"}},
        {ErrorCode::kInvalidProposal, {105, "invalid_proposal"}},
        {ErrorCode::kProviderExists, {106, "provider_exists"}},
        {ErrorCode::kProviderNotFound, {107, "provider_not_found"}},
        {ErrorCode::kProviderNotAdmitted, {108, "provider_not_admitted"}},
        {ErrorCode::kProviderSuspended, {109, "provider_suspended"}},
        {ErrorCode::kBeyondInventory, {110, "beyond_inventory"}},
        {ErrorCode::kSlotAlreadyAttested, {111, "slot_already_attested"}},
        {ErrorCode::kFutureSlot, {112, "future_slot"}},
        {ErrorCode::kWrongEpoch, {113, "wrong_epoch"}},
        {ErrorCode::kNotVerifier, {114, "not_verifier"}},
        {ErrorCode::kAttestationNotFound, {115, "attestation_not_found"}},
        {ErrorCode::kAlreadyChallenged, {116, "already_challenged"}},
        {ErrorCode::kInvalidInventory, {117, "invalid_inventory"}},
        {ErrorCode::kUnknownCategory, {118, "unknown_category"}},
        {ErrorCode::kTaskNotFound, {119, "task_not_found"}},
        {ErrorCode::kInvalidTaskTransition, {120, "invalid_task_transition"}},
        {ErrorCode::kNotTaskParty, {121, "not_task_party"}},
        {ErrorCode::kInvalidTask, {122, "invalid_task"}},
        {ErrorCode::kTooManyPendingTasks, {123, "too_many_pending_tasks"}},
        {ErrorCode::kBondTooLow, {124, "bond_too_low"}},
        {ErrorCode::kProviderUnbonding, {125, "provider_unbonding"}},
        {ErrorCode::kRedundantTask, {126, "redundant_task"}},
        {ErrorCode::kSpotCheckClosed, {127, "spot_check_closed"}},
        {ErrorCode::kNoSpotCheck, {128, "no_spot_check"}},
    };
    std::set<std::string_view> reasons;
    for (const auto& [code, expected] : pinned) {
        EXPECT_EQ(static_cast<int>(code), expected.first) << expected.second;
        EXPECT_EQ(reasonOf(code), expected.second);
        EXPECT_TRUE(reasons.insert(reasonOf(code)).second) << "duplicate " << expected.second;
    }
}

}  // namespace
}  // namespace gridledger::error_codes_test
