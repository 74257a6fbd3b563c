#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/ledger/chain_reader.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::ledger {

/** Where a committed transaction landed. */
struct TxLocation {
    std::uint64_t height = 0;
    std::uint32_t index = 0;
};

/**
 * The receipt index of a block's system receipt (the events of the chain's own work before the
 * block's transactions, such as epoch settlements). No transaction can have it: a block holds
 * fewer than 2^32 − 1 transactions.
 */
inline constexpr std::uint32_t kSystemReceiptIndex = 0xffffffffU;

/**
 * True iff a transaction whose receipt has `code` is indexed by its hash as committed at that
 * receipt's place (unless the hash is indexed already: the first place is kept). Not indexed: a
 * second copy in one block (kDuplicateTx), and a transaction refused for what may still change
 * (a nonce gap, a fee below the current fee, a balance that cannot pay it): it changed nothing,
 * and the same transaction may still execute in a later block.
 */
[[nodiscard]] constexpr bool isIndexed(ErrorCode code) {
    return code != ErrorCode::kDuplicateTx && code != ErrorCode::kNonceGap &&
           code != ErrorCode::kFeeTooLow && code != ErrorCode::kInsufficientFee;
}

/** The roots after executing the block at some height. */
struct ExecRoots {
    Hash256 stateRoot;
    Hash256 resultsRoot;

    bool operator==(const ExecRoots&) const = default;
};

/**
 * Committed blocks, their certificates, receipts and the executed height. Writes go into a
 * caller-owned batch so that one block's block, receipts, state and height land together.
 */
class BlockStore final : public ChainReader {
  public:
    explicit BlockStore(storage::KvStore& store) : store_(store) {}

    /**
     * Stages a committed, executed block with its certifying QC, receipts and roots, and indexes
     * each receipt's transaction that isIndexed and not indexed yet (the index keeps a hash's
     * first place: a later copy of a committed transaction fails with a receipt of its own). The
     * receipts go into one record for the block, in transaction order (receipts[i].index is i).
     * `encodedReceipts[i]` is codec::encodeReceipt(receipts[i]), made once by the caller, which
     * also hashes it into the results root. A receipt with a fee paid is indexed without reading
     * the index: its transaction spent its nonce in this block, so no earlier place of it can have
     * been indexed. kInvalidArgument when the two lists differ in length or a receipt is out of
     * order; kStorage when the index or the blocks cannot be read; the batch may then hold part
     * of the block. A block already stored under its id (stageProposed) is not written again.
     */
    [[nodiscard]] Status stageExecuted(storage::WriteBatch& batch, const codec::Block& block,
                                       const codec::QuorumCert& certifyingQc,
                                       std::span<const codec::Receipt> receipts,
                                       std::span<const Bytes> encodedReceipts,
                                       const ExecRoots& roots) const;

    /**
     * Stages the roots of the block at `height` and makes it the executed height, as
     * stageExecuted does, without the block, its certificate, receipts or index: for a ledger
     * that keeps the state alone (Executor::setKeepsBlocks).
     */
    void stageRoots(storage::WriteBatch& batch, std::uint64_t height, const ExecRoots& roots) const;

    /**
     * Stages the system receipt of the block at `height`, encoded (codec::encodeReceipt), under
     * (height, kSystemReceiptIndex). It is not indexed by tx hash: no transaction carries it.
     */
    void stageSystemReceipt(storage::WriteBatch& batch, std::uint64_t height,
                            ByteView encodedReceipt) const;

    /**
     * Stages the commit proof of the committed block at `height` (a node serves committed blocks
     * to peers up to a height it holds a proof for).
     */
    void stageCommitProof(storage::WriteBatch& batch, std::uint64_t height,
                          const codec::CommitProof& proof) const;

    /**
     * Stages the first height of a ledger started from a state snapshot of that height: it holds
     * the genesis block and every block from that height on, and the state of those heights.
     */
    void stageFirstHeight(storage::WriteBatch& batch, std::uint64_t height) const;
    /** The height from which on this ledger holds every block: 0 unless started from a snapshot. */
    [[nodiscard]] Result<std::uint64_t> firstHeight() const;

    [[nodiscard]] Result<std::optional<std::uint64_t>> executedHeight() const override;
    [[nodiscard]] Result<std::optional<codec::Block>> blockAt(std::uint64_t height) const override;
    /** The committed block `id`; std::nullopt for one only proposed (stageProposed). */
    [[nodiscard]] Result<std::optional<codec::Block>> blockById(const Hash256& id) const;
    /** The id of the committed block at `height`; std::nullopt when none is stored there. */
    [[nodiscard]] Result<std::optional<Hash256>> idAt(std::uint64_t height) const;
    /**
     * Stages `block` under its id before it is committed (a proposed block that the consensus
     * store keeps), so that a block is written once: stageExecuted finds it there and does not
     * write it again. Until it is committed, blockById and blockAt do not give it.
     */
    void stageProposed(storage::WriteBatch& batch, const codec::Block& block) const;
    /** Stages the removal of a proposed block that was not committed (stageProposed). */
    void stageDropProposed(storage::WriteBatch& batch, const Hash256& id) const;
    /** The block stored under `id`, committed or only proposed. */
    [[nodiscard]] Result<std::optional<codec::Block>> storedBlock(const Hash256& id) const;
    [[nodiscard]] Result<std::optional<codec::QuorumCert>> certAt(std::uint64_t height) const;
    /**
     * The stored bytes of the block at `height` and of its certifying QC, exactly as written
     * (not decoded: an auditor decodes and checks them itself); std::nullopt when absent.
     */
    [[nodiscard]] Result<std::optional<Bytes>> rawBlockAt(std::uint64_t height) const;
    [[nodiscard]] Result<std::optional<Bytes>> rawCertAt(std::uint64_t height) const;
    [[nodiscard]] Result<std::optional<codec::CommitProof>> commitProofAt(
        std::uint64_t height) const override;
    [[nodiscard]] Result<std::optional<ExecRoots>> rootsAt(std::uint64_t height) const;
    [[nodiscard]] Result<std::optional<TxLocation>> locateTx(const Hash256& txHash) const;
    /** The receipt at `where` (its place in the block's record, or the system receipt);
     * std::nullopt past the block's last receipt; kCorrupt for a record that does not parse. */
    [[nodiscard]] Result<std::optional<codec::Receipt>> receiptAt(const TxLocation& where) const;
    /** Every transaction receipt of the block at `height`, in transaction order (none for a
     * height not stored); kCorrupt for a record that does not parse. */
    [[nodiscard]] Result<std::vector<codec::Receipt>> receiptsAt(std::uint64_t height) const;
    /** The system receipt of the block at `height`; std::nullopt when the block had none. */
    [[nodiscard]] Result<std::optional<codec::Receipt>> systemReceiptAt(std::uint64_t height) const;

  private:
    storage::KvStore& store_;
};

}  // namespace gridledger::ledger
