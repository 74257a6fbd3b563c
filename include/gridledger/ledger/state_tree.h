#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/storage/kv_store.h>

/**
 * The Merkle state tree of the ledger: a versioned sparse Merkle tree over 256-bit keys.
 *
 * Nodes are 16-ary (one nibble of the key per level), a subtree holding a single key is collapsed
 * into a leaf at the highest position where that key is alone, and the 16 children of an internal
 * node are hashed as a 4-level binary tree. The root is therefore the root of the canonical binary
 * sparse Merkle tree of the key set: it depends only on the keys and values, never on the order or
 * the versions in which they were written. docs/state_tree.md gives every byte of the hashing, the
 * storage layout and the proof format.
 */
namespace gridledger::ledger {

namespace tree {
class ApplyWorker;
class LatestValues;
class NodeCache;
}  // namespace tree

/** One change to the tree: set `key` to `value`, or delete it when `value` is std::nullopt. */
struct TreeUpdate {
    Hash256 key;
    std::optional<Bytes> value;
};

/** The leaf met at the end of a proof's path: a key of the tree and the SHA-256 of its value. */
struct ProofLeaf {
    Hash256 key;
    Hash256 valueHash;

    bool operator==(const ProofLeaf&) const = default;
};

/**
 * A proof that a key holds a value (inclusion) or holds none (non-inclusion) under a root.
 *
 * `siblings[i]` is the hash of the sibling of the path at binary depth i + 1 (siblings[0] is the
 * child of the root not taken), so the path ends at binary depth siblings.size() <= 256. There the
 * path meets either `leaf` (the key's own leaf for inclusion; for non-inclusion, another key that
 * shares the first siblings.size() bits) or, when `leaf` is empty, an empty subtree.
 */
struct StateProof {
    std::vector<Hash256> siblings;
    std::optional<ProofLeaf> leaf;

    bool operator==(const StateProof&) const = default;
};

/** A key of the tree with its value. */
struct StateEntry {
    Hash256 key;
    Bytes value;

    bool operator==(const StateEntry&) const = default;
};

/**
 * A subtree beside the range of a range proof, or the mark that the proof descends into a subtree
 * the range's boundary cuts (docs/state_tree.md, "Range proofs").
 */
struct RangeProofItem {
    enum class Kind : std::uint8_t { kEmpty = 0, kLeaf = 1, kNode = 2, kSplit = 3 };
    Kind kind = Kind::kEmpty;
    /** kLeaf: the key of the subtree's only leaf. */
    Hash256 key;
    /** kLeaf: the SHA-256 of that leaf's value; kNode: the subtree's root hash. */
    Hash256 hash;

    bool operator==(const RangeProofItem&) const = default;
};

/**
 * Every key of the tree from `start` to `end` (both included) with its value, and the subtrees
 * beside that range that prove, under a root, that no other key lies in it: one chunk of a state
 * snapshot. Consecutive ranges (the next starting at keyAfter(end)) cover the key space.
 */
struct StateRange {
    Hash256 start;
    Hash256 end;
    /** Ascending by key. */
    std::vector<StateEntry> entries;
    /** In the order verifyRange consumes them. */
    std::vector<RangeProofItem> items;

    bool operator==(const StateRange&) const = default;
};

/**
 * The versioned state tree over two column families of a KvStore.
 *
 * `nodes` holds the tree nodes under (version ‖ nibble path), never overwritten, and one root
 * record per applied version; `values` holds every written value under (key ‖ version). Reads
 * (get, rootAt, prove, latestVersion) may run concurrently with each other and with apply; one
 * apply at a time. Reads take everything from the store but get, which first asks the latest
 * values: the value of each key as of the last version the tree was told is committed (up to
 * kLatestValueBytes of them, filled by committed and by gets at that version; when this tree
 * applied every version since the store was empty and all fit, they also answer that a key
 * without one holds no value). Apply also keeps
 * the internal nodes it read and wrote in memory (up to kApplyCacheBytes of them, with the hashes
 * inside each node and the keys and value hashes of their leaves), so that a version costs no
 * read of what earlier applies of this tree wrote, and a node whose children changed in one slot
 * costs 4 hashes instead of 15. An apply of kSharedApplyOps distinct keys or more updates the
 * root's children on two threads, each taking about half of the keys; the nodes, the batch and
 * the root are those one thread makes.
 */
class StateTree {
  public:
    /** The memory apply's node cache may take: every internal node of a 1M-key tree fits. */
    static constexpr std::size_t kApplyCacheBytes = std::size_t{320} << 20U;

