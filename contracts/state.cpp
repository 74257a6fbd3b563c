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
