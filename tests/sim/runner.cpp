#include "sim/runner.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "sim/simulator.h"

namespace gridledger::sim {

BatchSummary runBatch(const BatchOptions& options) {
    BatchSummary summary;
    summary.options = options;
    for (std::size_t k = 0; k < options.seeds; ++k) {
        const std::uint64_t seed = options.startSeed + k;
        Simulator sim(
            makeScenario(options.n, options.faults, seed, options.rules, options.reputationWindow),
            RunOptions{options.traceDepth, options.keepGoing, options.reportAll, options.only});
        const RunResult r = sim.run();
        if (!r.violation && options.reportAll && summary.reports.size() < options.maxReports) {
            summary.reports.push_back(r.report);
        }
        ++summary.runs;
        summary.steps += r.steps;
        summary.virtualMs += r.endMs;
        summary.committedHeights += r.minHeight;
        summary.timeoutCerts += r.timeoutCerts;
        summary.restarts += r.restarts;
        summary.forgedBlocks += r.forgedBlocks;
        summary.withheldVotes += r.withheldVotes;
        summary.forgedTcs += r.forgedTcs;
        summary.refusedForgeries += r.refusedForgeries;
        summary.syncs += r.syncs;
        summary.syncedBlocks += r.syncedBlocks;
        summary.crossingAnswers += r.crossingAnswers;
        summary.batchTxsVerified += r.batchTxsVerified;
        summary.batchTxsExecuted += r.batchTxsExecuted;
        summary.refusedBatches += r.refusedBatches;
        summary.batchFetches += r.batchFetches;
        summary.maxRecoveryMs = std::max(summary.maxRecoveryMs, r.recoveryMs);
        if (r.livenessBoundMs > 0 && !r.violation) {
            if (r.livenessMs > summary.maxLivenessMs) {
                summary.maxLivenessMs = r.livenessMs;
                summary.maxLivenessBoundMs = r.livenessBoundMs;
            }
            summary.minLivenessMarginMs =
                std::min(summary.minLivenessMarginMs, r.livenessBoundMs - r.livenessMs);
        }
        summary.dropped += r.network.dropped + r.network.partitioned;
        summary.duplicated += r.network.duplicated;
        summary.replayed += r.network.replayed + r.network.stale;
        if (!r.violation) {
            continue;
        }
        ++summary.failures;
        for (const auto& name : r.violated) {
            ++summary.byInvariant[name];
        }
        summary.failingSeeds.push_back(seed);
        if (summary.reports.size() < options.maxReports) {
            summary.reports.push_back(r.report);
        }
        if (options.stopAtFirst) {
            break;
        }
    }
    return summary;
}

std::string BatchSummary::text() const {
    std::ostringstream out;
    out << "n=" << options.n << " faults=" << faultName(options.faults)
        << " rules=" << rulesName(options.rules) << " seeds=" << options.startSeed << ".."
        << options.startSeed + runs - 1 << " runs=" << runs << " failures=" << failures
        << " virtual_s=" << virtualMs / 1000 << " steps=" << steps
        << " min_heights=" << committedHeights << " tcs=" << timeoutCerts
        << " restarts=" << restarts << " forged_blocks=" << forgedBlocks
        << " withheld_votes=" << withheldVotes << " forged_tcs=" << forgedTcs
        << " refused_forgeries=" << refusedForgeries << " syncs=" << syncs
        << " synced_blocks=" << syncedBlocks << " crossing_answers=" << crossingAnswers
        << " batch_txs_verified=" << batchTxsVerified << " batch_txs_executed=" << batchTxsExecuted
        << " refused_batches=" << refusedBatches << " batch_fetches=" << batchFetches
        << " lost_msgs=" << dropped << " dup_msgs=" << duplicated << " late_msgs=" << replayed
        << " worst_first_commit_after_gst_ms=" << maxRecoveryMs
        << " worst_live_after_gst_ms=" << maxLivenessMs << " (bound " << maxLivenessBoundMs << ")";
    if (minLivenessMarginMs != UINT64_MAX) {
        out << " least_margin_ms=" << minLivenessMarginMs;
    }
    for (const auto& [invariant, count] : byInvariant) {
        out << "\n  violated " << invariant << ": " << count;
    }
    for (const auto seed : failingSeeds) {
        out << "\n  replay: "
            << makeScenario(options.n, options.faults, seed, options.rules,
                            options.reputationWindow)
                   .replayLine()
            << (options.only.empty() ? std::string() : " --only " + options.only);
    }
    return out.str();
}

std::size_t sweepSeeds(std::size_t seeds) {
    const char* env = std::getenv("GRIDLEDGER_SIM_SEED_DIVISOR");
    const std::size_t divisor = env != nullptr ? std::strtoull(env, nullptr, 10) : 1;
    return divisor <= 1 ? seeds : std::max<std::size_t>(seeds / divisor, 1);
}

}  // namespace gridledger::sim
