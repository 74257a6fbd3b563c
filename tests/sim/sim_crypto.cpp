#include "sim/sim_crypto.h"

#include <algorithm>
#include <string>
#include <utility>

#include <gridledger/crypto/sha256.h>

namespace gridledger::sim {
namespace {

Hash256 hashOf(ByteView a, ByteView b) {
    Bytes buffer(a.begin(), a.end());
    append(buffer, b);
    return crypto::sha256(buffer);
}

std::unexpected<Error> invalidCert(const std::string& message) {
    return fail(ErrorCode::kInvalidCertificate, message);
}

/** A consensus::Signer over one Keyring key. */
class KeyringSigner final : public consensus::Signer {
  public:
    KeyringSigner(const Keyring& keys, std::size_t index) : keys_(keys), index_(index) {}

    [[nodiscard]] const PubKey& publicKey() const override { return keys_.publicKey(index_); }
    [[nodiscard]] Signature sign(const Hash256& digest) override {
        return keys_.sign(index_, digest);
    }

  private:
    const Keyring& keys_;
    std::size_t index_;
};

}  // namespace

Keyring::Keyring(std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
        const Hash256 secret =
            crypto::sha256(asBytes("gridledger-sim/secret/" + std::to_string(i)));
        const PubKey key = hashOf(asBytes("gridledger-sim/public/"), secret.view());
        secrets_.push_back(secret);
        publicKeys_.push_back(key);
        index_.emplace(key, i);
    }
}

std::size_t Keyring::indexOf(const PubKey& key) const {
    const auto it = index_.find(key);
    return it == index_.end() ? size() : it->second;
}

Signature Keyring::sign(std::size_t i, const Hash256& digest) const {
    const Hash256& secret = secrets_.at(i);
    const Hash256 first = hashOf(secret.view(), digest.view());
    const Hash256 second = hashOf(digest.view(), secret.view());
    Signature out;
    std::copy(first.view().begin(), first.view().end(), out.data());
    std::copy(second.view().begin(), second.view().end(), out.data() + Hash256::size());
    return out;
}

bool Keyring::verify(const PubKey& key, const Hash256& digest, const Signature& signature) const {
    const std::size_t i = indexOf(key);
    return i < size() && sign(i, digest) == signature;
}

std::unique_ptr<consensus::Signer> Keyring::signer(std::size_t i) const {
    (void)publicKeys_.at(i);
    return std::make_unique<KeyringSigner>(*this, i);
}

Verifier::Verifier(const Keyring& keys, const Committees& committees, std::string chainId,
                   bool checkTcHighQc)
    : keys_(keys),
      committees_(committees),
      chainId_(std::move(chainId)),
      checkTcHighQc_(checkTcHighQc) {}

Result<const consensus::Committee*> Verifier::committeeOf(std::uint64_t epoch) const {
    const auto it = committees_.find(epoch);
    if (it == committees_.end()) {
        return invalidCert("message of an epoch without a known committee");
    }
    return &it->second;
}

Result<std::vector<std::size_t>> Verifier::signers(const consensus::Committee& committee,
                                                   const Bytes& bitmap, std::size_t signatures) {
    const std::size_t n = committee.size();
    if (bitmap.size() != (n + 7) / 8) {
        return invalidCert("signer bitmap has the wrong length");
    }
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < bitmap.size() * 8; ++i) {
        if (((static_cast<unsigned>(bitmap[i / 8]) >> (i % 8)) & 1U) == 0) {
            continue;
        }
        if (i >= n) {
            return invalidCert("signer bitmap names a member beyond n");
        }
        out.push_back(i);
    }
    if (out.size() < committee.quorum()) {
        return invalidCert("certificate below quorum");
    }
    if (signatures != out.size()) {
        return invalidCert("certificate has one signature per signer");
    }
    return out;
}

