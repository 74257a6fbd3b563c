#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>

namespace gridledger::ledger {
namespace {

constexpr std::string_view kExecutedHeightKey = "executed_height";
constexpr std::string_view kRootsPrefix = "roots/";

Bytes heightKey(std::uint64_t height) {
    Bytes key;
    appendU64(key, height);
    return key;
}

Bytes rootsKey(std::uint64_t height) {
    Bytes key(kRootsPrefix.begin(), kRootsPrefix.end());
    appendU64(key, height);
    return key;
}

Bytes receiptKey(const TxLocation& where) {
    Bytes key;
    appendU64(key, where.height);
    appendU32(key, where.index);
    return key;
}

Error corrupt(std::string_view what) {
    return Error{ErrorCode::kCorrupt, "stored " + std::string(what) + " is corrupt"};
}

}  // namespace

void BlockStore::stageExecuted(storage::WriteBatch& batch, const codec::Block& block,
                               const codec::QuorumCert& certifyingQc,
                               const std::vector<codec::Receipt>& receipts,
                               const ExecRoots& roots) const {
    const std::uint64_t height = block.header.height;
    batch.put(kBlocksColumn, block.id.view(), codec::encodeBlock(block));
    batch.put(kHeightsColumn, heightKey(height), block.id.view());
    batch.put(kCertsColumn, heightKey(height), codec::encodeQc(certifyingQc));
    for (const auto& receipt : receipts) {
        const TxLocation where{height, receipt.index};
        batch.put(kReceiptsColumn, receiptKey(where), codec::encodeReceipt(receipt));
        // A transaction is indexed where it first executed; a replayed copy in a later block
        // only fails there and keeps the original location.
        if (receipt.code != ErrorCode::kDuplicateTx) {
            batch.put(kTxIndexColumn, receipt.txHash.view(), receiptKey(where));
        }
    }
    Bytes rootBytes;
    append(rootBytes, roots.stateRoot.view());
    append(rootBytes, roots.resultsRoot.view());
    batch.put(kMetaColumn, rootsKey(height), rootBytes);
    batch.put(kMetaColumn, asBytes(kExecutedHeightKey), heightKey(height));
}

Result<std::optional<std::uint64_t>> BlockStore::executedHeight() const {
    GL_ASSIGN_OR_RETURN(value, store_.get(kMetaColumn, asBytes(kExecutedHeightKey)));
    if (!value) {
        return std::optional<std::uint64_t>();
    }
    if (value->size() != 8) {
        return std::unexpected(corrupt("executed height"));
    }
    return std::optional<std::uint64_t>(readU64(*value));
}

Result<std::optional<codec::Block>> BlockStore::blockById(const Hash256& id) const {
    GL_ASSIGN_OR_RETURN(value, store_.get(kBlocksColumn, id.view()));
    if (!value) {
        return std::optional<codec::Block>();
    }
    auto block = codec::decodeBlock(*value);
    if (!block) {
        return std::unexpected(corrupt("block"));
    }
    return std::optional<codec::Block>(std::move(*block));
}

Result<std::optional<codec::Block>> BlockStore::blockAt(std::uint64_t height) const {
    GL_ASSIGN_OR_RETURN(id, store_.get(kHeightsColumn, heightKey(height)));
    if (!id) {
        return std::optional<codec::Block>();
    }
    auto hash = Hash256::fromBytes(*id);
    if (!hash) {
        return std::unexpected(corrupt("height index"));
    }
    return blockById(*hash);
}

Result<std::optional<codec::QuorumCert>> BlockStore::certAt(std::uint64_t height) const {
    GL_ASSIGN_OR_RETURN(value, store_.get(kCertsColumn, heightKey(height)));
    if (!value) {
        return std::optional<codec::QuorumCert>();
    }
    auto qc = codec::decodeQc(*value);
    if (!qc) {
        return std::unexpected(corrupt("certificate"));
    }
    return std::optional<codec::QuorumCert>(std::move(*qc));
}

Result<std::optional<ExecRoots>> BlockStore::rootsAt(std::uint64_t height) const {
    GL_ASSIGN_OR_RETURN(value, store_.get(kMetaColumn, rootsKey(height)));
    if (!value) {
        return std::optional<ExecRoots>();
    }
    if (value->size() != 64) {
        return std::unexpected(corrupt("roots"));
    }
    const ByteView bytes(*value);
    ExecRoots roots;
    roots.stateRoot = *Hash256::fromBytes(bytes.first(32));
    roots.resultsRoot = *Hash256::fromBytes(bytes.subspan(32));
    return std::optional<ExecRoots>(roots);
}

Result<std::optional<TxLocation>> BlockStore::locateTx(const Hash256& txHash) const {
    GL_ASSIGN_OR_RETURN(value, store_.get(kTxIndexColumn, txHash.view()));
    if (!value) {
        return std::optional<TxLocation>();
    }
    if (value->size() != 12) {
        return std::unexpected(corrupt("tx index"));
    }
    const ByteView bytes(*value);
    return std::optional<TxLocation>(TxLocation{readU64(bytes), readU32(bytes.subspan(8))});
}

Result<std::optional<codec::Receipt>> BlockStore::receiptAt(const TxLocation& where) const {
    GL_ASSIGN_OR_RETURN(value, store_.get(kReceiptsColumn, receiptKey(where)));
    if (!value) {
        return std::optional<codec::Receipt>();
    }
    auto receipt = codec::decodeReceipt(*value);
    if (!receipt) {
        return std::unexpected(corrupt("receipt"));
    }
    return std::optional<codec::Receipt>(std::move(*receipt));
}

}  // namespace gridledger::ledger
