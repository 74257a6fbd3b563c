#pragma once

// Private to base/codec: the system-contract payloads to and from their protobuf messages.

#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/proto/chain.pb.h>

namespace gridledger::codec::detail {

/** Sets the payload oneof of `pb` from `payload`. */
void payloadToProto(const Payload& payload, proto::TxBody& pb);

/**
 * The payload of `pb`: kUnknownPayload when none is set, kBadLength when a fixed-size field
 * (address, key, hash, u128) has the wrong length, kMalformed for a proposal without an action.
 */
[[nodiscard]] Result<Payload> payloadFromProto(const proto::TxBody& pb);

}  // namespace gridledger::codec::detail
