#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <gridledger/crypto/sha256.h>

namespace gridledger::crypto {

Hash256 sha256(ByteView data) {
    Hash256 out;
    SHA256(data.data(), data.size(), out.data());
    return out;
}

struct Sha256::Impl {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
    if (impl_->ctx == nullptr || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("OpenSSL SHA-256 unavailable");
    }
}

Sha256::~Sha256() = default;

Sha256& Sha256::update(ByteView data) {
    EVP_DigestUpdate(impl_->ctx, data.data(), data.size());
    return *this;
}

Sha256& Sha256::updateU64(std::uint64_t value) {
    Bytes be;
    appendU64(be, value);
    return update(be);
}

Hash256 Sha256::finish() {
    Hash256 out;
    unsigned int len = 0;
    EVP_DigestFinal_ex(impl_->ctx, out.data(), &len);
    return out;
}

}  // namespace gridledger::crypto
