// Digests, verification and assembly of votes, timeouts and their certificates.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <gridledger/consensus/batches.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::consensus {
namespace {

std::size_t bitmapBytes(std::size_t n) {
    return (n + 7) / 8;
}

void setBit(Bytes& bitmap, std::size_t i) {
    bitmap[i / 8] = static_cast<std::uint8_t>(bitmap[i / 8] | (1U << (i % 8)));
}

std::unexpected<Error> invalid(const std::string& message) {
    return fail(ErrorCode::kInvalidCertificate, message);
}

/** The member indices set in `bitmap`, ascending; fails on a wrong length or a bit beyond n. */
Result<std::vector<std::size_t>> signersOf(const Bytes& bitmap, std::size_t n) {
    if (bitmap.size() != bitmapBytes(n)) {
        return invalid("signer bitmap has " + std::to_string(bitmap.size()) + " bytes, expected " +
                       std::to_string(bitmapBytes(n)));
    }
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < bitmap.size() * 8; ++i) {
        const unsigned byte = bitmap[i / 8];
        if (((byte >> (i % 8)) & 1U) == 0) {
            continue;
        }
        if (i >= n) {
            return invalid("signer bitmap names member " + std::to_string(i) + " of " +
                           std::to_string(n));
        }
        out.push_back(i);
    }
    return out;
}

Status checkQuorumShape(const std::vector<std::size_t>& signers, std::size_t signatures,
                        const Committee& committee) {
    if (signers.size() < committee.quorum()) {
        return invalid("certificate has " + std::to_string(signers.size()) +
                       " signers, quorum is " + std::to_string(committee.quorum()));
    }
    if (signatures != signers.size()) {
        return invalid("certificate has " + std::to_string(signatures) + " signatures for " +
                       std::to_string(signers.size()) + " signers");
    }
    return {};
}

bool isGenesisQc(const codec::QuorumCert& qc, const Committee& committee) {
    const bool noSigners =
        std::all_of(qc.signers.begin(), qc.signers.end(), [](std::uint8_t b) { return b == 0; });
    return noSigners && qc.signatures.empty() && qc.blockId == committee.seedBlockId();
}

}  // namespace

const SignatureCheck& bip340Check() {
    static const SignatureCheck check = [](const PubKey& key, const Hash256& digest,
                                           const Signature& signature) {
        return crypto::verifyRecurringSigner(key, digest, signature);
    };
    return check;
}

Hash256 voteDigest(std::string_view chainId, std::uint64_t epoch, std::uint64_t round,
                   const Hash256& blockId) {
    return crypto::signingDigest(crypto::kVoteTag, chainId,
                                 codec::voteSigningBody(epoch, round, blockId));
}

Hash256 timeoutDigest(std::string_view chainId, std::uint64_t epoch, std::uint64_t round,
                      std::uint64_t hqcRound) {
    return crypto::signingDigest(crypto::kTimeoutTag, chainId,
                                 codec::timeoutSigningBody(epoch, round, hqcRound));
}

Hash256 proposalDigest(std::string_view chainId, const Hash256& blockId) {
    return crypto::signingDigest(crypto::kProposalTag, chainId, blockId.view());
}

codec::QuorumCert genesisQc(std::uint64_t epoch, const Hash256& blockId) {
    codec::QuorumCert qc;
    qc.epoch = epoch;
    qc.round = 0;
    qc.blockId = blockId;
    return qc;
}

Status verifyQuorumCert(const codec::QuorumCert& qc, const Committee& committee,
                        std::string_view chainId, const SignatureCheck& check) {
    if (qc.epoch != committee.epoch()) {
        return invalid("qc epoch " + std::to_string(qc.epoch) + " is not the committee's " +
                       std::to_string(committee.epoch()));
    }
    if (qc.round == 0) {
        if (isGenesisQc(qc, committee)) {
            return {};
        }
        return invalid("a round-0 qc must be the genesis qc of the epoch");
    }
    GL_ASSIGN_OR_RETURN(signers, signersOf(qc.signers, committee.size()));
    GL_TRY(checkQuorumShape(signers, qc.signatures.size(), committee));
    const Hash256 digest = voteDigest(chainId, qc.epoch, qc.round, qc.blockId);
    for (std::size_t k = 0; k < signers.size(); ++k) {
        if (!check(committee.member(signers[k]), digest, qc.signatures[k])) {
            return invalid("qc signature of member " + std::to_string(signers[k]) +
                           " is invalid (round=" + std::to_string(qc.round) + ")");
        }
    }
    return {};
}

