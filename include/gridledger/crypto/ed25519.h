#pragma once

#include <gridledger/base/bytes.h>

namespace gridledger::crypto {

using Ed25519PublicKey = FixedBytes<32>;
using Ed25519Signature = FixedBytes<64>;

/** Transport node id of an Ed25519 key: first 20 bytes of SHA-256(public key). */
[[nodiscard]] NodeId nodeIdOf(const Ed25519PublicKey& key);

/** An Ed25519 node key (transport identity). Never logged. */
class NodeKey {
  public:
    [[nodiscard]] static NodeKey generate();
    /** The 32-byte seed form of the key; fails on any other length. */
    [[nodiscard]] static Result<NodeKey> fromSeed(ByteView seed);

    [[nodiscard]] const FixedBytes<32>& seed() const { return seed_; }
    [[nodiscard]] const Ed25519PublicKey& publicKey() const { return publicKey_; }
    [[nodiscard]] NodeId nodeId() const { return nodeIdOf(publicKey_); }
    [[nodiscard]] Ed25519Signature sign(ByteView message) const;

  private:
    NodeKey(const FixedBytes<32>& seed, const Ed25519PublicKey& pub)
        : seed_(seed), publicKey_(pub) {}
    FixedBytes<32> seed_;
    Ed25519PublicKey publicKey_;
};

[[nodiscard]] bool verifyEd25519(const Ed25519PublicKey& key, ByteView message,
                                 const Ed25519Signature& sig);

}  // namespace gridledger::crypto
