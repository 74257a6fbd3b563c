#include <algorithm>
#include <string>
#include <utility>

#include <gridledger/ledger/state_tree.h>

#include "state_tree_node.h"

namespace gridledger::ledger {
namespace {

using tree::ChildRef;
using tree::InternalNode;
using tree::LeafNode;
using tree::NibblePath;
using tree::RootKind;
using tree::RootRecord;

/** One deduplicated update: the key and the hash of its new value (nullopt = delete). */
struct Op {
    Hash256 key;
    std::optional<Hash256> valueHash;
};

/**
 * A subtree during an apply, before or after the update: its kind and hash, the content of a
 * leaf when known, and the version under which it is stored at its current path (none for a leaf
 * created or moved by this apply, which is written once its final position is known).
 */
struct Subtree {
    RootKind kind = RootKind::kEmpty;
    Hash256 hash;
    std::optional<LeafNode> leaf;
    std::optional<std::uint64_t> storedAt;

    [[nodiscard]] bool sameAs(const Subtree& other) const {
        return kind == other.kind && hash == other.hash && storedAt == other.storedAt;
    }
};

Subtree newLeaf(const LeafNode& leaf) {
    return Subtree{RootKind::kLeaf, tree::hashLeaf(leaf), leaf, std::nullopt};
}

Subtree fromChild(const std::optional<ChildRef>& child) {
    if (!child) {
        return {};
    }
    return Subtree{child->isLeaf ? RootKind::kLeaf : RootKind::kInternal, child->hash, std::nullopt,
                   child->version};
}

std::size_t countPuts(std::span<const Op> ops) {
    return static_cast<std::size_t>(std::count_if(
        ops.begin(), ops.end(), [](const Op& op) { return op.valueHash.has_value(); }));
}

/** Splits ops sorted by key into the 16 ranges of nibble `depth`. */
std::array<std::span<const Op>, tree::kRadix> splitByNibble(std::span<const Op> ops,
                                                            std::size_t depth) {
    std::array<std::span<const Op>, tree::kRadix> out;
    std::size_t begin = 0;
    for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
        std::size_t end = begin;
        while (end < ops.size() && tree::nibbleAt(ops[end].key, depth) == slot) {
            ++end;
        }
        out[slot] = ops.subspan(begin, end - begin);
        begin = end;
    }
    return out;
}

/**
 * One apply: rewrites the paths the ops touch, bottom-up. Old nodes are read from the store; the
 * nodes this apply creates stay in memory (in `writes_`) and are never read back.
 */
class Updater {
  public:
    Updater(const storage::KvStore& store, storage::Column nodes, std::uint64_t version)
        : store_(store), nodes_(nodes), version_(version) {}

    Result<Subtree> update(const Subtree& old, const NibblePath& path, std::span<const Op> ops) {
        if (ops.empty()) {
            return old;
        }
        switch (old.kind) {
            case RootKind::kEmpty:
                return build(path, ops);
            case RootKind::kLeaf:
                return mergeLeaf(old, path, ops);
            case RootKind::kInternal:
                return updateInternal(old, path, ops);
        }
        return fail(ErrorCode::kInternal, "state tree: unknown subtree kind");
    }

    /** Writes a leaf this apply created or moved, now that its final `path` is known. */
    void place(Subtree& subtree, const NibblePath& path) {
        if (subtree.kind == RootKind::kLeaf && !subtree.storedAt) {
            writeNode(path, tree::Node{*subtree.leaf});
            subtree.storedAt = version_;
        }
    }

    [[nodiscard]] std::vector<std::pair<Bytes, Bytes>>& writes() { return writes_; }

  private:
    /** A subtree that was empty: a leaf for a single put, else an internal node. */
    Result<Subtree> build(const NibblePath& path, std::span<const Op> ops) {
        const std::size_t puts = countPuts(ops);
        if (puts == 0) {
            return Subtree{};
        }
        if (puts == 1) {
            const auto put = std::find_if(ops.begin(), ops.end(),
                                          [](const Op& op) { return op.valueHash.has_value(); });
            return newLeaf(LeafNode{put->key, *put->valueHash});
        }
        if (path.size() >= tree::kMaxNibbles) {
            return fail(ErrorCode::kInternal, "state tree: duplicate keys after deduplication");
        }
        const auto ranges = splitByNibble(ops, path.size());
        std::array<Subtree, tree::kRadix> children;
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            const auto childPath = path.child(static_cast<std::uint8_t>(slot));
            GL_ASSIGN_OR_RETURN(child, build(childPath, ranges[slot]));
            children[slot] = std::move(child);
        }
        return assemble(path, children);
    }

