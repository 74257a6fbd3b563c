// The simulator as each instance's host: the adaptor that each instance's consensus::Runner
// performs the core's effects through (docs/protocol.md §8), plus the faulty drivers
// (equivocation, forking, vote withholding).
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <gridledger/crypto/sha256.h>

#include "sim/simulator.h"

namespace gridledger::sim {
namespace {

Bytes txBytes(const std::string& text) {
    return Bytes(text.begin(), text.end());
}

}  // namespace

std::uint64_t InstanceAdaptor::nowMs() {
    return kClockBaseMs + sim_.now_;
}

// The safety data and executed blocks are synced writes: they make every earlier write durable.
// Blocks, QCs and TCs are not, until the send barrier syncs them before a message leaves.
Status InstanceAdaptor::persistSafety(const consensus::SafetyData& data) {
    Instance& inst = sim_.instances_[i_];
    inst.store.safety = data;
    inst.unsynced.clear();
    return {};
}

Status InstanceAdaptor::persistBlock(const consensus::BlockPtr& block) {
    Instance& inst = sim_.instances_[i_];
    Unsynced undo{Unsynced::Kind::kBlock, block->id, std::nullopt, std::nullopt, std::nullopt};
    if (const auto it = inst.store.blocks.find(block->id); it != inst.store.blocks.end()) {
        undo.block = it->second;
    }
    inst.unsynced.push_back(std::move(undo));
    inst.store.blocks[block->id] = block;
    return {};
}

Status InstanceAdaptor::persistQc(const codec::QuorumCert& qc) {
    Instance& inst = sim_.instances_[i_];
    Unsynced undo{Unsynced::Kind::kQc, qc.blockId, std::nullopt, std::nullopt, std::nullopt};
    if (const auto it = inst.store.qcs.find(qc.blockId); it != inst.store.qcs.end()) {
        undo.qc = it->second;
    }
    inst.unsynced.push_back(std::move(undo));
    inst.store.qcs[qc.blockId] = qc;
    return {};
}

Status InstanceAdaptor::persistTc(const codec::TimeoutCert& tc) {
    Instance& inst = sim_.instances_[i_];
    inst.unsynced.push_back(
        Unsynced{Unsynced::Kind::kTc, Hash256{}, std::nullopt, std::nullopt, inst.store.tc});
    inst.store.tc = tc;
    ++sim_.timeoutCerts_;
    return {};
}

Status InstanceAdaptor::beforeSend() {
    if (sim_.scenario_.rules != RulesVariant::kSkipSendBarrier) {
        sim_.instances_[i_].unsynced.clear();  // one sync makes every earlier write durable
    }
    return {};
}

void InstanceAdaptor::broadcast(const consensus::Broadcast& message) {
    if (sim_.instances_[i_].role == Role::kTcForger) {
        return;  // its own proposals, timeouts and TCs stay home; it sends forged TCs instead
    }
    if (const auto* block = std::get_if<consensus::BlockPtr>(&message.message)) {
        sim_.sendProposal(i_, *block);
    } else if (const auto* timeout = std::get_if<codec::Timeout>(&message.message)) {
        sim_.note(i_, i_, TraceKind::kSentTimeout, timeout->round, timeout->highQc.round);
        sim_.checker_.onTimeoutSent(i_, *timeout, sim_.instances_[i_].store.safety,
                                    sim_.instances_[i_].incarnation, sim_.now_);
        sim_.broadcast(i_, *timeout);
    } else {
        sim_.broadcast(i_, std::get<codec::TimeoutCert>(message.message));
    }
}

void InstanceAdaptor::sendVote(const codec::Vote& vote, const PubKey& nextLeader) {
    sim_.sendVote(i_, vote, nextLeader);
}

void InstanceAdaptor::schedule(const consensus::ScheduleTimer& timer) {
    sim_.local(i_, consensus::TimerFired{timer.kind, timer.round}, timer.delayMs);
}

void InstanceAdaptor::forwardQc(const codec::QuorumCert& qc, const PubKey& nextLeader) {
    sim_.forwardQc(i_, qc, nextLeader);
}

void InstanceAdaptor::fetch(const consensus::Fetch& request) {
    sim_.fetch(i_, request);
}

consensus::ProposalPayload InstanceAdaptor::collectTxs(const consensus::BuildProposal& request) {
    (void)request;
    return sim_.collectTxs(i_);
}

std::uint64_t InstanceAdaptor::executedHeight() {
    return sim_.height(i_);
}

std::uint64_t InstanceAdaptor::ledgerEpoch() {
    return sim_.instances_[i_].store.epoch;
}

Result<consensus::Execution> InstanceAdaptor::execute(const codec::Block& block,
                                                      const codec::QuorumCert& certifying) {
    (void)certifying;
    return sim_.execute(i_, block);
}

Status InstanceAdaptor::committed(const consensus::Commit& commit,
                                  const consensus::CommitOutcome& outcome) {
    sim_.committed(i_, commit, outcome);
    return {};
}

void InstanceAdaptor::rejected(const Error& error) {
    sim_.note(i_, i_, TraceKind::kRejected, static_cast<std::uint64_t>(error.code), 0);
    ++sim_.instances_[i_].rejections;
}

void InstanceAdaptor::failed(const Error& error) {
    // Only execution fails here, and it flagged the violation itself.
    sim_.note(i_, i_, TraceKind::kRejected, static_cast<std::uint64_t>(error.code), 0);
}

std::size_t InstanceAdaptor::onStep(const consensus::Event& event,
                                    const consensus::Effects& effects) {
    return sim_.observeStep(i_, event, effects);
}

std::size_t Simulator::observeStep(std::size_t i, const consensus::Event& event,
                                   const consensus::Effects& effects) {
    Instance& inst = instances_[i];
    std::visit(
        [&](const auto& e) {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, consensus::TimerFired>) {
                note(i, i,
                     e.kind == consensus::TimerKind::kRound ? TraceKind::kRoundTimer
                                                            : TraceKind::kProposalTimer,
                     e.round, 0);
            } else if constexpr (std::is_same_v<T, consensus::Executed>) {
                note(i, i, TraceKind::kExecuted, 0, e.height);
            } else if constexpr (std::is_same_v<T, consensus::ProposalBuilt>) {
                note(i, i, TraceKind::kBuilt, e.block.header.round, e.block.header.height,
                     &e.block.id);
                checker_.onProposalSigned(std::make_shared<const codec::Block>(e.block));
            } else if constexpr (std::is_same_v<T, consensus::Start>) {
                note(i, i, TraceKind::kStart, 0, 0);
            }
        },
        event.body);
    for (const auto& effect : effects) {
        if (const auto* commit = std::get_if<consensus::Commit>(&effect)) {
            checker_.onCommit(i, *commit, now_);
            for (const auto& block : commit->blocks) {
                if (block->header.height == inst.commitTimes.size()) {
                    inst.commitTimes.push_back(now_);
                }
            }
        }
    }
    if (!inst.crashArmed) {
        return effects.size();
    }
    // A crash after a random prefix of this step's effects.
    inst.crashArmed = false;
    inst.dying = true;
    return between(rng_, 0, effects.size());
}

