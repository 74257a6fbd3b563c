#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>

namespace gridledger::ledger {
namespace {

constexpr std::string_view kExecutedHeightKey = "executed_height";
constexpr std::string_view kFirstHeightKey = "first_height";
constexpr std::string_view kRootsPrefix = "roots/";
constexpr std::string_view kCommitProofPrefix = "commit_proof/";

Bytes heightKey(std::uint64_t height) {
    Bytes key;
    appendU64(key, height);
    return key;
}

Bytes prefixedHeightKey(std::string_view prefix, std::uint64_t height) {
    Bytes key(prefix.begin(), prefix.end());
    appendU64(key, height);
    return key;
}

Bytes rootsKey(std::uint64_t height) {
    return prefixedHeightKey(kRootsPrefix, height);
}

Bytes receiptKey(const TxLocation& where) {
    Bytes key;
    appendU64(key, where.height);
    appendU32(key, where.index);
    return key;
}

/**
 * Reads `key` and decodes it with `decode` (returning a Result or an optional): absent gives
 * std::nullopt, a value that does not decode gives kCorrupt naming `what`.
 */
template <typename Decode>
auto readDecoded(const storage::KvStore& store, storage::Column column, ByteView key,
                 std::string_view what, Decode decode)
    -> Result<std::optional<typename std::invoke_result_t<Decode, ByteView>::value_type>> {
    using Value = typename std::invoke_result_t<Decode, ByteView>::value_type;
    GL_ASSIGN_OR_RETURN(stored, store.get(column, key));
    if (!stored) {
        return std::optional<Value>();
    }
    auto decoded = decode(ByteView(*stored));
    if (!decoded) {
        return fail(ErrorCode::kCorrupt, "stored " + std::string(what) + " is corrupt");
    }
    return std::optional<Value>(std::move(*decoded));
}

/** A block's transaction receipts as one record: u32 count ‖ (u32 size ‖ encoded receipt)*. */
Bytes blockReceipts(std::span<const Bytes> encoded) {
    std::size_t size = 4;
    for (const Bytes& one : encoded) {
        size += 4 + one.size();
    }
    Bytes out;
    out.reserve(size);
    appendU32(out, static_cast<std::uint32_t>(encoded.size()));
    for (const Bytes& one : encoded) {
        appendU32(out, static_cast<std::uint32_t>(one.size()));
        append(out, one);
    }
    return out;
}

/** The encodings of the receipts in a blockReceipts record; kCorrupt if it does not parse. */
Result<std::vector<ByteView>> splitReceipts(ByteView record) {
    const auto corrupt = [] {
        return fail(ErrorCode::kCorrupt, "stored block receipts are corrupt");
    };
    if (record.size() < 4) {
        return corrupt();
    }
    const std::uint32_t count = readU32(record);
    std::vector<ByteView> out;
    out.reserve(std::min<std::size_t>(count, record.size() / 4));
    std::size_t at = 4;
    for (std::uint32_t i = 0; i < count; ++i) {
        if (record.size() - at < 4) {
            return corrupt();
        }
        const std::size_t size = readU32(record.subspan(at));
        at += 4;
        if (record.size() - at < size) {
            return corrupt();
        }
        out.push_back(record.subspan(at, size));
        at += size;
    }
    if (at != record.size()) {
        return corrupt();
    }
    return out;
}

Result<codec::Receipt> decodeStoredReceipt(ByteView encoded) {
    auto receipt = codec::decodeReceipt(encoded);
    if (!receipt) {
        return fail(ErrorCode::kCorrupt, "stored receipt is corrupt");
    }
    return receipt;
}

/** The receipt at `index` of a blockReceipts record: std::nullopt past its last. */
Result<std::optional<codec::Receipt>> receiptInRecord(ByteView record, std::uint32_t index) {
    GL_ASSIGN_OR_RETURN(encoded, splitReceipts(record));
    if (index >= encoded.size()) {
        return std::optional<codec::Receipt>();
    }
    GL_ASSIGN_OR_RETURN(receipt, decodeStoredReceipt(encoded[index]));
    return std::optional<codec::Receipt>(std::move(receipt));
}

/** Every receipt of a blockReceipts record, in order. */
Result<std::vector<codec::Receipt>> receiptsInRecord(ByteView record) {
    GL_ASSIGN_OR_RETURN(encoded, splitReceipts(record));
    std::vector<codec::Receipt> out;
    out.reserve(encoded.size());
    for (const ByteView one : encoded) {
        GL_ASSIGN_OR_RETURN(receipt, decodeStoredReceipt(one));
        out.push_back(std::move(receipt));
    }
    return out;
}

std::optional<std::uint64_t> decodeHeight(ByteView bytes) {
    if (bytes.size() != 8) {
        return std::nullopt;
    }
    return readU64(bytes);
}

}  // namespace

Status BlockStore::stageExecuted(storage::WriteBatch& batch, const codec::Block& block,
                                 const codec::QuorumCert& certifyingQc,
                                 std::span<const codec::Receipt> receipts,
                                 std::span<const Bytes> encodedReceipts,
                                 const ExecRoots& roots) const {
    if (encodedReceipts.size() != receipts.size()) {
        return fail(ErrorCode::kInvalidArgument, "every receipt needs its encoding");
    }
    for (std::size_t i = 0; i < receipts.size(); ++i) {
        if (receipts[i].index != i) {
            return fail(ErrorCode::kInvalidArgument, "receipts must be in transaction order");
        }
    }
    const std::uint64_t height = block.header.height;
    GL_ASSIGN_OR_RETURN(proposed, store_.read(kBlocksColumn, block.id.view(), [](ByteView) {}));
    if (!proposed) {
        batch.put(kBlocksColumn, block.id.view(), codec::encodeBlock(block));
    }
    batch.put(kHeightsColumn, heightKey(height), block.id.view());
    batch.put(kCertsColumn, heightKey(height), codec::encodeQc(certifyingQc));
    batch.put(kReceiptsColumn, heightKey(height), blockReceipts(encodedReceipts));
    for (std::size_t i = 0; i < receipts.size(); ++i) {
        const codec::Receipt& receipt = receipts[i];
        const TxLocation where{height, receipt.index};
        if (!isIndexed(receipt.code)) {
            continue;
        }
        // A transaction that paid its fee consumed its nonce here, so no earlier place of it was
        // indexed: every indexed failure before the fee (expired, bad signature, wrong chain, a
        // spent nonce) would fail it again, and a paid one would have spent the nonce.
        if (receipt.fee != 0) {
            batch.put(kTxIndexColumn, receipt.txHash.view(), receiptKey(where));
            continue;
        }
        GL_ASSIGN_OR_RETURN(first, store_.get(kTxIndexColumn, receipt.txHash.view()));
        if (!first) {
            batch.put(kTxIndexColumn, receipt.txHash.view(), receiptKey(where));
        }
    }
    stageRoots(batch, height, roots);
    return {};
}

void BlockStore::stageRoots(storage::WriteBatch& batch, std::uint64_t height,
                            const ExecRoots& roots) const {
    Bytes rootBytes;
    append(rootBytes, roots.stateRoot.view());
    append(rootBytes, roots.resultsRoot.view());
    batch.put(kMetaColumn, rootsKey(height), rootBytes);
    batch.put(kMetaColumn, asBytes(kExecutedHeightKey), heightKey(height));
}

void BlockStore::stageSystemReceipt(storage::WriteBatch& batch, std::uint64_t height,
                                    ByteView encodedReceipt) const {
    batch.put(kReceiptsColumn, receiptKey(TxLocation{height, kSystemReceiptIndex}), encodedReceipt);
}

void BlockStore::stageCommitProof(storage::WriteBatch& batch, std::uint64_t height,
                                  const codec::CommitProof& proof) const {
    batch.put(kMetaColumn, prefixedHeightKey(kCommitProofPrefix, height),
              codec::encodeCommitProof(proof));
}

Result<std::optional<codec::CommitProof>> BlockStore::commitProofAt(std::uint64_t height) const {
    return readDecoded(store_, kMetaColumn, prefixedHeightKey(kCommitProofPrefix, height),
                       "commit proof", codec::decodeCommitProof);
}

Result<std::optional<std::uint64_t>> BlockStore::executedHeight() const {
    return readDecoded(store_, kMetaColumn, asBytes(kExecutedHeightKey), "executed height",
                       decodeHeight);
}

void BlockStore::stageFirstHeight(storage::WriteBatch& batch, std::uint64_t height) const {
    batch.put(kMetaColumn, asBytes(kFirstHeightKey), heightKey(height));
}

Result<std::uint64_t> BlockStore::firstHeight() const {
    GL_ASSIGN_OR_RETURN(first, readDecoded(store_, kMetaColumn, asBytes(kFirstHeightKey),
                                           "first height", decodeHeight));
    return first.value_or(0);
}

Result<std::optional<codec::Block>> BlockStore::blockById(const Hash256& id) const {
    GL_ASSIGN_OR_RETURN(block, storedBlock(id));
    if (!block) {
        return std::optional<codec::Block>();
    }
    GL_ASSIGN_OR_RETURN(committed, idAt(block->header.height));
    if (committed != id) {
        return std::optional<codec::Block>();
    }
    return block;
}

Result<std::optional<Hash256>> BlockStore::idAt(std::uint64_t height) const {
    return readDecoded(store_, kHeightsColumn, heightKey(height), "height index",
                       Hash256::fromBytes);
}

void BlockStore::stageProposed(storage::WriteBatch& batch, const codec::Block& block) const {
    batch.put(kBlocksColumn, block.id.view(), codec::encodeBlock(block));
}

void BlockStore::stageDropProposed(storage::WriteBatch& batch, const Hash256& id) const {
    batch.erase(kBlocksColumn, id.view());
}

Result<std::optional<codec::Block>> BlockStore::storedBlock(const Hash256& id) const {
    return readDecoded(store_, kBlocksColumn, id.view(), "block", codec::decodeBlock);
}

Result<std::optional<codec::Block>> BlockStore::blockAt(std::uint64_t height) const {
    GL_ASSIGN_OR_RETURN(id, idAt(height));
    if (!id) {
        return std::optional<codec::Block>();
    }
    return storedBlock(*id);
}

Result<std::optional<codec::QuorumCert>> BlockStore::certAt(std::uint64_t height) const {
    return readDecoded(store_, kCertsColumn, heightKey(height), "certificate", codec::decodeQc);
}

Result<std::optional<Bytes>> BlockStore::rawBlockAt(std::uint64_t height) const {
    GL_ASSIGN_OR_RETURN(id, idAt(height));
    if (!id) {
        return std::optional<Bytes>();
    }
    return store_.get(kBlocksColumn, id->view());
}

Result<std::optional<Bytes>> BlockStore::rawCertAt(std::uint64_t height) const {
    return store_.get(kCertsColumn, heightKey(height));
}

Result<std::optional<ExecRoots>> BlockStore::rootsAt(std::uint64_t height) const {
    return readDecoded(store_, kMetaColumn, rootsKey(height), "roots",
                       [](ByteView bytes) -> std::optional<ExecRoots> {
                           if (bytes.size() != 64) {
                               return std::nullopt;
                           }
                           return ExecRoots{*Hash256::fromBytes(bytes.first(32)),
                                            *Hash256::fromBytes(bytes.subspan(32))};
                       });
}

Result<std::optional<TxLocation>> BlockStore::locateTx(const Hash256& txHash) const {
    return readDecoded(store_, kTxIndexColumn, txHash.view(), "tx index",
                       [](ByteView bytes) -> std::optional<TxLocation> {
                           if (bytes.size() != 12) {
                               return std::nullopt;
                           }
                           return TxLocation{readU64(bytes), readU32(bytes.subspan(8))};
                       });
}

Result<std::optional<codec::Receipt>> BlockStore::receiptAt(const TxLocation& where) const {
    if (where.index != kSystemReceiptIndex) {
        // In place: the block's record is read without a copy, and only this receipt decoded.
        Result<std::optional<codec::Receipt>> out = std::optional<codec::Receipt>();
        GL_ASSIGN_OR_RETURN(
            found, store_.read(kReceiptsColumn, heightKey(where.height), [&](ByteView record) {
                out = receiptInRecord(record, where.index);
            }));
        if (found) {
            return out;
        }
    }
    // The system receipt, and a transaction's receipt in a block stored before receipts were kept
    // one record per block.
    return readDecoded(store_, kReceiptsColumn, receiptKey(where), "receipt", codec::decodeReceipt);
}

Result<std::vector<codec::Receipt>> BlockStore::receiptsAt(std::uint64_t height) const {
    Result<std::vector<codec::Receipt>> out = std::vector<codec::Receipt>();
    GL_ASSIGN_OR_RETURN(found,
                        store_.read(kReceiptsColumn, heightKey(height),
                                    [&](ByteView record) { out = receiptsInRecord(record); }));
    if (found) {
        return out;
    }
    // A block stored before receipts were kept one record per block: one record per receipt.
    auto cursor = store_.cursor(kReceiptsColumn);
    for (cursor.seek(receiptKey(TxLocation{height, 0})); cursor.valid(); cursor.next()) {
        const ByteView key = cursor.key();
        if (key.size() != 12 || readU64(key) != height ||
            readU32(key.subspan(8)) == kSystemReceiptIndex) {
            break;
        }
        GL_ASSIGN_OR_RETURN(receipt, decodeStoredReceipt(cursor.value()));
        out->push_back(std::move(receipt));
    }
    GL_TRY(cursor.status());
    return out;
}

Result<std::optional<codec::Receipt>> BlockStore::systemReceiptAt(std::uint64_t height) const {
    return receiptAt(TxLocation{height, kSystemReceiptIndex});
}

}  // namespace gridledger::ledger
