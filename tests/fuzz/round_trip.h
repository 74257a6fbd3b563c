#pragma once

// What every decoder fuzz target asserts: an input that decodes re-encodes to the same bytes,
// since GridLedger accepts each message in its one canonical encoding only.

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <gridledger/base/bytes.h>

namespace gridledger::fuzz {

/** Decodes `input`; when it decodes, fails unless encoding the result gives `input` back. */
template <typename Decode, typename Encode>
void expectRoundTrip(ByteView input, Decode decode, Encode encode, const char* what) {
    const auto decoded = decode(input);
    if (!decoded) {
        return;
    }
    const Bytes again = encode(*decoded);
    if (!std::equal(again.begin(), again.end(), input.begin(), input.end())) {
        throw std::logic_error(std::string(what) + " decoded from bytes it does not encode to");
    }
}

}  // namespace gridledger::fuzz
