#include "consensus_store.h"

#include <algorithm>
#include <limits>

#include <gridledger/ledger/columns.h>

namespace gridledger::node {
namespace {

constexpr storage::Column kColumn = ledger::kConsensusColumn;
constexpr std::string_view kSafetyKey = "safety";
constexpr std::string_view kTcKey = "tc";
// ‖ u64 height ‖ id → nothing: the block is in the blocks column (BlockStore::stageProposed).
// A database written before held the encoded block here, which still reads.
constexpr std::string_view kBlockPrefix = "block/";
constexpr std::string_view kQcPrefix = "qc/";  // ‖ u64 round ‖ block id

Bytes prefixed(std::string_view prefix, std::uint64_t number, const Hash256& id) {
    Bytes key(prefix.begin(), prefix.end());
    appendU64(key, number);
    append(key, id.view());
    return key;
}

bool hasPrefix(ByteView key, std::string_view prefix) {
    return key.size() >= prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), key.begin(),
                      [](char a, std::uint8_t b) { return static_cast<std::uint8_t>(a) == b; });
}

/**
 * Visits every record under `prefix` whose key number (the u64 after the prefix) is at least
 * `from` and below `to`, in key order, until `visit` fails. Seeking past the pruned numbers skips
 * their deletion markers, which a scan from the prefix alone would step over one by one; stopping
 * at `to` spares reading the records that stay.
 */
template <typename Visit>
Status forEach(const storage::KvStore& store, std::string_view prefix, std::uint64_t from,
               Visit visit, std::uint64_t to = std::numeric_limits<std::uint64_t>::max()) {
    Bytes start(prefix.begin(), prefix.end());
    appendU64(start, from);
    auto cursor = store.cursor(kColumn);
    for (cursor.seek(start); cursor.valid() && hasPrefix(cursor.key(), prefix); cursor.next()) {
        const ByteView key = cursor.key();
        if (key.size() >= prefix.size() + 8 && readU64(key.subspan(prefix.size())) >= to) {
            break;
        }
        GL_TRY(visit(key, cursor.value()));
    }
    return cursor.status();
}

Error corrupt(std::string_view what) {
    return Error{ErrorCode::kCorrupt, "stored consensus " + std::string(what) + " is corrupt"};
}

/** The height and id of a block's record, from its key. */
Result<std::pair<std::uint64_t, Hash256>> blockKeyParts(ByteView key) {
    if (key.size() != kBlockPrefix.size() + 8 + Hash256::size()) {
        return std::unexpected(corrupt("block key"));
    }
    GL_ASSIGN_OR_RETURN(id, Hash256::fromBytes(key.subspan(kBlockPrefix.size() + 8)));
    return std::pair{readU64(key.subspan(kBlockPrefix.size())), id};
}

}  // namespace

Status ConsensusStore::saveSafety(const consensus::SafetyData& data) {
    Bytes value;
    appendU64(value, data.epoch);
    appendU64(value, data.lastVotedRound);
    appendU64(value, data.oneChainRound);
    return store_.put(kColumn, asBytes(kSafetyKey), value, true);
}

Status ConsensusStore::saveBlock(const codec::Block& block) {
    auto batch = store_.batch();
    blocks_.stageProposed(batch, block);
    batch.put(kColumn, prefixed(kBlockPrefix, block.header.height, block.id), {});
    return store_.write(batch, false);
}

Result<std::optional<codec::Block>> ConsensusStore::readBlock(ByteView key, ByteView value) const {
    if (!value.empty()) {  // written before blocks went into the blocks column
        auto block = codec::decodeBlock(value);
        if (!block) {
            return std::unexpected(corrupt("block"));
        }
        return std::optional<codec::Block>(std::move(*block));
    }
    GL_ASSIGN_OR_RETURN(parts, blockKeyParts(key));
    return blocks_.storedBlock(parts.second);
}

Status ConsensusStore::saveQc(const codec::QuorumCert& qc) {
    return store_.put(kColumn, prefixed(kQcPrefix, qc.round, qc.blockId), codec::encodeQc(qc),
                      false);
}

Status ConsensusStore::saveTc(const codec::TimeoutCert& tc) {
    return store_.put(kColumn, asBytes(kTcKey), codec::encodeTc(tc), false);
}

