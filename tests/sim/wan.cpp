#include "sim/wan.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gridledger/contracts/genesis.h>

namespace gridledger::sim {
namespace {

/** The value at `permille`/1000 of the way through `sorted` (non-empty, ascending). */
std::uint64_t percentile(const std::vector<std::uint64_t>& sorted, std::size_t permille) {
    return sorted[(sorted.size() - 1) * permille / 1000];
}

}  // namespace

Scenario makeWanScenario(const WanOptions& options) {
    const contracts::ConsensusParams node;
    Scenario s;
    s.seed = options.seed;
    s.n = options.validators;
    s.options.chainId = std::string(kSimChainId);
    s.options.t0Ms = options.t0Ms != 0 ? options.t0Ms : node.roundTimeoutMs;
    s.options.emptyBlockIntervalMs = node.emptyBlockIntervalMs;
    s.options.maxClockDriftMs = node.maxClockDriftMs;
    s.options.committeeMax = node.committeeMax;
    s.options.leaderReputationWindow = node.leaderReputationWindow;
    for (std::size_t i = 0; i < options.validators; ++i) {
        s.keyOf.push_back(i);
        s.roles.push_back(Role::kHonest);
    }
    std::mt19937_64 rng(options.seed);
    const std::size_t m = options.validators;
    const std::uint64_t jitter = (options.maxDelayMs - options.minDelayMs) / 10;
    s.links.assign(m * m, LinkDelay{});
    for (std::size_t a = 0; a < m; ++a) {
        for (std::size_t b = a + 1; b < m; ++b) {
            const std::uint64_t base =
                between(rng, options.minDelayMs, options.maxDelayMs - jitter);
            s.links[a * m + b] = LinkDelay{base, base + jitter};
            s.links[b * m + a] = LinkDelay{base, base + jitter};
        }
    }
    // The network's faults apply before GST: the run never reaches it.
    s.dropPermille = options.lossPermille;
    s.retransmitLost = options.retransmit;
    s.gstMs = options.endMs + 1;
    s.endMs = options.endMs;
    s.certifiedBatches = options.certifiedBatches;
    // The longest round trip is 2 · maxDelayMs (400 ms by default): an author waits 2.5 times
    // that for the members it asked before it asks them all, and a member waits 1.5 times that
    // for the signer it asked for a batch's data.
    s.batchAckRetryMs = 5 * options.maxDelayMs;
    s.batchFetchRetryMs = 3 * options.maxDelayMs;
    // About 12 batches are certified a second, and with 10 members down about 1.5 blocks
    // commit: a proposal has room for 32 certificates, so that batches do not queue for it.
    s.certsPerBlock = 32;
    s.endlessMempool = !options.certifiedBatches;
    // Without batches, no random arrivals: the mempools are endless.
    s.txIntervalMs = options.certifiedBatches ? options.txIntervalMs : options.endMs;
    s.checkLiveness = false;
    std::vector<std::size_t> members;
    const consensus::Committee committee = genesisCommitteeOf(s);
    for (std::size_t k = 0; k < committee.size(); ++k) {
        members.push_back(k);
    }
    std::shuffle(members.begin(), members.end(), rng);
    const Keyring keys(s.keyCount());
    for (std::size_t k = 0; k < options.crashedMembers && k < members.size(); ++k) {
        const std::size_t instance = keys.indexOf(committee.member(members[k]));
        s.roles[instance] = Role::kCrashed;
        s.crashes.push_back(CrashPlan{instance, 0, std::nullopt, false});
    }
    return s;
}

WanFigures measureWan(const Simulator& sim, std::uint64_t warmupMs) {
    const Scenario& s = sim.scenario();
    const consensus::Committee& committee = sim.committee();
    WanFigures out;
    out.members = committee.size();
    std::vector<std::size_t> live;
    std::uint64_t height = UINT64_MAX;
    for (std::size_t i = 0; i < s.instances(); ++i) {
        if (s.roles[i] != Role::kCrashed) {
            live.push_back(i);
            height = std::min(height, sim.height(i));
        }
    }
    out.liveValidators = live.size();
    if (live.empty() || height == 0) {
        return out;
    }
    std::vector<std::uint64_t> latencies;
    for (std::uint64_t h = 1; h <= height; ++h) {
        const auto proposed = sim.proposedAt(sim.instance(live.front()).store.ledger[h]->id);
        if (!proposed || *proposed < warmupMs) {
            continue;
        }
        ++out.blocks;
        for (const auto i : live) {
            latencies.push_back(sim.instance(i).commitTimes.at(h) - *proposed);
        }
    }
    if (!latencies.empty()) {
        std::sort(latencies.begin(), latencies.end());
        out.p50Ms = percentile(latencies, 500);
        out.p99Ms = percentile(latencies, 990);
        out.maxMs = latencies.back();
    }
    out.timeoutCerts = sim.result().timeoutCerts;
    out.milliBlocksPerSecond = height * 1'000'000 / std::max<std::uint64_t>(sim.now(), 1);
    Traffic members;
    Traffic followers;
    std::size_t memberCount = 0;
    for (const auto i : live) {
        const bool member = committee.contains(sim.keys().publicKey(s.keyOf[i]));
        Traffic& sum = member ? members : followers;
        sum.messages += sim.instance(i).sent.messages;
        sum.bytes += sim.instance(i).sent.bytes;
        memberCount += member ? 1 : 0;
    }
    const auto perNodeBlock = [&](std::uint64_t total, std::size_t nodes) {
        return nodes == 0 ? 0.0
                          : static_cast<double>(total) / static_cast<double>(nodes) /
                                static_cast<double>(height);
    };
    out.memberMessages = perNodeBlock(members.messages, memberCount);
    out.memberBytes = perNodeBlock(members.bytes, memberCount);
    out.followerMessages = perNodeBlock(followers.messages, live.size() - memberCount);
    out.followerBytes = perNodeBlock(followers.bytes, live.size() - memberCount);
    const RunResult result = sim.result();
    out.batchTxsExecuted = result.batchTxsExecuted;
    out.checksPerExecutedTx = result.batchTxsExecuted == 0
                                  ? 0.0
                                  : static_cast<double>(result.batchTxsVerified) /
                                        static_cast<double>(result.batchTxsExecuted);
    std::vector<std::uint64_t> batchLatencies;
    for (const auto& executed : sim.batchExecutions()) {
        if (executed.madeAt >= warmupMs) {
            batchLatencies.push_back(executed.executedAt - executed.madeAt);
        }
    }
    if (!batchLatencies.empty()) {
        std::sort(batchLatencies.begin(), batchLatencies.end());
        out.batchP50Ms = percentile(batchLatencies, 500);
        out.batchP99Ms = percentile(batchLatencies, 990);
    }
    return out;
}

}  // namespace gridledger::sim
