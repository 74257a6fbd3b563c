#include <algorithm>
#include <limits>

#include <gridledger/contracts/state.h>

namespace gridledger::contracts {

Result<std::optional<Bytes>> StateLayer::get(const Hash256& key) const {
    if (auto it = writes_.find(key); it != writes_.end()) {
        return it->second;
    }
    if (parent_ != nullptr) {
        return parent_->get(key);
    }
    return tree_->get(key, version_);
}

Result<std::vector<Hash256>> StateLayer::keysBetween(const Hash256& first, const Hash256& last,
                                                     std::size_t limit) const {
    auto write = writes_.lower_bound(first);
    const auto end = writes_.upper_bound(last);
    // Each erased key of this layer hides at most one key below: asking the layer below for as
    // many more keys as this layer erases in the range leaves at least `limit` keys up to the
    // last one it returns, so the first `limit` of the merge are the true first `limit`.
    std::size_t erased = 0;
    for (auto it = write; it != end; ++it) {
        erased += it->second ? 0U : 1U;
    }
    const std::size_t belowLimit =
        limit > std::numeric_limits<std::size_t>::max() - erased ? limit : limit + erased;
    GL_ASSIGN_OR_RETURN(below, parent_ != nullptr
                                   ? parent_->keysBetween(first, last, belowLimit)
                                   : tree_->keysBetween(first, last, version_, belowLimit));
    std::vector<Hash256> out;
    out.reserve(std::min(limit, below.size()));
    auto under = below.begin();
    while ((under != below.end() || write != end) && out.size() < limit) {
        if (write == end || (under != below.end() && *under < write->first)) {
            out.push_back(*under++);
            continue;
        }
        if (under != below.end() && *under == write->first) {
            ++under;
        }
        if (write->second) {
            out.push_back(write->first);
        }
        ++write;
    }
    return out;
}

void StateLayer::mergeIntoParent() {
    for (auto& [key, value] : writes_) {
        parent_->writes_[key] = std::move(value);
    }
    writes_.clear();
}

std::vector<ledger::TreeUpdate> StateLayer::updates() const {
    std::vector<ledger::TreeUpdate> out;
    out.reserve(writes_.size());
    for (const auto& [key, value] : writes_) {
        out.push_back(ledger::TreeUpdate{key, value});
    }
    return out;
}

}  // namespace gridledger::contracts
