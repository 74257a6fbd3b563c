// State snapshots: the manifest, the file of proven chunks, and the checks of both
// (docs/snapshots.md).

#include "snapshot.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <string_view>

#include <gridledger/contracts/executor.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/columns.h>

#include "block_sync.h"
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

Status sameChain(const SnapshotManifest& manifest, const contracts::Genesis& genesis) {
    if (manifest.chainId != genesis.chainId ||
        manifest.genesisHash != contracts::genesisHash(genesis)) {
        return fail(ErrorCode::kWrongChainId, "snapshot of chain " + manifest.chainId +
                                                  " (genesis " + manifest.genesisHash.hex() +
                                                  "), not of this genesis");
    }
    return {};
}

}  // namespace

Result<CertifiedBase> verifyManifest(const SnapshotManifest& manifest,
                                     const contracts::Genesis& genesis,
                                     const consensus::Committee& committee) {
    GL_TRY(sameChain(manifest, genesis));
    const codec::BlockHeader& anchor = manifest.anchor.header;
    if (anchor.execHeight != manifest.height || anchor.execStateRoot != manifest.stateRoot) {
        return fail(ErrorCode::kInvalidBlock,
                    "the anchor header certifies height " + std::to_string(anchor.execHeight) +
                        " with root " + anchor.execStateRoot.hex() + ", the manifest claims " +
                        std::to_string(manifest.height) + " with " + manifest.stateRoot.hex());
    }
    const std::string domain = contracts::signingDomainOf(genesis);
    codec::Block anchorBlock;
    anchorBlock.header = anchor;
    anchorBlock.headerBytes = manifest.anchor.headerBytes;
    anchorBlock.id = manifest.anchor.id;
    GL_TRY(consensus::verifyCommitProof(anchorBlock, manifest.anchorProof, committee, domain));
    // Base, the headers between and the anchor form one chain: the anchor's commit makes them
    // all committed.
    const codec::BlockHeader& base = manifest.base.header;
    if (base.height != manifest.height) {
        return fail(ErrorCode::kInvalidBlock, "the base block is at height " +
                                                  std::to_string(base.height) + ", not " +
                                                  std::to_string(manifest.height));
    }
    if (base.epoch != anchor.epoch) {
        return fail(ErrorCode::kUnavailable,
                    "an epoch change lies between the base block and the anchor");
    }
    // The base block is stored and served as it comes: its author's signature too.
    if (auto signed_ = consensus::verifyProposal(manifest.base, committee, domain); !signed_) {
        return fail(ErrorCode::kInvalidBlock, "the base block: " + signed_.error().message);
    }
    Hash256 parent = manifest.base.id;
    std::uint64_t height = base.height;
    std::optional<codec::QuorumCert> certifying;
    auto link = [&](const codec::BlockHeader& header, const Hash256& id) -> Status {
        if (header.parentId != parent || header.height != height + 1) {
            return fail(ErrorCode::kInvalidBlock, "the block at height " +
                                                      std::to_string(height + 1) +
                                                      " does not follow the one below it");
        }
        if (!certifying) {
            certifying = header.qc;
        }
        parent = id;
        ++height;
        return {};
    };
    for (const codec::ProofHeader& header : manifest.between) {
        GL_TRY(link(header.header, header.id));
    }
    GL_TRY(link(anchor, manifest.anchor.id));
    if (!certifying || certifying->blockId != manifest.base.id) {
        return fail(ErrorCode::kInvalidCertificate,
                    "the QC above the base block does not certify it");
    }
    GL_TRY(consensus::verifyQuorumCert(*certifying, committee, domain));
    return CertifiedBase{*certifying, anchor.execResultsRoot};
}

