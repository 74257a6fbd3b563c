#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

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

std::uint64_t randomSeed() {
    std::uint64_t seed = 0;
    randomBytes(reinterpret_cast<std::uint8_t*>(&seed), sizeof seed);
    return seed;
}

/**
 * The curve points of recent signers' keys. Each shard holds at most kPerShard keys and forgets
 * the oldest first (a ring of its keys in the order they came).
 */
class KeyPoints {
  public:
    std::optional<secp256k1_xonly_pubkey> find(const PubKey& key) {
        Shard& shard = shardOf(key);
        const std::lock_guard lock(shard.mutex);
        const auto found = shard.points.find(key);
        if (found == shard.points.end()) {
            return std::nullopt;
        }
        return found->second;
    }

    void keep(const PubKey& key, const secp256k1_xonly_pubkey& point) {
        Shard& shard = shardOf(key);
        const std::lock_guard lock(shard.mutex);
        if (!shard.points.emplace(key, point).second) {
            return;  // another thread kept it meanwhile
        }
        if (shard.order.size() < kPerShard) {
            shard.order.push_back(key);
            return;
        }
        shard.points.erase(shard.order[shard.next]);
        shard.order[shard.next] = key;
        shard.next = (shard.next + 1) % kPerShard;
    }

  private:
    static constexpr std::size_t kShards = 16;
    static constexpr std::size_t kPerShard = 256;

    /** Spreads keys with the process's seed, so that no one can choose keys that share a slot. */
    struct SeededHash {
        std::uint64_t seed;
        std::size_t operator()(const PubKey& key) const noexcept {
            std::uint64_t word = 0;
            std::memcpy(&word, key.data() + 8, sizeof word);
            return static_cast<std::size_t>((word ^ seed) * 0x9e3779b97f4a7c15ULL);
        }
    };

    struct Shard {
        explicit Shard(std::uint64_t seed) : points(kPerShard, SeededHash{seed}) {}
        std::mutex mutex;
        std::unordered_map<PubKey, secp256k1_xonly_pubkey, SeededHash> points;
        std::vector<PubKey> order;
        std::size_t next = 0;
    };

    Shard& shardOf(const PubKey& key) {
        std::uint64_t word = 0;
        std::memcpy(&word, key.data(), sizeof word);
        return *shards_[static_cast<std::size_t>(((word ^ seed_) * 0x9e3779b97f4a7c15ULL) >> 60U)];
    }

    std::uint64_t seed_ = randomSeed();
    std::array<std::unique_ptr<Shard>, kShards> shards_ = [this] {
        std::array<std::unique_ptr<Shard>, kShards> out;
        for (auto& shard : out) {
            shard = std::make_unique<Shard>(seed_);
        }
        return out;
    }();
};

KeyPoints& keyPoints() {
    static KeyPoints points;
    return points;
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

bool verifyRecurringSigner(const PubKey& key, const Hash256& digest, const Signature& sig) {
    std::optional<secp256k1_xonly_pubkey> point = keyPoints().find(key);
    if (!point) {
        secp256k1_xonly_pubkey parsed;
        if (secp256k1_xonly_pubkey_parse(context(), &parsed, key.data()) != 1) {
            return false;
        }
        keyPoints().keep(key, parsed);
        point = parsed;
    }
    return secp256k1_schnorrsig_verify(context(), sig.data(), digest.data(), digest.size(),
                                       &*point) == 1;
}

}  // namespace gridledger::crypto
