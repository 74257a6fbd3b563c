// Range proofs of the state tree: every key of a key range with its value, and the subtrees
// beside the range that make it complete under a root (docs/state_tree.md, "Range proofs").

#include <algorithm>
#include <bit>
#include <memory>
#include <string>

#include <gridledger/ledger/state_tree.h>

#include "state_tree_node.h"

namespace gridledger::ledger {
namespace {

using Kind = RangeProofItem::Kind;
using tree::InnerHashes;
using tree::InternalNode;
using tree::LeafNode;
using tree::NibblePath;
using tree::readHash;

constexpr std::uint8_t kRangeFormat = 0x01;
constexpr std::size_t kHash = Hash256::size();

/** `key` with bit `index` set to one. */
Hash256 withBit(Hash256 key, std::size_t index) {
    key.data()[index / 8] = static_cast<std::uint8_t>(key[index / 8] | (0x80U >> (index % 8)));
    return key;
}

/** The highest key under the binary position of depth `depth` whose lowest key is `low`. */
Hash256 highestUnder(Hash256 low, std::size_t depth) {
    for (std::size_t bit = depth; bit < tree::kMaxBits; ++bit) {
        low = withBit(low, bit);
    }
    return low;
}

bool within(const Hash256& key, const Hash256& low, const Hash256& high) {
    return !(key < low) && !(high < key);
}

Error invalid(const std::string& message) {
    return Error{ErrorCode::kInvalidArgument, "state range: " + message};
}

// ---- The prover: a walk of the stored nodes of one version, one binary level at a time. ----

/** An internal node as read, with the hashes of the binary subtrees inside it. */
struct LoadedNode {
    InternalNode node;
    InnerHashes inner{};
    NibblePath path;
};

/**
 * A binary subtree of the stored tree: empty, a single leaf, or a position inside an internal
 * node (heap index 1…15 as in tree::InnerHashes) holding at least two keys.
 */
struct Position {
    std::shared_ptr<const LoadedNode> node;
    std::size_t heap = 1;
    std::optional<LeafNode> leaf;

    [[nodiscard]] bool empty() const { return !node && !leaf; }
};

class RangeProver {
  public:
    RangeProver(const StateTree& tree, const storage::KvStore& store, storage::Column nodes,
                std::uint64_t version, StateRange& range)
        : tree_(tree), store_(store), nodes_(nodes), version_(version), range_(range) {}

    Result<Position> root(const tree::RootRecord& record) const {
        switch (record.kind) {
            case tree::RootKind::kEmpty:
                return Position{};
            case tree::RootKind::kLeaf: {
                GL_ASSIGN_OR_RETURN(
                    leaf, tree::loadLeaf(store_, nodes_, record.nodeVersion, {}, record.hash));
                return Position{nullptr, 1, leaf};
            }
            case tree::RootKind::kInternal:
                return internal(record.nodeVersion, NibblePath{});
        }
        return fail(ErrorCode::kCorrupt, "state tree: unknown root kind");
    }

    /** Adds the proof of the subtree at `at` (binary depth `depth`, lowest key `low`). */
    Status walk(const Position& at, std::size_t depth, const Hash256& low) {
        const Hash256 high = highestUnder(low, depth);
        if (!(low < range_.start) && !(range_.end < high)) {
            return collect(at);
        }
        if (high < range_.start || range_.end < low) {
            range_.items.push_back(summary(at));
            return {};
        }
        if (at.empty() || (at.leaf && !within(at.leaf->key, range_.start, range_.end))) {
            range_.items.push_back(summary(at));
            return {};
        }
        range_.items.push_back(RangeProofItem{Kind::kSplit, {}, {}});
        GL_ASSIGN_OR_RETURN(left, child(at, depth, false));
        GL_TRY(walk(left, depth + 1, low));
        GL_ASSIGN_OR_RETURN(right, child(at, depth, true));
        return walk(right, depth + 1, withBit(low, depth));
    }

  private:
    Result<Position> internal(std::uint64_t version, const NibblePath& path) const {
        GL_ASSIGN_OR_RETURN(node, tree::loadInternal(store_, nodes_, version, path));
        auto loaded = std::make_shared<LoadedNode>(LoadedNode{node, {}, path});
        tree::rehashInner(loaded->node, 0xffffU, loaded->inner);
        return classify(std::move(loaded), 1);
    }

