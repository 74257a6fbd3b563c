#include <gridledger/rpc/block_answers.h>

namespace gridledger::rpc {

namespace {

/** Height and form in one key; heights stay far below 2^63. */
std::uint64_t keyOf(std::uint64_t height, bool fullTxs) {
    return (height << 1U) | (fullTxs ? 1U : 0U);
}

}  // namespace

BlockAnswers::BlockAnswers(std::size_t budgetBytes) : budget_(budgetBytes) {}

std::shared_ptr<const std::string> BlockAnswers::find(std::uint64_t height, bool fullTxs) {
    const std::scoped_lock lock(mutex_);
    const auto found = byKey_.find(keyOf(height, fullTxs));
    if (found == byKey_.end()) {
        return nullptr;
    }
    order_.splice(order_.begin(), order_, found->second);
    return found->second->text;
}

bool BlockAnswers::contains(std::uint64_t height, bool fullTxs) const {
    const std::scoped_lock lock(mutex_);
    return byKey_.contains(keyOf(height, fullTxs));
}

void BlockAnswers::keep(std::uint64_t height, bool fullTxs, std::string text) {
    const std::size_t bytes = text.size();
    if (bytes > budget_) {
        return;
    }
    auto shared = std::make_shared<const std::string>(std::move(text));
    const std::uint64_t key = keyOf(height, fullTxs);
    const std::scoped_lock lock(mutex_);
    if (byKey_.contains(key)) {
        return;  // another thread answered the same read first
    }
    while (bytes_ + bytes > budget_) {
        bytes_ -= order_.back().text->size();
        byKey_.erase(order_.back().key);
        order_.pop_back();
    }
    order_.push_front(Entry{key, std::move(shared)});
    byKey_.emplace(key, order_.begin());
    bytes_ += bytes;
}

std::size_t BlockAnswers::keptBytes() const {
    const std::scoped_lock lock(mutex_);
    return bytes_;
}

std::size_t BlockAnswers::size() const {
    const std::scoped_lock lock(mutex_);
    return order_.size();
}

}  // namespace gridledger::rpc
