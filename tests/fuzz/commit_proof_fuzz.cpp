// Fuzz target: a commit proof, as sync answers and the block store carry it.
#include <cstddef>
#include <cstdint>

#include <gridledger/codec/block.h>

#include "round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    gridledger::fuzz::expectRoundTrip(
        gridledger::ByteView(data, size),
        [](gridledger::ByteView in) { return gridledger::codec::decodeCommitProof(in); },
        [](const auto& message) { return gridledger::codec::encodeCommitProof(message); },
        "CommitProof");
    return 0;
}