void Simulator::sendProposal(std::size_t i, const consensus::BlockPtr& block) {
    const auto& h = block->header;
    checker_.onProposalSent(i, *block, now_);
    proposedAt_.try_emplace(block->id, now_);
    note(i, i, TraceKind::kSentProposal, h.round, h.height, &block->id);
    if (instances_[i].role == Role::kSyncLiar && h.height > 0 &&
        scenario_.endsEpoch(h.epoch, h.height - 1)) {
        return;  // the round after an epoch's last block times out (see liarAnswer)
    }
    if (instances_[i].role == Role::kEquivocator) {
        equivocate(i, block);
    } else if (instances_[i].role == Role::kForker) {
        fork(i, block);
    } else {
        broadcast(i, block);
    }
}

void Simulator::sendVote(std::size_t i, const codec::Vote& vote, const PubKey& nextLeader) {
    Instance& inst = instances_[i];
    if (inst.role == Role::kWithholder) {
        ++withheldVotes_;
        return;  // the faulty driver keeps its votes
    }
    note(i, i, TraceKind::kSentVote, vote.round, 0, &vote.blockId);
    checker_.onVoteSent(i, vote, inst.store.safety, now_);
    if (inst.role == Role::kSyncLiar) {
        liarSawVote(i, vote);
    }
    // Like the node: the vote goes to the next leader and a copy to every other member, so that
    // every member forms the QC even when the next leader is down (docs/protocol.md §5).
    if (scenario_.votesToLeaderOnly && now_ < scenario_.gstMs) {
        // The network drops the copies (twins-rounds): the next leader alone forms the QC.
        for (const auto j : instancesOf(nextLeader)) {
            if (j != i) {
                send(i, j, vote);
            }
        }
        return;
    }
    broadcast(i, vote);
}

