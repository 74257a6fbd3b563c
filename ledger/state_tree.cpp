#include <algorithm>
#include <bit>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include <gridledger/ledger/state_tree.h>

#include "apply_worker.h"
#include "state_tree_cache.h"
#include "state_tree_latest.h"
#include "state_tree_node.h"

namespace gridledger::ledger {
namespace {

using tree::ChildRef;
using tree::InnerHashes;
using tree::InternalNode;
using tree::LeafNode;
using tree::NibblePath;
using tree::NodeCache;
using tree::RootKind;
using tree::RootRecord;
using tree::StoredForm;

/** One deduplicated update: the key and the hash of its new value (nullopt = delete). */
struct Op {
    Hash256 key;
    std::optional<Hash256> valueHash;
};

/**
 * A subtree during an apply, before or after the update: its kind and hash, the content of a
 * leaf when known (this apply made it, or the cached parent holds it), and the version under
 * which it is stored at its current path (none for a leaf created or moved by this apply, which is
 * written once its final position is known). A stored leaf's content is read from the store only
 * when an update needs it and the cache did not know it.
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

/** Child `slot` of a cached internal node. */
Subtree childOf(const NodeCache::Entry& parent, std::size_t slot) {
    const auto child = parent.child(slot);
    if (!child) {
        return {};
    }
    Subtree out{child->isLeaf ? RootKind::kLeaf : RootKind::kInternal, child->hash, std::nullopt,
                child->version};
    out.leaf = parent.leaf(slot);
    return out;
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
 * Where the root's slots are split between two threads: the first slot of the second thread's
 * side (never 0), chosen so that each side holds some of the ops and as near half of them as
 * whole slots allow; kRadix when one slot holds them all.
 */
std::size_t middleSlot(const std::array<std::span<const Op>, tree::kRadix>& ranges) {
    std::size_t total = 0;
    for (const auto& range : ranges) {
        total += range.size();
    }
    std::size_t before = 0;
    for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
        const std::size_t through = before + ranges[slot].size();
        if (2 * through > total) {
            // The middle op is in `slot`, which joins the side that it unbalances less.
            if (before == 0) {
                return through == total ? tree::kRadix : slot + 1;
            }
            if (through == total || total / 2 - before <= through - total / 2) {
                return slot;
            }
            return slot + 1;
        }
        before = through;
    }
    return tree::kRadix;
}

constexpr std::uint16_t kAllSlots = 0xffff;
/** Encoded node bytes reserved per update: about two internal nodes of 16 children on a large
 * tree (12 + 16 × 40 bytes each, key and value). */
constexpr std::size_t kEncodedBytesPerOp = 1'280;

/** An internal node that an apply rewrites: its entry, and the cache's own copy if it has one. */
struct Base {
    const NodeCache::Entry* entry = nullptr;
    NodeCache::Entry* cached = nullptr;
};

/**
 * One apply: rewrites the paths the ops touch, bottom-up. Internal nodes come from the cache, or
 * from the store on a miss; the nodes this apply creates stay in memory (in `writes_`). A node
 * that replaces a cached one is cached in its place at once; the others, and the nodes read from
 * the store, reach the cache through `read()` and `written()` once the apply has succeeded. An
 * Updater destroyed before `succeeded()` empties the entries it rewrote: their nodes were never
 * stored.
 */
class Updater {
  public:
    /** `ops`: the number of updates, by which the nodes to write are reserved. */
    Updater(const storage::KvStore& store, storage::Column nodes, NodeCache& cache,
            std::uint64_t version, std::size_t ops)
        : store_(store), nodes_(nodes), cache_(cache), version_(version) {
        // About two internal nodes and one leaf per update on a large tree.
        writes_.reserve(3 * ops + 1);
        encoded_.reserve(kEncodedBytesPerOp * ops);
        rewritten_.reserve(2 * ops + 1);
    }
    ~Updater() {
        cache_.settle(rewrites_);
        if (!succeeded_) {
            for (NodeCache::Entry* entry : rewritten_) {
                cache_.drop(*entry);
            }
        }
    }
    Updater(const Updater&) = delete;
    Updater& operator=(const Updater&) = delete;
    Updater(Updater&&) = delete;
    Updater& operator=(Updater&&) = delete;

    /** The apply succeeded: the entries rewritten in place stay. */
    void succeeded() { succeeded_ = true; }

