#include <stdexcept>

#include <openssl/rand.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::crypto {
namespace {

void randomBytes(std::uint8_t* out, std::size_t n) {
    if (RAND_bytes(out, static_cast<int>(n)) != 1) {
        throw std::runtime_error("operating system random source failed");
    }
}

/** One context for the process; secp256k1 contexts are safe to share for signing and verifying. */
const secp256k1_context* context() {
    static const secp256k1_context* ctx = [] {
        secp256k1_context* c = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
        std::array<std::uint8_t, 32> seed{};
        randomBytes(seed.data(), seed.size());
        if (secp256k1_context_randomize(c, seed.data()) != 1) {
            throw std::runtime_error("secp256k1 context randomisation failed");
        }
        return c;
    }();
    return ctx;
}

void appendLengthPrefixed(Sha256& h, std::string_view text) {
    Bytes len;
    appendU32(len, static_cast<std::uint32_t>(text.size()));
    h.update(len).update(text);
}

}  // namespace

Hash256 signingDigest(std::string_view tag, std::string_view domain, ByteView body) {
    Sha256 h;
    appendLengthPrefixed(h, tag);
    appendLengthPrefixed(h, domain);
    h.update(body);
    return h.finish();
}

std::string chainDomain(std::string_view chainId, const Hash256& genesisHash) {
    std::string out(chainId);
    out += toString(genesisHash.view());
    return out;
}

Address addressOf(const PubKey& key) {
    const Hash256 digest = sha256(key.view());
    Address out;
    std::copy_n(digest.data(), Address::kSize, out.data());
    return out;
}

SecretKey SecretKey::generate() {
    for (;;) {
        FixedBytes<32> secret;
        randomBytes(secret.data(), secret.size());
        if (auto key = fromBytes(secret.view())) {
            return *key;
        }
    }
}

Result<SecretKey> SecretKey::fromBytes(ByteView bytes) {
    auto secret = FixedBytes<32>::fromBytes(bytes);
    if (!secret) {
        return std::unexpected(secret.error());
    }
    secp256k1_keypair keypair;
    if (secp256k1_keypair_create(context(), &keypair, secret->data()) != 1) {
        return fail(ErrorCode::kInvalidArgument, "not a valid secp256k1 secret key");
    }
    secp256k1_xonly_pubkey xonly;
    PubKey pub;
    if (secp256k1_keypair_xonly_pub(context(), &xonly, nullptr, &keypair) != 1 ||
        secp256k1_xonly_pubkey_serialize(context(), pub.data(), &xonly) != 1) {
        return fail(ErrorCode::kInternal, "cannot derive the x-only public key");
    }
    return SecretKey(*secret, pub);
}

Signature SecretKey::sign(const Hash256& digest) const {
    secp256k1_keypair keypair;
    if (secp256k1_keypair_create(context(), &keypair, secret_.data()) != 1) {
        throw std::logic_error("secret key became invalid");
    }
    std::array<std::uint8_t, 32> aux{};
    randomBytes(aux.data(), aux.size());
    Signature sig;
    if (secp256k1_schnorrsig_sign32(context(), sig.data(), digest.data(), &keypair, aux.data()) !=
        1) {
        throw std::logic_error("schnorr signing failed");
    }
    return sig;
}

bool verify(const PubKey& key, const Hash256& digest, const Signature& sig) {
    secp256k1_xonly_pubkey xonly;
    if (secp256k1_xonly_pubkey_parse(context(), &xonly, key.data()) != 1) {
        return false;
    }
    return secp256k1_schnorrsig_verify(context(), sig.data(), digest.data(), digest.size(),
                                       &xonly) == 1;
}

}  // namespace gridledger::crypto
