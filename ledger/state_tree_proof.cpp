// Proofs of the state tree: verification, which needs no store, and the byte format.

#include <string>

#include <gridledger/ledger/state_tree.h>

#include "state_tree_node.h"

namespace gridledger::ledger {
namespace {

using tree::readHash;

constexpr std::uint8_t kProofFormat = 0x01;
constexpr std::uint8_t kNoLeaf = 0x00;
constexpr std::uint8_t kHasLeaf = 0x01;
constexpr std::size_t kHeaderSize = 2;
constexpr std::size_t kLeafSize = 64;
constexpr std::size_t kCountSize = 2;

/** Number of leading bits `a` and `b` share (256 when equal). */
std::size_t commonPrefixBits(const Hash256& a, const Hash256& b) {
    for (std::size_t bit = 0; bit < tree::kMaxBits; ++bit) {
        if (tree::bitAt(a, bit) != tree::bitAt(b, bit)) {
            return bit;
        }
    }
    return tree::kMaxBits;
}

/** The hash where the proof's path ends, or nullopt when the proof cannot back the claim. */
std::optional<Hash256> pathEnd(const Hash256& key, const std::optional<Bytes>& value,
                               const StateProof& proof) {
    if (value) {
        if (!proof.leaf || proof.leaf->key != key ||
            proof.leaf->valueHash != tree::hashValue(*value)) {
            return std::nullopt;
        }
    } else if (proof.leaf) {
        // Another key alone in the subtree the path of `key` leads to: `key` is not there.
        if (proof.leaf->key == key ||
            commonPrefixBits(proof.leaf->key, key) < proof.siblings.size()) {
            return std::nullopt;
        }
    } else {
        return emptyTreeRoot();
    }
    return tree::hashLeaf(tree::LeafNode{proof.leaf->key, proof.leaf->valueHash});
}

Error malformedProof(std::string message) {
    return Error{ErrorCode::kMalformed, "state proof: " + std::move(message)};
}

}  // namespace

Hash256 emptyTreeRoot() {
    return Hash256{};
}

bool verifyProof(const Hash256& root, const Hash256& key, const std::optional<Bytes>& value,
                 const StateProof& proof) {
    if (proof.siblings.size() > tree::kMaxBits) {
        return false;
    }
    const auto end = pathEnd(key, value, proof);
    if (!end) {
        return false;
    }
    Hash256 current = *end;
    for (std::size_t depth = proof.siblings.size(); depth-- > 0;) {
        const Hash256& sibling = proof.siblings[depth];
        current = tree::bitAt(key, depth) ? tree::hashPair(sibling, current)
                                          : tree::hashPair(current, sibling);
    }
    return current == root;
}

Bytes encodeProof(const StateProof& proof) {
    Bytes out;
    out.reserve(kHeaderSize + kLeafSize + kCountSize + proof.siblings.size() * Hash256::size());
    out.push_back(kProofFormat);
    out.push_back(proof.leaf ? kHasLeaf : kNoLeaf);
    if (proof.leaf) {
        append(out, proof.leaf->key.view());
        append(out, proof.leaf->valueHash.view());
    }
    const auto count = static_cast<std::uint16_t>(proof.siblings.size());
    out.push_back(static_cast<std::uint8_t>(count >> 8));
    out.push_back(static_cast<std::uint8_t>(count & 0xffU));
    for (const auto& sibling : proof.siblings) {
        append(out, sibling.view());
    }
    return out;
}

Result<StateProof> decodeProof(ByteView bytes) {
    if (bytes.size() < kHeaderSize + kCountSize) {
        return std::unexpected(malformedProof("too short"));
    }
    if (bytes[0] != kProofFormat) {
        return std::unexpected(malformedProof("unknown format " + std::to_string(bytes[0])));
    }
    if (bytes[1] != kNoLeaf && bytes[1] != kHasLeaf) {
        return std::unexpected(malformedProof("bad leaf flag"));
    }
    StateProof proof;
    std::size_t offset = kHeaderSize;
    if (bytes[1] == kHasLeaf) {
        if (bytes.size() < offset + kLeafSize + kCountSize) {
            return std::unexpected(malformedProof("truncated leaf"));
        }
        proof.leaf =
            ProofLeaf{readHash(bytes.subspan(offset)), readHash(bytes.subspan(offset + 32))};
        offset += kLeafSize;
    }
    const std::size_t count = (std::size_t{bytes[offset]} << 8) | bytes[offset + 1];
    offset += kCountSize;
    if (count > tree::kMaxBits) {
        return std::unexpected(malformedProof("more than 256 siblings"));
    }
    if (bytes.size() - offset != count * Hash256::size()) {
        return std::unexpected(malformedProof("sibling bytes do not match the count"));
    }
    proof.siblings.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        proof.siblings.push_back(readHash(bytes.subspan(offset + i * Hash256::size())));
    }
    return proof;
}

}  // namespace gridledger::ledger
