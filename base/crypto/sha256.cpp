// OpenSSL's low-level SHA-256 functions, deprecated since OpenSSL 3.0 in favour of EVP, are what
// this file uses: an EVP digest allocates, initialises and frees a provider context each time
// (about 140 ns against 100 ns of hashing for 64 bytes with the SHA extensions), and the node
// hashes several short messages per transaction and thousands of tree nodes per block. The
// low-level functions run the same compression code and keep their state on the stack.
#define OPENSSL_SUPPRESS_DEPRECATED

#include <array>
#include <new>

#include <openssl/sha.h>

#include <gridledger/crypto/sha256.h>

namespace gridledger::crypto {
namespace {

static_assert(sizeof(SHA256_CTX) <= Sha256::kStateBytes && alignof(SHA256_CTX) <= 8,
              "Sha256's in-place storage no longer fits OpenSSL's SHA256_CTX");

}  // namespace

// Not OpenSSL's one-shot SHA256(), which since 3.0 fetches the EVP implementation on every call.
Hash256 sha256(ByteView data) {
    SHA256_CTX ctx;
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, data.data(), data.size());
    Hash256 out;
    SHA256_Final(out.data(), &ctx);
    return out;
}

Sha256::Sha256() {
    SHA256_Init(::new (state_.data()) SHA256_CTX);
}

SHA256state_st* Sha256::context() {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the object the constructor made
    return std::launder(reinterpret_cast<SHA256_CTX*>(state_.data()));
}

Sha256& Sha256::update(ByteView data) {
    SHA256_Update(context(), data.data(), data.size());
    return *this;
}

Sha256& Sha256::updateU64(std::uint64_t value) {
    std::array<std::uint8_t, 8> be{};
    for (std::size_t i = 0; i < be.size(); ++i) {
        be[i] = static_cast<std::uint8_t>(value >> (56 - 8 * i));
    }
    return update(ByteView(be));
}

Hash256 Sha256::finish() {
    Hash256 out;
    SHA256_Final(out.data(), context());
    return out;
}

}  // namespace gridledger::crypto
