#include "state_tree_node.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include <gridledger/crypto/sha256.h>

namespace gridledger::ledger::tree {
namespace {

constexpr std::string_view kLeafDomain = "gridledger/state/leaf";
constexpr std::string_view kNodeDomain = "gridledger/state/node";
static_assert(kLeafDomain.size() == kNodeDomain.size());

constexpr std::uint8_t kLeafTag = 0x01;
constexpr std::uint8_t kInternalTag = 0x02;
constexpr std::uint8_t kDeltaTag = 0x03;
constexpr std::size_t kLeafNodeSize = 1 + 32 + 32;
constexpr std::size_t kInternalHeaderSize = 1 + 2 + 2;
constexpr std::size_t kChildSize = 8 + 32;
constexpr std::size_t kDeltaHeaderSize = 1 + 8 + 2 + 2 + 2;
constexpr std::size_t kRootRecordSize = 1 + 8 + 32;

constexpr std::uint8_t kTombstone = 0x00;
constexpr std::uint8_t kPresent = 0x01;

using Children = std::array<std::optional<ChildRef>, kRadix>;

/** SHA-256(domain ‖ a ‖ b) over one stack buffer: the hot path of every update. */
Hash256 hashDomain(std::string_view domain, const Hash256& a, const Hash256& b) {
    std::array<std::uint8_t, kLeafDomain.size() + 64> buffer{};
    std::memcpy(buffer.data(), domain.data(), domain.size());
    std::memcpy(buffer.data() + domain.size(), a.data(), 32);
    std::memcpy(buffer.data() + domain.size() + 32, b.data(), 32);
    return crypto::sha256(buffer);
}

struct RangeScan {
    std::size_t count = 0;
    std::size_t last = 0;
};

RangeScan scanRange(const Children& children, std::size_t lo, std::size_t width) {
    RangeScan scan;
    for (std::size_t i = lo; i < lo + width; ++i) {
        if (children[i]) {
            ++scan.count;
            scan.last = i;
        }
    }
    return scan;
}

bool aloneLeaf(const Children& children, const RangeScan& scan) {
    return scan.count == 1 && children[scan.last]->isLeaf;
}

Hash256 hashRange(const Children& children, std::size_t lo, std::size_t width) {
    if (width == 1) {
        return children[lo] ? children[lo]->hash : Hash256{};
    }
    const RangeScan scan = scanRange(children, lo, width);
    if (scan.count == 0) {
        return Hash256{};
    }
    if (aloneLeaf(children, scan)) {
        return children[scan.last]->hash;
    }
    const std::size_t half = width / 2;
    return hashPair(hashRange(children, lo, half), hashRange(children, lo + half, half));
}

std::uint16_t readU16(ByteView in) {
    return static_cast<std::uint16_t>((in[0] << 8) | in[1]);
}

/** Writes `value` big-endian into out[0..8). Encoders size their buffer once and fill it. */
std::uint8_t* putU64(std::uint8_t* out, std::uint64_t value) {
    for (std::size_t i = 0; i < 8; ++i) {
        out[i] = static_cast<std::uint8_t>(value >> (56 - 8 * i));
    }
    return out + 8;
}

std::uint8_t* putU16(std::uint8_t* out, std::uint16_t value) {
    out[0] = static_cast<std::uint8_t>(value >> 8);
    out[1] = static_cast<std::uint8_t>(value & 0xffU);
    return out + 2;
}

std::uint8_t* putHash(std::uint8_t* out, const Hash256& hash) {
    std::memcpy(out, hash.data(), Hash256::size());
    return out + Hash256::size();
}

Error corrupt(std::string message) {
    return Error{ErrorCode::kCorrupt, "state tree: " + std::move(message)};
}

Result<Node> decodeInternal(ByteView bytes, std::uint64_t version) {
    if (bytes.size() < kInternalHeaderSize) {
        return std::unexpected(corrupt("internal node too short"));
    }
    const std::uint16_t childMap = readU16(bytes.subspan(1));
    const std::uint16_t leafMap = readU16(bytes.subspan(3));
    const auto count = static_cast<std::size_t>(std::popcount(childMap));
    if ((leafMap & ~childMap) != 0 || count == 0 ||
        bytes.size() != kInternalHeaderSize + count * kChildSize) {
        return std::unexpected(corrupt("malformed internal node"));
    }
    if (count == 1 && leafMap != 0) {
        return std::unexpected(corrupt("internal node holding a single leaf"));
    }
    InternalNode node;
    std::size_t offset = kInternalHeaderSize;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (((childMap >> slot) & 1U) == 0) {
            continue;
        }
        ChildRef child;
        child.version = readU64(bytes.subspan(offset));
        child.hash = readHash(bytes.subspan(offset + 8));
        child.isLeaf = ((leafMap >> slot) & 1U) != 0;
        if (child.version > version) {
            return std::unexpected(corrupt("child newer than its parent"));
        }
        node.children[slot] = child;
        offset += kChildSize;
    }
    return Node{node};
}

/** A delta's header: the form it names and which of its slots hold a child, and a leaf. */
struct DeltaHeader {
    StoredForm form;
    std::uint16_t childMap = 0;
    std::uint16_t leafMap = 0;
};

/** The header of a delta stored at `version`, checked against its length. */
Result<DeltaHeader> deltaHeader(ByteView bytes, std::uint64_t version) {
    if (bytes.size() < kDeltaHeaderSize) {
        return std::unexpected(corrupt("delta node too short"));
    }
    const DeltaHeader header{{readU64(bytes.subspan(1)), readU16(bytes.subspan(9))},
                             readU16(bytes.subspan(11)),
                             readU16(bytes.subspan(13))};
    const std::uint16_t slots = header.form.sinceFull;
    if (slots == 0 || (header.childMap & ~slots) != 0 || (header.leafMap & ~header.childMap) != 0 ||
        bytes.size() != kDeltaHeaderSize +
                            static_cast<std::size_t>(std::popcount(header.childMap)) * kChildSize) {
        return std::unexpected(corrupt("malformed delta node"));
    }
    if (header.form.fullVersion >= version) {
        return std::unexpected(corrupt("delta on a node not older than itself"));
    }
    return header;
}

/**
 * The node a delta stored at `version`, of checked `header`, makes of `node`, its full node;
 * checked as a whole.
 */
Result<InternalNode> mergeDelta(ByteView bytes, const DeltaHeader& header, std::uint64_t version,
                                InternalNode node) {
    std::size_t offset = kDeltaHeaderSize;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (!hasSlot(header.form.sinceFull, slot)) {
            continue;
        }
        if (!hasSlot(header.childMap, slot)) {
            node.children[slot].reset();
            continue;
        }
        const ChildRef child{readHash(bytes.subspan(offset + 8)), readU64(bytes.subspan(offset)),
                             hasSlot(header.leafMap, slot)};
        if (child.version > version) {
            return std::unexpected(corrupt("child newer than its parent"));
        }
        node.children[slot] = child;
        offset += kChildSize;
    }
    const auto count = std::count_if(node.children.begin(), node.children.end(),
                                     [](const auto& child) { return child.has_value(); });
    if (count == 0) {
        return std::unexpected(corrupt("delta leaving an internal node without children"));
    }
    if (count == 1 && std::any_of(node.children.begin(), node.children.end(),
                                  [](const auto& child) { return child && child->isLeaf; })) {
        return std::unexpected(corrupt("internal node holding a single leaf"));
    }
    return node;
}

