// Fuzz target: the certified-batch messages between committee members (a batch, an
// acknowledgement, a certificate), each decoder given the same bytes.
#include <cstddef>
#include <cstdint>

#include <gridledger/codec/block.h>
#include <gridledger/codec/p2p.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace codec = gridledger::codec;
    const gridledger::ByteView input(data, size);
    gridledger::fuzz::expectRoundTrip(
        input, [](gridledger::ByteView in) { return codec::decodeBatchMessage(in); },
        [](const auto& message) { return codec::encodeBatchMessage(message); }, "Batch");
    gridledger::fuzz::expectRoundTrip(
        input, [](gridledger::ByteView in) { return codec::decodeBatchAck(in); },
        [](const auto& message) { return codec::encodeBatchAck(message); }, "BatchAck");
    gridledger::fuzz::expectRoundTrip(
        input, [](gridledger::ByteView in) { return codec::decodeBatchCert(in); },
        [](const auto& message) { return codec::encodeBatchCert(message); }, "BatchCert");
    return 0;
}
