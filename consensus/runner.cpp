#include <algorithm>
#include <utility>

#include <gridledger/base/overloaded.h>
#include <gridledger/consensus/runner.h>

namespace gridledger::consensus {

Runner::Runner(Adaptor& adaptor, std::string chainId, std::unique_ptr<Signer> proposer)
    : adaptor_(adaptor), chainId_(std::move(chainId)), proposer_(std::move(proposer)) {}

void Runner::reset(Core core) {
    core_.emplace(std::move(core));
    loopback_.clear();
    stopped_ = false;
    epochEnding_ = false;
}

void Runner::clear() {
    core_.reset();
    loopback_.clear();
    epochEnding_ = false;
}

void Runner::stop() {
    stopped_ = true;
    loopback_.clear();
}

void Runner::deliver(decltype(Event::body) body) {
    if (stopped_ || !core_) {
        return;
    }
    loopback_.push_back(std::move(body));
    if (delivering_) {
        return;  // the loop below takes it in turn
    }
    delivering_ = true;
    while (!loopback_.empty() && !stopped_ && core_) {
        const Event event{adaptor_.nowMs(), std::move(loopback_.front())};
        loopback_.pop_front();
        if (std::holds_alternative<EpochChange>(event.body)) {
            epochEnding_ = false;  // the core moves to the next epoch with this event
        }
        const Effects effects = core_->step(event);
        const std::size_t count = std::min(adaptor_.onStep(event, effects), effects.size());
        for (std::size_t k = 0; k < count && !stopped_; ++k) {
            perform(effects[k]);
        }
        if (count < effects.size()) {
            stop();  // the host died in the middle of the step
        }
    }
    delivering_ = false;
}

bool Runner::check(const Status& status) {
    if (!status) {
        failWith(status.error());
    }
    return status.has_value();
}

void Runner::failWith(const Error& error) {
    stop();
    adaptor_.failed(error);
}

void Runner::perform(const Effect& effect) {
    const bool signs =
        std::holds_alternative<PersistSafety>(effect) || std::holds_alternative<SendVote>(effect) ||
        std::holds_alternative<Broadcast>(effect) || std::holds_alternative<BuildProposal>(effect);
    if (held_ && signs) {
        // Nothing signed leaves and no safety data is written: a vote or timeout of this key
        // must not raise the recorded rounds above votes the start-up guard has yet to see.
        return;
    }
    std::visit(Overloaded{
                   [this](const PersistSafety& e) { check(adaptor_.persistSafety(e.data)); },
                   [this](const PersistBlock& e) { check(adaptor_.persistBlock(e.block)); },
                   [this](const PersistQc& e) { check(adaptor_.persistQc(e.qc)); },
                   [this](const PersistTc& e) { check(adaptor_.persistTc(e.tc)); },
                   [this](const Broadcast& e) {
                       if (check(adaptor_.beforeSend())) {
                           adaptor_.broadcast(e);
                       }
                   },
                   [this](const SendVote& e) {
                       if (check(adaptor_.beforeSend())) {
                           // Every member forms the QC itself, so its own vote counts too
                           // (docs/protocol.md §5); the core accepts a vote at any member.
                           loopback_.emplace_back(VoteReceived{e.vote});
                           adaptor_.sendVote(e.vote, e.to);
                       }
                   },
                   [this](const ForwardQc& e) { adaptor_.forwardQc(e.qc, e.to); },
                   [this](const ScheduleTimer& e) { adaptor_.schedule(e); },
                   [this](const Fetch& e) { adaptor_.fetch(e); },
                   [this](const Commit& e) { commit(e); },
                   [this](const BuildProposal& e) { buildProposal(e); },
                   [this](const Rejected& e) { adaptor_.rejected(e.error); },
               },
               effect);
}

void Runner::commit(const Commit& commit) {
    CommitOutcome outcome{commit.blocks.size(), 0, std::nullopt};
    if (!epochEnding_) {
        std::uint64_t height = adaptor_.executedHeight();
        // The ledger's epoch, not the core's: they differ when block sync ended the epoch.
        const std::uint64_t epoch = adaptor_.ledgerEpoch();
        for (std::size_t i = 0; i < commit.blocks.size(); ++i) {
            const codec::Block& block = *commit.blocks[i];
            if (block.header.height <= height || block.header.epoch != epoch) {
                continue;  // executed before a restart, or above the end of its epoch
            }
            const codec::QuorumCert& certifying =
                i + 1 < commit.blocks.size() ? commit.blocks[i + 1]->header.qc : commit.qc;
            auto done = adaptor_.execute(block, certifying);
            if (!done) {
                failWith(done.error());
                return;
            }
            outcome.first = std::min(outcome.first, i);
            ++outcome.executed;
            height = block.header.height;
            const ExecRecord& state = done->state;
            loopback_.emplace_back(Executed{height, state.stateRoot, state.resultsRoot});
            if (done->nextValidators) {
                // The epoch ends with this block: the blocks above it are never executed.
                loopback_.emplace_back(EpochChange{block, std::move(*done->nextValidators)});
                epochEnding_ = true;
                outcome.endedEpochAt = i;
                break;
            }
        }
    }
    check(adaptor_.committed(commit, outcome));
}

void Runner::buildProposal(const BuildProposal& request) {
    ProposalPayload payload = adaptor_.collectTxs(request);
    codec::BlockHeader header;
    header.epoch = request.epoch;
    header.round = request.round;
    header.height = request.height;
    header.parentId = request.parentId;
    header.qc = request.qc;
    header.tc = request.tc;
    header.author = proposer_->publicKey();
    header.timestampMs =
        std::min(std::max(adaptor_.nowMs(), request.minTimestampMs), request.maxTimestampMs);
    header.execHeight = request.execHeight;
    header.execStateRoot = request.execStateRoot;
    header.execResultsRoot = request.execResultsRoot;
    codec::Block block = codec::makeBlock(header, std::move(payload.txs));
    signProposal(*proposer_, chainId_, block);
    loopback_.emplace_back(ProposalBuilt{std::move(block)});
    if (payload.more) {
        loopback_.emplace_back(PayloadAvailable{});
    }
}

}  // namespace gridledger::consensus
