#include <cstddef>
#include <cstdint>
#include <vector>

#include <gridledger/codec/receipt.h>
#include <gridledger/proto/chain.pb.h>

#include "pb_util.h"

namespace gridledger::codec {

namespace {

// A receipt is written straight into its bytes, in the encoding protobuf gives proto::Receipt
// (fields in number order, zero scalars and an empty kind left out, every event and attribute
// written, lengths and integers as shortest varints): a block's receipts are encoded once each at
// its commit, and through a proto::Receipt each one cost a message, a string per attribute and
// their frees. Every field number here is below 16, so a tag is one byte.
constexpr std::uint8_t kLengthDelimited = 2;
/** A tag and the longest varint, 10 bytes: the most a scalar field takes. */
constexpr std::size_t kMaxScalarBytes = 1 + 10;

constexpr std::uint8_t tag(std::uint8_t field, std::uint8_t wireType) {
    return static_cast<std::uint8_t>(field << 3U | wireType);
}

std::size_t varintSize(std::uint64_t value) {
    std::size_t size = 1;
    for (; value >= 0x80; value >>= 7U) {
        ++size;
    }
    return size;
}

void putVarint(Bytes& out, std::uint64_t value) {
    for (; value >= 0x80; value >>= 7U) {
        out.push_back(static_cast<std::uint8_t>(value | 0x80U));
    }
    out.push_back(static_cast<std::uint8_t>(value));
}

/** A varint field, left out when zero (proto3). */
void putScalar(Bytes& out, std::uint8_t field, std::uint64_t value) {
    if (value != 0) {
        out.push_back(tag(field, 0));
        putVarint(out, value);
    }
}

std::size_t fieldSize(std::size_t length) {
    return 1 + varintSize(length) + length;
}

void putBytes(Bytes& out, std::uint8_t field, ByteView bytes) {
    out.push_back(tag(field, kLengthDelimited));
    putVarint(out, bytes.size());
    out.insert(out.end(), bytes.begin(), bytes.end());
}

/** The size of proto::Event's encoding, without its own tag and length. */
std::size_t eventSize(const Event& event) {
    std::size_t size = event.kind.empty() ? 0 : fieldSize(event.kind.size());
    for (const auto& [key, value] : event.attributes) {
        size += fieldSize(key.size()) + fieldSize(value.size());
    }
    return size;
}

}  // namespace

Bytes encodeReceipt(const Receipt& receipt) {
    std::vector<std::size_t> eventSizes;
    eventSizes.reserve(receipt.events.size());
    // The hash and the four scalars (height, index, code, fee), then the events.
    std::size_t size = fieldSize(Hash256::size()) + 4 * kMaxScalarBytes;
    for (const auto& event : receipt.events) {
        eventSizes.push_back(eventSize(event));
        size += fieldSize(eventSizes.back());
    }
    Bytes out;
    out.reserve(size);
    putBytes(out, 1, receipt.txHash.view());
    putScalar(out, 2, receipt.height);
    putScalar(out, 3, receipt.index);
    putScalar(out, 4, static_cast<std::uint32_t>(receipt.code));
    for (std::size_t i = 0; i < receipt.events.size(); ++i) {
        const Event& event = receipt.events[i];
        out.push_back(tag(5, kLengthDelimited));
        putVarint(out, eventSizes[i]);
        if (!event.kind.empty()) {
            putBytes(out, 1, asBytes(event.kind));
        }
        for (const auto& attribute : event.attributes) {
            putBytes(out, 2, asBytes(attribute.first));
        }
        for (const auto& attribute : event.attributes) {
            putBytes(out, 3, asBytes(attribute.second));
        }
    }
    putScalar(out, 6, receipt.fee);
    return out;
}

Result<Receipt> decodeReceipt(ByteView raw) {
    proto::Receipt pb;
    GL_TRY(detail::parse(pb, raw, "receipt"));
    Receipt receipt;
    GL_ASSIGN_OR_RETURN(hash, detail::fixed<Hash256>(pb.tx_hash(), "receipt.tx_hash"));
    receipt.txHash = hash;
    receipt.height = pb.height();
    receipt.index = pb.index();
    if (pb.code() > 0xffff) {
        return fail(ErrorCode::kMalformed, "receipt code out of range");
    }
    receipt.code = static_cast<ErrorCode>(pb.code());
    receipt.fee = pb.fee();
    for (const auto& e : pb.events()) {
        if (e.keys_size() != e.values_size()) {
            return fail(ErrorCode::kMalformed, "receipt event has mismatched attributes");
        }
        Event event;
        event.kind = e.kind();
        for (int i = 0; i < e.keys_size(); ++i) {
            event.attributes.emplace_back(e.keys(i), e.values(i));
        }
        receipt.events.push_back(std::move(event));
    }
    return receipt;
}

}  // namespace gridledger::codec
