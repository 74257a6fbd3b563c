// Fuzz target: frame bodies as they arrive from P2P peers.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <gridledger/codec/p2p.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto envelope = gridledger::codec::decodeEnvelope(gridledger::ByteView(data, size));
    if (!envelope) {
        return 0;
    }
    // Whatever is accepted survives a round trip unchanged.
    auto again = gridledger::codec::decodeEnvelope(gridledger::codec::encodeEnvelope(*envelope));
    if (!again || *again != *envelope) {
        throw std::logic_error("an accepted envelope does not round-trip");
    }
    return 0;
}
