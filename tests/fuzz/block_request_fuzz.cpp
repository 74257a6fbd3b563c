// Fuzz target: a peer's request for one block by id.
#include <cstddef>
#include <cstdint>

#include <gridledger/codec/p2p.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gridledger::fuzz::expectRoundTrip(
        gridledger::ByteView(data, size),
        [](gridledger::ByteView in) { return gridledger::codec::decodeBlockRequest(in); },
        [](const auto& message) { return gridledger::codec::encodeBlockRequest(message); },
        "BlockRequest");
    return 0;
}
