#include "block_tree.h"

#include <algorithm>
#include <cassert>
#include <set>
#include <utility>

namespace gridledger::consensus {

BlockTree::BlockTree(BlockPtr root, const codec::QuorumCert& rootQc)
    : root_(std::move(root)), highestQc_(rootQc) {
    assert(root_ && rootQc.blockId == root_->id);
    blocks_.emplace(root_->id, root_);
    qcs_.emplace(root_->id, rootQc);
}

BlockPtr BlockTree::find(const Hash256& id) const {
    const auto it = blocks_.find(id);
    return it == blocks_.end() ? nullptr : it->second;
}

void BlockTree::insert(BlockPtr block) {
    assert(block && contains(block->header.parentId) && !contains(block->id));
    const Hash256 id = block->id;
    blocks_.emplace(id, std::move(block));
}

bool BlockTree::insertQc(const codec::QuorumCert& qc) {
    assert(contains(qc.blockId));
    if (!qcs_.emplace(qc.blockId, qc).second) {
        return false;
    }
    if (qc.round > highestQc_.round) {
        highestQc_ = qc;
    }
    return true;
}

const codec::QuorumCert* BlockTree::qcFor(const Hash256& id) const {
    const auto it = qcs_.find(id);
    return it == qcs_.end() ? nullptr : &it->second;
}

std::vector<BlockPtr> BlockTree::pathFromRoot(const Hash256& id) const {
    std::vector<BlockPtr> path;
    for (BlockPtr block = find(id); block && block->id != root_->id;
         block = find(block->header.parentId)) {
        path.push_back(block);
    }
    std::reverse(path.begin(), path.end());
    return path;
}

void BlockTree::commit(const Hash256& id) {
    BlockPtr newRoot = find(id);
    assert(newRoot);
    // Visit blocks by height so that a parent is decided before its children.
    std::vector<BlockPtr> byHeight;
    byHeight.reserve(blocks_.size());
    for (const auto& entry : blocks_) {
        byHeight.push_back(entry.second);
    }
    std::stable_sort(byHeight.begin(), byHeight.end(), [](const BlockPtr& a, const BlockPtr& b) {
        return a->header.height < b->header.height;
    });
    std::set<Hash256> keep{newRoot->id};
    for (const auto& block : byHeight) {
        if (block->header.height > newRoot->header.height &&
            keep.contains(block->header.parentId)) {
            keep.insert(block->id);
        }
    }
    std::erase_if(blocks_, [&](const auto& entry) { return !keep.contains(entry.first); });
    std::erase_if(qcs_, [&](const auto& entry) { return !keep.contains(entry.first); });
    root_ = std::move(newRoot);
    if (!keep.contains(highestQc_.blockId)) {
        // Only possible if more than f members equivocated: fall back to the best QC still held.
        highestQc_ = qcs_.at(root_->id);
        for (const auto& entry : qcs_) {
            if (entry.second.round > highestQc_.round) {
                highestQc_ = entry.second;
            }
        }
    }
}

bool BlockTree::hasUncommittedTxs() const {
    for (BlockPtr block = find(highestQc_.blockId); block && block->id != root_->id;
         block = find(block->header.parentId)) {
        if (block->header.txCount > 0) {
            return true;
        }
    }
    return false;
}

BlockPtr BlockTree::findByRound(std::uint64_t round) const {
    for (const auto& entry : blocks_) {
        if (entry.second != root_ && entry.second->header.round == round) {
            return entry.second;
        }
    }
    return nullptr;
}

std::uint64_t BlockTree::highestRoundBy(const PubKey& author) const {
    std::uint64_t out = 0;
    for (const auto& entry : blocks_) {
        if (entry.second != root_ && entry.second->header.author == author) {
            out = std::max(out, entry.second->header.round);
        }
    }
    return out;
}

}  // namespace gridledger::consensus
