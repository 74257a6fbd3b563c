#include <algorithm>
#include <array>
#include <charconv>

#include <gridledger/contracts/task_lifecycle.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/tx_validation.h>

namespace gridledger::contracts {
namespace {

using enum TaskState;
using T = TaskTrigger;
using A = TaskActor;

/** The transition table of docs/tasks.md, row by row. */
constexpr std::array<TaskTransition, 15> kTable{{
    {kPending, T::kAssign, kAssigned, A::kSystem},
    {kPending, T::kAssignTimeout, kExpired, A::kSystem},
    {kPending, T::kCancel, kCancelled, A::kConsumer},
    {kAssigned, T::kStart, kRunning, A::kProvider},
    {kAssigned, T::kRefuse, kPending, A::kProvider},
    {kAssigned, T::kClaimTimeout, kPending, A::kSystem},
    {kAssigned, T::kCancel, kCancelled, A::kConsumer},
    {kRunning, T::kSubmitResult, kResultSubmitted, A::kProvider},
    {kRunning, T::kReportFailure, kFailed, A::kProvider},
    {kRunning, T::kOutOfCredits, kOutOfCredits, A::kSystem},
    {kRunning, T::kPanic, kPanicked, A::kSystem},
    {kRunning, T::kCancel, kCancelled, A::kConsumer},
    {kResultSubmitted, T::kAccept, kSettled, A::kConsumerOrVerifier},
    {kResultSubmitted, T::kVerifyTimeout, kSettled, A::kSystem},
    {kResultSubmitted, T::kReject, kRejected, A::kConsumerOrVerifier},
}};

std::unexpected<Error> refuse(TaskState from, TaskState to, std::string_view why) {
    return fail(ErrorCode::kInvalidTaskTransition,
                "task cannot go from " + std::string(taskStateName(from)) + " to " +
                    std::string(taskStateName(to)) + " (" + std::string(why) + ")");
}

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b) {
    return checkedAdd(a, b).value_or(kBillAll);
}

std::uint64_t saturatingMul(std::uint64_t a, std::uint64_t b) {
    return checkedMul(a, b).value_or(kBillAll);
}

std::optional<std::uint64_t> parseDecimal(std::string_view text) {
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end) {
        return std::nullopt;
    }
    return value;
}

bool ordered(LabelOp op) {
    return op == LabelOp::kLt || op == LabelOp::kLe || op == LabelOp::kGt || op == LabelOp::kGe;
}

bool inList(std::string_view list, std::string_view value) {
    while (true) {
        const auto comma = list.find(',');
        if (list.substr(0, comma) == value) {
            return true;
        }
        if (comma == std::string_view::npos) {
            return false;
        }
        list.remove_prefix(comma + 1);
    }
}

bool eligible(const MatchRequest& request, const MatchCandidate& c) {
    if (!c.admitted || !c.online || c.unassignedGflops < request.minGflops) {
        return false;
    }
    if (std::find(request.excluded.begin(), request.excluded.end(), c.provider) !=
        request.excluded.end()) {
        return false;
    }
    if (std::find(c.categories.begin(), c.categories.end(), request.category) ==
        c.categories.end()) {
        return false;
    }
    return std::all_of(request.constraints.begin(), request.constraints.end(),
                       [&](const auto& constraint) { return satisfies(c.labels, constraint); });
}

}  // namespace

std::string_view taskStateName(TaskState state) {
    switch (state) {
        case kPending:
            return "pending";
        case kAssigned:
            return "assigned";
        case kRunning:
            return "running";
        case kResultSubmitted:
            return "result_submitted";
        case kSettled:
            return "settled";
        case kRejected:
            return "rejected";
        case kFailed:
            return "failed";
        case kCancelled:
            return "cancelled";
        case kOutOfCredits:
            return "out_of_credits";
        case kPanicked:
            return "panicked";
        case kExpired:
            return "expired";
    }
    return "unknown";
}

bool isHot(TaskState state) {
    return state == kPending || state == kAssigned || state == kRunning ||
           state == kResultSubmitted;
}

