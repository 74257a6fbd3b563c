#pragma once

// A secret sealed under a passphrase: scrypt derives a 256-bit key from the passphrase and a random
// salt, AES-256-GCM encrypts the secret with a random nonce and authenticates it together with
// associated data the caller chooses (what the secret is for, so that a sealed secret cannot be
// passed off as another). The key files of a node home are built on it (docs/operations.md).

#include <cstdint>
#include <string_view>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>

namespace gridledger::crypto {

/** scrypt cost parameters; the defaults take about 0.1 s and 32 MiB on a current machine. */
struct ScryptParams {
    std::uint64_t n = std::uint64_t{1} << 15U;
    std::uint32_t r = 8;
    std::uint32_t p = 1;
    bool operator==(const ScryptParams&) const = default;
};

/** Salt, nonce and tag lengths of a sealed box. */
inline constexpr std::size_t kSealSaltBytes = 16;
inline constexpr std::size_t kSealNonceBytes = 12;
inline constexpr std::size_t kSealTagBytes = 16;
/** Most memory opening a box may make scrypt use (128 * r * n bytes): 1 GiB. */
inline constexpr std::uint64_t kMaxScryptMemory = std::uint64_t{1} << 30U;

/** A sealed secret: everything but the passphrase and the associated data needed to open it. */
struct SealedBox {
    ScryptParams kdf;
    Bytes salt;
    Bytes nonce;
    Bytes ciphertext;
    Bytes tag;
};

/**
 * Fails with kInvalidArgument unless `params` are usable: n a power of two from 2^10 to 2^20, r
 * 1..32, p 1..16, and 128 * r * n at most kMaxScryptMemory (a box read from a file cannot make
 * the reader allocate without bound).
 */
[[nodiscard]] Status checkScryptParams(const ScryptParams& params);

/** Seals `secret` under `passphrase` with a fresh random salt and nonce, binding `aad`. */
[[nodiscard]] Result<SealedBox> seal(ByteView secret, std::string_view passphrase, ByteView aad,
                                     const ScryptParams& params = {});

/**
 * Opens `box`. Fails with kBadSignature when the tag does not verify: a wrong passphrase, other
 * associated data, or any byte of the box altered; these cannot be told apart, by design. Fails
 * with kInvalidArgument when the box is malformed (lengths, parameters).
 */
[[nodiscard]] Result<Bytes> open(const SealedBox& box, std::string_view passphrase, ByteView aad);

}  // namespace gridledger::crypto
