#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/effect.h>
#include <gridledger/consensus/event.h>
#include <gridledger/consensus/safety_rules.h>
#include <gridledger/consensus/signer.h>

namespace gridledger::consensus {

/** The round timer stops growing after this many timed-out rounds in a row. */
inline constexpr std::uint64_t kMaxBackoffSteps = 6;

/** The round timer after `consecutiveTimeouts` rounds in a row ended with a TC:
 * ⌊t0Ms · 1.2^min(consecutiveTimeouts, 6)⌋, in integers (saturating). */
[[nodiscard]] std::uint64_t roundTimeoutMs(std::uint64_t t0Ms, std::uint64_t consecutiveTimeouts);

/** Settings of a core. No globals: the node and the simulator each pass their own. */
struct Options {
    /** The signing domain every signature is bound to (non-empty); a node passes its chain's,
     * chain id ‖ genesis hash (contracts::signingDomainOf). */
    std::string chainId;
    /**
     * Base round timeout T0 (1..86400000). A round's timer is T0 · 1.2^min(k, 6), where k counts
     * the rounds in a row that ended with a TC.
     */
    std::uint64_t t0Ms = 1000;
    /**
     * How long an idle leader waits before it proposes a block. Must be below t0Ms, with room for
     * a network round trip, or idle rounds time out.
     */
    std::uint64_t emptyBlockIntervalMs = 500;
    /** How far ahead of the voter's clock a block's timestamp may be. */
    std::uint64_t maxClockDriftMs = 2000;
    /**
     * 0: a block's timestamp is the proposer's clock (above the parent's). Otherwise it must be
     * exactly the parent's + blockTimeMs: the leader asks for that stamp and voters refuse any
     * other (the drift rule above still applies).
     */
    std::uint64_t blockTimeMs = 0;
    /** Most transactions in a block a voter accepts (>= 1; genesis `max_block_txs`). */
    std::size_t maxBlockTxs = 5000;
    /**
     * Most bytes of transactions (the sum of their encoded sizes) in a block a voter accepts
     * (>= 1; genesis `max_block_bytes`).
     */
    std::uint64_t maxBlockBytes = std::uint64_t{4} << 20U;
    /** Cap on blocks waiting for a parent, pending QCs and open fetches (each, >= 1). */
    std::size_t maxPendingBlocks = 256;
    /** Votes and timeouts are kept for rounds up to this far beyond the current one (1..1000000).
     */
    std::uint64_t maxRoundsAhead = 32;
    /** Largest committee chosen at an epoch change (>= 1; docs/protocol.md §1). */
    std::size_t committeeMax = kDefaultCommitteeMax;
    /**
     * Leader reputation (docs/protocol.md §1): a round's leader is chosen among the members
     * active in the last this-many blocks of the chain a proposal extends (0: off, every round
     * has its base leader; at most 10000).
     */
    std::size_t leaderReputationWindow = 0;
};

/** The state after executing every committed block up to `height` (height 0: genesis state). */
struct ExecRecord {
    std::uint64_t height = 0;
    Hash256 stateRoot;
    Hash256 resultsRoot;

