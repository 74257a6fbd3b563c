#pragma once

// A `POST /txs` body (docs/rpc.md): each transaction after its length, 4 bytes big-endian.

#include <string>

#include <gridledger/base/bytes.h>

namespace gridledger::testing {

/** The body carrying `txs`, each of them a ByteView or a Bytes. */
template <typename Range>
std::string txFrames(const Range& txs) {
    Bytes body;
    for (const auto& tx : txs) {
        const ByteView bytes(tx);
        appendU32(body, static_cast<std::uint32_t>(bytes.size()));
        append(body, bytes);
    }
    return {body.begin(), body.end()};
}

}  // namespace gridledger::testing
