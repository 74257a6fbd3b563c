#pragma once

// Certified batches between the members of a committee (docs/protocol.md §14): a member packs the
// transactions it admitted into batches and sends each to every other member; f of them, picked
// by the batch's digest, verify every signature and acknowledge it; f + 1 acknowledgements make
// the batch's certificate, which the author sends to every member. A member that holds a batch
// and its certificate admits the batch's transactions without verifying their signatures, so
// each signature is verified by f + 1 members instead of n. Proposals still carry transactions,
// and a voter verifies any it holds no verdict for: a missing batch or certificate costs work,
// never safety.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/batches.h>
#include <gridledger/consensus/committee.h>

namespace gridledger::node {

/** How long an author waits for the members it asked before it asks every other member. */
inline constexpr auto kBatchAckWait = std::chrono::milliseconds(400);
/**
 * How long a member holds another's batch for its certificate; then it verifies the batch
 * itself and admits it as it would gossip.
 */
inline constexpr auto kBatchCertWait = std::chrono::seconds(1);
/** How long an author waits for its batch's certificate at all, and a certificate for its data. */
inline constexpr auto kBatchKeep = std::chrono::seconds(5);
/** Bytes of other members' batches held for their certificates; past it the oldest go. */
inline constexpr std::size_t kMaxHeldBatchBytes = std::size_t{64} << 20U;
/** Certificates held for their batch's data; past it the oldest go. */
inline constexpr std::size_t kMaxHeldBatchCerts = 4096;

/** One member's side of the batch exchange. Every member function is thread-safe. */
class BatchExchange {
  public:
    using Clock = std::chrono::steady_clock;

    /** What the exchange needs of its node, each callable from any thread. */
    struct Host {
        /** Sends a message to one peer (droppable or not, as its kind is). */
        std::function<void(const NodeId&, codec::NetMessage)> send;
        /** True when every transaction's signature is valid (Mempool::signaturesValid). */
        std::function<bool(std::span<const Bytes>)> verify;
        /**
         * Admits a batch's transactions from member `from`; `certified` when a certificate
         * vouches for their signatures (Mempool::acceptCertified first).
         */
        std::function<void(const NodeId& from, std::vector<Bytes>, bool certified)> admit;
        /**
         * This member's own transactions, held back from its proposals (Mempool::holdAdmissions)
         * until their batch is certified, may now be proposed: certified, or given up on.
         */
        std::function<void(std::span<const Bytes>)> ready;
        /** This validator's signature of a digest. */
        std::function<Signature(const Hash256&)> sign;
        /** A peer sent what no honest member sends (ban points). */
        std::function<void(const NodeId&, codec::MessageKind, const Error&)> invalid;
    };

    /** The committee of the epoch the ledger is in, with its members' transport ids. */
    struct Roster {
        std::shared_ptr<const consensus::Committee> committee;
        /** nodes[i]: member i's transport id, when known. */
        std::vector<std::optional<NodeId>> nodes;
        /** This validator's member index; nullopt when it is not a member. */
        std::optional<std::size_t> self;
    };

    BatchExchange(Host host, std::string signingDomain);

    /**
     * Enters the roster's epoch: the batches this member made in another epoch are given up
     * (their transactions stay in its mempool, ready to propose), and which members were silent
     * is forgotten.
     */
    void setRoster(Roster roster);
    /** True when this node packs its transactions into batches: a member, with other members. */
    [[nodiscard]] bool active() const;
    /** True when `peer` is a member of the roster's committee other than this node. */
    [[nodiscard]] bool isMember(const NodeId& peer) const;
    /**
     * Packs transactions this member admitted (each at most kMaxTxBatchBytes) into batches of
     * at most codec::kMaxTxBatch transactions and kMaxTxBatchBytes bytes, signs each and sends
     * it to every other member, asking the ones codec::batchSigners picks to sign it.
     */
    void pack(std::vector<Bytes> txs, Clock::time_point now);
    /** A batch from a peer: acknowledged when asked and valid, else held for its certificate. */
    void onBatch(const NodeId& from, codec::BatchMessage batch, Clock::time_point now);
    /** An acknowledgement of one of this member's batches; f + 1 make its certificate. */
    void onAck(const NodeId& from, const codec::BatchAck& ack);
    /** A certificate: checked, then its batch admitted as certified once its data is here. */
    void onCert(const NodeId& from, const codec::BatchCert& cert, Clock::time_point now);
    /**
     * Asks every member for the batches whose asked members have not answered within
     * kBatchAckWait (and passes over those members from then on, until they answer); admits,
     * verifying them, the batches held kBatchCertWait without a certificate; gives up on this
     * member's batches not certified within kBatchKeep and forgets certificates held as long.
     */
    void tick(Clock::time_point now);

    /** What the exchange did since the node started, for the metrics. */
    struct Stats {
        /** This member's batches made, and those of them certified. */
        std::uint64_t made = 0;
        std::uint64_t certified = 0;
        /** Other members' batches admitted on their certificate, unverified here. */
        std::uint64_t admittedCertified = 0;
        /** Other members' batches verified here: asked to, or no certificate within 1 s. */
        std::uint64_t verifiedHere = 0;
    };
    [[nodiscard]] Stats stats() const;

  private:
    struct Own {
        std::uint64_t epoch = 0;
        std::uint64_t serial = 0;
        std::vector<Bytes> txs;
        std::map<std::size_t, Signature> acks;
        std::set<std::size_t> asked;
        Clock::time_point sent;
        bool askedAll = false;
    };
    struct Held {
        NodeId from;
        std::vector<Bytes> txs;
        std::size_t bytes = 0;
        Clock::time_point arrived;
    };
    struct HeldCert {
        Clock::time_point arrived;
    };
    /** A batch ready to send: its message and the members to ask. */
    struct Outgoing {
        codec::BatchMessage message;
        std::set<std::size_t> asked;
    };

    [[nodiscard]] std::optional<std::size_t> memberOfLocked(const NodeId& peer) const;
    /** Sends `message` to every other member of the roster, `sign` set for those in `asked`. */
    void sendToMembers(const Roster& roster, codec::BatchMessage message,
                       const std::set<std::size_t>& asked);
    void broadcastCert(const Roster& roster, const codec::BatchCert& cert);
    void holdLocked(const Hash256& digest, Held held);

    const Host host_;
    const std::string domain_;

    mutable std::mutex mutex_;
    Roster roster_;
    std::uint64_t nextSerial_ = 0;
    std::map<Hash256, Own> own_;
    /** Members asked and not answering: passed over until they answer (docs/protocol.md §14). */
    std::set<std::size_t> silent_;
    std::map<Hash256, Held> held_;
    std::size_t heldBytes_ = 0;
    std::map<Hash256, HeldCert> certs_;
    Stats stats_;
};

}  // namespace gridledger::node
