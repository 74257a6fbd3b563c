#pragma once

// A faulty committee member for multi-process tests: this process, holding a real validator's
// consensus key and speaking the P2P protocol through the project's own transport, sends what an
// honest validator never would. The honest validators must refuse all of it and keep committing.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gridledger/codec/block.h>
#include <gridledger/crypto/ed25519.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/p2p/network.h>

#include "support/testnet.h"

namespace gridledger::testing {

/**
 * Validator `member`'s consensus key on a P2P endpoint of its own, connected to every other node
 * of a Testnet (whose validator i is committee member i of epoch 0). It signs with the real key,
 * so every message passes the signature check; what it claims is what is wrong.
 */
class FaultyMember {
  public:
    /**
     * Connects with `nodeKey`, or with the member's own node key when it is nullopt (the member's
     * process must then be down). Another node key must be in the nodes' `allowed_nodes`.
     */
    FaultyMember(const Testnet& net, std::size_t member,
                 std::optional<crypto::NodeKey> nodeKey = std::nullopt);
    ~FaultyMember();
    FaultyMember(const FaultyMember&) = delete;
    FaultyMember& operator=(const FaultyMember&) = delete;

    /** True once the P2P endpoint started. */
    [[nodiscard]] bool started() const { return started_; }
    [[nodiscard]] bool connectedToAll() const;
    /** Sends `message` to every other node; false if one was not connected. */
    bool sendAll(const p2p::Message& message);
    /**
     * Queues `count` copies of `message` to node `node` at once (a flood: this endpoint's send
     * queue holds up to 2^20 messages); returns how many were queued before one was refused.
     */
    std::size_t flood(std::size_t node, const p2p::Message& message, std::size_t count);
    /** Messages still queued to node `node`; nullopt when not connected to it. */
    [[nodiscard]] std::optional<std::size_t> queuedTo(std::size_t node) const;

    /**
     * A proposal of `round` on the epoch's genesis QC (which verifies by convention) that claims
     * a height far above the chain.
     */
    [[nodiscard]] p2p::Message farHeightProposal(const Hash256& genesisId,
                                                 std::uint64_t round) const;
    /** A vote of a later epoch: nothing about it can be checked by a node of epoch 0. */
    [[nodiscard]] p2p::Message laterEpochVote(std::uint64_t round) const;
    /**
     * A signed proposal of (`epoch`, `round`) on the genesis QC whose transactions (junk, 64 KiB
     * each) add up to `bytes`: more than max_block_bytes lets a block hold.
     */
    [[nodiscard]] p2p::Message oversizedProposal(const Hash256& genesisId, std::uint64_t epoch,
                                                 std::uint64_t round, std::size_t bytes) const;
    /**
     * A TC of the latest round in which this member heard q − 1 honest timeouts: theirs, and its
     * own claiming a QC of the round just below. Its high QC is the honest timeouts' highest, or,
     * when that is already the QC of the round just below, an older QC heard in an earlier
     * round's timeouts: the TC never proves its highest QC round (what a voter's V2 would
     * otherwise trust). nullopt until such timeouts arrived.
     */
    [[nodiscard]] std::optional<p2p::Message> forgedTc();

    /** This member's batch (docs/protocol.md §14) of `txs`, asking to sign it or not. */
    [[nodiscard]] p2p::Message batch(std::uint64_t epoch, std::uint64_t serial, bool sign,
                                     std::vector<Bytes> txs) const;
    /**
     * A certificate of that batch with f + 1 = 2 signers: this member's real acknowledgement
     * and, under the next member's bit, the same signature again.
     */
    [[nodiscard]] p2p::Message forgedBatchCert(std::uint64_t epoch, std::uint64_t serial,
                                               const std::vector<Bytes>& txs) const;

    /** From now on, answers every epoch proof request with forgedEpochProof(). */
    void forgeEpochProofs() { forgeEpochProofs_ = true; }
    [[nodiscard]] std::size_t forgedProofsSent() const { return forgedProofsSent_.load(); }
    /**
     * A proof that epoch `epoch` ended at a block a million heights up: the headers are well
     * formed and signed by this member, but every certificate carries its signature alone.
     */
    [[nodiscard]] p2p::Message forgedEpochProof(std::uint64_t epoch) const;

  private:
    /** A QC on (round, blockId) with this member's vote only. */
    [[nodiscard]] codec::QuorumCert soloQc(std::uint64_t epoch, std::uint64_t round,
                                           const Hash256& id) const;
    void onTimeout(const codec::Timeout& timeout);
    /** The highest QC below round `below` of `epoch` among the timeouts heard; requires mutex_. */
    [[nodiscard]] std::optional<codec::QuorumCert> olderQc(std::uint64_t epoch,
                                                           std::uint64_t below) const;

    std::size_t member_;
    std::size_t committeeSize_;
    crypto::SecretKey key_;
    /** The testnet's signing domain (chain id and genesis hash). */
    std::string domain_;
    std::vector<PubKey> members_;  // by committee index
    std::vector<NodeId> others_;
    std::vector<NodeId> nodeIds_;  // of every node, by index
    std::atomic<bool> forgeEpochProofs_{false};
    std::atomic<std::size_t> forgedProofsSent_{0};
    mutable std::mutex mutex_;
    /** Honest timeouts heard, by (epoch, round) then committee index. */
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::map<std::size_t, codec::Timeout>>
        timeouts_;
    bool started_ = false;
    std::unique_ptr<p2p::Network> network_;
};

}  // namespace gridledger::testing
