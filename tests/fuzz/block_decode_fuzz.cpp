// Fuzz target: block bytes as they arrive from peers and from the block store.
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include <gridledger/codec/block.h>
#include <gridledger/crypto/sha256.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const gridledger::ByteView input(data, size);
    auto block = gridledger::codec::decodeBlock(input);
    if (block) {
        // Round trip: re-encoding keeps the header bytes, hence the id.
        auto again = gridledger::codec::decodeBlock(gridledger::codec::encodeBlock(*block));
        if (!again || again->id != block->id ||
            block->id != gridledger::crypto::sha256(block->headerBytes)) {
            throw std::logic_error("block does not round-trip");
        }
    }
    (void)gridledger::codec::decodeVote(input);
    (void)gridledger::codec::decodeTimeout(input);
    (void)gridledger::codec::decodeQc(input);
    (void)gridledger::codec::decodeTc(input);
    return 0;
}
