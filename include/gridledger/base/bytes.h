#pragma once

#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/result.h>

namespace gridledger {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

/** Lower-case hex with a `0x` prefix. */
[[nodiscard]] std::string toHex(ByteView bytes);

/** Parses hex with a mandatory `0x` prefix and an even number of digits (either case). */
[[nodiscard]] Result<Bytes> fromHex(std::string_view text);

/** Views the characters of a string as bytes. */
[[nodiscard]] inline ByteView asBytes(std::string_view text) {
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

/** Copies bytes into a std::string (the byte container of protobuf and RocksDB). */
[[nodiscard]] inline std::string toString(ByteView bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/** Appends `value` big-endian, so that encoded integers sort like the integers. */
void appendU64(Bytes& out, std::uint64_t value);
void appendU32(Bytes& out, std::uint32_t value);
/** Reads a big-endian u64 from the first 8 bytes of `in`; requires in.size() >= 8. */
[[nodiscard]] std::uint64_t readU64(ByteView in);
/** Reads a big-endian u32 from the first 4 bytes of `in`; requires in.size() >= 4. */
[[nodiscard]] std::uint32_t readU32(ByteView in);

inline void append(Bytes& out, ByteView bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
}

/** A byte string of fixed length N: hashes, addresses, keys, signatures. Zero by default. */
template <std::size_t N>
class FixedBytes {
  public:
    static constexpr std::size_t kSize = N;

    constexpr FixedBytes() = default;
    explicit constexpr FixedBytes(const std::array<std::uint8_t, N>& bytes) : bytes_(bytes) {}

    /** Copies exactly N bytes; fails with kBadLength on any other length. */
    [[nodiscard]] static Result<FixedBytes> fromBytes(ByteView bytes) {
        if (bytes.size() != N) {
            return fail(ErrorCode::kBadLength, "expected " + std::to_string(N) + " bytes, got " +
                                                   std::to_string(bytes.size()));
        }
        FixedBytes out;
        std::copy(bytes.begin(), bytes.end(), out.bytes_.begin());
        return out;
    }

    /** Parses `0x` hex of exactly N bytes. */
    [[nodiscard]] static Result<FixedBytes> fromHex(std::string_view text) {
        auto bytes = gridledger::fromHex(text);
        if (!bytes) {
            return std::unexpected(bytes.error());
        }
        return fromBytes(*bytes);
    }

    [[nodiscard]] constexpr const std::uint8_t* data() const { return bytes_.data(); }
    [[nodiscard]] constexpr std::uint8_t* data() { return bytes_.data(); }
    [[nodiscard]] static constexpr std::size_t size() { return N; }
    [[nodiscard]] constexpr std::uint8_t operator[](std::size_t i) const { return bytes_[i]; }
    [[nodiscard]] constexpr std::uint8_t& operator[](std::size_t i) { return bytes_[i]; }
    [[nodiscard]] constexpr ByteView view() const { return {bytes_.data(), N}; }
    [[nodiscard]] Bytes toBytes() const { return {bytes_.begin(), bytes_.end()}; }
    [[nodiscard]] std::string hex() const { return toHex(view()); }
    [[nodiscard]] constexpr bool isZero() const {
        return std::all_of(bytes_.begin(), bytes_.end(), [](std::uint8_t b) { return b == 0; });
    }

    constexpr auto operator<=>(const FixedBytes&) const = default;

  private:
    std::array<std::uint8_t, N> bytes_{};
};

/** SHA-256 digest: tx hashes, block ids, Merkle nodes, state roots. */
using Hash256 = FixedBytes<32>;
/** A hash table's hasher for SHA-256 digests: any 8 of their bytes are already uniformly spread. */
struct DigestKey {
    std::size_t operator()(const Hash256& digest) const noexcept {
        std::size_t out = 0;
        std::memcpy(&out, digest.data(), sizeof out);
        return out;
    }
};
/** Account address: first 20 bytes of SHA-256(x-only public key). */
using Address = FixedBytes<20>;
/** BIP-340 x-only secp256k1 public key. */
using PubKey = FixedBytes<32>;
/** BIP-340 Schnorr signature. */
using Signature = FixedBytes<64>;
/** Transport node id: first 20 bytes of SHA-256(Ed25519 public key). */
using NodeId = FixedBytes<20>;

}  // namespace gridledger
