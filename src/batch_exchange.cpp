#include "batch_exchange.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "tx_gossip.h"

namespace gridledger::node {
namespace {

/** Cuts `txs` into batches of at most codec::kMaxTxBatch transactions and kMaxTxBatchBytes. */
std::vector<std::vector<Bytes>> cutIntoBatches(std::vector<Bytes> txs) {
    std::vector<std::vector<Bytes>> out;
    std::size_t bytes = 0;
    for (auto& tx : txs) {
        if (out.empty() || out.back().size() == codec::kMaxTxBatch ||
            bytes + tx.size() > kMaxTxBatchBytes) {
            out.emplace_back();
            bytes = 0;
        }
        bytes += tx.size();
        out.back().push_back(std::move(tx));
    }
    return out;
}

std::size_t txBytes(const std::vector<Bytes>& txs) {
    std::size_t bytes = 0;
    for (const auto& tx : txs) {
        bytes += tx.size();
    }
    return bytes;
}

}  // namespace

BatchExchange::BatchExchange(Host host, std::string signingDomain)
    : host_(std::move(host)), domain_(std::move(signingDomain)) {}

void BatchExchange::setRoster(Roster roster) {
    std::vector<Bytes> givenUp;
    {
        const std::lock_guard lock(mutex_);
        const bool sameEpoch = roster_.committee && roster.committee &&
                               roster_.committee->epoch() == roster.committee->epoch();
        roster_ = std::move(roster);
        if (!sameEpoch) {
            for (auto& [digest, own] : own_) {
                std::ranges::move(own.txs, std::back_inserter(givenUp));
            }
            own_.clear();
            silent_.clear();
        }
    }
    host_.ready(givenUp);
}

bool BatchExchange::active() const {
    const std::lock_guard lock(mutex_);
    return roster_.committee && roster_.self && roster_.committee->size() > 1;
}

bool BatchExchange::isMember(const NodeId& peer) const {
    const std::lock_guard lock(mutex_);
    const auto member = memberOfLocked(peer);
    return member && member != roster_.self;
}

std::optional<std::size_t> BatchExchange::memberOfLocked(const NodeId& peer) const {
    for (std::size_t i = 0; i < roster_.nodes.size(); ++i) {
        if (roster_.nodes[i] == peer) {
            return i;
        }
    }
    return std::nullopt;
}

void BatchExchange::pack(std::vector<Bytes> txs, Clock::time_point now) {
    if (txs.empty()) {
        return;
    }
    std::vector<Outgoing> outgoing;
    std::vector<codec::BatchCert> certs;
    std::vector<Bytes> certifiedTxs;
    Roster roster;
    {
        const std::lock_guard lock(mutex_);
        if (!roster_.committee || !roster_.self) {
            return;
        }
        roster = roster_;
        const consensus::Committee& committee = *roster.committee;
        const std::size_t self = *roster.self;
        for (auto& batchTxs : cutIntoBatches(std::move(txs))) {
            const consensus::Batch batch{committee.member(self), committee.epoch(), nextSerial_++,
                                         std::move(batchTxs)};
            const Hash256 digest = consensus::batchDigest(batch);
            Own own{batch.epoch, batch.serial, batch.txs, {}, {}, now, false};
            own.acks.emplace(self,
                             host_.sign(consensus::batchAckDigest(domain_, batch.epoch, digest)));
            for (const std::size_t member :
                 consensus::batchSigners(committee, digest, self, silent_)) {
                if (member != self) {
                    own.asked.insert(member);
                }
            }
            ++stats_.made;
            codec::BatchMessage message{batch.epoch, batch.serial, false, batch.txs};
            if (own.acks.size() >= consensus::batchCertThreshold(committee)) {
                ++stats_.certified;
                // f = 0: this member's own acknowledgement certifies its batch.
                certs.push_back(consensus::buildBatchCert(committee, digest, own.acks).value());
                outgoing.push_back(Outgoing{std::move(message), {}});
                certifiedTxs.insert(certifiedTxs.end(), batch.txs.begin(), batch.txs.end());
                continue;
            }
            outgoing.push_back(Outgoing{std::move(message), own.asked});
            own_.emplace(digest, std::move(own));
        }
    }
    for (auto& out : outgoing) {
        sendToMembers(roster, std::move(out.message), out.asked);
    }
    for (const auto& cert : certs) {
        broadcastCert(roster, cert);
    }
    host_.ready(certifiedTxs);
}

void BatchExchange::sendToMembers(const Roster& roster, codec::BatchMessage message,
                                  const std::set<std::size_t>& asked) {
    // Encoded at most twice: once asking to sign, once not.
    std::optional<Bytes> plain;
    std::optional<Bytes> signing;
    for (std::size_t i = 0; i < roster.nodes.size(); ++i) {
        if (i == roster.self || !roster.nodes[i]) {
            continue;
        }
        std::optional<Bytes>& encoded = asked.contains(i) ? signing : plain;
        if (!encoded) {
            message.sign = asked.contains(i);
            encoded = codec::encodeBatchMessage(message);
        }
        host_.send(*roster.nodes[i], codec::NetMessage{codec::MessageKind::kBatch, *encoded});
    }
}

void BatchExchange::broadcastCert(const Roster& roster, const codec::BatchCert& cert) {
    const Bytes encoded = codec::encodeBatchCert(cert);
    for (std::size_t i = 0; i < roster.nodes.size(); ++i) {
        if (i != roster.self && roster.nodes[i]) {
            host_.send(*roster.nodes[i],
                       codec::NetMessage{codec::MessageKind::kBatchCert, encoded});
        }
    }
}

void BatchExchange::onBatch(const NodeId& from, codec::BatchMessage batch, Clock::time_point now) {
    std::shared_ptr<const consensus::Committee> committee;
    std::optional<std::size_t> author;
    {
        const std::lock_guard lock(mutex_);
        committee = roster_.committee;
        author = memberOfLocked(from);
    }
    // Around an epoch change honest members are an epoch apart, and a member that just left
    // still sends the batches it made: not misbehaviour. Their transactions reach this node in
    // blocks, and are verified then.
    if (!committee || !author || batch.epoch != committee->epoch()) {
        return;
    }
    const Hash256 digest = consensus::batchDigest(
        consensus::Batch{committee->member(*author), batch.epoch, batch.serial, batch.txs});
    if (batch.sign) {
        if (!host_.verify(batch.txs)) {
            host_.invalid(from, codec::MessageKind::kBatch,
                          Error{ErrorCode::kBadSignature, "batch " + digest.hex() +
                                                              " holds a transaction with a bad "
                                                              "signature or encoding"});
            return;
        }
        const codec::BatchAck ack{
            batch.epoch, digest,
            host_.sign(consensus::batchAckDigest(domain_, batch.epoch, digest))};
        host_.send(from,
                   codec::NetMessage{codec::MessageKind::kBatchAck, codec::encodeBatchAck(ack)});
        {
            const std::lock_guard lock(mutex_);
            if (const auto held = held_.find(digest); held != held_.end()) {
                heldBytes_ -= held->second.bytes;
                held_.erase(held);
            }
            ++stats_.verifiedHere;
        }
        host_.admit(from, std::move(batch.txs), false);
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        if (held_.contains(digest)) {
            return;
        }
        if (certs_.erase(digest) == 0) {
            const std::size_t bytes = txBytes(batch.txs);
            holdLocked(digest, Held{from, std::move(batch.txs), bytes, now});
            return;
        }
        ++stats_.admittedCertified;
    }
    host_.admit(from, std::move(batch.txs), true);
}

void BatchExchange::holdLocked(const Hash256& digest, Held held) {
    while (!held_.empty() && heldBytes_ + held.bytes > kMaxHeldBatchBytes) {
        const auto oldest = std::ranges::min_element(
            held_, {}, [](const auto& entry) { return entry.second.arrived; });
        heldBytes_ -= oldest->second.bytes;
        held_.erase(oldest);
    }
    heldBytes_ += held.bytes;
    held_.emplace(digest, std::move(held));
}

void BatchExchange::onAck(const NodeId& from, const codec::BatchAck& ack) {
    std::shared_ptr<const consensus::Committee> committee;
    std::optional<std::size_t> member;
    {
        const std::lock_guard lock(mutex_);
        committee = roster_.committee;
        member = memberOfLocked(from);
        const auto own = own_.find(ack.digest);
        if (!committee || !member || own == own_.end() || own->second.epoch != ack.epoch ||
            own->second.acks.contains(*member)) {
            return;  // late (certified already, or given up), or not this member's to give
        }
    }
    if (!consensus::bip340Check()(committee->member(*member),
                                  consensus::batchAckDigest(domain_, ack.epoch, ack.digest),
                                  ack.signature)) {
        host_.invalid(
            from, codec::MessageKind::kBatchAck,
            Error{ErrorCode::kBadSignature, "batch acknowledgement signature is invalid"});
        return;
    }
    std::optional<codec::BatchCert> cert;
    std::vector<Bytes> certifiedTxs;
    Roster roster;
    {
        const std::lock_guard lock(mutex_);
        silent_.erase(*member);
        const auto own = own_.find(ack.digest);
        if (own == own_.end() || roster_.committee != committee) {
            return;
        }
        own->second.acks.emplace(*member, ack.signature);
        if (own->second.acks.size() < consensus::batchCertThreshold(*committee)) {
            return;
        }
        cert = consensus::buildBatchCert(*committee, ack.digest, own->second.acks).value();
        ++stats_.certified;
        certifiedTxs = std::move(own->second.txs);
        own_.erase(own);
        roster = roster_;
    }
    broadcastCert(roster, *cert);
    host_.ready(certifiedTxs);
}

void BatchExchange::onCert(const NodeId& from, const codec::BatchCert& cert,
                           Clock::time_point now) {
    std::shared_ptr<const consensus::Committee> committee;
    bool member = false;
    {
        const std::lock_guard lock(mutex_);
        committee = roster_.committee;
        member = memberOfLocked(from).has_value();
    }
    if (!committee || !member || cert.epoch != committee->epoch()) {
        return;  // as for a batch: another epoch's member, not misbehaviour
    }
    if (const Status checked = consensus::verifyBatchCert(cert, *committee, domain_); !checked) {
        host_.invalid(from, codec::MessageKind::kBatchCert, checked.error());
        return;
    }
    Held held;
    {
        const std::lock_guard lock(mutex_);
        const auto found = held_.find(cert.digest);
        if (found == held_.end()) {
            if (certs_.size() >= kMaxHeldBatchCerts) {
                certs_.erase(std::ranges::min_element(
                    certs_, {}, [](const auto& entry) { return entry.second.arrived; }));
            }
            certs_.insert_or_assign(cert.digest, HeldCert{now});
            return;
        }
        held = std::move(found->second);
        heldBytes_ -= held.bytes;
        held_.erase(found);
        ++stats_.admittedCertified;
    }
    host_.admit(held.from, std::move(held.txs), true);
}

void BatchExchange::tick(Clock::time_point now) {
    std::vector<Outgoing> asks;
    std::vector<Held> expired;
    std::vector<Bytes> givenUp;
    Roster roster;
    {
        const std::lock_guard lock(mutex_);
        roster = roster_;
        for (auto it = own_.begin(); it != own_.end();) {
            Own& own = it->second;
            if (now - own.sent >= kBatchKeep) {
                std::ranges::move(own.txs, std::back_inserter(givenUp));
                it = own_.erase(it);
                continue;
            }
            if (!own.askedAll && now - own.sent >= kBatchAckWait) {
                own.askedAll = true;
                std::set<std::size_t> rest;
                for (std::size_t i = 0; i < roster.nodes.size(); ++i) {
                    if (own.asked.contains(i) && !own.acks.contains(i)) {
                        silent_.insert(i);
                    } else if (!own.acks.contains(i)) {
                        rest.insert(i);
                    }
                }
                asks.push_back(
                    Outgoing{codec::BatchMessage{own.epoch, own.serial, true, own.txs}, rest});
            }
            ++it;
        }
        for (auto it = held_.begin(); it != held_.end();) {
            if (now - it->second.arrived >= kBatchCertWait) {
                heldBytes_ -= it->second.bytes;
                expired.push_back(std::move(it->second));
                it = held_.erase(it);
                ++stats_.verifiedHere;
            } else {
                ++it;
            }
        }
        std::erase_if(certs_,
                      [&](const auto& entry) { return now - entry.second.arrived >= kBatchKeep; });
    }
    for (const auto& ask : asks) {
        // The members not asked before get the data again, asked to sign.
        const Bytes encoded = codec::encodeBatchMessage(ask.message);
        for (const std::size_t i : ask.asked) {
            if (i != roster.self && i < roster.nodes.size() && roster.nodes[i]) {
                host_.send(*roster.nodes[i],
                           codec::NetMessage{codec::MessageKind::kBatch, encoded});
            }
        }
    }
    for (auto& held : expired) {
        host_.admit(held.from, std::move(held.txs), false);
    }
    host_.ready(givenUp);
}

BatchExchange::Stats BatchExchange::stats() const {
    const std::lock_guard lock(mutex_);
    return stats_;
}

}  // namespace gridledger::node