Error missingNode(std::string_view what, std::uint64_t version, const NibblePath& path) {
    return corrupt("missing " + std::string(what) + " at version " + std::to_string(version) +
                   ", depth " + std::to_string(path.size()));
}

/** The node at (version, path) and the form it is stored in. */
Result<std::pair<Node, StoredForm>> loadStored(const storage::KvStore& store,
                                               storage::Column column, std::uint64_t version,
                                               const NibblePath& path) {
    GL_ASSIGN_OR_RETURN(stored, store.get(column, nodeKey(version, path)));
    if (!stored) {
        return std::unexpected(missingNode("node", version, path));
    }
    if (!stored->empty() && (*stored)[0] == kDeltaTag) {
        GL_ASSIGN_OR_RETURN(header, deltaHeader(*stored, version));
        const std::uint64_t fullVersion = header.form.fullVersion;
        GL_ASSIGN_OR_RETURN(fullBytes, store.get(column, nodeKey(fullVersion, path)));
        if (!fullBytes) {
            return std::unexpected(missingNode("a delta's full node", fullVersion, path));
        }
        if (fullBytes->empty() || (*fullBytes)[0] != kInternalTag) {
            return std::unexpected(corrupt("delta on a node not stored whole as internal"));
        }
        GL_ASSIGN_OR_RETURN(full, decodeInternal(*fullBytes, fullVersion));
        GL_ASSIGN_OR_RETURN(merged,
                            mergeDelta(*stored, header, version, std::get<InternalNode>(full)));
        return std::pair{Node{merged}, header.form};
    }
    GL_ASSIGN_OR_RETURN(node, decodeNode(*stored, version));
    if (const auto* leaf = std::get_if<LeafNode>(&node); leaf && !path.isPrefixOf(leaf->key)) {
        return std::unexpected(corrupt("leaf stored off its key's path"));
    }
    return std::pair{node, StoredForm{version, 0}};
}

}  // namespace

