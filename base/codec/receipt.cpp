#include <gridledger/codec/receipt.h>
#include <gridledger/proto/chain.pb.h>

#include "pb_util.h"

namespace gridledger::codec {

Bytes encodeReceipt(const Receipt& receipt) {
    proto::Receipt pb;
    pb.set_tx_hash(detail::str(receipt.txHash.view()));
    pb.set_height(receipt.height);
    pb.set_index(receipt.index);
    pb.set_code(static_cast<std::uint32_t>(receipt.code));
    pb.set_fee(receipt.fee);
    for (const auto& event : receipt.events) {
        auto* e = pb.add_events();
        e->set_kind(event.kind);
        for (const auto& [key, value] : event.attributes) {
            e->add_keys(key);
            e->add_values(value);
        }
    }
    return detail::serialize(pb);
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
