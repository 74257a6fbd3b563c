#include <algorithm>
#include <limits>
#include <set>
#include <string_view>
#include <variant>

#include <gridledger/base/overloaded.h>
#include <gridledger/ledger/tx_validation.h>

namespace gridledger::ledger {
namespace {

bool printable(std::string_view text) {
    return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

/** Text of at most `limit` printable ASCII bytes, non-empty when `required`. */
Status checkText(std::string_view text, std::string_view what, std::size_t limit, bool required,
                 ErrorCode code) {
    if (required && text.empty()) {
        return fail(code, std::string(what) + " is empty");
    }
    if (text.size() > limit) {
        return fail(code, std::string(what) + " exceeds " + std::to_string(limit) + " bytes");
    }
    if (!printable(text)) {
        return fail(code, std::string(what) + " must be printable ASCII");
    }
    return {};
}

Status checkName(std::string_view text, std::string_view what, ErrorCode code) {
    return checkText(text, what, kMaxNameBytes, true, code);
}

/** Every name non-empty, unique and within bounds; at most `limit` of them. */
template <typename Range, typename Name>
Status checkNames(const Range& items, Name name, std::string_view what, std::size_t limit,
                  ErrorCode code) {
    if (items.size() > limit) {
        return fail(code, "more than " + std::to_string(limit) + " " + std::string(what));
    }
    std::set<std::string_view> seen;
    for (const auto& item : items) {
        const std::string_view text = name(item);
        GL_TRY(checkName(text, what, code));
        if (!seen.insert(text).second) {
            return fail(code, "duplicate " + std::string(what) + " '" + std::string(text) + "'");
        }
    }
    return {};
}

Status checkPayload(const codec::Transfer& transfer, const Address& sender) {
    if (transfer.amount == 0) {
        return fail(ErrorCode::kZeroAmount, "transfer of zero");
    }
    if (transfer.to == sender) {
        return fail(ErrorCode::kSelfTransfer, "transfer to the sender itself");
    }
    return {};
}

Status checkPayload(const codec::Propose& propose, const Address& /*sender*/) {
    constexpr ErrorCode kCode = ErrorCode::kInvalidProposal;
    const auto nonZero = [](const auto& fixed, std::string_view what) -> Status {
        if (fixed.isZero()) {
            return fail(kCode, std::string(what) + " is zero");
        }
        return {};
    };
    return std::visit(
        Overloaded{
            [&](const codec::AddValidator& a) -> Status {
                GL_TRY(checkName(a.name, "validator name", kCode));
                GL_TRY(nonZero(a.consensusKey, "consensus key"));
                GL_TRY(nonZero(a.account, "account"));
                return nonZero(a.nodeId, "node id");
            },
            [&](const codec::RemoveValidator& a) {
                return nonZero(a.consensusKey, "consensus key");
            },
            [&](const codec::AdmitProvider& a) { return nonZero(a.provider, "provider"); },
            [&](const codec::SuspendProvider& a) { return nonZero(a.provider, "provider"); },
            [&](const codec::ReinstateProvider& a) { return nonZero(a.provider, "provider"); },
            [&](const codec::GrantVerifier& a) { return nonZero(a.account, "account"); },
            [&](const codec::RevokeVerifier& a) { return nonZero(a.account, "account"); },
            [&](const codec::SetParameter& a) -> Status {
                GL_TRY(checkName(a.name, "parameter name", kCode));
                return checkText(a.value, "parameter value", kMaxTextBytes, true, kCode);
            },
        },
        propose.action);
}

Status checkPayload(const codec::ProposalVote& /*vote*/, const Address& /*sender*/) {
    return {};
}

Status checkDevice(const codec::DeviceModel& device) {
    constexpr ErrorCode kCode = ErrorCode::kInvalidInventory;
    if (device.count == 0 || device.count > kMaxDeviceCount) {
        return fail(kCode, "device '" + device.model + "' has a count outside 1 … " +
                               std::to_string(kMaxDeviceCount));
    }
    if (device.peakGflops == 0 || device.peakGflops > kMaxPeakGflops) {
        return fail(kCode, "device '" + device.model + "' has a peak outside 1 … " +
                               std::to_string(kMaxPeakGflops) + " GFLOP/s");
    }
    GL_TRY(checkNames(
        device.features, [](const std::string& f) -> std::string_view { return f; },
        "device feature", kMaxDeviceFeatures, kCode));
    return checkNames(
        device.factors, [](const codec::FactorValue& f) -> std::string_view { return f.name; },
        "device factor", kMaxDeviceFactors, kCode);
}

Status checkPayload(const codec::RegisterProvider& reg, const Address& /*sender*/) {
    constexpr ErrorCode kCode = ErrorCode::kInvalidInventory;
    if (reg.devices.empty()) {
        return fail(kCode, "the inventory has no device");
    }
    GL_TRY(checkNames(
        reg.devices, [](const codec::DeviceModel& d) -> std::string_view { return d.model; },
        "device model", kMaxInventoryModels, kCode));
    for (const auto& device : reg.devices) {
        GL_TRY(checkDevice(device));
    }
    GL_TRY(checkNames(
        reg.labels, [](const codec::Label& l) -> std::string_view { return l.key; }, "label key",
        kMaxLabels, kCode));
    for (const auto& label : reg.labels) {
        GL_TRY(checkText(label.value, "label value", kMaxTextBytes, false, kCode));
    }
    if (reg.categories.empty()) {
        return fail(kCode, "a provider serves at least one workload category");
    }
    return checkNames(
        reg.categories, [](const std::string& c) -> std::string_view { return c; },
        "workload category", kMaxCategories, kCode);
}

Status checkPayload(const codec::Attest& attest, const Address& /*sender*/) {
    constexpr ErrorCode kCode = ErrorCode::kInvalidArgument;
    GL_TRY(checkName(attest.category, "workload category", kCode));
    if (attest.devices.empty()) {
        return fail(kCode, "an attestation allocates at least one device");
    }
    GL_TRY(checkNames(
        attest.devices, [](const codec::DeviceCount& d) -> std::string_view { return d.model; },
        "device model", kMaxInventoryModels, kCode));
    for (const auto& device : attest.devices) {
        if (device.count == 0) {
            return fail(kCode, "device '" + device.model + "' has a count of 0");
        }
    }
    if (attest.renewableShareBps > 10'000) {
        return fail(kCode, "renewable share above 10000 bps");
    }
    if (attest.evidence.size() > kMaxEvidence) {
        return fail(kCode, "more than " + std::to_string(kMaxEvidence) + " evidence hashes");
    }
    return {};
}

Status checkPayload(const codec::Challenge& challenge, const Address& /*sender*/) {
    return checkText(challenge.reason, "challenge reason", kMaxTextBytes, false,
                     ErrorCode::kInvalidArgument);
}

// ---- Tasks: kInvalidTask for every malformed field ----

Status checkTaskId(const Hash256& id) {
    if (id.isZero()) {
        return fail(ErrorCode::kInvalidTask, "task id is zero");
    }
    return {};
}

Status checkTaskText(std::string_view text, std::string_view what) {
    return checkText(text, what, kMaxTextBytes, false, ErrorCode::kInvalidTask);
}

Status checkPayload(const codec::TaskCreate& create, const Address& /*sender*/) {
    constexpr ErrorCode kCode = ErrorCode::kInvalidTask;
    GL_TRY(checkName(create.category, "workload category", kCode));
    if (create.minGflops == 0) {
        return fail(kCode, "a task needs at least 1 GFLOP/s");
    }
    if (create.maxMinutes == 0) {
        return fail(kCode, "a task runs for at least 1 minute");
    }
    if (create.replicas > kMaxTaskReplicas) {
        return fail(kCode, std::to_string(create.replicas) + " replicas; at most " +
                               std::to_string(kMaxTaskReplicas));
    }
    if (create.constraints.size() > kMaxLabels) {
        return fail(kCode, "more than " + std::to_string(kMaxLabels) + " label constraints");
    }
    for (const auto& constraint : create.constraints) {
        GL_TRY(checkText(constraint, "label constraint", kMaxTextBytes, true, kCode));
    }
    return {};
}

Status checkPayload(const codec::TaskStart& start, const Address& /*sender*/) {
    return checkTaskId(start.taskId);
}

Status checkPayload(const codec::TaskRefuse& refuse, const Address& /*sender*/) {
    return checkTaskId(refuse.taskId);
}

Status checkPayload(const codec::TaskTopUp& topUp, const Address& /*sender*/) {
    GL_TRY(checkTaskId(topUp.taskId));
    if (topUp.extraMinutes == 0) {
        return fail(ErrorCode::kInvalidTask, "a top-up adds at least 1 minute");
    }
    return {};
}

Status checkPayload(const codec::TaskSubmitResult& result, const Address& /*sender*/) {
    GL_TRY(checkTaskId(result.taskId));
    if (result.resultHash.isZero()) {
        return fail(ErrorCode::kInvalidTask, "result hash is zero");
    }
    return checkTaskText(result.outputUri, "output uri");
}

Status checkPayload(const codec::TaskVerify& verify, const Address& /*sender*/) {
    GL_TRY(checkTaskId(verify.taskId));
    if (!verify.accept && !verify.resultHash.isZero()) {
        return fail(ErrorCode::kInvalidTask, "a rejection upholds no result hash");
    }
    return checkTaskText(verify.reason, "verdict reason");
}

Status checkPayload(const codec::TaskReportFailure& failure, const Address& /*sender*/) {
    GL_TRY(checkTaskId(failure.taskId));
    return checkTaskText(failure.error, "failure error");
}

Status checkPayload(const codec::TaskCancel& cancel, const Address& /*sender*/) {
    return checkTaskId(cancel.taskId);
}

Status checkPayload(const codec::ProviderUnbond& /*unbond*/, const Address& /*sender*/) {
    return {};
}

Status checkPayload(const codec::TaskSpotCheck& check, const Address& /*sender*/) {
    GL_TRY(checkTaskId(check.taskId));
    return checkTaskText(check.reason, "spot-check reason");
}

Status checkPayload(const codec::TaskSpotCheckVerdict& verdict, const Address& /*sender*/) {
    GL_TRY(checkTaskId(verdict.taskId));
    return checkTaskText(verdict.reason, "spot-check verdict reason");
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
    GL_TRY(checkPayloadShape(tx.body.payload, tx.sender));
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

Status checkPayloadShape(const codec::Payload& payload, const Address& sender) {
    return std::visit([&sender](const auto& p) { return checkPayload(p, sender); }, payload);
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