    /** The memory the latest values may take: the accounts of a 1M-account state fit. */
    static constexpr std::size_t kLatestValueBytes = std::size_t{256} << 20U;

    /** Applies of at least this many distinct keys share their work between two threads. */
    static constexpr std::size_t kSharedApplyOps = 512;

    /**
     * Requires `store` to outlive the tree and both columns to be used by this tree only.
     * `applyCacheBytes` bounds apply's node cache (0: none, every node is read from the store);
     * `latestValueBytes` the latest values (0: none, every get is a seek in the store).
     */
    StateTree(storage::KvStore& store, storage::Column nodes, storage::Column values,
              std::size_t applyCacheBytes = kApplyCacheBytes,
              std::size_t latestValueBytes = kLatestValueBytes);
    ~StateTree();
    StateTree(const StateTree&) = delete;
    StateTree& operator=(const StateTree&) = delete;

    /**
     * Applies `updates` as version `version` on top of the latest version committed to the store
     * (or the empty tree) and returns the new root.
     *
     * Requires `version` to be greater than every version committed so far (kInvalidArgument
     * otherwise), and the batch of the previous apply to be committed (or discarded) first: apply
     * reads the base version from the store. Duplicate keys: the last update of a key wins.
     * Deleting an absent key is a no-op for the root. Guarantees: the new nodes, the value records
     * and the root record of `version` are added to `batch`, which is not committed; the batch
     * content and the root depend only on the updates (not their order, bar duplicates); a version
     * with no effective change gets the previous root. On error (kStorage, kCorrupt) `batch` is
     * left untouched.
     */
    [[nodiscard]] Result<Hash256> apply(std::uint64_t version, std::span<const TreeUpdate> updates,
                                        storage::WriteBatch& batch);

    /**
     * Applies of at least `keys` distinct keys share their work between two threads from now on
     * (kSharedApplyOps until set; SIZE_MAX: none does). Changes nothing but which threads work.
     */
    void shareAppliesFrom(std::size_t keys) { sharedApplyOps_ = keys; }

    /**
     * Tells the tree that the batch of the last apply, of `version`, is committed to the store:
     * get then answers reads of its keys at `version` from memory. Call it once that batch is
     * written; until then get reads `version` from the store.
     * A call for another version, or with no apply since the last call, changes nothing. A
     * committed version the tree is not told of (a batch written but not reported, or another
     * tree instance's) only costs the next committed call its latest values, never a wrong read.
     */
    void committed(std::uint64_t version);

    /**
     * The value of `key` as of `version`: the last value written at a version <= `version`, or
     * std::nullopt if none or if it was deleted since. Answered from the latest values when they
     * know the key at `version`, else one seek in the value column. Sees committed batches only.
     * kStorage / kCorrupt on a failing or damaged store.
     */
    [[nodiscard]] Result<std::optional<Bytes>> get(const Hash256& key, std::uint64_t version) const;

    /**
     * The root of the tree at an applied `version` (one read). kNotFound if `version` was never
     * applied and committed (including versions skipped between two applies).
     */
    [[nodiscard]] Result<Hash256> rootAt(std::uint64_t version) const;

    /** The latest committed version, std::nullopt for a tree that was never applied. */
    [[nodiscard]] Result<std::optional<std::uint64_t>> latestVersion() const;

    /**
     * The first `limit` keys that hold a value at `version` from `first` to `last` (both
     * included), ascending. Walks only the nodes of that version whose key range meets
     * [first, last], and stops at the limit: the cost grows with the keys it returns and the depth
     * of the tree, never with keys deleted before or beyond the limit.
     * Empty for a version never applied (the empty tree, as get reads it before genesis); kCorrupt
     * if the stored nodes are damaged.
     */
    [[nodiscard]] Result<std::vector<Hash256>> keysBetween(
        const Hash256& first, const Hash256& last, std::uint64_t version,
        std::size_t limit = std::numeric_limits<std::size_t>::max()) const;

