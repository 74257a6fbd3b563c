#include "state_index.h"

#include <algorithm>

#include <gridledger/crypto/sha256.h>

namespace gridledger::contracts::detail {

StateIndex::StateIndex(std::string_view tag, ByteView owner) {
    crypto::Sha256 h;
    const Hash256 digest = h.update(tag).update(owner).finish();
    std::copy_n(digest.data(), kIndexPrefixSize, prefix_.begin());
}

Hash256 StateIndex::bound(ByteView member, std::uint8_t pad) const {
    Hash256 key;
    std::uint8_t* out = std::copy(prefix_.begin(), prefix_.end(), key.data());
    const std::size_t kept = std::min(member.size(), kIndexMemberSize);
    out = std::copy_n(member.begin(), kept, out);
    std::fill_n(out, kIndexMemberSize - kept, pad);
    return key;
}

Hash256 StateIndex::keyOf(ByteView member) const {
    return bound(member, 0x00);
}

void StateIndex::add(StateLayer& state, ByteView member) const {
    state.put(keyOf(member), Bytes(member.begin(), member.end()));
}

void StateIndex::remove(StateLayer& state, ByteView member) const {
    state.erase(keyOf(member));
}

Result<std::vector<Bytes>> StateIndex::members(const StateLayer& state) const {
    return membersBetween(state, {}, {});
}

Result<std::vector<Bytes>> StateIndex::membersBetween(const StateLayer& state, ByteView low,
                                                      ByteView high, std::size_t limit) const {
    return membersIn(state, bound(low, 0x00), bound(high, 0xff), limit);
}

Result<std::vector<Bytes>> StateIndex::membersAfter(const StateLayer& state, ByteView member,
                                                    std::size_t limit) const {
    // The key after member's entry: its 24 member bytes plus one, carried; none past the last.
    Hash256 first = keyOf(member);
    std::size_t at = Hash256::size();
    while (at > kIndexPrefixSize && ++first.data()[at - 1] == 0) {
        --at;
    }
    if (at == kIndexPrefixSize) {
        return std::vector<Bytes>{};
    }
    return membersIn(state, first, bound({}, 0xff), limit);
}

Result<std::vector<Bytes>> StateIndex::membersIn(const StateLayer& state, const Hash256& first,
                                                 const Hash256& last, std::size_t limit) const {
    GL_ASSIGN_OR_RETURN(keys, state.keysBetween(first, last, limit));
    std::vector<Bytes> out;
    out.reserve(keys.size());
    for (const auto& key : keys) {
        GL_ASSIGN_OR_RETURN(value, state.get(key));
        if (value && keyOf(*value) == key) {
            out.push_back(std::move(*value));
        }
    }
    return out;
}

}  // namespace gridledger::contracts::detail
