// Block sync and epoch proofs in the simulator: every instance runs the node's own SyncClient and
// serves peers with the node's own serveSync and epochProofFor, over its in-memory ledger, with
// the P2P messages encoded as on the wire. And the sync liar, a member that lies to sync.
#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "block_sync.h"
#include "sim/simulator.h"

namespace gridledger::sim {
namespace {

/** How much further than the real head a sync liar claims to be. */
constexpr std::uint64_t kClaimedLead = 1000;
/** Least time between two claims of a sync liar to one instance. */
constexpr std::uint64_t kClaimIntervalMs = 100;

}  // namespace

NodeId nodeIdOf(std::size_t i) {
    std::array<std::uint8_t, NodeId::size()> bytes{};
    bytes[0] = static_cast<std::uint8_t>(i >> 8U);
    bytes[1] = static_cast<std::uint8_t>(i & 0xffU);
    return NodeId(bytes);
}

std::size_t instanceOf(const NodeId& id) {
    const auto view = id.view();
    return (static_cast<std::size_t>(view[0]) << 8U) | view[1];
}

Result<std::optional<std::uint64_t>> LedgerView::executedHeight() const {
    return std::optional<std::uint64_t>{store_.ledger.size() - 1};
}

Result<std::optional<codec::Block>> LedgerView::blockAt(std::uint64_t height) const {
    if (height >= store_.ledger.size()) {
        return std::optional<codec::Block>{};
    }
    return std::optional<codec::Block>{*store_.ledger[height]};
}

Result<std::optional<codec::CommitProof>> LedgerView::commitProofAt(std::uint64_t height) const {
    const auto it = store_.proofs.find(height);
    if (it == store_.proofs.end()) {
        return std::optional<codec::CommitProof>{};
    }
    return std::optional<codec::CommitProof>{it->second};
}

std::chrono::milliseconds InstanceSyncHost::now() const {
    return std::chrono::milliseconds(sim_.now_);
}

std::uint64_t InstanceSyncHost::executedHeight() const {
    return sim_.instances_[i_].store.ledger.size() - 1;
}

Result<std::optional<codec::Block>> InstanceSyncHost::blockAt(std::uint64_t height) const {
    return sim_.instances_[i_].ledger->blockAt(height);
}

std::shared_ptr<const consensus::Committee> InstanceSyncHost::committee() const {
    return std::make_shared<const consensus::Committee>(
        sim_.committees_.at(sim_.instances_[i_].store.epoch));
}

bool InstanceSyncHost::send(const NodeId& peer, p2p::Message message) {
    const std::size_t to = instanceOf(peer);
    if (to >= sim_.instances_.size() || to == i_) {
        return false;
    }
    sim_.send(i_, to, std::move(message));
    return true;
}

std::vector<NodeId> InstanceSyncHost::connectedPeers() const {
    std::vector<NodeId> peers;
    for (std::size_t j = 0; j < sim_.instances_.size(); ++j) {
        if (j != i_) {
            peers.push_back(nodeIdOf(j));
        }
    }
    return peers;
}

void InstanceSyncHost::expireAfter(std::uint64_t seq, std::chrono::milliseconds delay,
                                   std::string reason) {
    sim_.schedule(sim_.now_ + static_cast<std::uint64_t>(delay.count()),
                  Simulator::Item{i_, sim_.instances_[i_].incarnation,
                                  Simulator::SyncTimer{seq, std::move(reason)}});
}

Result<bool> InstanceSyncHost::execute(const codec::Block& block,
                                       const codec::QuorumCert& certifying) {
    GL_ASSIGN_OR_RETURN(done, sim_.execute(i_, block));
    Store& st = sim_.instances_[i_].store;
    st.rootQc = certifying;
    if (!done.nextValidators) {
        return false;
    }
    sim_.reconfigure(i_, block);
    // The negative control: sync is not told, and runs on past the end of the epoch.
    return sim_.scenario_.rules != RulesVariant::kSyncPastEpochEnd;
}

Status InstanceSyncHost::storeCommitProofs(const std::vector<node::HeightProof>& proofs) {
    Store& st = sim_.instances_[i_].store;
    for (const auto& [height, proof] : proofs) {
        st.proofs[height] = proof;
    }
    return {};
}

void InstanceSyncHost::synced(std::size_t count) {
    sim_.syncedBlocks_ += count;
}

void InstanceSyncHost::refused(const NodeId& peer, codec::MessageKind kind, const Error& error) {
    const std::size_t from = instanceOf(peer);
    if (from < sim_.instances_.size() && sim_.instances_[from].role == Role::kSyncLiar) {
        ++sim_.refusedForgeries_;  // what a liar makes up is refused, as it must be
        return;
    }
    sim_.checker_.flag("bad-message",
                       "instance=i" + std::to_string(i_) + " refused the " +
                           std::string(codec::kindName(kind)) + " of i" + std::to_string(from) +
                           ": " + error.message,
                       sim_.now_);
}

void InstanceSyncHost::failed(const Error& error) {
    sim_.checker_.flag("agreement",
                       "instance=i" + std::to_string(i_) + " sync failed: " + error.message,
                       sim_.now_);
}

void InstanceSyncHost::caughtUp() {
    sim_.rebootAfterSync(i_);
}

void Simulator::syncTimer(std::size_t i, const SyncTimer& timer) {
    instances_[i].sync->expired(timer.seq, timer.reason);
}

void Simulator::rebootAfterSync(std::size_t i) {
    Instance& inst = instances_[i];
    ++syncs_;
    note(i, i, TraceKind::kRestart, inst.store.safety.lastVotedRound, inst.store.ledger.size() - 1);
    // As the node does: the core restarts from the synced ledger, as after a restart (its
    // timers and looped-back events of the old core die with it).
    inst.runner->clear();
    ++inst.incarnation;
    boot(i);
    if (inst.core()) {
        local(i, consensus::Start{});
        if (scenario_.endlessMempool) {
            local(i, consensus::PayloadAvailable{});
        }
    }
}

void Simulator::peerMessage(std::size_t i, std::size_t from, const p2p::Message& message) {
    Instance& inst = instances_[i];
    const auto bad = [&](const Error& error) {
        if (instances_[from].role == Role::kSyncLiar) {
            ++refusedForgeries_;
            return;
        }
        checker_.flag("bad-message",
                      "instance=i" + std::to_string(i) + " " +
                          std::string(codec::kindName(message.kind)) + " from i" +
                          std::to_string(from) + ": " + error.message,
                      now_);
    };
    switch (message.kind) {
        case codec::MessageKind::kSyncRequest: {
            auto request = codec::decodeSyncRequest(message.payload);
            if (!request) {
                bad(request.error());
                return;
            }
            auto response = node::serveSync(*inst.ledger, *request, scenario_.syncBatchBlocks);
            if (!response) {
                bad(response.error());
                return;
            }
            if (inst.role == Role::kSyncLiar) {
                auto lie = liarAnswer(i, std::move(*response));
                if (!lie) {
                    return;  // silent
                }
                response = std::move(*lie);
            }
            send(i, from,
                 p2p::Message{codec::MessageKind::kSyncResponse,
                              codec::encodeSyncResponse(*response)});
            return;
        }
        case codec::MessageKind::kSyncResponse: {
            auto response = codec::decodeSyncResponse(message.payload);
            if (!response) {
                bad(response.error());
                return;
            }
            if (inst.core() && inst.sync->isPeer(nodeIdOf(from))) {
                inst.sync->onResponse(nodeIdOf(from), std::move(*response));
            }
            return;
        }
        case codec::MessageKind::kEpochProofRequest: {
            auto request = codec::decodeEpochProofRequest(message.payload);
            if (!request) {
                bad(request.error());
                return;
            }
            // A liar serves true proofs too: a proof makes the asker sync from the one who sent it.
            auto proof = node::epochProofFor(*inst.ledger, request->epoch, inst.store.epoch);
            if (!proof) {
                bad(proof.error());
                return;
            }
            if (*proof) {
                ++epochProofs_;
                send(i, from,
                     p2p::Message{codec::MessageKind::kEpochProof,
                                  codec::encodeEpochProof(**proof)});
            }
            return;
        }
        case codec::MessageKind::kEpochProof: {
            auto proof = codec::decodeEpochProof(message.payload);
            if (!proof) {
                bad(proof.error());
                return;
            }
            if (inst.core()) {
                inst.sync->onEpochProof(nodeIdOf(from), *proof);
            }
            return;
        }
        default:
            bad(Error{ErrorCode::kMalformed, "not a block sync message"});
            return;
    }
}

void Simulator::liarSaw(std::size_t i, std::size_t from, const consensus::BlockPtr& block) {
    Instance& inst = instances_[i];
    inst.seen.emplace(block->id, block);
    if (!inst.latestSeen || block->header.height > inst.latestSeen->header.height) {
        inst.latestSeen = block;
    }
    liarClaims(i, from);
}

void Simulator::liarClaims(std::size_t i, std::size_t from) {
    Instance& inst = instances_[i];
    if (!inst.latestSeen) {
        return;
    }
    const consensus::BlockPtr& block = inst.latestSeen;
    // Claim a far height to every other instance, as its own signed copy of the latest block it
    // saw: it passes every check a proposal gets before it reaches the core.
    const auto committee = committees_.find(block->header.epoch);
    if (committee == committees_.end() || !committee->second.contains(keys_.publicKey(inst.key))) {
        return;
    }
    codec::BlockHeader header = block->header;
    header.height += kClaimedLead;
    header.author = keys_.publicKey(inst.key);
    consensus::BlockPtr claim;
    for (std::size_t j = 0; j < instances_.size(); ++j) {
        if (j == i || j == from) {
            continue;
        }
        const auto last = inst.claimedAt.find(j);
        if (last != inst.claimedAt.end() && now_ < last->second + kClaimIntervalMs) {
            continue;
        }
        inst.claimedAt[j] = now_;
        if (!claim) {
            codec::Block made = codec::makeBlock(header, block->txs);
            made.signature =
                keys_.sign(inst.key, consensus::proposalDigest(scenario_.options.chainId, made.id));
            claim = std::make_shared<const codec::Block>(std::move(made));
        }
        send(i, j, claim);
        // And a later epoch, which no signature backs (a timeout of the next epoch with a
        // made-up signature): only a proof may follow from it.
        codec::Timeout later;
        later.epoch = block->header.epoch + 1;
        later.round = block->header.round;
        later.author = keys_.publicKey(inst.key);
        send(i, j, later);
    }
}

void Simulator::liarSawVote(std::size_t i, const codec::Vote& vote) {
    instances_[i].votesFor[vote.blockId].push_back(vote);
}

std::optional<codec::SyncResponse> Simulator::liarAnswer(std::size_t i,
                                                         codec::SyncResponse honest) {
    Instance& inst = instances_[i];
    if (!honest.blocks.empty()) {
        // The honest answer ends at the block R that ended an epoch: extend it with R's child C
        // (a block no ledger holds) and a commit proof of C, built from C's successor D and the
        // votes for D that every member broadcasts. Such a C exists when the round after R timed
        // out: C, in a later round, and R are committed together by D's QC, and execution stops
        // at R (the liar withholds its proposal when it leads the round after R).
        const codec::Block& last = honest.blocks.back();
        if (scenario_.endsEpoch(last.header.epoch, last.header.height)) {
            for (const auto& [id, child] : inst.seen) {
                if (child->header.parentId != last.id || child->header.epoch != last.header.epoch) {
                    continue;
                }
                for (const auto& [did, successor] : inst.seen) {
                    if (successor->header.parentId != child->id ||
                        successor->header.round != child->header.round + 1) {
                        continue;
                    }
                    const auto votes = inst.votesFor.find(did);
                    if (votes == inst.votesFor.end()) {
                        continue;
                    }
                    auto qc = consensus::buildQuorumCert(committees_.at(last.header.epoch),
                                                         votes->second);
                    if (!qc) {
                        continue;
                    }
                    auto proof = codec::makeCommitProof(successor->headerBytes, *qc);
                    if (!proof) {
                        continue;
                    }
                    honest.blocks.push_back(*child);
                    honest.proof = std::move(*proof);
                    ++crossingAnswers_;
                    return honest;
                }
            }
        }
        // An epoch end lies ahead of the asker in the liar's ledger: lead it there honestly,
        // so that it keeps asking the liar.
        for (std::uint64_t e = 0; e + 1 < scenario_.validatorSets.size(); ++e) {
            const std::uint64_t end = scenario_.reconfigHeight(e);
            if (end > last.header.height && end < inst.store.ledger.size()) {
                return honest;
            }
        }
    }
    // Otherwise: silence, an empty answer that claims a far head, blocks with a proof that
    // proves another block, or the honest answer.
    switch (between(rng_, 0, 3)) {
        case 0:
            return std::nullopt;
        case 1:
            return codec::SyncResponse{{}, std::nullopt, honest.headHeight + kClaimedLead};
        case 2:
            if (honest.blocks.size() > 1 && honest.proof) {
                honest.blocks.pop_back();  // the proof no longer names the last block
            }
            return honest;
        default:
            return honest;
    }
}

}  // namespace gridledger::sim