    /**
     * The subtree at heap index `heap` of `node`: empty or a leaf when its slots hold no child or
     * one leaf child (the canonical tree keeps a lone key at the highest position), the child
     * node itself for a single slot holding an internal child.
     */
    Result<Position> classify(std::shared_ptr<const LoadedNode> node, std::size_t heap) const {
        if (heap >= tree::kRadix) {
            const std::size_t slot = heap - tree::kRadix;
            const auto& child = node->node.children[slot];
            if (!child) {
                return Position{};
            }
            if (!child->isLeaf) {
                return internal(child->version, node->path.child(static_cast<std::uint8_t>(slot)));
            }
            return leafAt(*node, slot);
        }
        const auto level = static_cast<std::size_t>(std::bit_width(heap) - 1);
        const std::size_t width = tree::kRadix >> level;
        const std::size_t first = (heap - (std::size_t{1} << level)) * width;
        std::size_t count = 0;
        std::size_t last = 0;
        for (std::size_t slot = first; slot < first + width; ++slot) {
            if (node->node.children[slot]) {
                ++count;
                last = slot;
            }
        }
        if (count == 0) {
            return Position{};
        }
        if (count == 1 && node->node.children[last]->isLeaf) {
            return leafAt(*node, last);
        }
        return Position{std::move(node), heap, std::nullopt};
    }

    Result<Position> leafAt(const LoadedNode& node, std::size_t slot) const {
        const auto& child = *node.node.children[slot];
        GL_ASSIGN_OR_RETURN(
            leaf, tree::loadLeaf(store_, nodes_, child.version,
                                 node.path.child(static_cast<std::uint8_t>(slot)), child.hash));
        return Position{nullptr, 1, leaf};
    }

    /** The left (`right` false) or right half of `at`, which sits at binary depth `depth`. */
    Result<Position> child(const Position& at, std::size_t depth, bool right) const {
        if (at.leaf) {
            // A lone key seen from above: it lies on one side, the other side is empty.
            if (tree::bitAt(at.leaf->key, depth) == right) {
                return at;
            }
            return Position{};
        }
        return classify(at.node, 2 * at.heap + (right ? 1 : 0));
    }

    static RangeProofItem summary(const Position& at) {
        if (at.empty()) {
            return RangeProofItem{Kind::kEmpty, {}, {}};
        }
        if (at.leaf) {
            return RangeProofItem{Kind::kLeaf, at.leaf->key, at.leaf->valueHash};
        }
        return RangeProofItem{Kind::kNode, {}, at.node->inner[at.heap]};
    }

    /** Adds every key under `at` with its value, in key order. */
    Status collect(const Position& at) {
        if (at.empty()) {
            return {};
        }
        if (at.leaf) {
            GL_ASSIGN_OR_RETURN(value, tree_.get(at.leaf->key, version_));
            if (!value || tree::hashValue(*value) != at.leaf->valueHash) {
                return fail(ErrorCode::kCorrupt, "state tree: the value of " + at.leaf->key.hex() +
                                                     " does not match its leaf at version " +
                                                     std::to_string(version_));
            }
            range_.entries.push_back(StateEntry{at.leaf->key, std::move(*value)});
            return {};
        }
        GL_ASSIGN_OR_RETURN(left, classify(at.node, 2 * at.heap));
        GL_TRY(collect(left));
        GL_ASSIGN_OR_RETURN(right, classify(at.node, 2 * at.heap + 1));
        return collect(right);
    }

    const StateTree& tree_;
    const storage::KvStore& store_;
    storage::Column nodes_;
    std::uint64_t version_;
    StateRange& range_;
};

// ---- The verifier: the canonical binary tree rebuilt from the entries and the items. ----

/** A subtree as the verifier sees it: empty, a single leaf, or a node of two keys or more. */
struct Summary {
    Kind kind = Kind::kEmpty;
    Hash256 hash;  // kLeaf: the leaf hash; kNode: the subtree's root
};

Summary leafSummary(const Hash256& key, const Hash256& valueHash) {
    return Summary{Kind::kLeaf, tree::hashLeaf(LeafNode{key, valueHash})};
}

/** The subtree whose halves are `left` and `right`: a lone leaf rises, as in root(S, d). */
Summary combine(const Summary& left, const Summary& right) {
    if (left.kind == Kind::kEmpty && right.kind != Kind::kNode) {
        return right;
    }
    if (right.kind == Kind::kEmpty && left.kind != Kind::kNode) {
        return left;
    }
    return Summary{Kind::kNode, tree::hashPair(left.hash, right.hash)};
}

class RangeVerifier {
  public:
    explicit RangeVerifier(const StateRange& range) : range_(range) {}

