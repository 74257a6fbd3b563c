#pragma once

// Private to base/codec: the two ways a transaction body is read (decodeTx uses both).

#include <optional>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/tx.h>

namespace gridledger::codec::detail {

/**
 * A transfer's body read straight from its bytes, the most common body by far: fields 1 to 5 as
 * present, then field 16 (the transfer) holding a 20-byte `to` and a 16-byte `amount`, each field
 * in the canonical encoding (in number order, shortest varints, zero values left out, a chain id
 * of printable ASCII). std::nullopt for any other body, valid or not: bodyThroughProto reads or
 * refuses it. What this reads, bodyThroughProto reads the same.
 */
[[nodiscard]] std::optional<TxBody> transferBodyOf(ByteView body);

/** Any body, through its protobuf message and the canonical-encoding checks of every message. */
[[nodiscard]] Result<TxBody> bodyThroughProto(ByteView body);

}  // namespace gridledger::codec::detail
