#pragma once

// Private to the ledger module: the nodes of the state tree, their hashes and their storage
// encodings. docs/state_tree.md describes every byte written here.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <variant>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::ledger::tree {

/** Children per internal node (one per nibble value). */
inline constexpr std::size_t kRadix = 16;
/** Nibbles in a 256-bit key: the deepest internal node sits at nibble depth kMaxNibbles - 1. */
inline constexpr std::size_t kMaxNibbles = 64;
/** Bits in a key: no proof has more binary siblings than this. */
inline constexpr std::size_t kMaxBits = 256;

/** Bit `index` of `key`, 0 being the most significant bit of byte 0. Requires index < 256. */
[[nodiscard]] inline bool bitAt(const Hash256& key, std::size_t index) {
    const unsigned byte = key[index / 8];
    return ((byte >> (7U - index % 8)) & 1U) != 0;
}

/** The hash in the first 32 bytes of `in`, which holds at least that many. */
[[nodiscard]] inline Hash256 readHash(ByteView in) {
    Hash256 out;
    std::memcpy(out.data(), in.data(), Hash256::size());
    return out;
}

/** Whether bit `slot` (slot i of a node) is set in a 16-slot `map`. */
[[nodiscard]] inline bool hasSlot(std::uint16_t map, std::size_t slot) {
    return ((static_cast<unsigned>(map) >> slot) & 1U) != 0;
}

/** Nibble `index` of `key`, 0 being the high nibble of byte 0. Requires index < 64. */
[[nodiscard]] inline std::uint8_t nibbleAt(const Hash256& key, std::size_t index) {
    const std::uint8_t byte = key[index / 2];
    return static_cast<std::uint8_t>(index % 2 == 0 ? byte >> 4 : byte & 0x0fU);
}

/** The position of a node: the first size() nibbles of the keys below it. */
class NibblePath {
  public:
    NibblePath() = default;

    [[nodiscard]] std::size_t size() const { return size_; }
    /** The path one level down, through `nibble`. Requires size() < 64 and nibble < 16. */
    [[nodiscard]] NibblePath child(std::uint8_t nibble) const;
    /** True when `key` starts with this path. */
    [[nodiscard]] bool isPrefixOf(const Hash256& key) const;
    /** Bytes of writeTo: the count byte and the packed nibbles. */
    [[nodiscard]] std::size_t encodedSize() const;
    /**
     * Writes the count byte and the packed nibbles (high nibble first, an odd tail padded with a
     * zero nibble) to out[0..encodedSize()); returns the end.
     */
    std::uint8_t* writeTo(std::uint8_t* out) const;
    /** A hash of the path for hash maps (not cryptographic). */
    [[nodiscard]] std::size_t mapHash() const;

    bool operator==(const NibblePath&) const = default;

  private:
    Hash256 packed_;
    std::uint8_t size_ = 0;
};

/** A stored child of an internal node: its hash, the version it was written at, its kind. */
struct ChildRef {
    Hash256 hash;
    std::uint64_t version = 0;
    bool isLeaf = false;

    bool operator==(const ChildRef&) const = default;
};

/** Up to 16 children, indexed by nibble. Holds >= 2 children, or exactly one internal child. */
struct InternalNode {
    std::array<std::optional<ChildRef>, kRadix> children;
};

/** One key of the tree and the SHA-256 of its value. */
struct LeafNode {
    Hash256 key;
    Hash256 valueHash;

    bool operator==(const LeafNode&) const = default;
};

using Node = std::variant<InternalNode, LeafNode>;

/** SHA-256 of a stored value. */
[[nodiscard]] Hash256 hashValue(ByteView value);
/** SHA-256("gridledger/state/leaf" ‖ key ‖ valueHash). */
[[nodiscard]] Hash256 hashLeaf(const LeafNode& leaf);
/** SHA-256("gridledger/state/node" ‖ left ‖ right): one binary internal node. */
[[nodiscard]] Hash256 hashPair(const Hash256& left, const Hash256& right);
/** The root of the 4-level binary tree over the 16 children (empty and single-leaf ranges
 * collapse). */
[[nodiscard]] Hash256 hashInternal(const InternalNode& node);

/**
 * The hashes of the binary subtrees inside an internal node, in heap order: [1] is the node's
 * hash, [2] and [3] its halves, [4..7] its quarters, [8..15] its pairs of children ([0] unused).
 */
using InnerHashes = std::array<Hash256, kRadix>;

/**
 * Recomputes the entries of `inner` whose range holds a slot set in `changed` (bit i = child i),
 * from `node` and the other entries: with `changed` = 0xffff it computes them all, so that
 * inner[1] == hashInternal(node). A node whose children changed in k slots costs at most 4k
 * hashes this way instead of 15.
 */
void rehashInner(const InternalNode& node, std::uint16_t changed, InnerHashes& inner);

