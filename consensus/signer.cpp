#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>

namespace gridledger::consensus {

codec::Vote signVote(Signer& signer, std::string_view chainId, std::uint64_t epoch,
                     std::uint64_t round, const Hash256& blockId) {
    codec::Vote vote;
    vote.epoch = epoch;
    vote.round = round;
    vote.blockId = blockId;
    vote.voter = signer.publicKey();
    vote.signature = signer.sign(voteDigest(chainId, epoch, round, blockId));
    return vote;
}

codec::Timeout signTimeout(Signer& signer, std::string_view chainId, std::uint64_t epoch,
                           std::uint64_t round, const codec::QuorumCert& highQc) {
    codec::Timeout timeout;
    timeout.epoch = epoch;
    timeout.round = round;
    timeout.highQc = highQc;
    timeout.author = signer.publicKey();
    timeout.signature = signer.sign(timeoutDigest(chainId, epoch, round, highQc.round));
    return timeout;
}

void signProposal(Signer& signer, std::string_view chainId, codec::Block& block) {
    block.signature = signer.sign(proposalDigest(chainId, block.id));
}

}  // namespace gridledger::consensus
