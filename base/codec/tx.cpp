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

}  // namespace

Bytes encodeTxBody(const TxBody& body) {
    return detail::serialize(toProto(body));
}

Result<SignedTx> decodeTx(ByteView raw) {
    if (raw.size() > kMaxTxBytes) {
        return fail(ErrorCode::kTxTooLarge,
                    "transaction exceeds " + std::to_string(kMaxTxBytes) + " bytes");
    }
    proto::Tx tx;
    GL_TRY(detail::parse(tx, raw, "transaction"));
    proto::TxBody body;
    GL_TRY(detail::parse(body, asBytes(tx.body()), "transaction body"));

    SignedTx out;
    out.raw.assign(raw.begin(), raw.end());
    out.hash = crypto::sha256(raw);
    out.bodyBytes.assign(tx.body().begin(), tx.body().end());
    GL_ASSIGN_OR_RETURN(signature, fixed<Signature>(tx.signature(), "signature"));
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
