// Fuzz target: a chunk of a state snapshot (a range proof) as a peer or a file delivers it.
#include <cstddef>
#include <cstdint>

#include <gridledger/ledger/state_tree.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const gridledger::ByteView input(data, size);
    gridledger::fuzz::expectRoundTrip(
        input, [](gridledger::ByteView in) { return gridledger::ledger::decodeRange(in); },
        [](const auto& range) { return gridledger::ledger::encodeRange(range); }, "StateRange");
    if (auto range = gridledger::ledger::decodeRange(input)) {
        (void)gridledger::ledger::verifyRange(gridledger::Hash256{}, *range);
    }
    return 0;
}