NibblePath NibblePath::child(std::uint8_t nibble) const {
    NibblePath out = *this;
    const std::size_t byte = size_ / 2;
    const int shift = size_ % 2 == 0 ? 4 : 0;
    out.packed_[byte] = static_cast<std::uint8_t>(out.packed_[byte] | (nibble << shift));
    out.size_ = static_cast<std::uint8_t>(size_ + 1);
    return out;
}

bool NibblePath::isPrefixOf(const Hash256& key) const {
    const std::size_t fullBytes = size_ / 2;
    if (std::memcmp(packed_.data(), key.data(), fullBytes) != 0) {
        return false;
    }
    return size_ % 2 == 0 || (packed_[fullBytes] >> 4) == nibbleAt(key, size_ - 1U);
}

std::size_t NibblePath::mapHash() const {
    // Every byte counts: the contracts' list keys share long prefixes, so the paths under them
    // differ only deep down.
    std::uint64_t mixed = size_;
    for (std::size_t word = 0; word < Hash256::size() / 8; ++word) {
        std::uint64_t part = 0;
        std::memcpy(&part, packed_.data() + 8 * word, sizeof part);
        mixed = (mixed ^ part) * 0x9e3779b97f4a7c15ULL;
        mixed ^= mixed >> 32U;
    }
    return static_cast<std::size_t>(mixed);
}

std::size_t NibblePath::encodedSize() const {
    return 1 + (size_ + 1U) / 2;
}

std::uint8_t* NibblePath::writeTo(std::uint8_t* out) const {
    out[0] = size_;
    const std::size_t packed = (size_ + 1U) / 2;
    std::memcpy(out + 1, packed_.data(), packed);
    return out + 1 + packed;
}

Hash256 hashValue(ByteView value) {
    return crypto::sha256(value);
}

Hash256 hashLeaf(const LeafNode& leaf) {
    return hashDomain(kLeafDomain, leaf.key, leaf.valueHash);
}

Hash256 hashPair(const Hash256& left, const Hash256& right) {
    return hashDomain(kNodeDomain, left, right);
}

Hash256 hashInternal(const InternalNode& node) {
    return hashRange(node.children, 0, kRadix);
}

void rehashInner(const InternalNode& node, std::uint16_t changed, InnerHashes& inner) {
    const auto& children = node.children;
    auto below = [&](std::size_t index) {
        if (index < kRadix) {
            return inner[index];
        }
        const auto& child = children[index - kRadix];
        return child ? child->hash : Hash256{};
    };
    // Heap index h covers `width` slots from `lo`: level l = floor(log2 h), width = 16 >> l.
    for (std::size_t h = kRadix - 1; h >= 1; --h) {
        const auto level = static_cast<std::size_t>(std::bit_width(h) - 1);
        const std::size_t width = kRadix >> level;
        const std::size_t lo = (h - (std::size_t{1} << level)) * width;
        const auto slots = static_cast<std::uint16_t>(((1U << width) - 1U) << lo);
        if ((changed & slots) == 0) {
            continue;
        }
        const RangeScan scan = scanRange(children, lo, width);
        if (scan.count == 0) {
            inner[h] = Hash256{};
        } else if (aloneLeaf(children, scan)) {
            inner[h] = children[scan.last]->hash;
        } else {
            inner[h] = hashPair(below(2 * h), below(2 * h + 1));
        }
    }
}

