#include <algorithm>
#include <array>
#include <optional>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/proto/chain.pb.h>

#include "payloads_pb.h"
#include "pb_util.h"
#include "tx_body.h"

namespace gridledger::codec {
namespace {

using detail::fixed;
using detail::str;

proto::TxBody toProto(const TxBody& body) {
    proto::TxBody pb;
    pb.set_chain_id(body.chainId);
    pb.set_sender_pubkey(str(body.sender.view()));
    pb.set_nonce(body.nonce);
    pb.set_valid_until_height(body.validUntilHeight);
    pb.set_fee(body.fee);
    detail::payloadToProto(body.payload, pb);
    return pb;
}

/** The two fields of a Tx message, as views into its bytes. */
struct TxFields {
    ByteView body;
    ByteView signature;
};

/**
 * Splits a Tx message (field 1 body, field 2 signature, both length-delimited) read in its
 * canonical encoding only: each field at most once, in number order, with its length's shortest
 * varint, left out when empty, and no other field. The same rules as detail::parse, which every
 * other message goes through, without a protobuf parse, walk and re-serialization for the
 * wrapper of every transaction.
 */
Result<TxFields> splitTx(ByteView raw) {
    constexpr std::uint8_t kBodyTag = (1U << 3U) | 2U;
    constexpr std::uint8_t kSignatureTag = (2U << 3U) | 2U;
    TxFields out;
    std::uint8_t lastTag = 0;
    std::size_t at = 0;
    while (at < raw.size()) {
        const std::uint8_t tag = raw[at++];
        if (tag != kBodyTag && tag != kSignatureTag) {
            return fail(ErrorCode::kMalformed,
                        "transaction has a field other than body (1) and signature (2), or a tag "
                        "not in canonical encoding");
        }
        if (tag <= lastTag) {
            return fail(ErrorCode::kMalformed,
                        "transaction fields are repeated or out of order: not in canonical "
                        "encoding");
        }
        lastTag = tag;
        // kMaxTxBytes bounds the input, so a length needs at most three varint bytes.
        std::size_t length = 0;
        for (unsigned n = 0;; ++n) {
            if (at == raw.size() || n == 3) {
                return fail(ErrorCode::kMalformed, "transaction is not a valid encoding");
            }
            const std::uint8_t byte = raw[at++];
            length |= static_cast<std::size_t>(byte & 0x7fU) << (7 * n);
            if ((byte & 0x80U) == 0) {
                if (byte == 0 && n > 0) {
                    return fail(ErrorCode::kMalformed,
                                "transaction field length is not in canonical encoding");
                }
                break;
            }
        }
        if (length == 0) {
            return fail(ErrorCode::kMalformed,
                        "transaction has an empty field, which the canonical encoding leaves out");
        }
        if (raw.size() - at < length) {
            return fail(ErrorCode::kMalformed, "transaction is not a valid encoding");
        }
        (tag == kBodyTag ? out.body : out.signature) = raw.subspan(at, length);
        at += length;
    }
    return out;
}

/** Reads a varint at `at` in its shortest encoding; nullopt when it is not one. */
std::optional<std::uint64_t> shortestVarint(ByteView in, std::size_t& at) {
    std::uint64_t value = 0;
    for (unsigned n = 0; n < 10 && at < in.size(); ++n) {
        const std::uint8_t byte = in[at++];
        if (n == 9 && byte > 1) {
            return std::nullopt;  // beyond 64 bits
        }
        value |= static_cast<std::uint64_t>(byte & 0x7fU) << (7 * n);
        if ((byte & 0x80U) == 0) {
            if (byte == 0 && n > 0) {
                return std::nullopt;  // a longer encoding than needed
            }
            return value;
        }
    }
    return std::nullopt;
}

/** Reads a length-delimited field's content at `at`; nullopt when it does not fit. */
std::optional<ByteView> lengthDelimited(ByteView in, std::size_t& at) {
    const auto length = shortestVarint(in, at);
    if (!length || *length > in.size() - at) {
        return std::nullopt;
    }
    const ByteView content = in.subspan(at, *length);
    at += *length;
    return content;
}

}  // namespace

namespace detail {

std::optional<TxBody> transferBodyOf(ByteView body) {
    constexpr std::uint8_t kChainIdTag = (1U << 3U) | 2U;
    constexpr std::uint8_t kSenderTag = (2U << 3U) | 2U;
    constexpr std::array<std::uint8_t, 3> kNumberTags = {3U << 3U, 4U << 3U, 5U << 3U};
    // Field 16, length-delimited: its tag is the varint 0x82 0x01.
    constexpr std::array<std::uint8_t, 2> kTransferTag = {0x82, 0x01};
    constexpr std::array<std::uint8_t, 2> kToHead = {(1U << 3U) | 2U, Address::kSize};
    constexpr std::array<std::uint8_t, 2> kAmountHead = {(2U << 3U) | 2U, 16};

    TxBody out;
    std::size_t at = 0;
    if (at < body.size() && body[at] == kChainIdTag) {
        const auto chainId = lengthDelimited(body, ++at);
        if (!chainId || chainId->empty() ||
            !std::all_of(chainId->begin(), chainId->end(),
                         [](std::uint8_t c) { return c >= 0x20 && c < 0x7f; })) {
            return std::nullopt;
        }
        out.chainId.assign(chainId->begin(), chainId->end());
    }
    if (at == body.size() || body[at] != kSenderTag) {
        return std::nullopt;
    }
    const auto sender = lengthDelimited(body, ++at);
    if (!sender || sender->size() != PubKey::kSize) {
        return std::nullopt;
    }
    out.sender = *PubKey::fromBytes(*sender);
    const std::array<std::uint64_t*, 3> numbers = {&out.nonce, &out.validUntilHeight, &out.fee};
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        if (at < body.size() && body[at] == kNumberTags[i]) {
            const auto value = shortestVarint(body, ++at);
            if (!value || *value == 0) {
                return std::nullopt;
            }
            *numbers[i] = *value;
        }
    }
    const ByteView rest = body.subspan(at);
    if (rest.size() < kTransferTag.size() ||
        !std::equal(kTransferTag.begin(), kTransferTag.end(), rest.begin())) {
        return std::nullopt;
    }
    at += kTransferTag.size();
    const auto transfer = lengthDelimited(body, at);
    constexpr std::size_t kTransferBytes = 2 + Address::kSize + 2 + 16;
    if (!transfer || at != body.size() || transfer->size() != kTransferBytes ||
        !std::equal(kToHead.begin(), kToHead.end(), transfer->begin()) ||
        !std::equal(kAmountHead.begin(), kAmountHead.end(),
                    transfer->begin() + 2 + Address::kSize)) {
        return std::nullopt;
    }
    out.payload = Transfer{*Address::fromBytes(transfer->subspan(2, Address::kSize)),
                           *readU128(transfer->subspan(4 + Address::kSize))};
    return out;
}

Result<TxBody> bodyThroughProto(ByteView bytes) {
    proto::TxBody body;
    GL_TRY(parse(body, bytes, "transaction body"));
    TxBody out;
    out.chainId = body.chain_id();
    GL_ASSIGN_OR_RETURN(sender, fixed<PubKey>(body.sender_pubkey(), "sender_pubkey"));
    out.sender = sender;
    out.nonce = body.nonce();
    out.validUntilHeight = body.valid_until_height();
    out.fee = body.fee();
    GL_ASSIGN_OR_RETURN(payload, payloadFromProto(body));
    out.payload = payload;
    return out;
}

}  // namespace detail

