#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/result.h>
#include <gridledger/rpc/chain_methods.h>

namespace gridledger::rpc {

// WebSocket subscriptions (docs/rpc.md, "Subscriptions"): a client on `/ws` calls
// chain_subscribe with a topic and receives, for every executed block in height order, the
// notifications of that topic as JSON-RPC notifications of method `chain_subscription`.

/** The subscription methods and the method name of the notifications. */
inline constexpr std::string_view kSubscribeMethod = "chain_subscribe";
inline constexpr std::string_view kUnsubscribeMethod = "chain_unsubscribe";
inline constexpr std::string_view kNotificationMethod = "chain_subscription";

/** What a subscription receives. The numbers are internal; clients use the names. */
enum class Topic : std::uint8_t {
    kNewHeads = 0,          // "newHeads": every executed block, as chain_getHead shows it
    kTaskTransitions = 1,   // "taskTransitions": receipt events whose kind begins with "task_"
    kAttestations = 2,      // "attestations": events "attestation" and "attestation_challenged"
    kEpochSettlements = 3,  // "epochSettlements": "epoch_settled" events of system receipts
};

/** The client-facing name of a topic ("newHeads", …). */
[[nodiscard]] std::string_view topicName(Topic topic);

/** The topic named `name`, or std::nullopt for an unknown name. */
[[nodiscard]] std::optional<Topic> topicNamed(std::string_view name);

/** One notification for the subscribers of `topic`: its `result`, already serialized JSON. */
struct Notification {
    Topic topic = Topic::kNewHeads;
    std::string resultJson;
};

/**
 * The notifications of the executed block at `height`, in order: its head (newHeads), then one
 * per matching event of its system receipt and of its transactions' receipts, in execution
 * order. An event notification is `{height, tx_hash, index, kind, attributes}`. Fails when the
 * block or its receipts cannot be read (kNotFound for a height not executed yet).
 */
[[nodiscard]] Result<std::vector<Notification>> notificationsAt(const ChainContext& context,
                                                                std::uint64_t height);

/**
 * Registers chain_subscribe and chain_unsubscribe for plain HTTP, where they cannot work: both
 * answer -32002 `unavailable`, saying that subscriptions need `/ws`. On a WebSocket connection the
 * session answers them itself before the method table is consulted. Fails like MethodTable::add.
 */
[[nodiscard]] Status addSubscriptionMethods(MethodTable& table);

}  // namespace gridledger::rpc
