#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include <gridledger/base/bytes.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/safety_rules.h>

namespace gridledger::consensus {

/** A vote of this validator, found in a certificate, that its own safety data does not cover. */
struct UnrecordedVote {
    std::uint64_t epoch = 0;
    std::uint64_t round = 0;
    Hash256 blockId;
};

/**
 * The start-up guard against two instances sharing one key. `recent` are the QCs of the last
 * blocks the node holds (e.g. the last `double_sign_check_height` committed ones). A QC of
 * `committee`'s epoch whose signer bitmap includes `key` for a round above
 * `safety.lastVotedRound` proves that this key voted somewhere this instance did not record:
 * signing again could contradict that vote, so the validator must not sign. Returns the first
 * such vote, or std::nullopt when every recent vote of `key` is covered by `safety`.
 * Certificates of other epochs and malformed bitmaps are skipped (they were verified when the
 * blocks were accepted).
 */
[[nodiscard]] std::optional<UnrecordedVote> findUnrecordedVote(
    std::span<const codec::QuorumCert> recent, const Committee& committee, const PubKey& key,
    const SafetyData& safety);

}  // namespace gridledger::consensus
