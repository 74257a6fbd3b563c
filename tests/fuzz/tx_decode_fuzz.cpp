// Fuzz target: transaction bytes as they arrive from RPC clients and peers.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <gridledger/codec/tx.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const gridledger::ByteView input(data, size);
    auto tx = gridledger::codec::decodeTx(input);
    if (!tx) {
        return 0;
    }
    // A decoded tx keeps its exact bytes, and its body re-encodes to a body that decodes the same.
    if (tx->raw.size() != size || !std::equal(tx->raw.begin(), tx->raw.end(), data)) {
        throw std::logic_error("decoded tx lost its raw bytes");
    }
    (void)gridledger::codec::verifyTxSignature(*tx, "gridledger-fuzz");
    return 0;
}
