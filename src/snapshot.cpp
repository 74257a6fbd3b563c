// State snapshots: the manifest, the file of proven chunks, and the checks of both
// (docs/snapshots.md).

#include "snapshot.h"

#include <array>
#include <cstring>
#include <fstream>
#include <string_view>

#include <gridledger/contracts/executor.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/columns.h>

#include "epochs.h"

namespace gridledger::node {
namespace {

namespace fs = std::filesystem;

/** "GLSNAP", a zero byte and the format: the first 8 bytes of every snapshot file. */
constexpr std::array<std::uint8_t, 8> kMagic = {'G', 'L', 'S', 'N', 'A', 'P', 0x00, 0x01};
constexpr std::size_t kMaxChainIdBytes = 0xffff;

Error malformed(const std::string& message) {
    return Error{ErrorCode::kMalformed, "snapshot manifest: " + message};
}

/** Reads the manifest's fields in order; each take fails once the bytes run out. */
class Reader {
  public:
    explicit Reader(ByteView bytes) : bytes_(bytes) {}

    std::optional<ByteView> take(std::size_t count) {
        if (bytes_.size() - offset_ < count) {
            return std::nullopt;
        }
        const ByteView out = bytes_.subspan(offset_, count);
        offset_ += count;
        return out;
    }

    /** A u32 length, then that many bytes. */
    std::optional<ByteView> sized() {
        const auto length = take(4);
        return length ? take(readU32(*length)) : std::nullopt;
    }

    [[nodiscard]] bool done() const { return offset_ == bytes_.size(); }

  private:
    ByteView bytes_;
    std::size_t offset_ = 0;
};

Hash256 hashAt(ByteView bytes) {
    Hash256 out;
    std::memcpy(out.data(), bytes.data(), Hash256::size());
    return out;
}

void appendSized(Bytes& out, ByteView bytes) {
    appendU32(out, static_cast<std::uint32_t>(bytes.size()));
    append(out, bytes);
}

Status writeAll(std::ofstream& out, ByteView bytes, const fs::path& file) {
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        return fail(ErrorCode::kIo, "cannot write " + file.string());
    }
    return {};
}

/** One length-prefixed part of a snapshot file; std::nullopt at a clean end of file. */
Result<std::optional<Bytes>> readPart(std::ifstream& in, const std::string& what) {
    std::array<std::uint8_t, 4> length{};
    in.read(reinterpret_cast<char*>(length.data()), length.size());
    if (in.gcount() == 0 && in.eof()) {
        return std::optional<Bytes>{};
    }
    if (in.gcount() != static_cast<std::streamsize>(length.size())) {
        return fail(ErrorCode::kMalformed, what + ": truncated length");
    }
    const std::uint32_t size = readU32(length);
    if (size > kMaxSnapshotPartBytes) {
        return fail(ErrorCode::kTooLarge, what + ": " + std::to_string(size) +
                                              " bytes, above the limit of " +
                                              std::to_string(kMaxSnapshotPartBytes));
    }
    Bytes part(size);
    in.read(reinterpret_cast<char*>(part.data()), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size)) {
        return fail(ErrorCode::kMalformed, what + ": truncated");
    }
    return std::optional<Bytes>{std::move(part)};
}

/** The lowest committed block above `height` that certifies its state and has a commit proof. */
Result<std::pair<codec::Block, codec::CommitProof>> anchorFor(const ledger::BlockStore& blocks,
                                                              std::uint64_t height,
                                                              std::uint64_t executedHeight) {
    for (std::uint64_t h = height + 1; h <= executedHeight; ++h) {
        GL_ASSIGN_OR_RETURN(block, blocks.blockAt(h));
        if (!block || block->header.execHeight > height) {
            break;
        }
        if (block->header.execHeight < height) {
            continue;
        }
        GL_ASSIGN_OR_RETURN(proof, blocks.commitProofAt(h));
        if (proof) {
            return std::make_pair(std::move(*block), std::move(*proof));
        }
    }
    return fail(ErrorCode::kNotFound,
                "no committed header with a commit proof certifies the state "
                "of height " +
                    std::to_string(height) + " in this ledger");
}