    /** The subtree at binary depth `depth` with lowest key `low`, holding entries [first, last). */
    Result<Summary> walk(std::size_t depth, const Hash256& low, std::size_t first,
                         std::size_t last) {
        const Hash256 high = highestUnder(low, depth);
        if (!(low < range_.start) && !(range_.end < high)) {
            return build(depth, first, last);
        }
        if (next_ == range_.items.size()) {
            return std::unexpected(invalid("the items end before the proof does"));
        }
        const RangeProofItem& item = range_.items[next_++];
        const bool outside = high < range_.start || range_.end < low;
        switch (item.kind) {
            case Kind::kEmpty:
                if (first != last) {
                    return std::unexpected(invalid("an empty subtree holds entries"));
                }
                return Summary{};
            case Kind::kLeaf:
                if (first != last || !within(item.key, low, high) ||
                    within(item.key, range_.start, range_.end)) {
                    return std::unexpected(invalid("leaf " + item.key.hex() +
                                                   " is not beside the range where it sits"));
                }
                return leafSummary(item.key, item.hash);
            case Kind::kNode:
                if (!outside || item.hash == Hash256{}) {
                    return std::unexpected(
                        invalid("a node hash stands for a subtree the range "
                                "cuts, or for an empty one"));
                }
                return Summary{Kind::kNode, item.hash};
            case Kind::kSplit: {
                if (outside) {
                    return std::unexpected(invalid("a split outside the range"));
                }
                std::size_t middle = first;
                while (middle < last && !tree::bitAt(range_.entries[middle].key, depth)) {
                    ++middle;
                }
                GL_ASSIGN_OR_RETURN(left, walk(depth + 1, low, first, middle));
                GL_ASSIGN_OR_RETURN(right, walk(depth + 1, withBit(low, depth), middle, last));
                return combine(left, right);
            }
        }
        return std::unexpected(invalid("unknown item kind"));
    }

    [[nodiscard]] bool consumedAll() const { return next_ == range_.items.size(); }

  private:
    /** root(S, depth) of the entries [first, last), which share their first `depth` bits. */
    Summary build(std::size_t depth, std::size_t first, std::size_t last) const {
        if (first == last) {
            return Summary{};
        }
        if (last - first == 1) {
            const StateEntry& entry = range_.entries[first];
            return leafSummary(entry.key, tree::hashValue(entry.value));
        }
        std::size_t middle = first;
        while (middle < last && !tree::bitAt(range_.entries[middle].key, depth)) {
            ++middle;
        }
        return combine(build(depth + 1, first, middle), build(depth + 1, middle, last));
    }