Result<std::optional<consensus::SafetyData>> ConsensusStore::loadSafety() const {
    GL_ASSIGN_OR_RETURN(safety, store_.get(kColumn, asBytes(kSafetyKey)));
    if (!safety) {
        return std::optional<consensus::SafetyData>{};
    }
    if (safety->size() != 24) {
        return std::unexpected(corrupt("safety data"));
    }
    const ByteView bytes(*safety);
    return std::optional<consensus::SafetyData>{consensus::SafetyData{
        readU64(bytes), readU64(bytes.subspan(8)), readU64(bytes.subspan(16))}};
}

Result<StoredConsensus> ConsensusStore::load() const {
    StoredConsensus out;
    GL_ASSIGN_OR_RETURN(safety, loadSafety());
    out.safety = safety;
    const auto tc = store_.get(kColumn, asBytes(kTcKey));
    if (!tc) {
        return std::unexpected(tc.error());
    }
    if (tc->has_value()) {
        auto decoded = codec::decodeTc(**tc);
        if (!decoded) {
            return std::unexpected(corrupt("timeout certificate"));
        }
        out.highestTc = std::move(*decoded);
    }
    GL_TRY(forEach(store_, kBlockPrefix, 0, [&](ByteView key, ByteView value) -> Status {
        GL_ASSIGN_OR_RETURN(block, readBlock(key, value));
        if (!block) {
            return std::unexpected(corrupt("block (missing from the blocks column)"));
        }
        out.blocks.push_back(std::move(*block));
        return {};
    }));
    GL_TRY(forEach(store_, kQcPrefix, 0, [&out](ByteView, ByteView value) -> Status {
        auto qc = codec::decodeQc(value);
        if (!qc) {
            return std::unexpected(corrupt("quorum certificate"));
        }
        out.qcs.push_back(std::move(*qc));
        return {};
    }));
    return out;
}

Result<std::optional<codec::Block>> ConsensusStore::blockById(const Hash256& id) const {
    // One read: a held block's bytes are in the blocks column under its id.
    GL_ASSIGN_OR_RETURN(stored, blocks_.storedBlock(id));
    if (stored) {
        return stored;
    }
    // Only a record written before that holds its block itself: those are found by a scan.
    std::optional<codec::Block> found;
    GL_TRY(forEach(store_, kBlockPrefix, prunedHeight_.load(std::memory_order_relaxed),
                   [&](ByteView key, ByteView value) -> Status {
                       const ByteView keyId = key.subspan(kBlockPrefix.size() + 8);
                       if (found || value.empty() ||
                           !std::equal(keyId.begin(), keyId.end(), id.view().begin(),
                                       id.view().end())) {
                           return {};
                       }
                       GL_ASSIGN_OR_RETURN(block, readBlock(key, value));
                       found = std::move(block);
                       return {};
                   }));
    return found;
}

Status ConsensusStore::prune(std::uint64_t height, std::uint64_t round) {
    auto batch = store_.batch();
    const auto erase = [&batch](ByteView key, ByteView) -> Status {
        batch.erase(kColumn, key);
        return {};
    };
    // A committed block's bytes stay in the blocks column, where the ledger reads them; those of
    // a block that was not committed at its height go.
    const auto eraseBlock = [&](ByteView key, ByteView value) -> Status {
        batch.erase(kColumn, key);
        if (value.empty()) {
            GL_ASSIGN_OR_RETURN(parts, blockKeyParts(key));
            GL_ASSIGN_OR_RETURN(committed, blocks_.idAt(parts.first));
            if (committed != parts.second) {
                blocks_.stageDropProposed(batch, parts.second);
            }
        }
        return {};
    };
    const std::uint64_t fromHeight = prunedHeight_.load(std::memory_order_relaxed);
    const std::uint64_t fromRound = prunedRound_.load(std::memory_order_relaxed);
    GL_TRY(forEach(store_, kBlockPrefix, fromHeight, eraseBlock, height + 1));
    GL_TRY(forEach(store_, kQcPrefix, fromRound, erase, round));
    GL_TRY(store_.write(batch, false));
    prunedHeight_.store(std::max(fromHeight, height + 1), std::memory_order_relaxed);
    prunedRound_.store(std::max(fromRound, round), std::memory_order_relaxed);
    return {};
}

}  // namespace gridledger::node