    /**
     * Lets `helper`, an Updater of the same version, update the root's children from the middle
     * of the ops on, on `worker` (or on this thread, after its own part, without one), while this
     * one updates the others. Each keeps its own writes and cache entries; no path is touched by
     * both.
     */
    void share(Updater& helper, tree::ApplyWorker* worker) {
        helper_ = &helper;
        worker_ = worker;
    }

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

    /** Whether `subtree` is a leaf this apply created or moved, not yet written. */
    [[nodiscard]] static bool unplaced(const Subtree& subtree) {
        return subtree.kind == RootKind::kLeaf && !subtree.storedAt;
    }

    /** Writes a leaf this apply created or moved, now that its final `path` is known. */
    void place(Subtree& subtree, const NibblePath& path) {
        if (unplaced(subtree)) {
            writeNode(path, tree::Node{*subtree.leaf});
            subtree.storedAt = version_;
        }
    }

    /** The nodes to write, in the order they were made. */
    [[nodiscard]] std::size_t writeCount() const { return writes_.size(); }
    [[nodiscard]] ByteView writeKey(std::size_t i) const {
        return ByteView(encoded_).subspan(writes_[i].begin, writes_[i].keyEnd - writes_[i].begin);
    }
    [[nodiscard]] ByteView writeValue(std::size_t i) const {
        return ByteView(encoded_).subspan(writes_[i].keyEnd, writes_[i].end - writes_[i].keyEnd);
    }
    /**
     * The nodes read from the store, then those written at paths the cache did not hold at the
     * version rewritten, for the cache once apply succeeded.
     */
    [[nodiscard]] std::deque<std::pair<NibblePath, NodeCache::Entry>>& read() { return read_; }
    [[nodiscard]] std::vector<std::pair<NibblePath, NodeCache::Entry>>& written() {
        return written_;
    }

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
            children[slot] = child;
        }
        return assemble(path, children, kAllSlots, Base{}, kAllSlots);
    }