    const StateRange& range_;
    std::size_t next_ = 0;
};

Error malformedRange(const std::string& message) {
    return Error{ErrorCode::kMalformed, "state range: " + message};
}

}  // namespace

Result<StateRange> StateTree::proveRange(const Hash256& start, std::uint64_t version,
                                         std::size_t limit) const {
    if (limit == 0) {
        return fail(ErrorCode::kInvalidArgument, "state range: a limit of 0 keys");
    }
    GL_ASSIGN_OR_RETURN(stored, store_.get(nodes_, tree::rootKey(version)));
    if (!stored) {
        return fail(ErrorCode::kNotFound,
                    "state tree: no root at version " + std::to_string(version));
    }
    GL_ASSIGN_OR_RETURN(record, tree::decodeRoot(*stored, version));
    Hash256 highest;
    std::fill_n(highest.data(), kHash, std::uint8_t{0xff});
    GL_ASSIGN_OR_RETURN(keys, keysBetween(start, highest, version, limit + 1));
    StateRange range;
    range.start = start;
    range.end = keys.size() > limit ? keys[limit - 1] : highest;
    RangeProver prover(*this, store_, nodes_, version, range);
    GL_ASSIGN_OR_RETURN(root, prover.root(record));
    GL_TRY(prover.walk(root, 0, Hash256{}));
    if (range.entries.size() != std::min(keys.size(), limit)) {
        return fail(ErrorCode::kCorrupt, "state tree: the nodes of version " +
                                             std::to_string(version) +
                                             " disagree on the keys of a range");
    }
    return range;
}

Status verifyRange(const Hash256& root, const StateRange& range) {
    if (range.end < range.start) {
        return std::unexpected(invalid("ends before it starts"));
    }
    for (std::size_t i = 0; i < range.entries.size(); ++i) {
        const Hash256& key = range.entries[i].key;
        if (!within(key, range.start, range.end)) {
            return std::unexpected(invalid("entry " + key.hex() + " lies outside the range"));
        }
        if (i > 0 && !(range.entries[i - 1].key < key)) {
            return std::unexpected(invalid("entries are not in ascending key order"));
        }
    }
    RangeVerifier verifier(range);
    GL_ASSIGN_OR_RETURN(top, verifier.walk(0, Hash256{}, 0, range.entries.size()));
    if (!verifier.consumedAll()) {
        return std::unexpected(invalid("items are left over"));
    }
    if (top.hash != root) {
        return std::unexpected(
            invalid("the entries and items give root " + top.hash.hex() + ", not " + root.hex()));
    }
    return {};
}

Bytes encodeRange(const StateRange& range) {
    // At most this many bytes (only a leaf item takes two hashes): one allocation for them all.
    std::size_t size = 1 + 2 * kHash + 4 + range.entries.size() * (kHash + 4) + 4 +
                       range.items.size() * (1 + 2 * kHash);
    for (const StateEntry& entry : range.entries) {
        size += entry.value.size();
    }
    Bytes out;
    out.reserve(size);
    out.push_back(kRangeFormat);
    append(out, range.start.view());
    append(out, range.end.view());
    appendU32(out, static_cast<std::uint32_t>(range.entries.size()));
    for (const StateEntry& entry : range.entries) {
        append(out, entry.key.view());
        appendU32(out, static_cast<std::uint32_t>(entry.value.size()));
        append(out, entry.value);
    }
    appendU32(out, static_cast<std::uint32_t>(range.items.size()));
    for (const RangeProofItem& item : range.items) {
        out.push_back(static_cast<std::uint8_t>(item.kind));
        if (item.kind == Kind::kLeaf) {
            append(out, item.key.view());
        }
        if (item.kind == Kind::kLeaf || item.kind == Kind::kNode) {
            append(out, item.hash.view());
        }
    }
    return out;
}

Result<StateRange> decodeRange(ByteView bytes) {
    std::size_t offset = 0;
    auto take = [&](std::size_t count) -> std::optional<ByteView> {
        if (bytes.size() - offset < count) {
            return std::nullopt;
        }
        const ByteView out = bytes.subspan(offset, count);
        offset += count;
        return out;
    };
    const auto format = take(1);
    if (!format) {
        return std::unexpected(malformedRange("empty"));
    }
    if ((*format)[0] != kRangeFormat) {
        return std::unexpected(malformedRange("unknown format " + std::to_string((*format)[0])));
    }
    const auto bounds = take(2 * kHash);
    const auto entryCount = take(4);
    if (!bounds || !entryCount) {
        return std::unexpected(malformedRange("truncated header"));
    }
    StateRange range;
    range.start = readHash(*bounds);
    range.end = readHash(bounds->subspan(kHash));
    const std::uint32_t entries = readU32(*entryCount);
    // Each entry takes at least 36 bytes: a count beyond the input is refused before any work.
    if (entries > (bytes.size() - offset) / (kHash + 4)) {
        return std::unexpected(malformedRange("more entries than bytes"));
    }
    range.entries.reserve(entries);
    for (std::uint32_t i = 0; i < entries; ++i) {
        const auto head = take(kHash + 4);
        if (!head) {
            return std::unexpected(malformedRange("truncated entry"));
        }
        const auto value = take(readU32(head->subspan(kHash)));
        if (!value) {
            return std::unexpected(malformedRange("truncated value"));
        }
        range.entries.push_back(StateEntry{readHash(*head), Bytes(value->begin(), value->end())});
    }
    const auto itemCount = take(4);
    if (!itemCount) {
        return std::unexpected(malformedRange("truncated item count"));
    }
    const std::uint32_t items = readU32(*itemCount);
    if (items > bytes.size() - offset) {
        return std::unexpected(malformedRange("more items than bytes"));
    }
    range.items.reserve(items);
    for (std::uint32_t i = 0; i < items; ++i) {
        const auto kind = take(1);
        if (!kind) {
            return std::unexpected(malformedRange("truncated item"));
        }
        RangeProofItem item;
        switch ((*kind)[0]) {
            case static_cast<std::uint8_t>(Kind::kEmpty):
            case static_cast<std::uint8_t>(Kind::kSplit):
                item.kind = static_cast<Kind>((*kind)[0]);
                break;
            case static_cast<std::uint8_t>(Kind::kLeaf): {
                const auto leaf = take(2 * kHash);
                if (!leaf) {
                    return std::unexpected(malformedRange("truncated leaf item"));
                }
                item = RangeProofItem{Kind::kLeaf, readHash(*leaf), readHash(leaf->subspan(kHash))};
                break;
            }
            case static_cast<std::uint8_t>(Kind::kNode): {
                const auto hash = take(kHash);
                if (!hash) {
                    return std::unexpected(malformedRange("truncated node item"));
                }
                item = RangeProofItem{Kind::kNode, {}, readHash(*hash)};
                break;
            }
            default:
                return std::unexpected(
                    malformedRange("unknown item kind " + std::to_string((*kind)[0])));
        }
        range.items.push_back(item);
    }
    if (offset != bytes.size()) {
        return std::unexpected(malformedRange("trailing bytes"));
    }
    return range;
}

std::optional<Hash256> keyAfter(const Hash256& key) {
    Hash256 next = key;
    for (std::size_t i = kHash; i-- > 0;) {
        if (next[i] != 0xff) {
            next.data()[i] = static_cast<std::uint8_t>(next[i] + 1);
            return next;
        }
        next.data()[i] = 0;
    }
    return std::nullopt;
}

}  // namespace gridledger::ledger
