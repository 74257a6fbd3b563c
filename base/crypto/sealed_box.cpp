#include <array>
#include <bit>
#include <memory>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <gridledger/crypto/sealed_box.h>

namespace gridledger::crypto {
namespace {

constexpr std::size_t kKeyBytes = 32;
constexpr std::uint64_t kMinScryptN = std::uint64_t{1} << 10U;
constexpr std::uint64_t kMaxScryptN = std::uint64_t{1} << 20U;
constexpr std::uint32_t kMaxScryptR = 32;
constexpr std::uint32_t kMaxScryptP = 16;

/** The derived key, wiped when it goes out of scope so that it does not linger in freed memory. */
struct DerivedKey {
    std::array<std::uint8_t, kKeyBytes> bytes{};
    DerivedKey() = default;
    DerivedKey(const DerivedKey&) = delete;
    DerivedKey& operator=(const DerivedKey&) = delete;
    ~DerivedKey() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

struct CipherCtxFree {
    void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

Status derive(std::string_view passphrase, ByteView salt, const ScryptParams& params,
              DerivedKey& key) {
    GL_TRY(checkScryptParams(params));
    // scrypt needs 128 * r * n bytes for its table plus 128 * r * p for its blocks; the margin
    // keeps OpenSSL's own limit check from refusing parameters checkScryptParams accepted.
    const std::uint64_t maxmem =
        128U * std::uint64_t{params.r} * (params.n + params.p + 2U) + (std::uint64_t{1} << 20U);
    if (EVP_PBE_scrypt(passphrase.data(), passphrase.size(), salt.data(), salt.size(), params.n,
                       params.r, params.p, maxmem, key.bytes.data(), key.bytes.size()) != 1) {
        return fail(ErrorCode::kInternal, "scrypt key derivation failed");
    }
    return {};
}

}  // namespace

Status checkScryptParams(const ScryptParams& params) {
    if (params.n < kMinScryptN || params.n > kMaxScryptN || !std::has_single_bit(params.n) ||
        params.r < 1 || params.r > kMaxScryptR || params.p < 1 || params.p > kMaxScryptP ||
        128U * std::uint64_t{params.r} * params.n > kMaxScryptMemory) {
        return fail(ErrorCode::kInvalidArgument,
                    "scrypt parameters out of range: n must be a power of two 2^10..2^20, r 1..32, "
                    "p 1..16, and 128*r*n at most 1 GiB");
    }
    return {};
}

Result<SealedBox> seal(ByteView secret, std::string_view passphrase, ByteView aad,
                       const ScryptParams& params) {
    SealedBox box;
    box.kdf = params;
    box.salt.resize(kSealSaltBytes);
    box.nonce.resize(kSealNonceBytes);
    if (RAND_bytes(box.salt.data(), static_cast<int>(box.salt.size())) != 1 ||
        RAND_bytes(box.nonce.data(), static_cast<int>(box.nonce.size())) != 1) {
        return fail(ErrorCode::kInternal, "the random source failed");
    }
    DerivedKey key;
    GL_TRY(derive(passphrase, box.salt, params, key));
    const CipherCtx ctx(EVP_CIPHER_CTX_new());
    box.ciphertext.resize(secret.size());
    box.tag.resize(kSealTagBytes);
    int written = 0;
    int finalWritten = 0;
    if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kSealNonceBytes),
                            nullptr) != 1 ||
        EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(), box.nonce.data()) != 1 ||
        EVP_EncryptUpdate(ctx.get(), nullptr, &written, aad.data(), static_cast<int>(aad.size())) !=
            1 ||
        EVP_EncryptUpdate(ctx.get(), box.ciphertext.data(), &written, secret.data(),
                          static_cast<int>(secret.size())) != 1 ||
        EVP_EncryptFinal_ex(ctx.get(), box.ciphertext.data() + written, &finalWritten) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kSealTagBytes),
                            box.tag.data()) != 1) {
        return fail(ErrorCode::kInternal, "AES-256-GCM encryption failed");
    }
    return box;
}

Result<Bytes> open(const SealedBox& box, std::string_view passphrase, ByteView aad) {
    if (box.salt.size() != kSealSaltBytes || box.nonce.size() != kSealNonceBytes ||
        box.tag.size() != kSealTagBytes) {
        return fail(ErrorCode::kInvalidArgument,
                    "sealed box has a salt, nonce or tag of the wrong length");
    }
    DerivedKey key;
    GL_TRY(derive(passphrase, box.salt, box.kdf, key));
    const CipherCtx ctx(EVP_CIPHER_CTX_new());
    Bytes plain(box.ciphertext.size());
    Bytes tag = box.tag;  // EVP_CTRL_GCM_SET_TAG takes a non-const pointer
    int written = 0;
    int finalWritten = 0;
    if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(kSealNonceBytes),
                            nullptr) != 1 ||
        EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.bytes.data(), box.nonce.data()) != 1 ||
        EVP_DecryptUpdate(ctx.get(), nullptr, &written, aad.data(), static_cast<int>(aad.size())) !=
            1 ||
        EVP_DecryptUpdate(ctx.get(), plain.data(), &written, box.ciphertext.data(),
                          static_cast<int>(box.ciphertext.size())) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kSealTagBytes),
                            tag.data()) != 1) {
        OPENSSL_cleanse(plain.data(), plain.size());
        return fail(ErrorCode::kInternal, "AES-256-GCM decryption failed");
    }
    // The tag is checked here, after the whole ciphertext: nothing decrypted is returned unless
    // it verifies.
    if (EVP_DecryptFinal_ex(ctx.get(), plain.data() + written, &finalWritten) != 1) {
        OPENSSL_cleanse(plain.data(), plain.size());
        return fail(ErrorCode::kBadSignature, "the sealed box does not authenticate");
    }
    return plain;
}

}  // namespace gridledger::crypto