NodeWalk walkInternal(const InternalNode& node, std::uint8_t nibble,
                      std::vector<Hash256>& siblings) {
    std::size_t lo = 0;
    std::size_t width = kRadix;
    while (width > 1) {
        const std::size_t half = width / 2;
        const bool right = nibble >= lo + half;
        siblings.push_back(hashRange(node.children, right ? lo : lo + half, half));
        lo = right ? lo + half : lo;
        width = half;
        const RangeScan scan = scanRange(node.children, lo, width);
        if (scan.count == 0) {
            return {NodeWalk::End::kEmpty, 0};
        }
        if (aloneLeaf(node.children, scan)) {
            return {NodeWalk::End::kLeaf, static_cast<std::uint8_t>(scan.last)};
        }
    }
    return {NodeWalk::End::kChild, static_cast<std::uint8_t>(lo)};
}

void appendNodeKey(Bytes& out, std::uint64_t version, const NibblePath& path) {
    const std::size_t at = out.size();
    out.resize(at + 8 + path.encodedSize());
    path.writeTo(putU64(out.data() + at, version));
}

Bytes nodeKey(std::uint64_t version, const NibblePath& path) {
    Bytes out;
    appendNodeKey(out, version, path);
    return out;
}

Bytes rootKey(std::uint64_t version) {
    Bytes out(8);
    putU64(out.data(), version);
    return out;
}

Bytes valueKey(const Hash256& key, std::uint64_t version) {
    Bytes out(Hash256::size() + 8);
    putU64(putHash(out.data(), key), ~version);
    return out;
}

void appendNode(Bytes& out, const Node& node) {
    const std::size_t at = out.size();
    if (const auto* leaf = std::get_if<LeafNode>(&node)) {
        out.resize(at + kLeafNodeSize);
        out[at] = kLeafTag;
        putHash(putHash(out.data() + at + 1, leaf->key), leaf->valueHash);
        return;
    }
    const auto& internal = std::get<InternalNode>(node);
    std::uint16_t childMap = 0;
    std::uint16_t leafMap = 0;
    std::size_t count = 0;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (const auto& child = internal.children[slot]) {
            ++count;
            childMap = static_cast<std::uint16_t>(childMap | (1U << slot));
            leafMap = static_cast<std::uint16_t>(leafMap | (child->isLeaf ? 1U << slot : 0U));
        }
    }
    out.resize(at + kInternalHeaderSize + count * kChildSize);
    out[at] = kInternalTag;
    std::uint8_t* cursor = putU16(putU16(out.data() + at + 1, childMap), leafMap);
    for (const auto& child : internal.children) {
        if (child) {
            cursor = putHash(putU64(cursor, child->version), child->hash);
        }
    }
}

bool storedAsDelta(std::uint16_t sinceFull, std::size_t children) {
    const auto slots = static_cast<std::size_t>(std::popcount(sinceFull));
    return slots != 0 && slots <= kMaxDeltaSlots && 2 * slots <= children;
}

void appendDelta(Bytes& out, const InternalNode& node, const StoredForm& form) {
    std::uint16_t childMap = 0;
    std::uint16_t leafMap = 0;
    std::size_t count = 0;
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        const auto& child = node.children[slot];
        if (hasSlot(form.sinceFull, slot) && child) {
            ++count;
            childMap = static_cast<std::uint16_t>(childMap | (1U << slot));
            leafMap = static_cast<std::uint16_t>(leafMap | (child->isLeaf ? 1U << slot : 0U));
        }
    }
    const std::size_t at = out.size();
    out.resize(at + kDeltaHeaderSize + count * kChildSize);
    out[at] = kDeltaTag;
    std::uint8_t* cursor = putU64(out.data() + at + 1, form.fullVersion);
    cursor = putU16(putU16(putU16(cursor, form.sinceFull), childMap), leafMap);
    for (std::size_t slot = 0; slot < kRadix; ++slot) {
        if (hasSlot(childMap, slot)) {
            const auto& child = *node.children[slot];
            cursor = putHash(putU64(cursor, child.version), child.hash);
        }
    }
}