std::string_view triggerName(TaskTrigger trigger) {
    switch (trigger) {
        case T::kAssign:
            return "assign";
        case T::kStart:
            return "start";
        case T::kRefuse:
            return "refuse";
        case T::kClaimTimeout:
            return "claim_timeout";
        case T::kAssignTimeout:
            return "assign_timeout";
        case T::kSubmitResult:
            return "submit_result";
        case T::kReportFailure:
            return "report_failure";
        case T::kOutOfCredits:
            return "out_of_credits";
        case T::kPanic:
            return "panic";
        case T::kAccept:
            return "accept";
        case T::kVerifyTimeout:
            return "verify_timeout";
        case T::kReject:
            return "reject";
        case T::kCancel:
            return "cancel";
    }
    return "unknown";
}

TaskState targetOf(TaskTrigger trigger) {
    switch (trigger) {
        case T::kAssign:
            return kAssigned;
        case T::kStart:
            return kRunning;
        case T::kRefuse:
        case T::kClaimTimeout:
            return kPending;
        case T::kAssignTimeout:
            return kExpired;
        case T::kSubmitResult:
            return kResultSubmitted;
        case T::kReportFailure:
            return kFailed;
        case T::kOutOfCredits:
            return kOutOfCredits;
        case T::kPanic:
            return kPanicked;
        case T::kAccept:
        case T::kVerifyTimeout:
            return kSettled;
        case T::kReject:
            return kRejected;
        case T::kCancel:
            return kCancelled;
    }
    return kPending;
}

std::span<const TaskTransition> taskTransitionTable() {
    return kTable;
}

Result<TaskTransition> checkTrigger(TaskState from, TaskTrigger trigger) {
    const auto it = std::find_if(kTable.begin(), kTable.end(), [&](const auto& row) {
        return row.from == from && row.trigger == trigger;
    });
    if (it == kTable.end()) {
        return refuse(from, targetOf(trigger), triggerName(trigger));
    }
    return *it;
}

Status checkTransition(TaskState from, TaskState to) {
    const bool allowed = std::any_of(kTable.begin(), kTable.end(), [&](const auto& row) {
        return row.from == from && row.to == to;
    });
    if (!allowed) {
        return refuse(from, to, "not in the transition table");
    }
    return {};
}

Status checkTopUp(TaskState state) {
    if (!isHot(state)) {
        return refuse(state, state, "top_up needs a hot task");
    }
    return {};
}

Status TaskParams::validate() const {
    if (claimTimeoutMs == 0 || assignTimeoutMs == 0 || verifyWindowMs == 0 ||
        panicAfterSlots == 0) {
        return fail(ErrorCode::kInvalidArgument, "task timeouts and panic_after must be > 0");
    }
    if (maxPendingPerConsumer == 0) {
        return fail(ErrorCode::kInvalidArgument, "tasks.max_pending_per_consumer must be > 0");
    }
    if (matchScanPerBlock == 0) {
        return fail(ErrorCode::kInvalidArgument, "tasks.match_scan_per_block must be > 0");
    }
    if (depositForfeitBps > kBps) {
        return fail(ErrorCode::kInvalidArgument, "tasks.deposit_forfeit_bps is above 10000");
    }
    if (maxReplicas == 0 || maxReplicas > ledger::kMaxTaskReplicas) {
        return fail(ErrorCode::kInvalidArgument,
                    "tasks.max_replicas must be 1 … " + std::to_string(ledger::kMaxTaskReplicas));
    }
    if (spotCheckWindowMs == 0 || spotCheckVerdictMs == 0) {
        return fail(ErrorCode::kInvalidArgument, "spot-check windows must be > 0");
    }
    return {};
}

