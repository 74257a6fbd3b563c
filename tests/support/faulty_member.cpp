#include "support/faulty_member.h"

#include <algorithm>
#include <utility>

#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/batches.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>

#include "home.h"

namespace gridledger::testing {
namespace {

/** Rounds of honest timeouts kept for forgedTc(). */
constexpr std::size_t kKeptRounds = 8;

Bytes bitmapOf(const std::vector<std::size_t>& indices, std::size_t n) {
    Bytes bitmap((n + 7) / 8, 0);
    for (const auto i : indices) {
        bitmap[i / 8] = static_cast<std::uint8_t>(bitmap[i / 8] | (1U << (i % 8)));
    }
    return bitmap;
}

}  // namespace

FaultyMember::FaultyMember(const Testnet& net, std::size_t member,
                           std::optional<crypto::NodeKey> nodeKey)
    : member_(member),
      committeeSize_(net.size()),
      key_(node::Home(net.home(member)).loadKey("validator").value()),
      domain_(signingDomainOfHome(net.home(member))) {
    const crypto::NodeKey endpointKey =
        nodeKey ? *nodeKey : node::Home(net.home(member)).loadNodeKey().value();
    p2p::Options options;
    for (std::size_t i = 0; i < net.size(); ++i) {
        const node::Home home(net.home(i));
        members_.push_back(home.loadKey("validator").value().publicKey());
        const NodeId id = home.loadNodeKey().value().nodeId();
        options.allowed.insert(id);
        nodeIds_.push_back(id);
        if (i != member) {
            options.persistentPeers.push_back({id, "127.0.0.1", net.p2pPort(i)});
            others_.push_back(id);
        }
    }
    options.dialExchangedPeers = false;
    options.limits.maxQueueMessages = std::size_t{1} << 20U;  // room for a flood (flood())
    network_ = std::make_unique<p2p::Network>(std::move(options), endpointKey);
    network_->onMessage([this](const NodeId& from, p2p::Message message) {
        if (message.kind == codec::MessageKind::kTimeout) {
            if (auto timeout = codec::decodeTimeout(message.payload)) {
                onTimeout(*timeout);
            }
        } else if (message.kind == codec::MessageKind::kEpochProofRequest && forgeEpochProofs_) {
            if (auto request = codec::decodeEpochProofRequest(message.payload)) {
                ++forgedProofsSent_;
                (void)network_->send(from, forgedEpochProof(request->epoch));
            }
        }
    });
    started_ = network_->start().has_value();
}

FaultyMember::~FaultyMember() {
    network_->stop();
}

bool FaultyMember::connectedToAll() const {
    return network_->connectedPeers().size() == others_.size();
}

bool FaultyMember::sendAll(const p2p::Message& message) {
    bool all = true;
    for (const auto& id : others_) {
        all = network_->send(id, message).has_value() && all;
    }
    return all;
}

std::size_t FaultyMember::flood(std::size_t node, const p2p::Message& message, std::size_t count) {
    std::size_t queued = 0;
    while (queued < count && network_->send(nodeIds_.at(node), message)) {
        ++queued;
    }
    return queued;
}

std::optional<std::size_t> FaultyMember::queuedTo(std::size_t node) const {
    const auto info = network_->peerInfo(nodeIds_.at(node));
    if (!info) {
        return std::nullopt;
    }
    return info->queuedMessages;
}

p2p::Message FaultyMember::farHeightProposal(const Hash256& genesisId, std::uint64_t round) const {
    codec::BlockHeader header;
    header.round = round;
    header.height = 1'000'000;
    header.parentId = genesisId;
    header.qc = consensus::genesisQc(0, genesisId);
    header.author = key_.publicKey();
    header.timestampMs = 1;
    codec::Block block = codec::makeBlock(header, {});
    consensus::KeySigner signer(key_);
    consensus::signProposal(signer, domain_, block);
    return {codec::MessageKind::kProposal, codec::encodeBlock(block)};
}

p2p::Message FaultyMember::laterEpochVote(std::uint64_t round) const {
    codec::Vote vote;
    vote.epoch = 7;
    vote.round = round;
    vote.voter = key_.publicKey();
    return {codec::MessageKind::kVote, codec::encodeVote(vote)};
}

p2p::Message FaultyMember::oversizedProposal(const Hash256& genesisId, std::uint64_t epoch,
                                             std::uint64_t round, std::size_t bytes) const {
    constexpr std::size_t kTxBytes = std::size_t{64} * 1024;
    std::vector<Bytes> txs;
    for (std::size_t total = 0; total < bytes; total += kTxBytes) {
        txs.emplace_back(kTxBytes, static_cast<std::uint8_t>(txs.size()));
    }
    codec::BlockHeader header;
    header.epoch = epoch;
    header.round = round;
    header.height = 1;
    header.parentId = genesisId;
    header.qc = consensus::genesisQc(epoch, genesisId);
    header.author = key_.publicKey();
    header.timestampMs = 2;
    codec::Block block = codec::makeBlock(header, std::move(txs));
    consensus::KeySigner signer(key_);
    consensus::signProposal(signer, domain_, block);
    return {codec::MessageKind::kProposal, codec::encodeBlock(block)};
}

void FaultyMember::onTimeout(const codec::Timeout& timeout) {
    const auto it = std::find(members_.begin(), members_.end(), timeout.author);
    if (it == members_.end() || timeout.author == key_.publicKey()) {
        return;
    }
    const std::lock_guard lock(mutex_);
    timeouts_[{timeout.epoch, timeout.round}].emplace(
        static_cast<std::size_t>(it - members_.begin()), timeout);
    while (timeouts_.size() > kKeptRounds) {
        timeouts_.erase(timeouts_.begin());
    }
}

std::optional<p2p::Message> FaultyMember::forgedTc() {
    const std::size_t honestNeeded = consensus::quorumOf(committeeSize_) - 1;
    const std::lock_guard lock(mutex_);
    for (auto round = timeouts_.rbegin(); round != timeouts_.rend(); ++round) {
        const auto [epoch, number] = round->first;
        if (round->second.size() < honestNeeded || number < 2) {
            continue;
        }
        std::map<std::size_t, std::pair<std::uint64_t, Signature>> entries;
        codec::QuorumCert highQc;
        for (const auto& [index, timeout] : round->second) {
            if (entries.size() == honestNeeded) {
                break;
            }
            entries.emplace(index, std::make_pair(timeout.highQc.round, timeout.signature));
            if (timeout.highQc.round >= highQc.round) {
                highQc = timeout.highQc;
            }
        }
        // Its own entry claims a QC of the round just below. When an honest signer did have
        // that QC (the round before ended with one), the TC carries an older QC kept from an
        // earlier round's timeouts instead: either way it does not prove its highest round.
        const std::uint64_t claimed = number - 1;
        if (highQc.round == claimed) {
            const auto older = olderQc(epoch, claimed);
            if (!older) {
                continue;
            }
            highQc = *older;
        }
        consensus::KeySigner signer(key_);
        entries[member_] = {claimed,
                            signer.sign(consensus::timeoutDigest(domain_, epoch, number, claimed))};
        codec::TimeoutCert tc;
        tc.epoch = epoch;
        tc.round = number;
        std::vector<std::size_t> indices;
        for (const auto& [index, entry] : entries) {
            indices.push_back(index);
            tc.hqcRounds.push_back(entry.first);
            tc.signatures.push_back(entry.second);
        }
        tc.signers = bitmapOf(indices, committeeSize_);
        tc.highQc = highQc;
        return p2p::Message{codec::MessageKind::kTimeoutCert, codec::encodeTc(tc)};
    }
    return std::nullopt;
}

std::optional<codec::QuorumCert> FaultyMember::olderQc(std::uint64_t epoch,
                                                       std::uint64_t below) const {
    std::optional<codec::QuorumCert> found;
    for (const auto& [key, byMember] : timeouts_) {
        if (key.first != epoch) {
            continue;
        }
        for (const auto& [index, timeout] : byMember) {
            if (timeout.highQc.round < below && (!found || timeout.highQc.round > found->round)) {
                found = timeout.highQc;
            }
        }
    }
    return found;
}

p2p::Message FaultyMember::forgedEpochProof(std::uint64_t epoch) const {
    codec::BlockHeader reconfig;
    reconfig.epoch = epoch;
    reconfig.round = 1'000'000;
    reconfig.height = 1'000'000;
    reconfig.author = key_.publicKey();
    const codec::Block block = codec::makeBlock(reconfig, {});
    codec::BlockHeader child;
    child.epoch = epoch;
    child.round = reconfig.round + 1;
    child.height = reconfig.height + 1;
    child.parentId = block.id;
    child.qc = soloQc(epoch, reconfig.round, block.id);
    child.author = key_.publicKey();
    const codec::Block childBlock = codec::makeBlock(child, {});
    codec::EpochProof proof;
    proof.reconfig = codec::ProofHeader{block.header, block.headerBytes, block.id};
    proof.proof =
        codec::makeCommitProof(childBlock.headerBytes, soloQc(epoch, child.round, childBlock.id))
            .value();
    return {codec::MessageKind::kEpochProof, codec::encodeEpochProof(proof)};
}

p2p::Message FaultyMember::batch(std::uint64_t epoch, std::uint64_t serial, bool sign,
                                 std::vector<Bytes> txs) const {
    return {codec::MessageKind::kBatch,
            codec::encodeBatchMessage(codec::BatchMessage{epoch, serial, sign, std::move(txs)})};
}

p2p::Message FaultyMember::forgedBatchCert(std::uint64_t epoch, std::uint64_t serial,
                                           const std::vector<Bytes>& txs) const {
    const Hash256 digest =
        consensus::batchDigest(consensus::Batch{key_.publicKey(), epoch, serial, txs});
    const Signature own = key_.sign(consensus::batchAckDigest(domain_, epoch, digest));
    const std::size_t other = (member_ + 1) % committeeSize_;
    codec::BatchCert cert;
    cert.epoch = epoch;
    cert.digest = digest;
    cert.signers = bitmapOf({std::min(member_, other), std::max(member_, other)}, committeeSize_);
    cert.signatures = {own, own};
    return {codec::MessageKind::kBatchCert, codec::encodeBatchCert(cert)};
}

codec::QuorumCert FaultyMember::soloQc(std::uint64_t epoch, std::uint64_t round,
                                       const Hash256& id) const {
    consensus::KeySigner signer(key_);
    const codec::Vote vote = consensus::signVote(signer, domain_, epoch, round, id);
    codec::QuorumCert qc;
    qc.epoch = epoch;
    qc.round = round;
    qc.blockId = id;
    qc.signers = bitmapOf({member_}, committeeSize_);
    qc.signatures.push_back(vote.signature);
    return qc;
}

}  // namespace gridledger::testing