Result<Node> decodeNode(ByteView bytes, std::uint64_t version) {
    if (bytes.empty()) {
        return std::unexpected(corrupt("empty node"));
    }
    if (bytes[0] == kLeafTag) {
        if (bytes.size() != kLeafNodeSize) {
            return std::unexpected(corrupt("malformed leaf node"));
        }
        return Node{LeafNode{readHash(bytes.subspan(1)), readHash(bytes.subspan(33))}};
    }
    if (bytes[0] == kInternalTag) {
        return decodeInternal(bytes, version);
    }
    return std::unexpected(corrupt("unknown node tag"));
}

Bytes encodeRoot(const RootRecord& record) {
    Bytes out(kRootRecordSize);
    out[0] = static_cast<std::uint8_t>(record.kind);
    putHash(putU64(out.data() + 1, record.nodeVersion), record.hash);
    return out;
}

Result<RootRecord> decodeRoot(ByteView bytes, std::uint64_t version) {
    if (bytes.size() != kRootRecordSize ||
        bytes[0] > static_cast<std::uint8_t>(RootKind::kInternal)) {
        return std::unexpected(corrupt("malformed root record"));
    }
    RootRecord record;
    record.kind = static_cast<RootKind>(bytes[0]);
    record.nodeVersion = readU64(bytes.subspan(1));
    record.hash = readHash(bytes.subspan(9));
    const bool empty = record.kind == RootKind::kEmpty;
    if (record.nodeVersion > version ||
        (empty && (record.nodeVersion != 0 || !record.hash.isZero()))) {
        return std::unexpected(corrupt("inconsistent root record"));
    }
    return record;
}

Bytes encodeValue(const std::optional<Bytes>& value) {
    Bytes out;
    if (!value) {
        out.push_back(kTombstone);
        return out;
    }
    out.reserve(1 + value->size());
    out.push_back(kPresent);
    append(out, *value);
    return out;
}

Result<std::optional<Bytes>> decodeValue(ByteView bytes) {
    if (bytes.size() == 1 && bytes[0] == kTombstone) {
        return std::optional<Bytes>();
    }
    if (!bytes.empty() && bytes[0] == kPresent) {
        return std::optional<Bytes>(Bytes(bytes.begin() + 1, bytes.end()));
    }
    return std::unexpected(corrupt("malformed value record"));
}

Result<Node> loadNode(const storage::KvStore& store, storage::Column column, std::uint64_t version,
                      const NibblePath& path) {
    GL_ASSIGN_OR_RETURN(loaded, loadStored(store, column, version, path));
    return loaded.first;
}

Result<LeafNode> loadLeaf(const storage::KvStore& store, storage::Column column,
                          std::uint64_t version, const NibblePath& path,
                          const Hash256& expectedHash) {
    GL_ASSIGN_OR_RETURN(node, loadNode(store, column, version, path));
    const auto* leaf = std::get_if<LeafNode>(&node);
    if (leaf == nullptr || hashLeaf(*leaf) != expectedHash) {
        return std::unexpected(corrupt("leaf does not match its parent"));
    }
    return *leaf;
}

Result<StoredInternal> loadStoredInternal(const storage::KvStore& store, storage::Column column,
                                          std::uint64_t version, const NibblePath& path) {
    if (path.size() >= kMaxNibbles) {
        return std::unexpected(corrupt("internal node below the last nibble"));
    }
    GL_ASSIGN_OR_RETURN(loaded, loadStored(store, column, version, path));
    auto* internal = std::get_if<InternalNode>(&loaded.first);
    if (internal == nullptr) {
        return std::unexpected(corrupt("expected an internal node"));
    }
    return StoredInternal{*internal, loaded.second};
}

Result<InternalNode> loadInternal(const storage::KvStore& store, storage::Column column,
                                  std::uint64_t version, const NibblePath& path) {
    GL_ASSIGN_OR_RETURN(loaded, loadStoredInternal(store, column, version, path));
    return loaded.node;
}

}  // namespace gridledger::ledger::tree
