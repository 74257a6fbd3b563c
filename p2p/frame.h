#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/p2p.h>

namespace gridledger::p2p {

/** A frame is a u32 big-endian body length followed by the body: one encoded Envelope. */
inline constexpr std::size_t kFrameHeaderBytes = 4;

/** The transport protocol version carried in PeerHello. */
inline constexpr std::uint32_t kProtocolVersion = 1;

/** Encodes `envelope` as one frame; fails with kTooLarge when the body exceeds maxFrameBytes. */
[[nodiscard]] Result<std::shared_ptr<const Bytes>> encodeFrame(const codec::Envelope& envelope,
                                                               std::size_t maxFrameBytes);

/** True for the kinds the send queue may drop under pressure: transaction gossip and batches. */
[[nodiscard]] bool isDroppable(const codec::NetMessage& message);

}  // namespace gridledger::p2p
