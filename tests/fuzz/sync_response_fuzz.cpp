// Fuzz target: a peer's answer of committed blocks and their commit proof.
#include <cstddef>
#include <cstdint>

#include <gridledger/codec/p2p.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gridledger::fuzz::expectRoundTrip(
        gridledger::ByteView(data, size),
        [](gridledger::ByteView in) { return gridledger::codec::decodeSyncResponse(in); },
        [](const auto& message) { return gridledger::codec::encodeSyncResponse(message); },
        "SyncResponse");
    return 0;
}