/** The highest height whose state a committed header with a stored commit proof certifies. */
Result<std::uint64_t> highestCertifiedHeight(const ledger::BlockStore& blocks,
                                             std::uint64_t executedHeight) {
    for (std::uint64_t h = executedHeight; h > 0; --h) {
        GL_ASSIGN_OR_RETURN(proof, blocks.commitProofAt(h));
        if (!proof) {
            continue;
        }
        GL_ASSIGN_OR_RETURN(block, blocks.blockAt(h));
        if (block) {
            return block->header.execHeight;
        }
    }
    return fail(ErrorCode::kNotFound, "no committed block above genesis has a commit proof yet");
}

}  // namespace

Bytes encodeManifest(const SnapshotManifest& manifest) {
    Bytes out;
    const ByteView chainId = asBytes(manifest.chainId);
    out.push_back(static_cast<std::uint8_t>(chainId.size() >> 8U));
    out.push_back(static_cast<std::uint8_t>(chainId.size() & 0xffU));
    append(out, chainId);
    append(out, manifest.genesisHash.view());
    appendU64(out, manifest.height);
    append(out, manifest.stateRoot.view());
    appendSized(out, manifest.anchor.headerBytes);
    appendSized(out, codec::encodeCommitProof(manifest.anchorProof));
    return out;
}

Result<SnapshotManifest> decodeManifest(ByteView bytes) {
    Reader in(bytes);
    SnapshotManifest manifest;
    const auto chainIdLength = in.take(2);
    if (!chainIdLength) {
        return std::unexpected(malformed("truncated"));
    }
    const auto chainId = in.take((std::size_t{(*chainIdLength)[0]} << 8U) | (*chainIdLength)[1]);
    if (!chainId) {
        return std::unexpected(malformed("truncated chain id"));
    }
    manifest.chainId = toString(*chainId);
    const auto fixed = in.take(Hash256::size() + 8 + Hash256::size());
    if (!fixed) {
        return std::unexpected(malformed("truncated"));
    }
    manifest.genesisHash = hashAt(*fixed);
    manifest.height = readU64(fixed->subspan(Hash256::size()));
    manifest.stateRoot = hashAt(fixed->subspan(Hash256::size() + 8));
    const auto header = in.sized();
    const auto proof = header ? in.sized() : std::nullopt;
    if (!proof) {
        return std::unexpected(malformed("truncated anchor"));
    }
    if (!in.done()) {
        return std::unexpected(malformed("trailing bytes"));
    }
    auto anchor = codec::makeProofHeader(Bytes(header->begin(), header->end()));
    if (!anchor) {
        return std::unexpected(malformed("anchor header: " + anchor.error().message));
    }
    manifest.anchor = std::move(*anchor);
    auto anchorProof = codec::decodeCommitProof(*proof);
    if (!anchorProof) {
        return std::unexpected(malformed("anchor commit proof: " + anchorProof.error().message));
    }
    manifest.anchorProof = std::move(*anchorProof);
    return manifest;
}

Result<SnapshotManifest> snapshotManifest(const ledger::BlockStore& blocks,
                                          const contracts::Genesis& genesis,
                                          std::uint64_t executedHeight,
                                          std::optional<std::uint64_t> height) {
    std::uint64_t at = 0;
    if (height) {
        at = *height;
    } else {
        GL_ASSIGN_OR_RETURN(highest, highestCertifiedHeight(blocks, executedHeight));
        at = highest;
    }
    if (at > executedHeight) {
        return fail(ErrorCode::kNotFound, "height " + std::to_string(at) +
                                              " is above the executed height " +
                                              std::to_string(executedHeight));
    }
    GL_ASSIGN_OR_RETURN(anchor, anchorFor(blocks, at, executedHeight));
    GL_ASSIGN_OR_RETURN(roots, blocks.rootsAt(at));
    if (!roots || roots->stateRoot != anchor.first.header.execStateRoot) {
        return fail(ErrorCode::kCorrupt, "the stored state root of height " + std::to_string(at) +
                                             " is not the one block " + anchor.first.id.hex() +
                                             " certifies");
    }
    SnapshotManifest manifest;
    manifest.chainId = genesis.chainId;
    manifest.genesisHash = contracts::genesisHash(genesis);
    manifest.height = at;
    manifest.stateRoot = roots->stateRoot;
    manifest.anchor =
        codec::ProofHeader{anchor.first.header, anchor.first.headerBytes, anchor.first.id};
    manifest.anchorProof = std::move(anchor.second);
    return manifest;
}