Result<u128> taskRatePerMinute(u128 priceRate, std::uint64_t correctedGflops) {
    return payment(priceRate, correctedGflops, kMinuteMs / 1'000);
}

Result<u128> taskEscrow(u128 ratePerMinute, std::uint64_t minutes) {
    const auto escrow = checkedMul(ratePerMinute, u128{minutes});
    if (!escrow) {
        return fail(ErrorCode::kOverflow, "task escrow overflows");
    }
    return *escrow;
}

std::uint64_t billedMinutes(const TaskTransition& transition, const TaskUsage& usage,
                            const TaskParams& params) {
    const std::uint64_t elapsed = usage.elapsedMs / kMinuteMs;
    switch (transition.to) {
        case kSettled:
        case kFailed:
            return std::min(usage.reportedMs, usage.elapsedMs) / kMinuteMs;
        case kCancelled:
            return transition.from == kRunning
                       ? saturatingAdd(elapsed, params.cancellationFeeMinutes)
                       : 0;
        case kOutOfCredits:
            return kBillAll;
        default:
            return 0;
    }
}

Result<TaskBill> billTask(const TokenomicsParams& params, const EmissionState& before, u128 escrow,
                          u128 ratePerMinute, std::uint64_t minutes) {
    TaskBill bill;
    bill.minutes = minutes;
    bill.charged = std::min(checkedMul(ratePerMinute, u128{minutes}).value_or(escrow), escrow);
    bill.refund = escrow - bill.charged;
    bill.emission = before;
    if (bill.charged == 0) {
        return bill;
    }
    GL_ASSIGN_OR_RETURN(split, replenish(params, before, bill.charged));
    bill.toPool = split.toPool;
    bill.toProvider = split.toProvider;
    bill.emission = split.after;
    return bill;
}

u128 forfeitedDeposit(const TaskTransition& transition, u128 deposit, std::uint64_t forfeitBps) {
    const bool unassigned =
        transition.to == kExpired || (transition.to == kCancelled && transition.from == kPending);
    if (!unassigned) {
        return 0;
    }
    // deposit < 2^128 and forfeitBps <= 10^4: split the product so that it cannot overflow.
    const u128 bps{forfeitBps};
    return deposit / kBps * bps + deposit % kBps * bps / kBps;
}

Result<LabelConstraint> parseLabelConstraint(std::string_view text) {
    static constexpr std::array<std::pair<std::string_view, LabelOp>, 7> kOps{{
        {"==", LabelOp::kEq},
        {"!=", LabelOp::kNe},
        {"<=", LabelOp::kLe},
        {">=", LabelOp::kGe},
        {"<", LabelOp::kLt},
        {">", LabelOp::kGt},
        {"in", LabelOp::kIn},
    }};
    const auto first = text.find(' ');
    const auto second = first == std::string_view::npos ? first : text.find(' ', first + 1);
    if (second == std::string_view::npos) {
        return fail(ErrorCode::kInvalidTask,
                    "label constraint '" + std::string(text) + "' is not 'key op value'");
    }
    const auto key = text.substr(0, first);
    const auto op = text.substr(first + 1, second - first - 1);
    const auto value = text.substr(second + 1);
    const auto it = std::find_if(kOps.begin(), kOps.end(),
                                 [&](const auto& entry) { return entry.first == op; });
    if (key.empty() || value.empty() || it == kOps.end()) {
        return fail(ErrorCode::kInvalidTask, "label constraint '" + std::string(text) +
                                                 "' needs a key, an op among " +
                                                 "== != < <= > >= in, and a value");
    }
    if (ordered(it->second) && !parseDecimal(value)) {
        return fail(ErrorCode::kInvalidTask, "label constraint '" + std::string(text) +
                                                 "' compares with a value that is not a number");
    }
    return LabelConstraint{std::string(key), it->second, std::string(value)};
}

bool satisfies(std::span<const codec::Label> labels, const LabelConstraint& c) {
    const auto label =
        std::find_if(labels.begin(), labels.end(), [&](const auto& l) { return l.key == c.key; });
    if (label == labels.end()) {
        return false;
    }
    const std::string_view value = label->value;
    switch (c.op) {
        case LabelOp::kEq:
            return value == c.value;
        case LabelOp::kNe:
            return value != c.value;
        case LabelOp::kIn:
            return inList(c.value, value);
        case LabelOp::kLt:
        case LabelOp::kLe:
        case LabelOp::kGt:
        case LabelOp::kGe:
            break;
    }
    const auto have = parseDecimal(value);
    const auto want = parseDecimal(c.value);
    if (!have || !want) {
        return false;
    }
    switch (c.op) {
        case LabelOp::kLt:
            return *have < *want;
        case LabelOp::kLe:
            return *have <= *want;
        case LabelOp::kGt:
            return *have > *want;
        default:
            return *have >= *want;
    }
}

std::optional<Address> matchProvider(const MatchRequest& request,
                                     std::span<const MatchCandidate> candidates) {
    // Reputation first: only the eligible providers with the best score stay in the draw.
    std::uint32_t best = 0;
    bool any = false;
    for (const auto& candidate : candidates) {
        if (eligible(request, candidate) && (!any || candidate.score > best)) {
            best = candidate.score;
            any = true;
        }
    }
    std::vector<Address> fits;
    for (const auto& candidate : candidates) {
        if (eligible(request, candidate) && candidate.score == best) {
            fits.push_back(candidate.provider);
        }
    }
    if (fits.empty()) {
        return std::nullopt;
    }
    std::sort(fits.begin(), fits.end());
    fits.erase(std::unique(fits.begin(), fits.end()), fits.end());
    crypto::Sha256 h;
    const Hash256 digest = h.update("gridledger/task-match").update(request.taskId.view()).finish();
    std::uint64_t pick = 0;
    for (std::size_t i = 0; i < 8; ++i) {
        pick = (pick << 8) | digest.data()[i];
    }
    return fits[static_cast<std::size_t>(pick % fits.size())];
}

std::optional<TaskTrigger> dueTimeout(const TaskClock& clock, const TaskParams& params,
                                      std::uint64_t slotMs, std::uint64_t nowMs) {
    switch (clock.state) {
        case kPending:
            if (nowMs >= saturatingAdd(clock.createdMs, params.assignTimeoutMs)) {
                return T::kAssignTimeout;
            }
            return std::nullopt;
        case kAssigned:
            if (nowMs >= saturatingAdd(clock.assignedMs, params.claimTimeoutMs)) {
                return T::kClaimTimeout;
            }
            return std::nullopt;
        case kResultSubmitted:
            if (nowMs >= saturatingAdd(clock.submittedMs, params.verifyWindowMs)) {
                return T::kVerifyTimeout;
            }
            return std::nullopt;
        case kRunning: {
            const auto panicAt = saturatingAdd(clock.unattestedSinceMs,
                                               saturatingMul(params.panicAfterSlots, slotMs));
            const auto creditsAt =
                saturatingAdd(clock.startedMs, saturatingMul(clock.escrowMinutes, kMinuteMs));
            if (nowMs >= panicAt && panicAt <= creditsAt) {
                return T::kPanic;
            }
            if (nowMs >= creditsAt) {
                return T::kOutOfCredits;
            }
            return std::nullopt;
        }
        default:
            return std::nullopt;
    }
}

std::optional<std::uint64_t> timeoutDueAt(const TaskClock& clock, const TaskParams& params,
                                          std::uint64_t slotMs) {
    switch (clock.state) {
        case kPending:
            return saturatingAdd(clock.createdMs, params.assignTimeoutMs);
        case kAssigned:
            return saturatingAdd(clock.assignedMs, params.claimTimeoutMs);
        case kResultSubmitted:
            return saturatingAdd(clock.submittedMs, params.verifyWindowMs);
        case kRunning:
            return std::min(
                saturatingAdd(clock.unattestedSinceMs,
                              saturatingMul(params.panicAfterSlots, slotMs)),
                saturatingAdd(clock.startedMs, saturatingMul(clock.escrowMinutes, kMinuteMs)));
        default:
            return std::nullopt;
    }
}

}  // namespace gridledger::contracts