    /** A subtree that was a single leaf: keep, replace or delete it, or split below it. */
    Result<Subtree> mergeLeaf(const Subtree& old, const NibblePath& path, std::span<const Op> ops) {
        // The key decides whether an update is for this leaf; the content comes from the store
        // only when neither this apply nor the cached parent knows it.
        GL_ASSIGN_OR_RETURN(leaf, leafOf(old, path));
        const auto it = std::lower_bound(ops.begin(), ops.end(), leaf.key,
                                         [](const Op& op, const Hash256& k) { return op.key < k; });
        const bool touched = it != ops.end() && it->key == leaf.key;
        const std::size_t otherPuts = countPuts(ops) - (touched && it->valueHash ? 1 : 0);
        Subtree kept = old;
        kept.leaf = leaf;
        if (otherPuts == 0) {
            if (!touched) {
                return kept;
            }
            if (!it->valueHash) {
                return Subtree{};
            }
            Subtree replaced = newLeaf(LeafNode{leaf.key, *it->valueHash});
            return replaced.hash == old.hash ? kept : replaced;
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
        GL_ASSIGN_OR_RETURN(base, internalAt(*old.storedAt, path, old.hash));
        const auto ranges = splitByNibble(ops, path.size());
        // The internal children about to be updated are looked up in the cache one after the
        // other: ask for their index slots together, so that their misses overlap.
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            if (ranges[slot].empty()) {
                continue;
            }
            if (const auto child = base.entry->child(slot); child && !child->isLeaf) {
                cache_.prefetch(path.child(static_cast<std::uint8_t>(slot)));
            }
        }
        std::array<Result<Subtree>, tree::kRadix> updated;
        const std::size_t split =
            helper_ != nullptr && path.size() == 0 ? middleSlot(ranges) : tree::kRadix;
        // The root's children are independent subtrees: the helper takes those from the middle of
        // the ops on, on the worker.
        std::uint16_t upperChanged = 0;
        const auto upper = [&] {
            upperChanged =
                helper_->updateChildren(*base.entry, path, ranges, split, tree::kRadix, updated);
        };
        std::optional<tree::ApplyWorker::Task> second;
        if (split < tree::kRadix && worker_ != nullptr) {
            second.emplace(*worker_, upper);
        }
        const std::uint16_t lowerChanged =
            updateChildren(*base.entry, path, ranges, 0, split, updated);
        if (second) {
            second->finish();
        } else if (split < tree::kRadix) {
            upper();
        }
        const auto changed = static_cast<std::uint16_t>(lowerChanged | upperChanged);
        // Most slots of a deep node are reached by no update: assemble takes them from the base.
        std::array<Subtree, tree::kRadix> children;
        std::uint16_t touched = 0;
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            if (ranges[slot].empty()) {
                continue;
            }
            touched = static_cast<std::uint16_t>(touched | (1U << slot));
            GL_ASSIGN_OR_RETURN(after, std::move(updated[slot]));
            children[slot] = after;
        }
        if (changed == 0) {
            return old;
        }
        return assemble(path, children, touched, base, changed);
    }

    /**
     * Updates the children in slots [from, to) of `base`, at `path`, into `updated`; returns the
     * slots whose child the update changed.
     */
    std::uint16_t updateChildren(const NodeCache::Entry& base, const NibblePath& path,
                                 const std::array<std::span<const Op>, tree::kRadix>& ranges,
                                 std::size_t from, std::size_t to,
                                 std::array<Result<Subtree>, tree::kRadix>& updated) {
        std::uint16_t changed = 0;
        for (std::size_t slot = from; slot < to; ++slot) {
            if (ranges[slot].empty()) {
                continue;
            }
            const Subtree before = childOf(base, slot);
            updated[slot] =
                update(before, path.child(static_cast<std::uint8_t>(slot)), ranges[slot]);
            if (updated[slot] && !updated[slot]->sameAs(before)) {
                changed = static_cast<std::uint16_t>(changed | (1U << slot));
            }
        }
        return changed;
    }

    /**
     * The subtree at `path` made of these children: empty, a lone leaf moved up (written later
     * by an ancestor), or a new internal node written at (version, path). `children` holds the
     * subtrees of the slots in `given`; the other slots are those of `base`, the node that was at
     * `path`, if any, from which only the `changed` slots differ: its inner hashes are reused for
     * the others.
     */
    Result<Subtree> assemble(const NibblePath& path, std::array<Subtree, tree::kRadix>& children,
                             std::uint16_t given, Base base, std::uint16_t changed) {
        const auto kept = static_cast<std::uint16_t>(
            base.entry != nullptr ? base.entry->childMap() & ~given : 0U);
        auto present = kept;
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            if (tree::hasSlot(given, slot) && children[slot].kind != RootKind::kEmpty) {
                present = static_cast<std::uint16_t>(present | (1U << slot));
            }
        }
        const auto count = static_cast<std::size_t>(std::popcount(present));
        if (count == 0) {
            return Subtree{};
        }
        const auto last = static_cast<std::size_t>(std::bit_width(present) - 1U);
        if (count == 1 && tree::hasSlot(kept, last)) {
            children[last] = childOf(*base.entry, last);
        }
        if (count == 1 && children[last].kind == RootKind::kLeaf) {
            const auto childPath = path.child(static_cast<std::uint8_t>(last));
            GL_ASSIGN_OR_RETURN(leaf, leafOf(children[last], childPath));
            return newLeaf(leaf);
        }
        InternalNode node;
        if (kept != 0) {
            base.entry->copyChildren(kept, node);
        }
        std::array<const LeafNode*, tree::kRadix> leaves{};
        for (std::size_t slot = 0; slot < tree::kRadix; ++slot) {
            Subtree& child = children[slot];
            if (!tree::hasSlot(given, slot) || child.kind == RootKind::kEmpty) {
                continue;
            }
            if (unplaced(child)) {
                place(child, path.child(static_cast<std::uint8_t>(slot)));
            }
            const bool isLeaf = child.kind == RootKind::kLeaf;
            node.children[slot] = ChildRef{child.hash, *child.storedAt, isLeaf};
            if (isLeaf && child.leaf) {
                leaves[slot] = &*child.leaf;
            }
        }
        InnerHashes inner = base.entry != nullptr ? base.entry->inner() : InnerHashes{};
        tree::rehashInner(node, base.entry != nullptr ? changed : kAllSlots, inner);
        const Hash256 hash = inner[1];
        // A node that differs from its path's last full node in a few slots is stored as those
        // slots alone; the others, and a new path's node, whole.
        StoredForm form{version_, 0};
        if (base.entry != nullptr) {
            const StoredForm prior = base.entry->form();
            const auto sinceFull = static_cast<std::uint16_t>(prior.sinceFull | changed);
            if (tree::storedAsDelta(sinceFull, count)) {
                form = StoredForm{prior.fullVersion, sinceFull};
            }
        }
        if (form.sinceFull != 0) {
            writeDelta(path, node, form);
        } else {
            writeNode(path, tree::Node{node});
        }
        if (base.cached != nullptr) {
            NodeCache::rewrite(*base.cached, rewrites_, version_, form, node, inner, leaves, kept);
            rewritten_.push_back(base.cached);
        } else {
            written_.emplace_back(
                path, NodeCache::Entry(version_, form, node, inner, leaves, base.entry, kept));
        }
        return Subtree{RootKind::kInternal, hash, std::nullopt, version_};
    }

    /** The internal node at (version, path), whose parent records `expectedHash`. */
    Result<Base> internalAt(std::uint64_t version, const NibblePath& path,
                            const Hash256& expectedHash) {
        if (NodeCache::Entry* hit = cache_.find(version, path)) {
            return Base{hit, hit};
        }
        GL_ASSIGN_OR_RETURN(stored, tree::loadStoredInternal(store_, nodes_, version, path));
        InnerHashes inner;
        tree::rehashInner(stored.node, kAllSlots, inner);
        if (inner[1] != expectedHash) {
            return fail(ErrorCode::kCorrupt, "state tree: internal node does not match its parent");
        }
        read_.emplace_back(path, NodeCache::Entry(version, stored.form, stored.node, inner, {}));
        return Base{&read_.back().second, nullptr};
    }

    /** The content of a leaf subtree, read from the store if this apply did not make it. */
    Result<LeafNode> leafOf(const Subtree& leaf, const NibblePath& path) const {
        if (leaf.leaf) {
            return *leaf.leaf;
        }
        return tree::loadLeaf(store_, nodes_, *leaf.storedAt, path, leaf.hash);
    }

    /** A node write: its key and value, back to back in encoded_ from `begin`. */
    struct NodeWrite {
        std::size_t begin = 0;
        std::size_t keyEnd = 0;
        std::size_t end = 0;
    };

    void writeNode(const NibblePath& path, const tree::Node& node) {
        write(path, [&] { tree::appendNode(encoded_, node); });
    }

    void writeDelta(const NibblePath& path, const InternalNode& node, const StoredForm& form) {
        write(path, [&] { tree::appendDelta(encoded_, node, form); });
    }

    /** Appends the node key of (version, path), then what `appendValue` appends, as one write. */
    template <typename AppendValue>
    void write(const NibblePath& path, AppendValue appendValue) {
        const std::size_t begin = encoded_.size();
        tree::appendNodeKey(encoded_, version_, path);
        const std::size_t keyEnd = encoded_.size();
        appendValue();
        writes_.push_back(NodeWrite{begin, keyEnd, encoded_.size()});
    }

    const storage::KvStore& store_;
    storage::Column nodes_;
    NodeCache& cache_;
    std::uint64_t version_;
    std::vector<NodeWrite> writes_;
    /** Every node write's key and value, one allocation for the apply. */
    Bytes encoded_;
    /** A deque, so that an entry stays where internalAt's caller points while more are read. */
    std::deque<std::pair<NibblePath, NodeCache::Entry>> read_;
    std::vector<std::pair<NibblePath, NodeCache::Entry>> written_;
    std::vector<NodeCache::Entry*> rewritten_;
    NodeCache::Rewrites rewrites_;
    Updater* helper_ = nullptr;
    tree::ApplyWorker* worker_ = nullptr;
    bool succeeded_ = false;
};

