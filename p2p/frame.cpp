#include "frame.h"

#include <string>

namespace gridledger::p2p {

Result<std::shared_ptr<const Bytes>> encodeFrame(const codec::Envelope& envelope,
                                                 std::size_t maxFrameBytes) {
    const Bytes body = codec::encodeEnvelope(envelope);
    if (body.size() > maxFrameBytes || body.size() > UINT32_MAX) {
        return fail(ErrorCode::kTooLarge, "p2p frame of " + std::to_string(body.size()) +
                                              " bytes exceeds the limit of " +
                                              std::to_string(maxFrameBytes));
    }
    auto frame = std::make_shared<Bytes>();
    frame->reserve(kFrameHeaderBytes + body.size());
    appendU32(*frame, static_cast<std::uint32_t>(body.size()));
    append(*frame, body);
    return std::shared_ptr<const Bytes>(std::move(frame));
}

bool isDroppable(const codec::NetMessage& message) {
    return message.kind == codec::MessageKind::kTx || message.kind == codec::MessageKind::kBatch;
}

}  // namespace gridledger::p2p
