// Fuzz target: state proofs as an auditor receives them.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <gridledger/ledger/state_tree.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const gridledger::ByteView input(data, size);
    auto proof = gridledger::ledger::decodeProof(input);
    if (!proof) {
        return 0;
    }
    const auto encoded = gridledger::ledger::encodeProof(*proof);
    if (encoded.size() != size || !std::equal(encoded.begin(), encoded.end(), data)) {
        throw std::logic_error("an accepted proof must re-encode to the same bytes");
    }
    (void)gridledger::ledger::verifyProof(gridledger::Hash256{}, gridledger::Hash256{},
                                          std::nullopt, *proof);
    return 0;
}