/** One node write of an apply: its rank (below), its Updater, and its index there. */
struct RankedWrite {
    std::uint64_t rank = 0;
    const Updater* by = nullptr;
    std::uint32_t index = 0;

    [[nodiscard]] ByteView key() const { return by->writeKey(index); }
    [[nodiscard]] ByteView value() const { return by->writeValue(index); }
};

/**
 * A version's node writes, made by `updaters`, in key order, so that the memtable inserts them
 * one after the other (storeOptions). Their keys share the version's 8 bytes and are told apart
 * from the ninth on (the path's length, then its nibbles): the next 8 bytes, as one number (the
 * rank), order nearly all of them, and the whole keys only those that share those bytes too.
 */
std::vector<RankedWrite> inKeyOrder(std::span<Updater* const> updaters) {
    constexpr std::size_t kShared = 8;
    std::vector<RankedWrite> order;
    std::size_t count = 0;
    for (const Updater* writes : updaters) {
        count += writes->writeCount();
    }
    order.reserve(count);
    for (const Updater* writes : updaters) {
        for (std::size_t i = 0; i < writes->writeCount(); ++i) {
            const ByteView key = writes->writeKey(i);
            std::uint64_t rank = 0;
            for (std::size_t at = kShared; at < kShared + 8; ++at) {
                rank = (rank << 8U) | (at < key.size() ? key[at] : 0U);
            }
            order.push_back(RankedWrite{rank, writes, static_cast<std::uint32_t>(i)});
        }
    }
    std::sort(order.begin(), order.end(), [](const RankedWrite& a, const RankedWrite& b) {
        if (a.rank != b.rank) {
            return a.rank < b.rank;
        }
        const ByteView left = a.key();
        const ByteView right = b.key();
        return std::lexicographical_compare(left.begin(), left.end(), right.begin(), right.end());
    });
    return order;
}

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