Bytes encodeManifest(const SnapshotManifest& manifest) {
    Bytes out;
    const ByteView chainId = asBytes(manifest.chainId);
    out.push_back(static_cast<std::uint8_t>(chainId.size() >> 8U));
    out.push_back(static_cast<std::uint8_t>(chainId.size() & 0xffU));
    append(out, chainId);
    append(out, manifest.genesisHash.view());
    appendU64(out, manifest.height);
    append(out, manifest.stateRoot.view());
    appendSized(out, codec::encodeBlock(manifest.base));
    appendU32(out, static_cast<std::uint32_t>(manifest.between.size()));
    for (const codec::ProofHeader& header : manifest.between) {
        appendSized(out, header.headerBytes);
    }
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
    const auto base = in.sized();
    if (!base) {
        return std::unexpected(malformed("truncated base block"));
    }
    auto baseBlock = codec::decodeBlock(*base);
    if (!baseBlock) {
        return std::unexpected(malformed("base block: " + baseBlock.error().message));
    }
    manifest.base = std::move(*baseBlock);
    const auto count = in.take(4);
    if (!count || readU32(*count) > codec::kMaxCommitProofPath) {
        return std::unexpected(malformed("truncated or too many headers between base and anchor"));
    }
    for (std::uint32_t i = readU32(*count); i > 0; --i) {
        const auto between = in.sized();
        if (!between) {
            return std::unexpected(malformed("truncated header between base and anchor"));
        }
        auto header = codec::makeProofHeader(Bytes(between->begin(), between->end()));
        if (!header) {
            return std::unexpected(
                malformed("header between base and anchor: " + header.error().message));
        }
        manifest.between.push_back(std::move(*header));
    }
    const auto header = in.sized();
    const auto proof = header ? in.sized() : std::nullopt;
    if (!header || !proof) {
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
    if (at == 0) {
        return fail(ErrorCode::kInvalidArgument,
                    "height 0 is the genesis state, which every node computes itself");
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
    GL_ASSIGN_OR_RETURN(base, blocks.blockAt(at));
    if (!base) {
        return fail(ErrorCode::kCorrupt, "no stored block at height " + std::to_string(at));
    }
    manifest.base = std::move(*base);
    for (std::uint64_t h = at + 1; h < anchor.first.header.height; ++h) {
        GL_ASSIGN_OR_RETURN(between, blocks.blockAt(h));
        if (!between) {
            return fail(ErrorCode::kCorrupt, "no stored block at height " + std::to_string(h));
        }
        manifest.between.push_back(
            codec::ProofHeader{between->header, between->headerBytes, between->id});
    }
    manifest.anchor =
        codec::ProofHeader{anchor.first.header, anchor.first.headerBytes, anchor.first.id};
    manifest.anchorProof = std::move(anchor.second);
    return manifest;
}

Result<SnapshotManifest> genesisVerifiableManifest(const ledger::BlockStore& blocks,
                                                   const contracts::Genesis& genesis,
                                                   std::uint64_t executedHeight) {
    GL_ASSIGN_OR_RETURN(genesisBlock, blocks.blockAt(0));
    if (!genesisBlock) {
        return fail(ErrorCode::kCorrupt, "the ledger holds no genesis block");
    }
    GL_ASSIGN_OR_RETURN(last, lastBlockOfEpoch(blocks, genesisBlock->header.epoch, executedHeight));
    const std::uint64_t bound = last ? last->header.height : executedHeight;
    GL_ASSIGN_OR_RETURN(height, highestCertifiedHeight(blocks, bound));
    return snapshotManifest(blocks, genesis, executedHeight, height);
}

Result<SnapshotWriter> SnapshotWriter::create(const fs::path& file,
                                              const SnapshotManifest& manifest) {
    if (manifest.chainId.size() > kMaxChainIdBytes) {
        return fail(ErrorCode::kInvalidArgument, "chain id too long for a snapshot manifest");
    }
    std::error_code ec;
    if (fs::exists(file, ec)) {
        return fail(ErrorCode::kInvalidArgument, file.string() + " already exists");
    }
    SnapshotWriter writer;
    writer.file_ = file;
    writer.partial_ = fs::path(file).concat(".partial");
    writer.out_ =
        std::make_unique<std::ofstream>(writer.partial_, std::ios::binary | std::ios::trunc);
    if (!*writer.out_) {
        return fail(ErrorCode::kIo, "cannot create " + writer.partial_.string());
    }
    writer.summary_ =
        SnapshotSummary{manifest.height, manifest.stateRoot, manifest.anchor.header.epoch, 0, 0, 0};
    Bytes head(kMagic.begin(), kMagic.end());
    appendSized(head, encodeManifest(manifest));
    GL_TRY(writeAll(*writer.out_, head, writer.partial_));
    writer.summary_.bytes += head.size();
    return writer;
}

Status SnapshotWriter::add(const ledger::StateRange& range) {
    Bytes part;
    appendSized(part, ledger::encodeRange(range));
    GL_TRY(writeAll(*out_, part, partial_));
    summary_.bytes += part.size();
    summary_.entries += range.entries.size();
    ++summary_.chunks;
    return {};
}

Result<SnapshotSummary> SnapshotWriter::finish() {
    out_->close();
    if (!*out_) {
        return fail(ErrorCode::kIo, "cannot write " + partial_.string());
    }
    std::error_code ec;
    fs::rename(partial_, file_, ec);
    if (ec) {
        return fail(ErrorCode::kIo, "cannot rename " + partial_.string() + ": " + ec.message());
    }
    return summary_;
}

SnapshotWriter::~SnapshotWriter() {
    if (out_ && out_->is_open()) {
        out_->close();
        std::error_code ec;
        fs::remove(partial_, ec);
    }
}

Result<SnapshotSummary> writeSnapshot(const ledger::StateTree& tree,
                                      const SnapshotManifest& manifest, std::size_t chunkKeys,
                                      const fs::path& file) {
    GL_ASSIGN_OR_RETURN(root, tree.rootAt(manifest.height));
    if (root != manifest.stateRoot) {
        return fail(ErrorCode::kCorrupt, "the state tree's root of height " +
                                             std::to_string(manifest.height) +
                                             " is not the manifest's");
    }
    GL_ASSIGN_OR_RETURN(writer, SnapshotWriter::create(file, manifest));
    std::optional<Hash256> start = Hash256{};
    while (start) {
        GL_ASSIGN_OR_RETURN(range, tree.proveRange(*start, manifest.height, chunkKeys));
        // The proof is checked before it leaves: a damaged store makes no unusable backup.
        GL_TRY(ledger::verifyRange(manifest.stateRoot, range));
        GL_TRY(writer.add(range));
        start = ledger::keyAfter(range.end);
    }
    return writer.finish();
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
    const std::function<Status(const SnapshotManifest&, const CertifiedBase&)>& onManifest,
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
    GL_TRY(sameChain(manifest, genesis));
    GL_ASSIGN_OR_RETURN(committee, committeeFor(manifest.anchor.header.epoch));
    GL_ASSIGN_OR_RETURN(base, verifyManifest(manifest, genesis, committee));
    GL_TRY(onManifest(manifest, base));
    SnapshotSummary summary{manifest.height,
                            manifest.stateRoot,
                            manifest.anchor.header.epoch,
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

namespace {

/** A new ledger with `genesis` committed: where an import starts, and a genesis block's scratch. */
struct GenesisLedger {
    std::unique_ptr<storage::KvStore> store;
    std::unique_ptr<ledger::StateTree> tree;
    std::unique_ptr<ledger::BlockStore> blocks;
    codec::Block genesisBlock;
};

Result<GenesisLedger> openGenesisLedger(const fs::path& dir, const storage::KvOptions& options,
                                        const contracts::Genesis& genesis) {
    GenesisLedger out;
    GL_ASSIGN_OR_RETURN(store, storage::KvStore::open(dir, ledger::columnNames(), options));
    out.store = std::move(store);
    out.tree = std::make_unique<ledger::StateTree>(*out.store, ledger::kStateNodesColumn,
                                                   ledger::kStateValuesColumn);
    out.blocks = std::make_unique<ledger::BlockStore>(*out.store);
    contracts::Executor executor(*out.store, *out.tree, *out.blocks, genesis.chainId,
                                 contracts::signingDomainOf(genesis));
    GL_TRY(executor.commitGenesis(genesis));
    GL_ASSIGN_OR_RETURN(block, out.blocks->blockAt(0));
    if (!block) {
        return fail(ErrorCode::kInternal, "the new ledger holds no genesis block");
    }
    out.genesisBlock = std::move(*block);
    return out;
}

/** importSnapshot's work once `chainDir` is created; the caller removes it on error. */
Result<SnapshotSummary> importInto(const fs::path& file, const contracts::Genesis& genesis,
                                   const fs::path& chainDir) {
    GL_ASSIGN_OR_RETURN(chain, openGenesisLedger(chainDir, ledger::storeOptions(), genesis));
    ledger::StateTree& tree = *chain.tree;
    ledger::BlockStore& blocks = *chain.blocks;
    std::optional<SnapshotManifest> manifest;
    CertifiedBase base;
    std::vector<ledger::TreeUpdate> updates;
    GL_ASSIGN_OR_RETURN(
        summary, readSnapshot(
                     file, genesis,
                     [&](std::uint64_t epoch) {
                         return snapshotCommittee(genesis, chain.genesisBlock, epoch, std::nullopt);
                     },
                     [&](const SnapshotManifest& read, const CertifiedBase& certified) -> Status {
                         if (read.height == 0) {
                             return fail(
                                 ErrorCode::kInvalidArgument,
                                 "a snapshot of height 0 is the genesis state: start from genesis");
                         }
                         manifest = read;
                         base = certified;
                         return {};
                     },
                     [&](const ledger::StateRange& range) -> Status {
                         for (const ledger::StateEntry& entry : range.entries) {
                             updates.push_back(ledger::TreeUpdate{entry.key, entry.value});
                         }
                         return {};
                     }));
    // The snapshot is the whole state: genesis keys it does not hold were deleted since.
    Hash256 highest;
    std::fill_n(highest.data(), Hash256::size(), std::uint8_t{0xff});
    GL_ASSIGN_OR_RETURN(genesisKeys, tree.keysBetween(Hash256{}, highest, 0));
    const std::size_t held = updates.size();
    for (const Hash256& key : genesisKeys) {
        const auto found = std::lower_bound(
            updates.begin(), updates.begin() + static_cast<std::ptrdiff_t>(held), key,
            [](const ledger::TreeUpdate& update, const Hash256& k) { return update.key < k; });
        if (found == updates.begin() + static_cast<std::ptrdiff_t>(held) || found->key != key) {
            updates.push_back(ledger::TreeUpdate{key, std::nullopt});
        }
    }
    if (!manifest) {
        return fail(ErrorCode::kInternal, "the snapshot was read without its manifest");
    }
    auto batch = chain.store->batch();
    GL_ASSIGN_OR_RETURN(root, tree.apply(manifest->height, updates, batch));
    if (root != manifest->stateRoot) {
        return fail(ErrorCode::kInternal, "the imported state has root " + root.hex() + ", not " +
                                              manifest->stateRoot.hex());
    }
    GL_TRY(blocks.stageExecuted(batch, manifest->base, base.certifyingQc, {}, {},
                                ledger::ExecRoots{manifest->stateRoot, base.resultsRoot}));
    blocks.stageFirstHeight(batch, manifest->height);
    GL_TRY(chain.store->write(batch, true));
    return summary;
}

}  // namespace

Result<SnapshotSummary> importSnapshot(const fs::path& file, const contracts::Genesis& genesis,
                                       const fs::path& chainDir) {
    if (fs::exists(chainDir)) {
        return fail(ErrorCode::kInvalidArgument,
                    chainDir.string() + " already holds a ledger: import needs a new home");
    }
    std::error_code created;
    fs::create_directories(chainDir.parent_path(), created);
    auto imported = importInto(file, genesis, chainDir);
    if (!imported) {
        std::error_code ec;
        fs::remove_all(chainDir, ec);
    }
    return imported;
}

Result<codec::Block> computeGenesisBlock(const contracts::Genesis& genesis) {
    // A scratch ledger in memory: creating one on disk synced a file for each of its columns.
    storage::KvOptions options = ledger::storeOptions();
    options.inMemory = true;
    GL_ASSIGN_OR_RETURN(chain, openGenesisLedger("/gridledger-genesis", options, genesis));
    return std::move(chain.genesisBlock);
}

}  // namespace gridledger::node
