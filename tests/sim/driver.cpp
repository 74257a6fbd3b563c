// The simulator as each instance's driver: the effects of a step, performed in order exactly as
// docs/protocol.md §8 asks, plus the faulty drivers (equivocation, forking, vote withholding).
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "sim/simulator.h"

namespace gridledger::sim {
namespace {

Bytes txBytes(const std::string& text) {
    return Bytes(text.begin(), text.end());
}

}  // namespace

void Simulator::perform(std::size_t i, const consensus::Effect& effect) {
    std::visit([&](const auto& e) { performOne(i, e); }, effect);
}

void Simulator::performOne(std::size_t i, const consensus::PersistSafety& e) {
    instances_[i].store.safety = e.data;
}

void Simulator::performOne(std::size_t i, const consensus::PersistBlock& e) {
    instances_[i].store.blocks[e.block->id] = e.block;
}

void Simulator::performOne(std::size_t i, const consensus::PersistQc& e) {
    instances_[i].store.qcs[e.qc.blockId] = e.qc;
}

void Simulator::performOne(std::size_t i, const consensus::PersistTc& e) {
    instances_[i].store.tc = e.tc;
    ++timeoutCerts_;
}

void Simulator::performOne(std::size_t i, const consensus::Broadcast& e) {
    Instance& inst = instances_[i];
    if (const auto* block = std::get_if<consensus::BlockPtr>(&e.message)) {
        const auto& h = (*block)->header;
        proposedAt_.try_emplace((*block)->id, now_);
        note(i, i, TraceKind::kSentProposal, h.round, h.height, &(*block)->id);
        if (inst.role == Role::kEquivocator) {
            equivocate(i, *block);
            return;
        }
        if (inst.role == Role::kForker) {
            fork(i, *block);
            return;
        }
        broadcast(i, *block);
    } else if (const auto* timeout = std::get_if<codec::Timeout>(&e.message)) {
        note(i, i, TraceKind::kSentTimeout, timeout->round, timeout->highQc.round);
        checker_.onTimeoutSent(i, *timeout, inst.store.safety, inst.incarnation, now_);
        broadcast(i, *timeout);
    } else {
        broadcast(i, std::get<codec::TimeoutCert>(e.message));
    }
}

void Simulator::performOne(std::size_t i, const consensus::SendVote& e) {
    Instance& inst = instances_[i];
    if (inst.role == Role::kWithholder) {
        ++withheldVotes_;
        return;  // the faulty driver keeps its votes
    }
    note(i, i, TraceKind::kSentVote, e.vote.round, 0, &e.vote.blockId);
    checker_.onVoteSent(i, e.vote, inst.store.safety, now_);
    // Like the node: the vote goes to the next leader and a copy to every other member, so that
    // every member forms the QC even when the next leader is down (docs/protocol.md §5).
    local(i, consensus::VoteReceived{e.vote});
    if (scenario_.votesToLeaderOnly && now_ < scenario_.gstMs) {
        // The network drops the copies (twins-rounds): the next leader alone forms the QC.
        for (const auto j : instancesOf(e.to)) {
            if (j != i) {
                send(i, j, e.vote);
            }
        }
        return;
    }
    broadcast(i, e.vote);
}

void Simulator::performOne(std::size_t i, const consensus::ScheduleTimer& e) {
    local(i, consensus::TimerFired{e.kind, e.round}, e.delayMs);
}

void Simulator::performOne(std::size_t i, const consensus::Fetch& e) {
    std::vector<std::size_t> peers;
    if (e.hint) {
        peers = instancesOf(*e.hint);
    } else {
        for (std::size_t j = 0; j < instances_.size(); ++j) {
            peers.push_back(j);
        }
    }
    for (const auto j : peers) {
        if (j != i) {
            send(i, j, FetchRequest{e.blockId});
        }
    }
}

void Simulator::performOne(std::size_t i, const consensus::Commit& e) {
    Store& st = instances_[i].store;
    for (const auto& block : e.blocks) {
        if (block->header.epoch < st.epoch) {
            continue;  // above the reconfiguration block that ended its epoch: never appended
        }
        const std::uint64_t h = block->header.height;
        if (h < st.ledger.size()) {
            if (st.ledger[h]->id != block->id) {
                checker_.flag("agreement",
                              "instance=i" + std::to_string(i) + " commits a block that " +
                                  "conflicts with its own ledger at height=" + std::to_string(h),
                              now_);
            }
            continue;  // after a restart a commit can repeat heights the ledger holds
        }
        if (h != st.ledger.size() || block->header.parentId != st.ledger.back()->id) {
            checker_.flag("agreement",
                          "instance=i" + std::to_string(i) + " commit does not extend its ledger",
                          now_);
            return;
        }
        st.ledger.push_back(block);
        st.ledgerIndex.emplace(block->id, h);
        st.executed.push_back(executeBlock(st.executed.back(), *block));
        const consensus::ExecRecord& rec = st.executed.back();
        note(i, i, TraceKind::kCommitted, block->header.round, h, &block->id);
        local(i, consensus::Executed{rec.height, rec.stateRoot, rec.resultsRoot});
        if (scenario_.endsEpoch(block->header.epoch, h)) {
            reconfigure(i, e, block);
            return;  // the epoch ends here: nothing above this block is appended
        }
    }
    if (e.blocks.back()->id == st.ledger.back()->id) {
        st.rootQc = e.qc;
    }
    // The consensus store may drop what the ledger now holds.
    const std::uint64_t rootRound = st.rootQc.round;
    std::erase_if(st.blocks,
                  [&](const auto& entry) { return entry.second->header.round <= rootRound; });
    std::erase_if(st.qcs, [&](const auto& entry) { return entry.second.round <= rootRound; });
}

void Simulator::reconfigure(std::size_t i, const consensus::Commit& commit,
                            const consensus::BlockPtr& block) {
    Store& st = instances_[i].store;
    const std::uint64_t next = block->header.epoch + 1;
    std::vector<PubKey> validators;
    for (const auto key : scenario_.validatorSets.at(next)) {
        validators.push_back(keys_.publicKey(key));
    }
    const auto known = committees_.find(next);
    if (known == committees_.end()) {
        const Hash256 seed = consensus::nextEpochSeed(scenario_.options.chainId, next - 1,
                                                      committees_.at(next - 1).epochSeed());
        auto members = consensus::selectCommittee(validators, scenario_.options.chainId, next, seed,
                                                  scenario_.options.committeeMax);
        committees_.emplace(next, consensus::Committee::create(scenario_.options.chainId, next,
                                                               block->id, seed, members.value())
                                      .value());
    } else if (known->second.seedBlockId() != block->id) {
        checker_.flag("agreement",
                      "instance=i" + std::to_string(i) + " ends epoch " +
                          std::to_string(block->header.epoch) + " at another block",
                      now_);
        return;
    }
    // The proof that ended the epoch: the commit QC and the blocks from this one up to the
    // block it certifies, for instances that lag behind.
    EpochProof proof{{}, commit.commitQc};
    bool above = false;
    for (const auto& b : commit.blocks) {
        if (above) {
            proof.blocks.push_back(b);
        }
        above = above || b->id == block->id;
    }
    if (const auto certified = findBlock(i, commit.commitQc.blockId)) {
        proof.blocks.push_back(certified);
    }
    st.epochProofs[block->header.epoch] = std::move(proof);
    st.epoch = next;
    st.rootQc = consensus::genesisQc(next, block->id);
    std::erase_if(st.blocks, [&](const auto& entry) { return entry.second->header.epoch < next; });
    std::erase_if(st.qcs, [&](const auto& entry) { return entry.second.epoch < next; });
    if (st.tc && st.tc->epoch < next) {
        st.tc.reset();
    }
    ++epochChanges_;
    note(i, i, TraceKind::kCommitted, 0, block->header.height, &block->id);
    local(i, consensus::EpochChange{*block, std::move(validators)});
}

void Simulator::performOne(std::size_t i, const consensus::BuildProposal& e) {
    Instance& inst = instances_[i];
    codec::BlockHeader header;
    header.epoch = e.epoch;
    header.round = e.round;
    header.height = e.height;
    header.parentId = e.parentId;
    header.qc = e.qc;
    header.tc = e.tc;
    header.author = keys_.publicKey(inst.key);
    header.timestampMs = std::max(kClockBaseMs + now_, e.minTimestampMs);
    header.execHeight = e.execHeight;
    header.execStateRoot = e.execStateRoot;
    header.execResultsRoot = e.execResultsRoot;
    std::vector<Bytes> txs;
    const std::size_t take = std::min(inst.mempool, scenario_.txBatchMax);
    for (std::size_t k = 0; k < take; ++k) {
        txs.push_back(txBytes("tx/i" + std::to_string(i) + "/" + std::to_string(inst.txSerial++)));
    }
    if (!scenario_.endlessMempool) {
        inst.mempool -= take;
    }
    const consensus::BlockPtr block = signBlock(i, header, std::move(txs));
    local(i, consensus::ProposalBuilt{*block});
    if (inst.mempool > 0) {
        local(i, consensus::PayloadAvailable{});
    }
}

void Simulator::performOne(std::size_t i, const consensus::Rejected& e) {
    note(i, i, TraceKind::kRejected, static_cast<std::uint64_t>(e.error.code), 0);
    ++instances_[i].rejections;
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