Bytes encodeTxBody(const TxBody& body) {
    return detail::serialize(toProto(body));
}

Result<SignedTx> decodeTx(ByteView raw) {
    if (raw.size() > kMaxTxBytes) {
        return fail(ErrorCode::kTxTooLarge,
                    "transaction exceeds " + std::to_string(kMaxTxBytes) + " bytes");
    }
    GL_ASSIGN_OR_RETURN(fields, splitTx(raw));
    std::optional<TxBody> body = detail::transferBodyOf(fields.body);
    if (!body) {
        GL_ASSIGN_OR_RETURN(read, detail::bodyThroughProto(fields.body));
        body = std::move(read);
    }
    GL_ASSIGN_OR_RETURN(signature, fixed<Signature>(fields.signature, "signature"));

    SignedTx out;
    out.raw.assign(raw.begin(), raw.end());
    out.hash = crypto::sha256(raw);
    out.bodyBytes.assign(fields.body.begin(), fields.body.end());
    out.signature = signature;
    out.body = std::move(*body);
    out.sender = crypto::addressOf(out.body.sender);
    return out;
}

Hash256 txSigningDigest(const SignedTx& tx, std::string_view domain) {
    return crypto::signingDigest(crypto::kTxTag, domain, tx.bodyBytes);
}

bool verifyTxSignature(const SignedTx& tx, std::string_view domain) {
    return crypto::verifyRecurringSigner(tx.body.sender, txSigningDigest(tx, domain), tx.signature);
}

SignedTx signTx(const TxBody& body, const crypto::SecretKey& key, std::string_view domain) {
    proto::Tx tx;
    const Bytes bodyBytes = encodeTxBody(body);
    tx.set_body(str(bodyBytes));
    const Signature sig = key.sign(crypto::signingDigest(crypto::kTxTag, domain, bodyBytes));
    tx.set_signature(str(sig.view()));
    SignedTx out;
    out.raw = detail::serialize(tx);
    out.hash = crypto::sha256(out.raw);
    out.bodyBytes = bodyBytes;
    out.body = body;
    out.signature = sig;
    out.sender = crypto::addressOf(body.sender);
    return out;
}

}  // namespace gridledger::codec