    bool operator==(const ExecRecord&) const = default;
};

/**
 * Everything the core needs to resume after a stop or a crash, read back by the driver from what
 * it persisted: the last Persist* effects it performed and the ledger's committed blocks.
 */
struct RecoveryData {
    /** The committee of the epoch the ledger is in (derived by the driver from its ledger). */
    Committee committee;
    /**
     * The last PersistSafety performed (SafetyData{epoch, 0, 0} on a fresh chain). Safety data of
     * an earlier epoch is taken as SafetyData{committee epoch, 0, 0}.
     */
    SafetyData safety;
    /**
     * The highest committed block (the genesis block on a fresh chain). Right after an epoch
     * change it is the reconfiguration block of the previous epoch, the committee's seed block.
     */
    codec::Block root;
    /**
     * The QC that certifies `root` (Commit::qc; the genesis QC on a fresh chain, and
     * genesisQc(epoch, root.id) when `root` is the committee's seed block).
     */
    codec::QuorumCert rootQc;
    /** Every block of PersistBlock above the root, in any order (other epochs' are ignored). */
    std::vector<codec::Block> blocks;
    /** Every QC of PersistQc above the root, in any order. */
    std::vector<codec::QuorumCert> qcs;
    /** The last PersistTc performed, if any. */
    std::optional<codec::TimeoutCert> highestTc;
    /**
     * Execution records from the root's execHeight up to the executed height (at least the
     * latest one). A proposal naming an older height is refused.
     */
    std::vector<ExecRecord> executed;
    /**
     * The headers of the committed blocks of the committee's epoch and the previous one up to
     * and including `root`, oldest first, at least the last Options::leaderReputationWindow of
     * them (fewer only when the two epochs have fewer); older ones, those of other epochs and
     * those of the previous epoch without `previousCommittee` are ignored.
     */
    std::vector<codec::BlockHeader> recentCommitted;
    /**
     * The committee of the epoch before this one, when there was one: leader reputation reads
     * the signers of its certificates in `recentCommitted`.
     */
    std::optional<Committee> previousCommittee;

    /** The recovery data of a fresh chain: root = genesis block, genesis QC, zero safety data. */
    [[nodiscard]] static RecoveryData genesis(Committee committee, codec::Block genesisBlock,
                                              const ExecRecord& genesisState);
};

class CoreImpl;

/**
 * The SDBFT consensus core of one validator: a deterministic state machine, in one epoch at a
 * time (EpochChange moves it to the next). It has
 * no clock, threads, I/O or randomness; time arrives with each event and every output is an
 * effect for the driver to perform, in order (see docs/protocol.md).
 */
class Core {
  public:
    /**
     * Builds a core from its recovery data. `signer` is this validator's key; a signer that is not
     * a committee member yields a core that follows the chain without voting or proposing.
     * `rules` defaults to TwoChainSafetyRules. Fails with kInvalidArgument on inconsistent options
     * or recovery data (root or root QC of another epoch, unless the root is the committee's seed
     * block with the epoch's genesis QC; safety data of a later epoch; rootQc not certifying
     * root; t0Ms <= emptyBlockIntervalMs; no execution record; executed height above the root).
     */
    [[nodiscard]] static Result<Core> create(Options options, const RecoveryData& recovery,
                                             std::unique_ptr<Signer> signer,
                                             std::unique_ptr<SafetyRules> rules = nullptr);

    Core(Core&&) noexcept;
    Core& operator=(Core&&) noexcept;
    ~Core();

    /**
     * Handles one event and returns the effects to perform, in order. Never fails and never
     * crashes on arbitrary peer input: refused inputs yield a Rejected effect.
     */
    [[nodiscard]] Effects step(const Event& event);

    /** The round this validator is in: max(highest QC round, highest TC round) + 1. */
    [[nodiscard]] std::uint64_t currentRound() const;
    /** The highest QC held (its block is in the tree). */
    [[nodiscard]] const codec::QuorumCert& highestQc() const;
    /** The highest TC held, if any. */
    [[nodiscard]] const std::optional<codec::TimeoutCert>& highestTc() const;
    /** The safety data as last emitted in PersistSafety. */
    [[nodiscard]] const SafetyData& safetyData() const;
    /** The highest committed block. */
    [[nodiscard]] const codec::Block& committedRoot() const;
    /**
     * The height of the highest block this validator holds certified: the highest QC's block
     * (at or above the committed root).
     */
    [[nodiscard]] std::uint64_t certifiedHeight() const;
    /** The highest height reported by Executed (or recovered). */
    [[nodiscard]] std::uint64_t executedHeight() const;
    /** The committee of the epoch the core is in (it changes with EpochChange). */
    [[nodiscard]] const Committee& committee() const;

  private:
    explicit Core(std::unique_ptr<CoreImpl> impl);
    std::unique_ptr<CoreImpl> impl_;
};

}  // namespace gridledger::consensus