    /** A subtree that was a single leaf: keep, replace or delete it, or split below it. */
    Result<Subtree> mergeLeaf(const Subtree& old, const NibblePath& path, std::span<const Op> ops) {
        GL_ASSIGN_OR_RETURN(leaf, leafOf(old, path));
        const auto it = std::lower_bound(ops.begin(), ops.end(), leaf.key,
                                         [](const Op& op, const Hash256& k) { return op.key < k; });
        const bool touched = it != ops.end() && it->key == leaf.key;
        const std::size_t otherPuts = countPuts(ops) - (touched && it->valueHash ? 1 : 0);
        if (otherPuts == 0) {
            if (!touched || it->valueHash == leaf.valueHash) {
                return old;
            }
            return it->valueHash ? newLeaf(LeafNode{leaf.key, *it->valueHash}) : Subtree{};
        }
        if (touched) {
            return build(path, ops);
        }
        std::vector<Op> merged;
        merged.reserve(ops.size() + 1);
        merged.insert(merged.end(), ops.begin(), it);
        merged.push_back(Op{leaf.key, leaf.valueHash});
        merged.insert(merged.end(), it, ops.end());
        return build(path, merged);
    }

    /** A subtree that was an internal node: update the children the ops reach. */
    Result<Subtree> updateInternal(const Subtree& old, const NibblePath& path,
                                   std::span<const Op> ops) {
        GL_ASSIGN_OR_RETURN(node, tree::loadInternal(store_, nodes_, *old.storedAt, path));
        const auto ranges = splitByNibble(ops, path.size());
        std::array<Subtree, tree::kRadix> children;
        bool changed = false;
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            const Subtree before = fromChild(node.children[slot]);
            const auto childPath = path.child(static_cast<std::uint8_t>(slot));
            GL_ASSIGN_OR_RETURN(after, update(before, childPath, ranges[slot]));
            changed = changed || !after.sameAs(before);
            children[slot] = std::move(after);
        }
        if (!changed) {
            return old;
        }
        return assemble(path, children);
    }

    /**
     * The subtree at `path` made of these children: empty, a lone leaf moved up (written later
     * by an ancestor), or a new internal node written at (version, path).
     */
    Result<Subtree> assemble(const NibblePath& path, std::array<Subtree, tree::kRadix>& children) {
        std::size_t count = 0;
        std::size_t last = 0;
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            if (children[slot].kind != RootKind::kEmpty) {
                ++count;
                last = slot;
            }
        }
        if (count == 0) {
            return Subtree{};
        }
        if (count == 1 && children[last].kind == RootKind::kLeaf) {
            const auto childPath = path.child(static_cast<std::uint8_t>(last));
            GL_ASSIGN_OR_RETURN(leaf, leafOf(children[last], childPath));
            return newLeaf(leaf);
        }
        InternalNode node;
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            Subtree& child = children[slot];
            if (child.kind == RootKind::kEmpty) {
                continue;
            }
            place(child, path.child(static_cast<std::uint8_t>(slot)));
            node.children[slot] =
                ChildRef{child.hash, *child.storedAt, child.kind == RootKind::kLeaf};
        }
        const Hash256 hash = tree::hashInternal(node);
        writeNode(path, tree::Node{std::move(node)});
        return Subtree{RootKind::kInternal, hash, std::nullopt, version_};
    }

    /** The content of a leaf subtree, read from the store if this apply did not make it. */
    Result<LeafNode> leafOf(const Subtree& leaf, const NibblePath& path) const {
        if (leaf.leaf) {
            return *leaf.leaf;
        }
        return tree::loadLeaf(store_, nodes_, *leaf.storedAt, path, leaf.hash);
    }

    void writeNode(const NibblePath& path, const tree::Node& node) {
        writes_.emplace_back(tree::nodeKey(version_, path), tree::encodeNode(node));
    }

    const storage::KvStore& store_;
    storage::Column nodes_;
    std::uint64_t version_;
    std::vector<std::pair<Bytes, Bytes>> writes_;
};

/** The updates sorted by key, the last update of each key only. */
std::vector<const TreeUpdate*> deduplicate(std::span<const TreeUpdate> updates) {
    std::vector<const TreeUpdate*> sorted;
    sorted.reserve(updates.size());
    for (const auto& update : updates) {
        sorted.push_back(&update);
    }
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const TreeUpdate* a, const TreeUpdate* b) { return a->key < b->key; });
    std::vector<const TreeUpdate*> out;
    out.reserve(sorted.size());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (i + 1 == sorted.size() || sorted[i + 1]->key != sorted[i]->key) {
            out.push_back(sorted[i]);
        }
    }
    return out;
}

Subtree fromRoot(const RootRecord& record) {
    if (record.kind == RootKind::kEmpty) {
        return {};
    }
    return Subtree{record.kind, record.hash, std::nullopt, record.nodeVersion};
}

Error notFound(std::uint64_t version) {
    return Error{ErrorCode::kNotFound, "state tree: no root at version " + std::to_string(version)};
}

}  // namespace

StateTree::StateTree(storage::KvStore& store, storage::Column nodes, storage::Column values)
    : store_(store), nodes_(nodes), values_(values) {}

