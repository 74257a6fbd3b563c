// Fuzz target: a batch of gossiped transactions.
#include <cstddef>
#include <cstdint>

#include <gridledger/codec/p2p.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gridledger::fuzz::expectRoundTrip(
        gridledger::ByteView(data, size),
        [](gridledger::ByteView in) { return gridledger::codec::decodeTxBatch(in); },
        [](const auto& message) { return gridledger::codec::encodeTxBatch(message); }, "TxBatch");
    return 0;
}
