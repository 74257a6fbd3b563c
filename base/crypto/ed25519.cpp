#include <memory>
#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <gridledger/crypto/ed25519.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::crypto {
namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct MdCtxFree {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

Pkey privateFromSeed(const FixedBytes<32>& seed) {
    return Pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
}

}  // namespace

NodeId nodeIdOf(const Ed25519PublicKey& key) {
    const Hash256 digest = sha256(key.view());
    NodeId out;
    std::copy_n(digest.data(), NodeId::kSize, out.data());
    return out;
}

NodeKey NodeKey::generate() {
    FixedBytes<32> seed;
    if (RAND_bytes(seed.data(), static_cast<int>(seed.size())) != 1) {
        throw std::runtime_error("operating system random source failed");
    }
    auto key = fromSeed(seed.view());
    if (!key) {
        throw std::runtime_error(key.error().message);
    }
    return *key;
}

Result<NodeKey> NodeKey::fromSeed(ByteView seedBytes) {
    auto seed = FixedBytes<32>::fromBytes(seedBytes);
    if (!seed) {
        return std::unexpected(seed.error());
    }
    Pkey key = privateFromSeed(*seed);
    if (!key) {
        return fail(ErrorCode::kInvalidArgument, "not a valid Ed25519 seed");
    }
    Ed25519PublicKey pub;
    std::size_t len = pub.size();
    if (EVP_PKEY_get_raw_public_key(key.get(), pub.data(), &len) != 1 || len != pub.size()) {
        return fail(ErrorCode::kInternal, "cannot derive the Ed25519 public key");
    }
    return NodeKey(*seed, pub);
}

Ed25519Signature NodeKey::sign(ByteView message) const {
    Pkey key = privateFromSeed(seed_);
    MdCtx ctx(EVP_MD_CTX_new());
    Ed25519Signature sig;
    std::size_t len = sig.size();
    if (!key || !ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) != 1 ||
        EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(), message.size()) != 1) {
        throw std::logic_error("Ed25519 signing failed");
    }
    return sig;
}

bool verifyEd25519(const Ed25519PublicKey& key, ByteView message, const Ed25519Signature& sig) {
    Pkey pub(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.data(), key.size()));
    MdCtx ctx(EVP_MD_CTX_new());
    if (!pub || !ctx ||
        EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pub.get()) != 1) {
        return false;
    }
    return EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), message.data(), message.size()) == 1;
}

}  // namespace gridledger::crypto