Result<SnapshotSummary> writeSnapshot(const ledger::StateTree& tree,
                                      const SnapshotManifest& manifest, std::size_t chunkKeys,
                                      const fs::path& file) {
    if (manifest.chainId.size() > kMaxChainIdBytes) {
        return fail(ErrorCode::kInvalidArgument, "chain id too long for a snapshot manifest");
    }
    std::error_code ec;
    if (fs::exists(file, ec)) {
        return fail(ErrorCode::kInvalidArgument, file.string() + " already exists");
    }
    GL_ASSIGN_OR_RETURN(root, tree.rootAt(manifest.height));
    if (root != manifest.stateRoot) {
        return fail(ErrorCode::kCorrupt, "the state tree's root of height " +
                                             std::to_string(manifest.height) +
                                             " is not the manifest's");
    }
    // Written beside the target and renamed once complete: a snapshot file is always whole.
    const fs::path partial = fs::path(file).concat(".partial");
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) {
        return fail(ErrorCode::kIo, "cannot create " + partial.string());
    }
    SnapshotSummary summary{
        manifest.height, manifest.stateRoot, manifest.anchor.header.epoch, 0, 0, 0};
    Bytes head(kMagic.begin(), kMagic.end());
    appendSized(head, encodeManifest(manifest));
    GL_TRY(writeAll(out, head, partial));
    summary.bytes += head.size();
    std::optional<Hash256> start = Hash256{};
    while (start) {
        GL_ASSIGN_OR_RETURN(range, tree.proveRange(*start, manifest.height, chunkKeys));
        // The proof is checked before it leaves: a damaged store makes no unusable backup.
        GL_TRY(ledger::verifyRange(manifest.stateRoot, range));
        Bytes part;
        appendSized(part, ledger::encodeRange(range));
        GL_TRY(writeAll(out, part, partial));
        summary.bytes += part.size();
        summary.entries += range.entries.size();
        ++summary.chunks;
        start = ledger::keyAfter(range.end);
    }
    out.close();
    if (!out) {
        return fail(ErrorCode::kIo, "cannot write " + partial.string());
    }
    fs::rename(partial, file, ec);
    if (ec) {
        return fail(ErrorCode::kIo, "cannot rename " + partial.string() + ": " + ec.message());
    }
    return summary;
}

Result<consensus::Committee> snapshotCommittee(const contracts::Genesis& genesis,
                                               const codec::Block& genesisBlock,
                                               std::uint64_t epoch,
                                               const std::optional<consensus::Committee>& local) {
    if (local && local->epoch() == epoch) {
        return *local;
    }
    if (epoch == genesisBlock.header.epoch) {
        return genesisCommittee(genesis, genesisBlock);
    }
    return fail(
        ErrorCode::kUnavailable,
        "the snapshot is anchored in epoch " + std::to_string(epoch) +
            ", whose committee only a ledger that executed into that epoch knows" +
            (local ? " (this home's ledger is in epoch " + std::to_string(local->epoch()) + ")"
                   : std::string(" (this home has no ledger)")));
}

