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
                   RulesVariant rules)
    : committees_(committees),
      chainId_(std::move(chainId)),
      checkTcHighQc_(rules != RulesVariant::kSkipTcHighQc),
      batchQuorumF_(rules == RulesVariant::kBatchQuorumF),
      check_([&keys](const PubKey& key, const Hash256& digest, const Signature& signature) {
          return keys.verify(key, digest, signature);
      }) {}

Result<const consensus::Committee*> Verifier::committeeOf(std::uint64_t epoch) const {
    const auto it = committees_.find(epoch);
    if (it == committees_.end()) {
        return invalidCert("message of an epoch without a known committee");
    }
    return &it->second;
}

Status Verifier::quorumCert(const codec::QuorumCert& qc) const {
    GL_ASSIGN_OR_RETURN(committee, committeeOf(qc.epoch));
    return consensus::verifyQuorumCert(qc, *committee, chainId_, check_);
}

Status Verifier::timeoutCert(const codec::TimeoutCert& tc) const {
    GL_ASSIGN_OR_RETURN(committee, committeeOf(tc.epoch));
    if (checkTcHighQc_) {
        return consensus::verifyTimeoutCert(tc, *committee, chainId_, check_);
    }
    // The negative control: the signers' word on their highest QC round, without its proof.
    GL_TRY(consensus::verifyTimeoutCertSignatures(tc, *committee, chainId_, check_));
    if (tc.highQc.round != tc.highestHqcRound() || tc.highQc.epoch != tc.epoch) {
        return invalidCert("tc high qc is not of its highest hqc round");
    }
    return {};
}

Status Verifier::vote(const codec::Vote& vote) const {
    const auto committee = committeeOf(vote.epoch);
    if (!committee) {
        return fail(ErrorCode::kInvalidArgument, "vote is not from a member of this epoch");
    }
    return consensus::verifyVote(vote, **committee, chainId_, check_);
}

Status Verifier::timeout(const codec::Timeout& timeout) const {
    const auto committee = committeeOf(timeout.epoch);
    if (!committee) {
        return fail(ErrorCode::kInvalidArgument, "timeout is not from a member of this epoch");
    }
    return consensus::verifyTimeout(timeout, **committee, chainId_, check_);
}

Status Verifier::proposal(const codec::Block& block) const {
    const auto committee = committeeOf(block.header.epoch);
    if (!committee) {
        return fail(ErrorCode::kInvalidBlock, "block author is not a member");
    }
    if (checkTcHighQc_ || !block.header.tc) {
        return consensus::verifyProposal(block, **committee, chainId_, check_);
    }
    // The negative control: everything but the embedded TC as the node checks it, and the TC
    // with the weakened check.
    codec::Block withoutTc = block;
    withoutTc.header.tc.reset();
    GL_TRY(consensus::verifyProposal(withoutTc, **committee, chainId_, check_));
    return timeoutCert(*block.header.tc);
}

Status Verifier::batchCert(const consensus::BatchCert& cert) const {
    GL_ASSIGN_OR_RETURN(committee, committeeOf(cert.epoch));
    if (!batchQuorumF_) {
        return consensus::verifyBatchCert(cert, *committee, chainId_, check_);
    }
    // The negative control: f signers are enough (one, when f = 0).
    GL_ASSIGN_OR_RETURN(signers, consensus::batchCertSigners(cert, *committee, chainId_, check_));
    if (signers.size() < std::max<std::size_t>(committee->maxFaulty(), 1)) {
        return invalidCert("batch certificate has too few signers even for f");
    }
    return {};
}

}  // namespace gridledger::sim
