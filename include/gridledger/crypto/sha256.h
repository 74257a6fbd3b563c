#pragma once

#include <array>
#include <cstddef>

#include <gridledger/base/bytes.h>

// OpenSSL's SHA256_CTX, declared here so that this header does not include OpenSSL's.
struct SHA256state_st;  // NOLINT(readability-identifier-naming)

namespace gridledger::crypto {

/** SHA-256 of `data`. */
[[nodiscard]] Hash256 sha256(ByteView data);

/** Incremental SHA-256 for digests over several pieces. Holds its state in place: no allocation. */
class Sha256 {
  public:
    /** Bytes of the in-place state (OpenSSL's SHA256_CTX; sha256.cpp checks that it fits). */
    static constexpr std::size_t kStateBytes = 112;

    Sha256();
    ~Sha256() = default;
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    Sha256& update(ByteView data);
    Sha256& update(std::string_view text) { return update(asBytes(text)); }
    /** Appends `value` as 8 bytes big-endian. */
    Sha256& updateU64(std::uint64_t value);
    /** Finishes the digest; the hasher must not be used afterwards. */
    [[nodiscard]] Hash256 finish();

  private:
    SHA256state_st* context();

    alignas(8) std::array<std::byte, kStateBytes> state_;
};

}  // namespace gridledger::crypto