Status verifyTimeoutCertSignatures(const codec::TimeoutCert& tc, const Committee& committee,
                                   std::string_view chainId, const SignatureCheck& check) {
    if (tc.epoch != committee.epoch()) {
        return invalid("tc epoch " + std::to_string(tc.epoch) + " is not the committee's " +
                       std::to_string(committee.epoch()));
    }
    GL_ASSIGN_OR_RETURN(signers, signersOf(tc.signers, committee.size()));
    GL_TRY(checkQuorumShape(signers, tc.signatures.size(), committee));
    if (tc.hqcRounds.size() != signers.size()) {
        return invalid("tc has " + std::to_string(tc.hqcRounds.size()) + " hqc rounds for " +
                       std::to_string(signers.size()) + " signers");
    }
    for (std::size_t k = 0; k < signers.size(); ++k) {
        if (tc.hqcRounds[k] >= tc.round) {
            return invalid("tc hqc round " + std::to_string(tc.hqcRounds[k]) +
                           " is not below its round " + std::to_string(tc.round));
        }
        const Hash256 digest = timeoutDigest(chainId, tc.epoch, tc.round, tc.hqcRounds[k]);
        if (!check(committee.member(signers[k]), digest, tc.signatures[k])) {
            return invalid("tc signature of member " + std::to_string(signers[k]) +
                           " is invalid (round=" + std::to_string(tc.round) + ")");
        }
    }
    return {};
}

Status verifyTimeoutCert(const codec::TimeoutCert& tc, const Committee& committee,
                         std::string_view chainId, const SignatureCheck& check) {
    GL_TRY(verifyTimeoutCertSignatures(tc, committee, chainId, check));
    // A signer's hqc round is only its word: the TC must prove the highest one with its QC, or a
    // faulty signer could name a round no honest leader can extend (voters require a proposal
    // after a TC to carry a QC at least that high).
    if (tc.highQc.round != tc.highestHqcRound()) {
        return invalid("tc high qc has round " + std::to_string(tc.highQc.round) +
                       ", its highest hqc round is " + std::to_string(tc.highestHqcRound()));
    }
    if (auto proven = verifyQuorumCert(tc.highQc, committee, chainId, check); !proven) {
        return invalid("tc high qc: " + proven.error().message);
    }
    return {};
}

Status verifyVote(const codec::Vote& vote, const Committee& committee, std::string_view chainId,
                  const SignatureCheck& check) {
    if (vote.epoch != committee.epoch() || !committee.contains(vote.voter)) {
        return fail(ErrorCode::kInvalidArgument, "vote is not from a member of this epoch");
    }
    if (!check(vote.voter, voteDigest(chainId, vote.epoch, vote.round, vote.blockId),
               vote.signature)) {
        return fail(ErrorCode::kBadSignature, "vote signature is invalid");
    }
    return {};
}

Status verifyTimeout(const codec::Timeout& timeout, const Committee& committee,
                     std::string_view chainId, const SignatureCheck& check) {
    if (timeout.epoch != committee.epoch() || !committee.contains(timeout.author)) {
        return fail(ErrorCode::kInvalidArgument, "timeout is not from a member of this epoch");
    }
    if (timeout.highQc.round >= timeout.round) {
        return fail(ErrorCode::kInvalidArgument, "timeout's high qc is not below its round");
    }
    const Hash256 digest =
        timeoutDigest(chainId, timeout.epoch, timeout.round, timeout.highQc.round);
    if (!check(timeout.author, digest, timeout.signature)) {
        return fail(ErrorCode::kBadSignature, "timeout signature is invalid");
    }
    return verifyQuorumCert(timeout.highQc, committee, chainId, check);
}

Status verifyProposal(const codec::Block& block, const Committee& committee,
                      std::string_view chainId, const SignatureCheck& check) {
    if (crypto::sha256(block.headerBytes) != block.id) {
        return fail(ErrorCode::kInvalidBlock, "block id is not the hash of its header");
    }
    if (!committee.contains(block.header.author)) {
        return fail(ErrorCode::kInvalidBlock, "block author is not a member of this epoch");
    }
    if (!check(block.header.author, proposalDigest(chainId, block.id), block.signature)) {
        return fail(ErrorCode::kBadSignature, "block signature is invalid");
    }
    GL_TRY(verifyQuorumCert(block.header.qc, committee, chainId, check));
    if (block.header.tc) {
        GL_TRY(verifyTimeoutCert(*block.header.tc, committee, chainId, check));
    }
    return {};
}

