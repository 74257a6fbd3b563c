#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/payloads.h>
#include <gridledger/crypto/schnorr.h>

namespace gridledger::codec {

/** Largest encoded transaction accepted anywhere (RPC, mempool, blocks). */
inline constexpr std::size_t kMaxTxBytes = std::size_t{64} * 1024;

/** The signed part of a transaction. */
struct TxBody {
    std::string chainId;
    PubKey sender;
    std::uint64_t nonce = 0;
    std::uint64_t validUntilHeight = 0;
    Payload payload;
    /**
     * DPS base units the sender pays to the reward pool, applied or not; at least the chain's
     * fee for the payload kind (contracts::FeeParams), and the mempool serves higher fees first.
     */
    std::uint64_t fee = 0;
};

/**
 * A decoded transaction together with the exact bytes it arrived as. `hash` is SHA-256 of `raw`;
 * the signature covers `bodyBytes`, never a re-encoding.
 */
struct SignedTx {
    Bytes raw;
    Hash256 hash;
    Bytes bodyBytes;
    TxBody body;
    Signature signature;
    Address sender;
};

/** Encodes a body deterministically (the bytes that get signed). */
[[nodiscard]] Bytes encodeTxBody(const TxBody& body);

/**
 * Parses raw transaction bytes. Checks shape only (sizes, lengths, known payload); does not verify
 * the signature, the chain id or the nonce. Never crashes on garbage.
 */
[[nodiscard]] Result<SignedTx> decodeTx(ByteView raw);

/**
 * The digest a transaction's signature covers: signingDigest(kTxTag, domain, body bytes), with
 * the chain's domain crypto::chainDomain(chain id, genesis hash).
 */
[[nodiscard]] Hash256 txSigningDigest(const SignedTx& tx, std::string_view domain);

/** True iff the signature is valid for the sender key over the received body bytes in `domain`. */
[[nodiscard]] bool verifyTxSignature(const SignedTx& tx, std::string_view domain);

/**
 * Encodes and signs a body with `key` (whose public key must equal body.sender) for the chain of
 * signing domain `domain`.
 */
[[nodiscard]] SignedTx signTx(const TxBody& body, const crypto::SecretKey& key,
                              std::string_view domain);

}  // namespace gridledger::codec