void Simulator::forwardQc(std::size_t i, const codec::QuorumCert& qc, const PubKey& nextLeader) {
    // Like the node: to the next leader alone.
    for (const auto j : instancesOf(nextLeader)) {
        if (j != i) {
            send(i, j, qc);
        }
    }
}

void Simulator::fetch(std::size_t i, const consensus::Fetch& request) {
    std::vector<std::size_t> peers;
    if (request.hint) {
        peers = instancesOf(*request.hint);
    } else {
        for (std::size_t j = 0; j < instances_.size(); ++j) {
            peers.push_back(j);
        }
    }
    for (const auto j : peers) {
        if (j != i) {
            send(i, j, FetchRequest{request.blockId});
        }
    }
}

consensus::ProposalPayload Simulator::collectTxs(std::size_t i) {
    if (scenario_.certifiedBatches) {
        return collectCerts(i);
    }
    Instance& inst = instances_[i];
    consensus::ProposalPayload payload;
    const std::size_t take = std::min(inst.mempool, scenario_.txBatchMax);
    for (std::size_t k = 0; k < take; ++k) {
        payload.txs.push_back(
            txBytes("tx/i" + std::to_string(i) + "/" + std::to_string(inst.txSerial++)));
    }
    if (!scenario_.endlessMempool) {
        inst.mempool -= take;
    }
    payload.more = inst.mempool > 0;
    return payload;
}

Result<consensus::Execution> Simulator::execute(std::size_t i, const codec::Block& block) {
    Store& st = instances_[i].store;
    const std::uint64_t h = block.header.height;
    if (h != st.ledger.size() || block.header.parentId != st.ledger.back()->id) {
        checker_.flag("agreement",
                      "instance=i" + std::to_string(i) + " commit does not extend its ledger",
                      now_);
        return fail(ErrorCode::kInvalidBlock, "commit does not extend the ledger");
    }
    const auto ptr = std::make_shared<const codec::Block>(block);
    instances_[i].unsynced.clear();  // one synced write per executed block
    st.ledger.push_back(ptr);
    st.ledgerIndex.emplace(block.id, h);
    st.executed.push_back(executeBlock(st.executed.back(), block));
    if (scenario_.certifiedBatches) {
        executeBatches(i, block);
    }
    checker_.onAppended(i, block, now_);
    note(i, i, TraceKind::kCommitted, block.header.round, h, &block.id);
    consensus::Execution done{st.executed.back(), std::nullopt};
    if (scenario_.endsEpoch(block.header.epoch, h)) {
        std::vector<PubKey> validators;
        for (const auto key : scenario_.validatorSets.at(block.header.epoch + 1)) {
            validators.push_back(keys_.publicKey(key));
        }
        done.nextValidators = std::move(validators);
    }
    return done;
}

void Simulator::committed(std::size_t i, const consensus::Commit& commit,
                          const consensus::CommitOutcome& outcome) {
    Store& st = instances_[i].store;
    // Commit proofs for the instances that sync from this one, as the node stores them.
    const auto child = findBlock(i, commit.commitQc.blockId);
    for (auto& [height, proof] :
         node::commitProofsOf(commit, outcome.endedEpochAt, child ? &child->headerBytes : nullptr,
                              st.ledger.size() - 1)) {
        st.proofs[height] = std::move(proof);
    }
    if (outcome.endedEpochAt) {
        reconfigure(i, *commit.blocks[*outcome.endedEpochAt]);
        return;  // the epoch ends here: nothing above this block is appended
    }
    for (const auto& block : commit.blocks) {
        const std::uint64_t h = block->header.height;
        if (block->header.epoch == st.epoch && h < st.ledger.size() &&
            st.ledger[h]->id != block->id) {
            checker_.flag("agreement",
                          "instance=i" + std::to_string(i) + " commits a block that " +
                              "conflicts with its own ledger at height=" + std::to_string(h),
                          now_);
        }
    }
    if (commit.blocks.back()->id == st.ledger.back()->id) {
        st.rootQc = commit.qc;
    }
    // The consensus store may drop what the ledger now holds.
    const std::uint64_t rootRound = st.rootQc.round;
    std::erase_if(st.blocks,
                  [&](const auto& entry) { return entry.second->header.round <= rootRound; });
    std::erase_if(st.qcs, [&](const auto& entry) { return entry.second.round <= rootRound; });
}

