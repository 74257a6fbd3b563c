#pragma once

#include <memory>

#include <gridledger/base/bytes.h>

namespace gridledger::crypto {

/** SHA-256 of `data`. */
[[nodiscard]] Hash256 sha256(ByteView data);

/** Incremental SHA-256 for digests over several pieces. */
class Sha256 {
  public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    Sha256& update(ByteView data);
    Sha256& update(std::string_view text) { return update(asBytes(text)); }
    /** Appends `value` as 8 bytes big-endian. */
    Sha256& updateU64(std::uint64_t value);
    /** Finishes the digest; the hasher must not be used afterwards. */
    [[nodiscard]] Hash256 finish();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace gridledger::crypto
