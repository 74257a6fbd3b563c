#pragma once

// Private to contracts/: indexes kept as one state key per entry, so that adding or removing an
// entry writes one key whatever the size of the index, and listing reads the keys under the
// index's prefix in key order (docs/tokenomics.md "State layout").

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/contracts/state.h>

namespace gridledger::contracts::detail {

/** Bytes of the prefix every entry key of one index starts with. */
inline constexpr std::size_t kIndexPrefixSize = 8;
/** Bytes of the member an entry key holds after the prefix. */
inline constexpr std::size_t kIndexMemberSize = 32 - kIndexPrefixSize;

/**
 * One index, named by a tag and an owner (the consumer, the provider, the state…). The entry of
 * `member` is the key prefix ‖ the first 24 bytes of `member` (zero-padded when shorter), where
 * prefix = the first 8 bytes of SHA-256(tag ‖ owner), and its value is the whole member, so that
 * key order is member order and a key of another record that happens to share the prefix (its
 * value does not lead back to its key) is never taken for an entry.
 */
class StateIndex {
  public:
    explicit StateIndex(std::string_view tag, ByteView owner = {});

    /** The state key of `member`'s entry. */
    [[nodiscard]] Hash256 keyOf(ByteView member) const;
    /** Adds `member` (writes its one key; adding it again changes nothing). */
    void add(StateLayer& state, ByteView member) const;
    /** Removes `member` (erases its one key). */
    void remove(StateLayer& state, ByteView member) const;
    /** Every member, in key order. */
    [[nodiscard]] Result<std::vector<Bytes>> members(const StateLayer& state) const;
    /**
     * The first `limit` members whose 24 key bytes lie from `low` padded with zero bytes to `high`
     * padded with 0xff bytes (both at most 24 bytes), in key order.
     */
    [[nodiscard]] Result<std::vector<Bytes>> membersBetween(
        const StateLayer& state, ByteView low, ByteView high,
        std::size_t limit = std::numeric_limits<std::size_t>::max()) const;
    /** The first `limit` members whose entries come after `member`'s entry, in key order. */
    [[nodiscard]] Result<std::vector<Bytes>> membersAfter(const StateLayer& state, ByteView member,
                                                          std::size_t limit) const;

  private:
    [[nodiscard]] Hash256 bound(ByteView member, std::uint8_t pad) const;
    [[nodiscard]] Result<std::vector<Bytes>> membersIn(const StateLayer& state,
                                                       const Hash256& first, const Hash256& last,
                                                       std::size_t limit) const;

    std::array<std::uint8_t, kIndexPrefixSize> prefix_{};
};

}  // namespace gridledger::contracts::detail
