#pragma once

// Cheap deterministic signatures for the simulator, and the checks a driver runs on every message
// before the core sees it (docs/protocol.md §2), done with those signatures.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/batches.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>

#include "sim/weak_rules.h"

namespace gridledger::sim {

/**
 * The keys of a simulated committee. Key i has the secret SHA-256("gridledger-sim/secret/" ‖ i)
 * and the public key SHA-256("gridledger-sim/public/" ‖ secret). The signature of a digest d is
 * SHA-256(secret ‖ d) ‖ SHA-256(d ‖ secret): deterministic, unforgeable inside the simulation
 * (no simulated party learns another's secret) and about a hundred times cheaper than BIP-340.
 * Only the simulator uses it; the cores run exactly as in the node, behind consensus::Signer.
 */
class Keyring {
  public:
    /** Builds `count` keys (count >= 1). */
    explicit Keyring(std::size_t count);

    [[nodiscard]] std::size_t size() const { return publicKeys_.size(); }
    [[nodiscard]] const std::vector<PubKey>& publicKeys() const { return publicKeys_; }
    /** Public key i; requires i < size(). */
    [[nodiscard]] const PubKey& publicKey(std::size_t i) const { return publicKeys_.at(i); }
    /** The index of `key`, or size() when it is not one of the ring's keys. */
    [[nodiscard]] std::size_t indexOf(const PubKey& key) const;

    /** The signature of `digest` by key i; requires i < size(). */
    [[nodiscard]] Signature sign(std::size_t i, const Hash256& digest) const;
    /** True iff `signature` is key `key`'s signature of `digest`. */
    [[nodiscard]] bool verify(const PubKey& key, const Hash256& digest,
                              const Signature& signature) const;
    /** A consensus::Signer holding key i; requires i < size(). */
    [[nodiscard]] std::unique_ptr<consensus::Signer> signer(std::size_t i) const;

  private:
    std::vector<Hash256> secrets_;
    std::vector<PubKey> publicKeys_;
    std::map<PubKey, std::size_t> index_;
};

/**
 * What a driver verifies before it hands a message to the core: the node's own checks
 * (consensus::verifyProposal, verifyVote, verifyTimeout, verifyTimeoutCert, verifyQuorumCert),
 * with Keyring signatures instead of BIP-340, each message against the committee of its own
 * epoch.
 */
class Verifier {
  public:
    /** The committee of each epoch, by epoch number; the simulator adds one per epoch change. */
    using Committees = std::map<std::uint64_t, consensus::Committee>;

    /**
     * Keeps references: `keys` and `committees` must outlive the verifier. The negative controls
     * weaken one check: kSkipTcHighQc, a TC need not prove its highest QC; kBatchQuorumF, f
     * acknowledgements certify a batch.
     */
    Verifier(const Keyring& keys, const Committees& committees, std::string chainId,
             RulesVariant rules = RulesVariant::kTwoChain);

    [[nodiscard]] Status quorumCert(const codec::QuorumCert& qc) const;
    [[nodiscard]] Status timeoutCert(const codec::TimeoutCert& tc) const;
    [[nodiscard]] Status vote(const codec::Vote& vote) const;
    [[nodiscard]] Status timeout(const codec::Timeout& timeout) const;
    /** Id = hash of the header bytes, author a member, its signature, the embedded QC and TC. */
    [[nodiscard]] Status proposal(const codec::Block& block) const;
    /** A batch certificate (consensus::verifyBatchCert) against the committee of its epoch. */
    [[nodiscard]] Status batchCert(const consensus::BatchCert& cert) const;
    /** The Keyring's signature check, for the node's other checks (block sync, epoch proofs). */
    [[nodiscard]] const consensus::SignatureCheck& signatureCheck() const { return check_; }

  private:
    [[nodiscard]] Result<const consensus::Committee*> committeeOf(std::uint64_t epoch) const;

    const Committees& committees_;
    std::string chainId_;
    bool checkTcHighQc_ = true;
    bool batchQuorumF_ = false;
    consensus::SignatureCheck check_;
};

}  // namespace gridledger::sim
