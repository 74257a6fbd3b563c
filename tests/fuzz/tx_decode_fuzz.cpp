// Fuzz target: transaction bytes as they arrive from RPC clients and peers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <gridledger/codec/tx.h>
#include <gridledger/proto/chain.pb.h>

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
    // The transaction's fields, written by protobuf, give back the bytes they were read from: the
    // hand-read wrapper accepts the canonical encoding only.
    gridledger::proto::Tx wrapper;
    wrapper.set_body(gridledger::toString(tx->bodyBytes));
    wrapper.set_signature(gridledger::toString(tx->signature.view()));
    const std::string again = wrapper.SerializeAsString();
    if (again.size() != size ||
        !std::equal(again.begin(), again.end(), data,
                    [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; })) {
        throw std::logic_error("a transaction decoded from bytes protobuf does not write");
    }
    // So does its body, whether read by hand (a transfer) or through protobuf: the body encoded
    // again is the body it was read from.
    if (gridledger::codec::encodeTxBody(tx->body) != tx->bodyBytes) {
        throw std::logic_error("a transaction body decoded from bytes it does not encode to");
    }
    (void)gridledger::codec::verifyTxSignature(*tx, "gridledger-fuzz");
    return 0;
}
