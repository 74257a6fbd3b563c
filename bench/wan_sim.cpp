// gridledger_wan_sim: the deterministic simulator as a benchmark of SDBFT at internet scale. 100
// validators, the 31-member committee the committee rule picks among them, one-way delays of
// 50-200 ms and 1 % of messages lost; the same with 10 members down, and both with certified
// batches (docs/protocol.md §14). Prints one table (virtual time, so the figures do not depend
// on the machine) and key=value lines for scripts/bench.py.
//
//   gridledger_wan_sim [--seeds N] [--seconds S] [--validators V] [--loss PERMILLE] [--t0 MS]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/contracts/genesis.h>

#include "sim/simulator.h"
#include "sim/wan.h"

namespace {

using gridledger::sim::WanFigures;
using gridledger::sim::WanOptions;

struct Args {
    std::size_t seeds = 3;
    std::uint64_t seconds = 60;
    std::size_t validators = 100;
    unsigned lossPermille = 10;
    std::uint64_t t0Ms = gridledger::contracts::ConsensusParams{}.roundTimeoutMs;
};

bool parseArgs(int argc, char** argv, Args& args) {
    const std::vector<std::string> all(argv + 1, argv + argc);
    for (std::size_t k = 0; k + 1 < all.size(); k += 2) {
        const std::string_view flag = all[k];
        const unsigned long value = std::stoul(all[k + 1]);
        if (flag == "--seeds" && value >= 1) {
            args.seeds = value;
        } else if (flag == "--seconds" && value >= 10) {
            args.seconds = value;
        } else if (flag == "--validators" && value >= 4) {
            args.validators = value;
        } else if (flag == "--t0" && value >= 100) {
            args.t0Ms = value;  // the rows without a T0 of their own
        } else if (flag == "--loss" && value < 1000) {
            args.lossPermille = static_cast<unsigned>(value);
        } else {
            return false;
        }
    }
    return all.size() % 2 == 0;
}

/** The figures of one configuration over every seed: latencies are the medians of the seeds'
 * figures, traffic and counts their means. */
struct Row {
    std::string name;
    bool retransmit = true;
    std::size_t crashed = 0;
    std::uint64_t t0Ms = 0;  // 0: Args::t0Ms
    bool batches = false;
    std::vector<WanFigures> runs;
};

/** Blocks proposed in the first 10 s of virtual time (start-up, reputation's first window) are
 * left out of the latencies. */
constexpr std::uint64_t kWarmupMs = 10'000;

WanFigures runOne(const Args& args, const Row& row, std::uint64_t seed) {
    WanOptions options;
    options.validators = args.validators;
    options.lossPermille = args.lossPermille;
    options.retransmit = row.retransmit;
    options.t0Ms = row.t0Ms != 0 ? row.t0Ms : args.t0Ms;
    options.crashedMembers = row.crashed;
    options.certifiedBatches = row.batches;
    options.seed = seed;
    options.endMs = args.seconds * 1000;
    gridledger::sim::RunOptions run;
    run.countTraffic = true;
    gridledger::sim::Simulator sim(gridledger::sim::makeWanScenario(options), run);
    const auto result = sim.run();
    if (result.violation) {
        std::fprintf(stderr, "%s\n", result.report.c_str());
        std::exit(1);
    }
    return gridledger::sim::measureWan(sim, kWarmupMs);
}

template <typename Field>
double mean(const std::vector<WanFigures>& runs, Field field) {
    double sum = 0;
    for (const auto& r : runs) {
        sum += static_cast<double>(r.*field);
    }
    return sum / static_cast<double>(runs.size());
}

template <typename Field>
std::uint64_t median(const std::vector<WanFigures>& runs, Field field) {
    std::vector<std::uint64_t> values;
    values.reserve(runs.size());
    for (const auto& r : runs) {
        values.push_back(r.*field);
    }
    std::sort(values.begin(), values.end());
    return values[(values.size() - 1) / 2];
}

/** Signature checks per executed transaction: with certified batches, the members' checks of
 * the batches' transactions; without, every live validator checks every transaction it
 * executes. */
std::string checks(const Args& args, const Row& row) {
    if (!row.batches) {
        return std::to_string(args.validators - row.crashed) + " (all)";
    }
    char out[32];
    std::snprintf(out, sizeof out, "%.1f", mean(row.runs, &WanFigures::checksPerExecutedTx));
    return out;
}

/** With certified batches, the medians of the seeds' figures from a batch's making to its
 * execution; without, none. */
std::string batchLatency(const Row& row) {
    if (!row.batches) {
        return "-";
    }
    return std::to_string(median(row.runs, &WanFigures::batchP50Ms)) + " ms, " +
           std::to_string(median(row.runs, &WanFigures::batchP99Ms)) + " ms";
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    try {
        if (!parseArgs(argc, argv, args)) {
            throw std::invalid_argument("flag");
        }
    } catch (const std::exception&) {
        std::fprintf(stderr,
                     "usage: gridledger_wan_sim [--seeds N] [--seconds S>=10] [--validators V>=4] "
                     "[--loss PERMILLE] [--t0 MS>=100]\n");
        return 2;
    }
    const std::size_t f = 10;
    // Lost messages retransmitted as the node's TCP links do, then lost outright (a harsher
    // model: a connection that drops takes its unsent messages with it); one row with the round
    // timeout a WAN deployment would set.
    // Then the same network with certified batches.
    std::vector<Row> rows{{"tcp", true, 0, 0, false, {}},
                          {"tcp_crashed", true, f, 0, false, {}},
                          {"tcp_crashed_t0_1500", true, f, 1500, false, {}},
                          {"lost", false, 0, 0, false, {}},
                          {"lost_crashed", false, f, 0, false, {}},
                          {"batches", true, 0, 0, true, {}},
                          {"batches_crashed", true, f, 0, true, {}}};
    for (auto& row : rows) {
        for (std::uint64_t seed = 1; seed <= args.seeds; ++seed) {
            row.runs.push_back(runOne(args, row, seed));
        }
    }
    // The mean round trip of the drawn links: twice the mean one-way delay, 125 ms.
    const double rttMs = 250.0;
    std::printf(
        "SDBFT at internet scale (virtual time): %zu validators, committee of %zu, one-way delays "
        "50-200 ms, %.1f %% of messages lost, %zu seeds of %llu s each\n\n",
        args.validators, rows.front().runs.front().members, args.lossPermille / 10.0, args.seeds,
        static_cast<unsigned long long>(args.seconds));
    std::printf(
        "| run | T0 | blocks/s | commit p50 | commit p99 | TCs | msgs/member/block | "
        "KiB/member/block | msgs/follower/block | KiB/follower/block | signature checks/tx | "
        "batch made to executed p50, p99 |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const auto& row : rows) {
        const std::uint64_t p50 = median(row.runs, &WanFigures::p50Ms);
        const std::uint64_t p99 = median(row.runs, &WanFigures::p99Ms);
        std::printf(
            "| %s (%zu down) | %llu ms | %.2f | %llu ms = %.2f RTT | %llu ms = %.2f RTT | %.0f | "
            "%.0f "
            "| %.1f | %.1f | %.2f | %s | %s |\n",
            row.name.c_str(), row.crashed,
            static_cast<unsigned long long>(row.t0Ms != 0 ? row.t0Ms : args.t0Ms),
            mean(row.runs, &WanFigures::milliBlocksPerSecond) / 1000,
            static_cast<unsigned long long>(p50), static_cast<double>(p50) / rttMs,
            static_cast<unsigned long long>(p99), static_cast<double>(p99) / rttMs,
            mean(row.runs, &WanFigures::timeoutCerts), mean(row.runs, &WanFigures::memberMessages),
            mean(row.runs, &WanFigures::memberBytes) / 1024,
            mean(row.runs, &WanFigures::followerMessages),
            mean(row.runs, &WanFigures::followerBytes) / 1024, checks(args, row).c_str(),
            batchLatency(row).c_str());
    }
    std::printf("\n");
    for (const auto& row : rows) {
        std::printf(
            "wan_%s_p50_ms=%llu wan_%s_p99_ms=%llu wan_%s_member_bytes=%.0f\n", row.name.c_str(),
            static_cast<unsigned long long>(median(row.runs, &WanFigures::p50Ms)), row.name.c_str(),
            static_cast<unsigned long long>(median(row.runs, &WanFigures::p99Ms)), row.name.c_str(),
            mean(row.runs, &WanFigures::memberBytes));
        if (row.batches) {
            std::printf(
                "wan_%s_checks_per_tx=%.2f wan_%s_batch_p50_ms=%llu wan_%s_batch_p99_ms=%llu\n",
                row.name.c_str(), mean(row.runs, &WanFigures::checksPerExecutedTx),
                row.name.c_str(),
                static_cast<unsigned long long>(median(row.runs, &WanFigures::batchP50Ms)),
                row.name.c_str(),
                static_cast<unsigned long long>(median(row.runs, &WanFigures::batchP99Ms)));
        }
    }
    return 0;
}
