#pragma once

#include <string_view>

#include <gridledger/base/bytes.h>

namespace gridledger::crypto {

/** Domain tags: every signed message kind has its own, so no signature is valid for two kinds. */
inline constexpr std::string_view kTxTag = "gridledger/tx/v1";
inline constexpr std::string_view kProposalTag = "gridledger/proposal/v1";
inline constexpr std::string_view kVoteTag = "gridledger/vote/v1";
inline constexpr std::string_view kTimeoutTag = "gridledger/timeout/v1";

/**
 * The digest that is signed for a message of kind `tag` on chain `chainId`:
 * SHA-256(u32(len tag) ‖ tag ‖ u32(len chain_id) ‖ chain_id ‖ body). The lengths make the
 * concatenation unambiguous.
 */
[[nodiscard]] Hash256 signingDigest(std::string_view tag, std::string_view chainId, ByteView body);

/** Address of an account key: first 20 bytes of SHA-256(x-only public key). */
[[nodiscard]] Address addressOf(const PubKey& key);

/** A secp256k1 secret key for BIP-340 Schnorr signatures. Never logged. */
class SecretKey {
  public:
    /** A fresh key from the operating system's random source. */
    [[nodiscard]] static SecretKey generate();
    /** Fails with kInvalidArgument unless `bytes` is a valid secp256k1 secret (32 bytes, in range).
     */
    [[nodiscard]] static Result<SecretKey> fromBytes(ByteView bytes);

    [[nodiscard]] const PubKey& publicKey() const { return publicKey_; }
    [[nodiscard]] const FixedBytes<32>& secret() const { return secret_; }
    /** BIP-340 signature over the 32-byte digest. */
    [[nodiscard]] Signature sign(const Hash256& digest) const;

  private:
    SecretKey(const FixedBytes<32>& secret, const PubKey& pub) : secret_(secret), publicKey_(pub) {}
    FixedBytes<32> secret_;
    PubKey publicKey_;
};

/** True iff `sig` is a valid BIP-340 signature of `digest` by the x-only key `key`. */
[[nodiscard]] bool verify(const PubKey& key, const Hash256& digest, const Signature& sig);

}  // namespace gridledger::crypto