Status verifyCommitProof(const codec::Block& block, const codec::CommitProof& proof,
                         const Committee& committee, std::string_view chainId,
                         const SignatureCheck& check) {
    // Walk the path from the block up to L, the block the child certifies: each header names
    // the previous one as parent, one height higher, in the same epoch.
    const std::uint64_t epoch = block.header.epoch;
    const codec::BlockHeader* last = &block.header;
    const Hash256* lastId = &block.id;
    for (const auto& link : proof.path) {
        if (crypto::sha256(link.headerBytes) != link.id) {
            return invalid("commit proof's path holds a header whose id is not its hash");
        }
        if (link.header.parentId != *lastId || link.header.epoch != epoch ||
            link.header.height != last->height + 1 || link.header.round <= last->round) {
            return invalid("commit proof's path does not extend block " + block.id.hex());
        }
        last = &link.header;
        lastId = &link.id;
    }
    // The first header's QC is the one stored with the block as its certificate.
    if (!proof.path.empty()) {
        const codec::QuorumCert& first = proof.path.front().header.qc;
        if (first.blockId != block.id || first.round != block.header.round) {
            return invalid("commit proof's path does not certify block " + block.id.hex());
        }
        GL_TRY(verifyQuorumCert(first, committee, chainId, check));
    }
    const codec::BlockHeader& child = proof.childHeader;
    if (crypto::sha256(proof.childHeaderBytes) != proof.childId) {
        return invalid("commit proof's child id is not the hash of its header");
    }
    if (child.parentId != *lastId || child.epoch != epoch || child.height != last->height + 1 ||
        child.round != last->round + 1) {
        return invalid("commit proof's child does not directly follow block " + lastId->hex());
    }
    if (child.qc.blockId != *lastId || child.qc.round != last->round) {
        return invalid("commit proof's child does not certify block " + lastId->hex());
    }
    if (proof.commitQc.blockId != proof.childId || proof.commitQc.round != child.round) {
        return invalid("commit proof's certificate does not certify its child");
    }
    GL_TRY(verifyQuorumCert(child.qc, committee, chainId, check));
    return verifyQuorumCert(proof.commitQc, committee, chainId, check);
}

const codec::QuorumCert& certifyingQcOf(const codec::CommitProof& proof) {
    return proof.path.empty() ? proof.childHeader.qc : proof.path.front().header.qc;
}

Result<codec::QuorumCert> buildQuorumCert(const Committee& committee,
                                          const std::vector<codec::Vote>& votes) {
    if (votes.empty()) {
        return invalid("no votes");
    }
    const codec::Vote& first = votes.front();
    if (first.epoch != committee.epoch()) {
        return invalid("votes are not of the committee's epoch");
    }
    std::map<std::size_t, Signature> byMember;
    for (const auto& vote : votes) {
        if (vote.epoch != first.epoch || vote.round != first.round ||
            vote.blockId != first.blockId) {
            return fail(ErrorCode::kInvalidArgument, "votes name different blocks");
        }
        const auto index = committee.indexOf(vote.voter);
        if (!index) {
            return fail(ErrorCode::kInvalidArgument, "vote from a non-member");
        }
        byMember.emplace(*index, vote.signature);
    }
    if (byMember.size() < committee.quorum()) {
        return invalid("only " + std::to_string(byMember.size()) + " distinct voters, quorum is " +
                       std::to_string(committee.quorum()));
    }
    codec::QuorumCert qc;
    qc.epoch = first.epoch;
    qc.round = first.round;
    qc.blockId = first.blockId;
    qc.signers.assign(bitmapBytes(committee.size()), 0);
    for (const auto& [index, signature] : byMember) {
        setBit(qc.signers, index);
        qc.signatures.push_back(signature);
    }
    return qc;
}

Result<codec::TimeoutCert> buildTimeoutCert(const Committee& committee,
                                            const std::vector<codec::Timeout>& timeouts) {
    if (timeouts.empty()) {
        return invalid("no timeouts");
    }
    const codec::Timeout& first = timeouts.front();
    if (first.epoch != committee.epoch()) {
        return invalid("timeouts are not of the committee's epoch");
    }
    std::map<std::size_t, std::pair<std::uint64_t, Signature>> byMember;
    const codec::QuorumCert* highQc = &first.highQc;
    for (const auto& timeout : timeouts) {
        if (timeout.epoch != first.epoch || timeout.round != first.round) {
            return fail(ErrorCode::kInvalidArgument, "timeouts name different rounds");
        }
        const auto index = committee.indexOf(timeout.author);
        if (!index) {
            return fail(ErrorCode::kInvalidArgument, "timeout from a non-member");
        }
        if (byMember.emplace(*index, std::make_pair(timeout.highQc.round, timeout.signature))
                .second &&
            timeout.highQc.round > highQc->round) {
            highQc = &timeout.highQc;
        }
    }
    if (byMember.size() < committee.quorum()) {
        return invalid("only " + std::to_string(byMember.size()) +
                       " distinct timeouts, quorum is " + std::to_string(committee.quorum()));
    }
    codec::TimeoutCert tc;
    tc.epoch = first.epoch;
    tc.round = first.round;
    tc.signers.assign(bitmapBytes(committee.size()), 0);
    for (const auto& [index, entry] : byMember) {
        setBit(tc.signers, index);
        tc.hqcRounds.push_back(entry.first);
        tc.signatures.push_back(entry.second);
    }
    tc.highQc = *highQc;
    return tc;
}

