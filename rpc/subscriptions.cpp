#include <array>
#include <utility>

#include <boost/json/serialize.hpp>

#include <gridledger/rpc/subscriptions.h>

#include "handlers/handlers.h"

namespace gridledger::rpc {
namespace {

namespace json = boost::json;

constexpr std::array<std::pair<Topic, std::string_view>, 4> kTopics{{
    {Topic::kNewHeads, "newHeads"},
    {Topic::kTaskTransitions, "taskTransitions"},
    {Topic::kAttestations, "attestations"},
    {Topic::kEpochSettlements, "epochSettlements"},
}};

/** The topic of a receipt event, or std::nullopt when no subscription carries it. */
std::optional<Topic> topicOfEvent(std::string_view kind, bool systemReceipt) {
    if (kind.starts_with("task_")) {
        return Topic::kTaskTransitions;
    }
    if (kind == "attestation" || kind == "attestation_challenged") {
        return Topic::kAttestations;
    }
    if (systemReceipt && kind == "epoch_settled") {
        return Topic::kEpochSettlements;
    }
    return std::nullopt;
}

void addEvents(const codec::Receipt& receipt, bool systemReceipt, std::vector<Notification>& out) {
    for (const codec::Event& event : receipt.events) {
        const std::optional<Topic> topic = topicOfEvent(event.kind, systemReceipt);
        if (!topic) {
            continue;
        }
        const json::object result{{"height", std::to_string(receipt.height)},
                                  {"tx_hash", receipt.txHash.hex()},
                                  {"index", receipt.index},
                                  {"kind", event.kind},
                                  {"attributes", handlers::attributesJson(event)}};
        out.push_back(Notification{*topic, json::serialize(result)});
    }
}

Result<json::value> onlyOverWebSocket(std::string_view method) {
    return fail(ErrorCode::kUnavailable,
                std::string(method) + " needs a WebSocket connection: connect to /ws");
}

}  // namespace

std::string_view topicName(Topic topic) {
    for (const auto& [value, name] : kTopics) {
        if (value == topic) {
            return name;
        }
    }
    return "unknown";
}

std::optional<Topic> topicNamed(std::string_view name) {
    for (const auto& [value, known] : kTopics) {
        if (known == name) {
            return value;
        }
    }
    return std::nullopt;
}

Result<std::vector<Notification>> notificationsAt(const ChainContext& context,
                                                  std::uint64_t height) {
    GL_ASSIGN_OR_RETURN(block, context.blocks->blockAt(height));
    GL_ASSIGN_OR_RETURN(roots, context.blocks->rootsAt(height));
    if (!block || !roots) {
        return fail(ErrorCode::kNotFound, "no executed block at height " + std::to_string(height));
    }
    std::vector<Notification> out;
    out.push_back(Notification{Topic::kNewHeads,
                               json::serialize(handlers::headJson(height, *block, *roots))});
    GL_ASSIGN_OR_RETURN(system, context.blocks->systemReceiptAt(height));
    if (system) {
        addEvents(*system, true, out);
    }
    GL_ASSIGN_OR_RETURN(receipts, context.blocks->receiptsAt(height));
    if (receipts.size() != block->txs.size()) {
        return fail(ErrorCode::kCorrupt, "an executed transaction has no receipt");
    }
    for (const codec::Receipt& receipt : receipts) {
        addEvents(receipt, false, out);
    }
    return out;
}

Status addSubscriptionMethods(MethodTable& table) {
    GL_TRY(table.add(std::string(kSubscribeMethod),
                     [](const json::value&) { return onlyOverWebSocket(kSubscribeMethod); }));
    return table.add(std::string(kUnsubscribeMethod),
                     [](const json::value&) { return onlyOverWebSocket(kUnsubscribeMethod); });
}

}  // namespace gridledger::rpc
