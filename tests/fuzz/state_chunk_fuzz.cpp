// Fuzz target: a peer's state sync request and answer (docs/p2p.md).
#include <cstddef>
#include <cstdint>

#include <gridledger/codec/p2p.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const gridledger::ByteView input(data, size);
    gridledger::fuzz::expectRoundTrip(
        input, [](gridledger::ByteView in) { return gridledger::codec::decodeStateChunk(in); },
        [](const auto& chunk) { return gridledger::codec::encodeStateChunk(chunk); }, "StateChunk");
    gridledger::fuzz::expectRoundTrip(
        input,
        [](gridledger::ByteView in) { return gridledger::codec::decodeStateChunkRequest(in); },
        [](const auto& request) { return gridledger::codec::encodeStateChunkRequest(request); },
        "StateChunkRequest");
    return 0;
}