void Simulator::reconfigure(std::size_t i, const codec::Block& block) {
    Store& st = instances_[i].store;
    const std::uint64_t next = block.header.epoch + 1;
    const auto known = committees_.find(next);
    if (known == committees_.end()) {
        std::vector<PubKey> validators;
        for (const auto key : scenario_.validatorSets.at(next)) {
            validators.push_back(keys_.publicKey(key));
        }
        const Hash256 seed = consensus::nextEpochSeed(scenario_.options.chainId, next - 1,
                                                      committees_.at(next - 1).epochSeed());
        auto members = consensus::selectCommittee(validators, scenario_.options.chainId, next, seed,
                                                  scenario_.options.committeeMax);
        committees_.emplace(next, consensus::Committee::create(scenario_.options.chainId, next,
                                                               block.id, seed, members.value())
                                      .value());
    } else if (known->second.seedBlockId() != block.id) {
        checker_.flag("agreement",
                      "instance=i" + std::to_string(i) + " ends epoch " +
                          std::to_string(block.header.epoch) + " at another block",
                      now_);
        return;
    }
    st.epoch = next;
    st.rootQc = consensus::genesisQc(next, block.id);
    std::erase_if(st.blocks, [&](const auto& entry) { return entry.second->header.epoch < next; });
    std::erase_if(st.qcs, [&](const auto& entry) { return entry.second.epoch < next; });
    if (st.tc && st.tc->epoch < next) {
        st.tc.reset();
    }
    ++epochChanges_;
    note(i, i, TraceKind::kCommitted, 0, block.header.height, &block.id);
}

consensus::BlockPtr Simulator::signBlock(std::size_t i, const codec::BlockHeader& header,
                                         std::vector<Bytes> txs) {
    codec::Block block = codec::makeBlock(header, std::move(txs));
    block.signature = keys_.sign(instances_[i].key,
                                 consensus::proposalDigest(scenario_.options.chainId, block.id));
    auto ptr = std::make_shared<const codec::Block>(std::move(block));
    checker_.onProposalSigned(ptr);
    return ptr;
}

void Simulator::broadcast(std::size_t i, const Payload& payload) {
    for (std::size_t j = 0; j < instances_.size(); ++j) {
        if (j != i) {
            send(i, j, payload);
        }
    }
}

void Simulator::equivocate(std::size_t i, const consensus::BlockPtr& block) {
    Instance& inst = instances_[i];
    // A second block for the same round: same header fields, one more transaction.
    std::vector<Bytes> txs = block->txs;
    txs.push_back(txBytes("equivocation/r" + std::to_string(block->header.round)));
    const consensus::BlockPtr second = signBlock(i, block->header, std::move(txs));
    inst.forged.emplace(second->id, second);
    ++forgedBlocks_;
    note(i, i, TraceKind::kEquivocated, block->header.round, block->header.height, &second->id);
    for (std::size_t j = 0; j < instances_.size(); ++j) {
        if (j != i) {
            send(i, j, chance(rng_, 500) ? block : second);
        }
    }
    voteForged(i, second);
}

void Simulator::voteForged(std::size_t i, const consensus::BlockPtr& block) {
    const auto& h = block->header;
    codec::Vote vote;
    vote.epoch = h.epoch;
    vote.round = h.round;
    vote.blockId = block->id;
    vote.voter = keys_.publicKey(instances_[i].key);
    vote.signature =
        keys_.sign(instances_[i].key,
                   consensus::voteDigest(scenario_.options.chainId, h.epoch, h.round, block->id));
    for (const auto j : instancesOf(committees_.at(h.epoch).leaderOf(h.round + 1))) {
        if (j != i) {
            send(i, j, vote);
        }
    }
}

void Simulator::fork(std::size_t i, const consensus::BlockPtr& block) {
    if (block->header.tc) {
        if (const auto stale = belowLock(i, *block)) {
            instances_[i].forged.emplace(stale->id, stale);
            ++forgedBlocks_;
            note(i, i, TraceKind::kEquivocated, stale->header.round, stale->header.height,
                 &stale->id);
            broadcast(i, stale);
            voteForged(i, stale);
            return;
        }
    }
    // Show the block to one member only: it alone may learn the QC the block carries.
    std::size_t j = between(rng_, 0, instances_.size() - 2);
    j += j >= i ? 1 : 0;
    send(i, j, block);
}