Hash256 batchDigest(const Batch& batch) {
    crypto::Sha256 hasher;
    hasher.update(std::string_view("gridledger/batch-digest")).update(batch.author.view());
    hasher.updateU64(batch.epoch).updateU64(batch.serial);
    Bytes count;
    appendU32(count, static_cast<std::uint32_t>(batch.txs.size()));
    hasher.update(count);
    for (const auto& tx : batch.txs) {
        Bytes length;
        appendU32(length, static_cast<std::uint32_t>(tx.size()));
        hasher.update(length).update(tx);
    }
    return hasher.finish();
}

Hash256 batchAckDigest(std::string_view domain, std::uint64_t epoch, const Hash256& digest) {
    Bytes body;
    appendU64(body, epoch);
    body.insert(body.end(), digest.view().begin(), digest.view().end());
    return crypto::signingDigest(crypto::kBatchTag, domain, body);
}

std::size_t batchCertThreshold(const Committee& committee) {
    return committee.maxFaulty() + 1;
}

std::vector<std::size_t> batchSigners(const Committee& committee, const Hash256& digest,
                                      std::size_t author, const std::set<std::size_t>& silent) {
    const std::size_t n = committee.size();
    const std::size_t wanted = std::min(batchCertThreshold(committee), n);
    const auto start = static_cast<std::size_t>(readU64(digest.view()) % n);
    std::vector<std::size_t> out{author};
    // First the members that answer, then, if too few, the silent ones.
    for (const bool takeSilent : {false, true}) {
        for (std::size_t k = 0; k < n && out.size() < wanted; ++k) {
            const std::size_t at = (start + k) % n;
            if (at != author && silent.contains(at) == takeSilent) {
                out.push_back(at);
            }
        }
    }
    return out;
}

Result<BatchCert> buildBatchCert(const Committee& committee, const Hash256& digest,
                                 const std::map<std::size_t, Signature>& acks) {
    if (acks.size() < batchCertThreshold(committee)) {
        return fail(ErrorCode::kInvalidArgument, std::to_string(acks.size()) +
                                                     " acknowledgements, a batch needs " +
                                                     std::to_string(batchCertThreshold(committee)));
    }
    BatchCert cert;
    cert.epoch = committee.epoch();
    cert.digest = digest;
    cert.signers.assign(bitmapBytes(committee.size()), 0);
    for (const auto& [member, signature] : acks) {  // a std::map: member order
        if (member >= committee.size()) {
            return fail(ErrorCode::kInvalidArgument, "acknowledgement of member " +
                                                         std::to_string(member) + " of " +
                                                         std::to_string(committee.size()));
        }
        setBit(cert.signers, member);
        cert.signatures.push_back(signature);
    }
    return cert;
}

Result<std::vector<std::size_t>> batchCertSigners(const BatchCert& cert, const Committee& committee,
                                                  std::string_view domain,
                                                  const SignatureCheck& check) {
    if (cert.epoch != committee.epoch()) {
        return invalid("batch certificate of epoch " + std::to_string(cert.epoch) +
                       " is not the committee's " + std::to_string(committee.epoch()));
    }
    GL_ASSIGN_OR_RETURN(signers, signersOf(cert.signers, committee.size()));
    if (cert.signatures.size() != signers.size()) {
        return invalid("batch certificate has " + std::to_string(cert.signatures.size()) +
                       " signatures for " + std::to_string(signers.size()) + " signers");
    }
    const Hash256 digest = batchAckDigest(domain, cert.epoch, cert.digest);
    for (std::size_t k = 0; k < signers.size(); ++k) {
        if (!check(committee.member(signers[k]), digest, cert.signatures[k])) {
            return invalid("batch certificate signature of member " + std::to_string(signers[k]) +
                           " is invalid");
        }
    }
    return signers;
}

Status verifyBatchCert(const BatchCert& cert, const Committee& committee, std::string_view domain,
                       const SignatureCheck& check) {
    GL_ASSIGN_OR_RETURN(signers, batchCertSigners(cert, committee, domain, check));
    if (signers.size() < batchCertThreshold(committee)) {
        return invalid("batch certificate has " + std::to_string(signers.size()) +
                       " signers, it needs " + std::to_string(batchCertThreshold(committee)));
    }
    return {};
}

}  // namespace gridledger::consensus
