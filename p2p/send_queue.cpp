#include "send_queue.h"

#include <utility>

namespace gridledger::p2p {

SendQueue::SendQueue(std::size_t maxMessages, std::size_t maxBytes)
    : maxMessages_(maxMessages), maxBytes_(maxBytes) {}

bool SendQueue::fits(std::size_t frameBytes) const {
    return entries_.size() < maxMessages_ && frameBytes <= maxBytes_ &&
           bytes_ <= maxBytes_ - frameBytes;
}

bool SendQueue::evictOldestDroppable() {
    if (droppable_ == 0) {
        return false;
    }
    auto it = entries_.begin();
    if (inFlight_) {
        ++it;
    }
    for (; it != entries_.end(); ++it) {
        if (it->droppable) {
            bytes_ -= it->frame->size();
            --droppable_;
            ++dropped_;
            entries_.erase(it);
            return true;
        }
    }
    return false;  // the only droppable frame is in flight
}

SendQueue::Outcome SendQueue::push(Entry entry) {
    const std::size_t size = entry.frame->size();
    while (!fits(size) && evictOldestDroppable()) {
    }
    if (!fits(size)) {
        if (entry.droppable) {
            ++dropped_;
            return Outcome::kDroppedNew;
        }
        return Outcome::kOverflow;
    }
    bytes_ += size;
    if (entry.droppable) {
        ++droppable_;
    }
    entries_.push_back(std::move(entry));
    return Outcome::kQueued;
}

std::shared_ptr<const Bytes> SendQueue::beginWrite() {
    if (inFlight_ || entries_.empty()) {
        return nullptr;
    }
    inFlight_ = true;
    return entries_.front().frame;
}

void SendQueue::finishWrite() {
    if (!inFlight_ || entries_.empty()) {
        return;
    }
    const Entry& front = entries_.front();
    bytes_ -= front.frame->size();
    if (front.droppable) {
        --droppable_;
    }
    entries_.pop_front();
    inFlight_ = false;
}

std::deque<SendQueue::Entry> SendQueue::takeQueued() {
    std::deque<Entry> out;
    out.swap(entries_);
    bytes_ = 0;
    droppable_ = 0;
    if (inFlight_) {
        entries_.push_back(std::move(out.front()));
        out.pop_front();
        bytes_ = entries_.front().frame->size();
        droppable_ = entries_.front().droppable ? 1 : 0;
    }
    return out;
}

void SendQueue::clear() {
    entries_.clear();
    bytes_ = 0;
    droppable_ = 0;
    inFlight_ = false;
}

}  // namespace gridledger::p2p