/** Where the binary path of a key ends inside one internal node. */
struct NodeWalk {
    enum class End : std::uint8_t { kEmpty, kLeaf, kChild };
    End end = End::kEmpty;
    /** kLeaf: the slot of the leaf met; kChild: the slot of the internal child to descend into. */
    std::uint8_t slot = 0;
};

/**
 * Appends to `siblings` the binary siblings met inside `node` on the way to `nibble`, and says
 * where the path ends: at an empty range, at a leaf alone in its range, or at an internal child.
 */
[[nodiscard]] NodeWalk walkInternal(const InternalNode& node, std::uint8_t nibble,
                                    std::vector<Hash256>& siblings);

/** Kind of the root of one version. */
enum class RootKind : std::uint8_t { kEmpty = 0, kLeaf = 1, kInternal = 2 };

/** The root record of a version: the kind of root node, where it is stored, its hash. */
struct RootRecord {
    RootKind kind = RootKind::kEmpty;
    std::uint64_t nodeVersion = 0;
    Hash256 hash;
};

/** Appends the node column key: version (8 bytes big-endian) ‖ path count ‖ packed path. */
void appendNodeKey(Bytes& out, std::uint64_t version, const NibblePath& path);
/** The node column key alone (appendNodeKey). */
[[nodiscard]] Bytes nodeKey(std::uint64_t version, const NibblePath& path);
/** Node column key of a root record: the version alone (8 bytes big-endian). */
[[nodiscard]] Bytes rootKey(std::uint64_t version);
/**
 * Value column key: key (32 bytes) ‖ the version's bitwise complement (8 bytes big-endian), so that
 * a key's versions sort newest first and a forward seek finds the newest at or below a version.
 */
[[nodiscard]] Bytes valueKey(const Hash256& key, std::uint64_t version);

/**
 * Where an internal node's stored form starts. A node stored whole is its own full node
 * (`fullVersion` its version, `sinceFull` 0); a node stored as a delta names the version of the
 * node last stored whole at its path and the slots (bit i = slot i) in which it differs from it.
 */
struct StoredForm {
    std::uint64_t fullVersion = 0;
    std::uint16_t sinceFull = 0;
};

/** An internal node as read from the store, with the form it was stored in. */
struct StoredInternal {
    InternalNode node;
    StoredForm form;
};

/**
 * The most slots a delta holds: a node that differs from its path's full node in more slots, or
 * in more than half of its children, is stored whole.
 */
constexpr std::size_t kMaxDeltaSlots = 4;

/** Whether a node of `children` children that differs from its full node in `sinceFull` is
 * stored as a delta. */
[[nodiscard]] bool storedAsDelta(std::uint16_t sinceFull, std::size_t children);

/** Appends the node's stored encoding, whole. */
void appendNode(Bytes& out, const Node& node);
/**
 * Appends the stored encoding of `node` as a delta: its children in the slots `form.sinceFull`,
 * on top of the node stored whole at `form.fullVersion` under the same path.
 */
void appendDelta(Bytes& out, const InternalNode& node, const StoredForm& form);
/** Decodes a node stored at `version`; kCorrupt on any malformed or non-canonical content. */
[[nodiscard]] Result<Node> decodeNode(ByteView bytes, std::uint64_t version);

[[nodiscard]] Bytes encodeRoot(const RootRecord& record);
/** Decodes the root record of `version`; kCorrupt on malformed content. */
[[nodiscard]] Result<RootRecord> decodeRoot(ByteView bytes, std::uint64_t version);

/** 0x00 for a deletion (tombstone), 0x01 ‖ value otherwise. */
[[nodiscard]] Bytes encodeValue(const std::optional<Bytes>& value);
/** Inverse of encodeValue; kCorrupt on an unknown tag. */
[[nodiscard]] Result<std::optional<Bytes>> decodeValue(ByteView bytes);

/**
 * Reads the node stored at (version, path), and the full node a delta stored there builds on. A
 * missing node is kCorrupt: only referenced nodes are ever read. A leaf whose key does not start
 * with `path` is kCorrupt too, as is a delta on anything but an internal node stored whole.
 */
[[nodiscard]] Result<Node> loadNode(const storage::KvStore& store, storage::Column column,
                                    std::uint64_t version, const NibblePath& path);

/** loadNode for a leaf child whose hash the parent recorded; kCorrupt on a kind or hash mismatch.
 */
[[nodiscard]] Result<LeafNode> loadLeaf(const storage::KvStore& store, storage::Column column,
                                        std::uint64_t version, const NibblePath& path,
                                        const Hash256& expectedHash);

/** loadInternal, with the form the node was stored in. */
[[nodiscard]] Result<StoredInternal> loadStoredInternal(const storage::KvStore& store,
                                                        storage::Column column,
                                                        std::uint64_t version,
                                                        const NibblePath& path);

/** loadNode for an internal node; kCorrupt if a leaf is stored there. */
[[nodiscard]] Result<InternalNode> loadInternal(const storage::KvStore& store,
                                                storage::Column column, std::uint64_t version,
                                                const NibblePath& path);

}  // namespace gridledger::ledger::tree
