#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/error.h>
#include <gridledger/base/result.h>

namespace gridledger::codec {

/** A state change worth reading later: `kind` and ordered attributes (all text). */
struct Event {
    std::string kind;
    std::vector<std::pair<std::string, std::string>> attributes;

    bool operator==(const Event&) const = default;
};

/** The outcome of one transaction in a committed block. */
struct Receipt {
    Hash256 txHash;
    std::uint64_t height = 0;
    std::uint32_t index = 0;
    ErrorCode code = ErrorCode::kOk;
    std::vector<Event> events;
    /** DPS base units paid to the reward pool (0 for a transaction that was not applied). */
    std::uint64_t fee = 0;

    [[nodiscard]] bool success() const { return code == ErrorCode::kOk; }
    bool operator==(const Receipt&) const = default;
};

[[nodiscard]] Bytes encodeReceipt(const Receipt& receipt);
[[nodiscard]] Result<Receipt> decodeReceipt(ByteView raw);

}  // namespace gridledger::codec