consensus::BlockPtr Simulator::belowLock(std::size_t i, const codec::Block& block) {
    // block extends H; H's parent is P1, P1's parent P2. The forged block extends P2 with the QC
    // P1 carries: it conflicts with P1, which any member that saw H's QC may have committed.
    const auto h = findBlock(i, block.header.parentId);
    const auto p1 = h ? findBlock(i, h->header.parentId) : nullptr;
    const auto p2 = p1 && p1->header.height > 0 ? findBlock(i, p1->header.parentId) : nullptr;
    if (!p2) {
        return nullptr;
    }
    codec::BlockHeader header = block.header;
    header.parentId = p2->id;
    header.qc = p1->header.qc;
    header.height = p2->header.height + 1;
    header.execHeight = p2->header.execHeight;
    header.execStateRoot = p2->header.execStateRoot;
    header.execResultsRoot = p2->header.execResultsRoot;
    std::vector<Bytes> txs = block.txs;
    txs.push_back(txBytes("fork/r" + std::to_string(header.round)));
    return signBlock(i, header, std::move(txs));
}

void Simulator::forgeTc(std::size_t i, const codec::Timeout& timeout) {
    Instance& inst = instances_[i];
    const auto key = std::make_pair(timeout.epoch, timeout.round);
    const auto committee = committees_.find(timeout.epoch);
    if (timeout.round < 2 || inst.forgedRounds.contains(key) || committee == committees_.end()) {
        return;
    }
    auto& heard = inst.heard[key];
    heard.emplace(timeout.author, timeout);
    const std::size_t needed = consensus::quorumOf(committee->second.size()) - 1;
    if (heard.size() < needed) {
        return;
    }
    std::vector<codec::Timeout> timeouts;
    for (const auto& entry : heard) {
        if (timeouts.size() < needed) {
            timeouts.push_back(entry.second);
        }
    }
    // Its own entry claims a QC of the round just below, which it does not hold: a TC that
    // need not prove its highest QC makes every honest proposal on an older QC unvotable.
    codec::Timeout own;
    own.epoch = timeout.epoch;
    own.round = timeout.round;
    own.author = keys_.publicKey(inst.key);
    own.highQc.epoch = timeout.epoch;
    own.highQc.round = timeout.round - 1;
    own.highQc.blockId = crypto::sha256(asBytes("forged/" + std::to_string(timeout.round)));
    own.signature =
        keys_.sign(inst.key, consensus::timeoutDigest(scenario_.options.chainId, own.epoch,
                                                      own.round, own.highQc.round));
    timeouts.push_back(own);
    const auto tc = consensus::buildTimeoutCert(committee->second, timeouts);
    if (!tc) {
        return;
    }
    inst.forgedRounds.insert(key);
    std::erase_if(inst.heard, [&](const auto& entry) { return entry.first <= key; });
    ++forgedTcs_;
    note(i, i, TraceKind::kSentTimeout, tc->round, tc->highQc.round);
    broadcast(i, *tc);
}

consensus::BlockPtr Simulator::findBlock(std::size_t i, const Hash256& id) const {
    const Instance& inst = instances_[i];
    if (const auto it = inst.store.blocks.find(id); it != inst.store.blocks.end()) {
        return it->second;
    }
    if (const auto at = inst.store.ledgerIndex.find(id); at != inst.store.ledgerIndex.end()) {
        return inst.store.ledger[at->second];
    }
    if (const auto forged = inst.forged.find(id); forged != inst.forged.end()) {
        return forged->second;
    }
    return nullptr;
}

void Simulator::answerFetch(std::size_t i, std::size_t from, const Hash256& id) {
    const consensus::BlockPtr found = findBlock(i, id);
    note(i, from, TraceKind::kFetchRequest, found ? found->header.round : 0,
         found ? found->header.height : 0, &id);
    if (found) {
        send(i, from, FetchReply{found});
    }
}

std::vector<std::size_t> Simulator::instancesOf(const PubKey& key) const {
    const std::size_t index = keys_.indexOf(key);
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j < instances_.size(); ++j) {
        if (instances_[j].key == index) {
            out.push_back(j);
        }
    }
    return out;
}

}  // namespace gridledger::sim