Result<std::optional<std::uint64_t>> StateTree::latestVersion() const {
    auto cursor = store_.cursor(nodes_);
    cursor.seekToLast();
    if (!cursor.valid()) {
        GL_TRY(cursor.status());
        return std::optional<std::uint64_t>();
    }
    if (cursor.key().size() < 8) {
        return fail(ErrorCode::kCorrupt, "state tree: short node key");
    }
    return std::optional<std::uint64_t>(readU64(cursor.key()));
}

Result<Hash256> StateTree::apply(std::uint64_t version, std::span<const TreeUpdate> updates,
                                 storage::WriteBatch& batch) {
    GL_ASSIGN_OR_RETURN(latest, latestVersion());
    RootRecord base;
    if (latest) {
        if (*latest >= version) {
            return fail(ErrorCode::kInvalidArgument,
                        "state tree: version " + std::to_string(version) +
                            " is not above the latest version " + std::to_string(*latest));
        }
        GL_ASSIGN_OR_RETURN(stored, store_.get(nodes_, tree::rootKey(*latest)));
        if (!stored) {
            return fail(ErrorCode::kCorrupt, "state tree: latest version has no root record");
        }
        GL_ASSIGN_OR_RETURN(record, tree::decodeRoot(*stored, *latest));
        base = record;
    }
    const auto unique = deduplicate(updates);
    std::vector<Op> ops;
    ops.reserve(unique.size());
    for (const TreeUpdate* update : unique) {
        ops.push_back(Op{update->key, update->value ? std::optional(tree::hashValue(*update->value))
                                                    : std::nullopt});
    }
    Updater updater(store_, nodes_, version);
    GL_ASSIGN_OR_RETURN(root, updater.update(fromRoot(base), NibblePath{}, ops));
    updater.place(root, NibblePath{});

    const RootRecord record{root.kind, root.storedAt.value_or(0), root.hash};
    for (const auto& [key, value] : updater.writes()) {
        batch.put(nodes_, key, value);
    }
    batch.put(nodes_, tree::rootKey(version), tree::encodeRoot(record));
    for (const TreeUpdate* update : unique) {
        batch.put(values_, tree::valueKey(update->key, version), tree::encodeValue(update->value));
    }
    return root.hash;
}

Result<std::optional<Bytes>> StateTree::get(const Hash256& key, std::uint64_t version) const {
    auto cursor = store_.prefixCursor(values_);
    cursor.seekForPrev(tree::valueKey(key, version));
    if (!cursor.valid()) {
        GL_TRY(cursor.status());
        return std::optional<Bytes>();
    }
    const ByteView found = cursor.key();
    if (found.size() < Hash256::size() ||
        !std::equal(key.view().begin(), key.view().end(), found.begin())) {
        return std::optional<Bytes>();
    }
    if (found.size() != Hash256::size() + 8) {
        return fail(ErrorCode::kCorrupt, "state tree: malformed value key");
    }
    return tree::decodeValue(cursor.value());
}

Result<Hash256> StateTree::rootAt(std::uint64_t version) const {
    GL_ASSIGN_OR_RETURN(stored, store_.get(nodes_, tree::rootKey(version)));
    if (!stored) {
        return std::unexpected(notFound(version));
    }
    GL_ASSIGN_OR_RETURN(record, tree::decodeRoot(*stored, version));
    return record.hash;
}

Result<StateProof> StateTree::prove(const Hash256& key, std::uint64_t version) const {
    GL_ASSIGN_OR_RETURN(stored, store_.get(nodes_, tree::rootKey(version)));
    if (!stored) {
        return std::unexpected(notFound(version));
    }
    GL_ASSIGN_OR_RETURN(record, tree::decodeRoot(*stored, version));
    StateProof proof;
    if (record.kind == RootKind::kEmpty) {
        return proof;
    }
    NibblePath path;
    if (record.kind == RootKind::kLeaf) {
        GL_ASSIGN_OR_RETURN(leaf,
                            tree::loadLeaf(store_, nodes_, record.nodeVersion, path, record.hash));
        proof.leaf = ProofLeaf{leaf.key, leaf.valueHash};
        return proof;
    }
    std::uint64_t nodeVersion = record.nodeVersion;
    while (true) {
        GL_ASSIGN_OR_RETURN(node, tree::loadInternal(store_, nodes_, nodeVersion, path));
        const auto walk =
            tree::walkInternal(node, tree::nibbleAt(key, path.size()), proof.siblings);
        if (walk.end == tree::NodeWalk::End::kEmpty) {
            return proof;
        }
        const ChildRef& child = *node.children[walk.slot];
        path = path.child(walk.slot);
        if (walk.end == tree::NodeWalk::End::kLeaf) {
            GL_ASSIGN_OR_RETURN(leaf,
                                tree::loadLeaf(store_, nodes_, child.version, path, child.hash));
            proof.leaf = ProofLeaf{leaf.key, leaf.valueHash};
            return proof;
        }
        nodeVersion = child.version;
    }
}

}  // namespace gridledger::ledger
