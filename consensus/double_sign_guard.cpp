#include <gridledger/consensus/double_sign_guard.h>

namespace gridledger::consensus {

std::optional<UnrecordedVote> findUnrecordedVote(std::span<const codec::QuorumCert> recent,
                                                 const Committee& committee, const PubKey& key,
                                                 const SafetyData& safety) {
    const auto index = committee.indexOf(key);
    if (!index) {
        return std::nullopt;  // not a member of this epoch: it signs nothing in it
    }
    const std::size_t byte = *index / 8;
    const auto bit = static_cast<std::uint8_t>(1U << (*index % 8));
    for (const auto& qc : recent) {
        const bool signedByKey = qc.signers.size() > byte && (qc.signers[byte] & bit) != 0;
        if (qc.epoch == committee.epoch() && signedByKey && qc.round > safety.lastVotedRound) {
            return UnrecordedVote{qc.epoch, qc.round, qc.blockId};
        }
    }
    return std::nullopt;
}

}  // namespace gridledger::consensus