StateTree::StateTree(storage::KvStore& store, storage::Column nodes, storage::Column values,
                     std::size_t applyCacheBytes, std::size_t latestValueBytes)
    : store_(store),
      nodes_(nodes),
      values_(values),
      cache_(std::make_unique<NodeCache>(applyCacheBytes)),
      latest_(std::make_unique<tree::LatestValues>(latestValueBytes)) {}

StateTree::~StateTree() = default;

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
    // The version committed last, without a cursor that would wait for its batch to land
    // (storage::KvStore::writeBehind) when this tree was told of it right after its own apply,
    // unless another writer has taken `version` since.
    std::optional<std::uint64_t> latest = std::exchange(reportedLatest_, std::nullopt);
    if (latest) {
        GL_ASSIGN_OR_RETURN(taken, store_.get(nodes_, tree::rootKey(version)));
        if (taken) {
            latest.reset();
        }
    }
    if (!latest) {
        GL_ASSIGN_OR_RETURN(stored, latestVersion());
        latest = stored;
    }
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
    // A large apply shares the root's children with a helper (two threads); whether it does
    // changes neither the nodes written nor the order of the batch.
    const bool shared = base.kind == RootKind::kInternal && ops.size() >= sharedApplyOps_;
    Updater updater(store_, nodes_, *cache_, version, shared ? ops.size() / 2 : ops.size());
    std::optional<Updater> helper;
    std::vector<Updater*> updaters{&updater};
    if (shared) {
        helper.emplace(store_, nodes_, *cache_, version, ops.size() / 2);
        if (!worker_) {
            try {
                worker_ = std::make_unique<tree::ApplyWorker>();
            } catch (const std::system_error&) {
                // No thread to be had: the updater does the helper's part too, and the next
                // shared apply asks again.
            }
        }
        updater.share(*helper, worker_.get());
        updaters.push_back(&*helper);
    }
    GL_ASSIGN_OR_RETURN(root, updater.update(fromRoot(base), NibblePath{}, ops));
    updater.place(root, NibblePath{});
    for (Updater* done : updaters) {
        done->succeeded();
        for (auto& [path, entry] : done->read()) {
            cache_->put(path, std::move(entry));
        }
        for (auto& [path, entry] : done->written()) {
            cache_->put(path, std::move(entry));
        }
    }

    const RootRecord record{root.kind, root.storedAt.value_or(0), root.hash};
    batch.put(nodes_, tree::rootKey(version), tree::encodeRoot(record));
    for (const RankedWrite& write : inKeyOrder(updaters)) {
        batch.put(nodes_, write.key(), write.value());
    }
    pending_.clear();
    pending_.reserve(unique.size());
    for (const TreeUpdate* update : unique) {
        batch.put(values_, tree::valueKey(update->key, version), tree::encodeValue(update->value));
        pending_.push_back(*update);
    }
    pendingVersion_ = version;
    pendingFromEmpty_ = !latest;
    return root.hash;
}

void StateTree::committed(std::uint64_t version) {
    if (pendingVersion_ != version) {
        return;
    }
    latest_->advance(version, pending_, pendingFromEmpty_);
    reportedLatest_ = version;
    pendingVersion_.reset();
    pending_.clear();
}

Result<std::optional<Bytes>> StateTree::get(const Hash256& key, std::uint64_t version) const {
    if (auto known = latest_->find(key, version)) {
        return std::move(known->value);
    }
    auto cursor = store_.prefixCursor(values_);
    cursor.seek(tree::valueKey(key, version));
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
    GL_ASSIGN_OR_RETURN(value, tree::decodeValue(cursor.value()));
    latest_->learn(key, version, ~readU64(found.subspan(Hash256::size())), value);
    return value;
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
