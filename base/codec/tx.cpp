#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/proto/chain.pb.h>

#include "payloads_pb.h"
#include "pb_util.h"

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

}  // namespace

Bytes encodeTxBody(const TxBody& body) {
    return detail::serialize(toProto(body));
}

Result<SignedTx> decodeTx(ByteView raw) {
    if (raw.size() > kMaxTxBytes) {
        return fail(ErrorCode::kTxTooLarge,
                    "transaction exceeds " + std::to_string(kMaxTxBytes) + " bytes");
    }
    GL_ASSIGN_OR_RETURN(fields, splitTx(raw));
    proto::TxBody body;
    GL_TRY(detail::parse(body, fields.body, "transaction body"));

    SignedTx out;
    out.raw.assign(raw.begin(), raw.end());
    out.hash = crypto::sha256(raw);
    out.bodyBytes.assign(fields.body.begin(), fields.body.end());
    GL_ASSIGN_OR_RETURN(signature, fixed<Signature>(fields.signature, "signature"));
    out.signature = signature;
    out.body.chainId = body.chain_id();
    GL_ASSIGN_OR_RETURN(sender, fixed<PubKey>(body.sender_pubkey(), "sender_pubkey"));
    out.body.sender = sender;
    out.body.nonce = body.nonce();
    out.body.validUntilHeight = body.valid_until_height();
    out.body.fee = body.fee();
    GL_ASSIGN_OR_RETURN(payload, detail::payloadFromProto(body));
    out.body.payload = payload;
    out.sender = crypto::addressOf(sender);
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
