#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include <gridledger/base/bytes.h>
#include <gridledger/codec/block.h>
#include <gridledger/crypto/schnorr.h>

namespace gridledger::consensus {

/**
 * Signs consensus digests with this validator's key. Injected into the core, so that the
 * double-sign start-up guard (a later task), a remote signer or a test recorder can wrap the key.
 * The core signs a vote or timeout only after its rule allowed it and PersistSafety was emitted.
 */
class Signer {
  public:
    virtual ~Signer() = default;

    /** The x-only public key the signatures verify under. */
    [[nodiscard]] virtual const PubKey& publicKey() const = 0;
    /** A BIP-340 signature of `digest`, which is always a domain-separated signingDigest. */
    [[nodiscard]] virtual Signature sign(const Hash256& digest) = 0;
};

/** The default Signer: a secp256k1 secret key held in memory. */
class KeySigner final : public Signer {
  public:
    explicit KeySigner(const crypto::SecretKey& key) : key_(key) {}

    [[nodiscard]] const PubKey& publicKey() const override { return key_.publicKey(); }
    [[nodiscard]] Signature sign(const Hash256& digest) override { return key_.sign(digest); }

  private:
    crypto::SecretKey key_;
};

/** A vote for (epoch, round, blockId) signed by `signer` on chain `chainId`. */
[[nodiscard]] codec::Vote signVote(Signer& signer, std::string_view chainId, std::uint64_t epoch,
                                   std::uint64_t round, const Hash256& blockId);

/** A timeout for (epoch, round) carrying `highQc`, signed by `signer`. */
[[nodiscard]] codec::Timeout signTimeout(Signer& signer, std::string_view chainId,
                                         std::uint64_t epoch, std::uint64_t round,
                                         const codec::QuorumCert& highQc);

/** Sets `block.signature` to the author's signature of proposalDigest(chainId, block.id). */
void signProposal(Signer& signer, std::string_view chainId, codec::Block& block);

}  // namespace gridledger::consensus