Status Verifier::quorumCert(const codec::QuorumCert& qc) const {
    GL_ASSIGN_OR_RETURN(committee, committeeOf(qc.epoch));
    if (qc.round == 0) {
        const bool noSigners = std::all_of(qc.signers.begin(), qc.signers.end(),
                                           [](std::uint8_t b) { return b == 0; });
        if (noSigners && qc.signatures.empty() && qc.blockId == committee->seedBlockId()) {
            return {};
        }
        return invalidCert("a round-0 qc must be the genesis qc");
    }
    GL_ASSIGN_OR_RETURN(members, signers(*committee, qc.signers, qc.signatures.size()));
    const Hash256 digest = consensus::voteDigest(chainId_, qc.epoch, qc.round, qc.blockId);
    for (std::size_t k = 0; k < members.size(); ++k) {
        if (!keys_.verify(committee->member(members[k]), digest, qc.signatures[k])) {
            return invalidCert("qc signature is invalid");
        }
    }
    return {};
}

Status Verifier::timeoutCert(const codec::TimeoutCert& tc) const {
    GL_ASSIGN_OR_RETURN(committee, committeeOf(tc.epoch));
    GL_ASSIGN_OR_RETURN(members, signers(*committee, tc.signers, tc.signatures.size()));
    if (tc.hqcRounds.size() != members.size()) {
        return invalidCert("tc has one hqc round per signer");
    }
    for (std::size_t k = 0; k < members.size(); ++k) {
        if (tc.hqcRounds[k] >= tc.round) {
            return invalidCert("tc hqc round is not below its round");
        }
        const Hash256 digest =
            consensus::timeoutDigest(chainId_, tc.epoch, tc.round, tc.hqcRounds[k]);
        if (!keys_.verify(committee->member(members[k]), digest, tc.signatures[k])) {
            return invalidCert("tc signature is invalid");
        }
    }
    if (tc.highQc.round != tc.highestHqcRound() || tc.highQc.epoch != tc.epoch) {
        return invalidCert("tc high qc is not of its highest hqc round");
    }
    if (!checkTcHighQc_) {
        return {};
    }
    return quorumCert(tc.highQc);
}

Status Verifier::vote(const codec::Vote& vote) const {
    const auto committee = committeeOf(vote.epoch);
    if (!committee || !(*committee)->contains(vote.voter)) {
        return fail(ErrorCode::kInvalidArgument, "vote is not from a member of this epoch");
    }
    const Hash256 digest = consensus::voteDigest(chainId_, vote.epoch, vote.round, vote.blockId);
    if (!keys_.verify(vote.voter, digest, vote.signature)) {
        return fail(ErrorCode::kBadSignature, "vote signature is invalid");
    }
    return {};
}

Status Verifier::timeout(const codec::Timeout& timeout) const {
    const auto committee = committeeOf(timeout.epoch);
    if (!committee || !(*committee)->contains(timeout.author)) {
        return fail(ErrorCode::kInvalidArgument, "timeout is not from a member of this epoch");
    }
    if (timeout.highQc.round >= timeout.round) {
        return fail(ErrorCode::kInvalidArgument, "timeout's high qc is not below its round");
    }
    const Hash256 digest =
        consensus::timeoutDigest(chainId_, timeout.epoch, timeout.round, timeout.highQc.round);
    if (!keys_.verify(timeout.author, digest, timeout.signature)) {
        return fail(ErrorCode::kBadSignature, "timeout signature is invalid");
    }
    return quorumCert(timeout.highQc);
}

Status Verifier::proposal(const codec::Block& block) const {
    if (crypto::sha256(block.headerBytes) != block.id) {
        return fail(ErrorCode::kInvalidBlock, "block id is not the hash of its header");
    }
    const auto committee = committeeOf(block.header.epoch);
    if (!committee || !(*committee)->contains(block.header.author)) {
        return fail(ErrorCode::kInvalidBlock, "block author is not a member");
    }
    if (!keys_.verify(block.header.author, consensus::proposalDigest(chainId_, block.id),
                      block.signature)) {
        return fail(ErrorCode::kBadSignature, "block signature is invalid");
    }
    GL_TRY(quorumCert(block.header.qc));
    if (block.header.tc) {
        GL_TRY(timeoutCert(*block.header.tc));
    }
    return {};
}

}  // namespace gridledger::sim
