#pragma once

#include <string>
#include <string_view>

#include <gridledger/base/bytes.h>

namespace gridledger::crypto {

/** Domain tags: every signed message kind has its own, so no signature is valid for two kinds. */
inline constexpr std::string_view kTxTag = "gridledger/tx/v1";
inline constexpr std::string_view kProposalTag = "gridledger/proposal/v1";
inline constexpr std::string_view kVoteTag = "gridledger/vote/v1";
inline constexpr std::string_view kTimeoutTag = "gridledger/timeout/v1";
inline constexpr std::string_view kBatchTag = "gridledger/batch/v1";

/**
 * The digest that is signed for a message of kind `tag` in signing domain `domain`:
 * SHA-256(u32(len tag) ‖ tag ‖ u32(len domain) ‖ domain ‖ body). The lengths make the
 * concatenation unambiguous. A node's domain is chainDomain(chain id, genesis hash).
 */
[[nodiscard]] Hash256 signingDigest(std::string_view tag, std::string_view domain, ByteView body);

/**
 * The signing domain of a chain: its chain id followed by the 32 bytes of its genesis hash. Two
 * chains that share a chain id but not a genesis (every `init` names its chain gridledger-dev)
 * accept none of each other's signatures. The hash is a fixed-length suffix, so the domain tells
 * both apart unambiguously.
 */
[[nodiscard]] std::string chainDomain(std::string_view chainId, const Hash256& genesisHash);

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

/**
 * True iff `sig` is a valid BIP-340 signature of `digest` by the x-only key `key`. The whole
 * check from bytes: the key is lifted onto the curve (a field square root) every time. This is
 * the one-core verification rate the benchmarks report their figures against.
 */
[[nodiscard]] bool verify(const PubKey& key, const Hash256& digest, const Signature& sig);

/**
 * The same answer as verify(), with the key's point on the curve kept for its next signature.
 * Lifting a key is about a tenth of a verification, and the signers of a chain recur: the
 * validators in every certificate, a grid partner's attestation every slot, a consumer's task
 * after task. The points of the last 4,096 keys (about 0.5 MiB) are kept in 16 shards under
 * their own locks; the slot of a key is chosen with a per-process random seed, so no chosen key
 * set can crowd one slot. An invalid key is never kept. Safe from any thread.
 */
[[nodiscard]] bool verifyRecurringSigner(const PubKey& key, const Hash256& digest,
                                         const Signature& sig);

}  // namespace gridledger::crypto
