#include <cstddef>
#include <cstdint>

#include <gridledger/codec/receipt.h>
#include <gridledger/proto/chain.pb.h>

#include "pb_util.h"

namespace gridledger::codec {

namespace {

using detail::fieldSize;
using detail::putBytes;
using detail::putScalar;
using detail::putVarint;
using detail::tag;

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
    // Written straight into its bytes (pb_util.h): a block's receipts are encoded once each at
    // its commit. The hash and the four scalars (height, index, code, fee), then the events.
    std::size_t size = fieldSize(Hash256::size()) + 4 * detail::kMaxScalarBytes;
    for (const auto& event : receipt.events) {
        size += fieldSize(eventSize(event));
    }
    Bytes out;
    out.reserve(size);
    putBytes(out, 1, receipt.txHash.view());
    putScalar(out, 2, receipt.height);
    putScalar(out, 3, receipt.index);
    putScalar(out, 4, static_cast<std::uint32_t>(receipt.code));
    for (const auto& event : receipt.events) {
        out.push_back(tag(5, detail::kLengthDelimitedType));
        putVarint(out, eventSize(event));
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