    /**
     * An inclusion proof if `key` holds a value at `version`, else a non-inclusion proof; either
     * verifies with verifyProof against rootAt(version) and the value get(key, version) returns.
     * kNotFound if `version` has no root; kCorrupt if the stored nodes are damaged.
     */
    [[nodiscard]] Result<StateProof> prove(const Hash256& key, std::uint64_t version) const;

    /**
     * The first `limit` keys holding a value at `version` from `start` on, with their values and
     * the proof that they are all the keys of their range: the range ends at the last of them
     * when more keys follow, else at the highest key (0xff…ff). verifyRange accepts the result
     * against rootAt(version). kInvalidArgument for a limit of 0; kNotFound if `version` has no
     * root; kCorrupt if the stored nodes or values are damaged.
     */
    [[nodiscard]] Result<StateRange> proveRange(const Hash256& start, std::uint64_t version,
                                                std::size_t limit) const;

  private:
    storage::KvStore& store_;
    storage::Column nodes_;
    storage::Column values_;
    std::unique_ptr<tree::NodeCache> cache_;
    std::unique_ptr<tree::LatestValues> latest_;
    std::size_t sharedApplyOps_ = kSharedApplyOps;
    /** The second thread of shared applies, made at the first of them. */
    std::unique_ptr<tree::ApplyWorker> worker_;
    /**
     * The last apply's version, its writes (each key once) and whether the store held no version
     * before it, until committed.
     */
    std::optional<std::uint64_t> pendingVersion_;
    std::vector<TreeUpdate> pending_;
    bool pendingFromEmpty_ = false;
    /**
     * The latest version when committed reported this tree's last apply, until the next apply:
     * that apply then reads no cursor to learn it. Any other case reads the store.
     */
    std::optional<std::uint64_t> reportedLatest_;
};

/**
 * Checks a proof against `root`: with `value` set, that `key` holds exactly `value`; with
 * std::nullopt, that `key` holds no value. Pure and total: any malformed proof yields false.
 */
[[nodiscard]] bool verifyProof(const Hash256& root, const Hash256& key,
                               const std::optional<Bytes>& value, const StateProof& proof);

/** The canonical bytes of a proof (format in docs/state_tree.md). Requires siblings.size() <= 256.
 */
[[nodiscard]] Bytes encodeProof(const StateProof& proof);

/**
 * Parses the bytes of encodeProof. Accepts exactly the encodings encodeProof produces: any other
 * input (truncated, trailing bytes, unknown format or flag, more than 256 siblings) is kMalformed.
 * Never crashes, whatever the input.
 */
[[nodiscard]] Result<StateProof> decodeProof(ByteView bytes);

/**
 * Checks that `range.entries` are exactly the keys of the tree under `root` from range.start to
 * range.end, with those values. Pure and total: any malformed or inconsistent range yields
 * kInvalidArgument, saying what does not hold.
 */
[[nodiscard]] Status verifyRange(const Hash256& root, const StateRange& range);

/** The canonical bytes of a range (format in docs/state_tree.md). */
[[nodiscard]] Bytes encodeRange(const StateRange& range);

/**
 * Parses the bytes of encodeRange; anything else (truncated, trailing bytes, an unknown format
 * or item kind) is kMalformed. Never crashes, whatever the input. Checks the encoding only:
 * verifyRange checks the content.
 */
[[nodiscard]] Result<StateRange> decodeRange(ByteView bytes);

/** The key after `key` (key + 1 as a 256-bit integer); std::nullopt after 0xff…ff. */
[[nodiscard]] std::optional<Hash256> keyAfter(const Hash256& key);

/** The root of the empty tree: the empty-subtree hash, 32 zero bytes. */
[[nodiscard]] Hash256 emptyTreeRoot();

}  // namespace gridledger::ledger