Result<SnapshotSummary> readSnapshot(
    const fs::path& file, const contracts::Genesis& genesis,
    const std::function<Result<consensus::Committee>(std::uint64_t epoch)>& committeeFor,
    const std::function<Status(const ledger::StateRange&)>& onChunk) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        return fail(ErrorCode::kIo, "cannot read " + file.string());
    }
    std::array<std::uint8_t, kMagic.size()> magic{};
    in.read(reinterpret_cast<char*>(magic.data()), magic.size());
    if (in.gcount() != static_cast<std::streamsize>(magic.size()) || magic != kMagic) {
        return fail(ErrorCode::kMalformed,
                    file.string() + " is not a GridLedger snapshot (format 1)");
    }
    GL_ASSIGN_OR_RETURN(manifestBytes, readPart(in, "manifest"));
    if (!manifestBytes) {
        return fail(ErrorCode::kMalformed, "snapshot has no manifest");
    }
    GL_ASSIGN_OR_RETURN(manifest, decodeManifest(*manifestBytes));
    if (manifest.chainId != genesis.chainId ||
        manifest.genesisHash != contracts::genesisHash(genesis)) {
        return fail(ErrorCode::kWrongChainId, "snapshot of chain " + manifest.chainId +
                                                  " (genesis " + manifest.genesisHash.hex() +
                                                  "), not of this genesis");
    }
    const codec::BlockHeader& anchor = manifest.anchor.header;
    if (anchor.execHeight != manifest.height || anchor.execStateRoot != manifest.stateRoot) {
        return fail(ErrorCode::kInvalidBlock,
                    "the anchor header certifies height " + std::to_string(anchor.execHeight) +
                        " with root " + anchor.execStateRoot.hex() + ", the manifest claims " +
                        std::to_string(manifest.height) + " with " + manifest.stateRoot.hex());
    }
    GL_ASSIGN_OR_RETURN(committee, committeeFor(anchor.epoch));
    codec::Block anchorBlock;
    anchorBlock.header = anchor;
    anchorBlock.headerBytes = manifest.anchor.headerBytes;
    anchorBlock.id = manifest.anchor.id;
    GL_TRY(consensus::verifyCommitProof(anchorBlock, manifest.anchorProof, committee,
                                        contracts::signingDomainOf(genesis)));
    SnapshotSummary summary{manifest.height,
                            manifest.stateRoot,
                            anchor.epoch,
                            0,
                            0,
                            kMagic.size() + 4 + manifestBytes->size()};
    std::optional<Hash256> expected = Hash256{};
    while (expected) {
        const std::string what = "chunk " + std::to_string(summary.chunks);
        GL_ASSIGN_OR_RETURN(part, readPart(in, what));
        if (!part) {
            return fail(ErrorCode::kMalformed, "snapshot ends after " +
                                                   std::to_string(summary.chunks) +
                                                   " chunks, before its last key range");
        }
        auto range = ledger::decodeRange(*part);
        if (!range) {
            return fail(range.error().code, what + ": " + range.error().message);
        }
        if (range->start != *expected) {
            return fail(ErrorCode::kInvalidArgument,
                        what + " starts at " + range->start.hex() + ", not " + expected->hex());
        }
        if (auto verified = ledger::verifyRange(manifest.stateRoot, *range); !verified) {
            return fail(verified.error().code, what + ": " + verified.error().message);
        }
        GL_TRY(onChunk(*range));
        summary.bytes += 4 + part->size();
        summary.entries += range->entries.size();
        ++summary.chunks;
        expected = ledger::keyAfter(range->end);
    }
    if (in.peek() != std::char_traits<char>::eof()) {
        return fail(ErrorCode::kMalformed, "bytes follow the last chunk of the snapshot");
    }
    return summary;
}

Result<codec::Block> computeGenesisBlock(const contracts::Genesis& genesis,
                                         const fs::path& scratch) {
    if (fs::exists(scratch)) {
        return fail(ErrorCode::kInvalidArgument, scratch.string() + " already exists");
    }
    Result<codec::Block> out = fail(ErrorCode::kInternal, "genesis not computed");
    {
        GL_ASSIGN_OR_RETURN(
            store, storage::KvStore::open(scratch, ledger::columnNames(), ledger::storeOptions()));
        ledger::StateTree tree(*store, ledger::kStateNodesColumn, ledger::kStateValuesColumn);
        ledger::BlockStore blocks(*store);
        contracts::Executor executor(*store, tree, blocks, genesis.chainId,
                                     contracts::signingDomainOf(genesis));
        executor.setSyncedWrites(false);
        auto written = executor.commitGenesis(genesis);
        if (!written) {
            out = std::unexpected(written.error());
        } else if (auto block = blocks.blockAt(0); !block || !*block) {
            out = fail(ErrorCode::kInternal, "the scratch ledger holds no genesis block");
        } else {
            out = std::move(**block);
        }
    }
    std::error_code ec;
    fs::remove_all(scratch, ec);
    return out;
}

}  // namespace gridledger::node
