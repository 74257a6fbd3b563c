// gridledger_sim: runs any number of further seeds of the simulator (soak runs) and replays one.
//
//   gridledger_sim --seeds 10000 --start 1000 --n 4,7 --faults all
//   gridledger_sim --n 4 --faults twins --rules two-chain --start 17 --seeds 1 --trace 200
//   gridledger_sim --n 4 --faults forking --start 3 --seeds 1 --trace 100000 --report
//
// Exits 1 if any run breaks an invariant, printing each failing seed's replay line and the
// report (scenario, violation, last events) of the first ones; 2 on bad arguments.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/runner.h"

namespace {

using gridledger::sim::BatchOptions;
using gridledger::sim::FaultClass;

struct Args {
    std::vector<std::size_t> sizes{4};
    std::vector<FaultClass> faults;  // empty: every class within f for each n
    gridledger::sim::RulesVariant rules = gridledger::sim::RulesVariant::kTwoChain;
    std::size_t reputation = 0;
    std::uint64_t start = 1;
    std::size_t seeds = 100;
    std::size_t trace = 64;
    bool stop = false;
    bool report = false;
    bool keepGoing = false;
    std::string only;
};

void usage() {
    std::cerr
        << "usage: gridledger_sim [--seeds N] [--start S] [--n 1,4,7,10] "
           "[--faults all|none,lossy,crash,partition,twins,equivocation,withhold,mixed,"
           "forking,twins-rounds,tc-forgery,sync-liar,excess-twins] "
           "[--rules two-chain|skip-round|skip-lock|skip-tc-qc|skip-barrier|"
           "sync-past-epoch-end|claim-starts-sync] "
           "[--reputation W] "
           "[--trace K] [--stop] [--report] [--keep-going] [--only INVARIANT]\n"
           "  --reputation W: the cores run leader reputation over W blocks (default 0: off);\n"
           "  --trace K: events kept for a report; --stop: stop at the first violation;\n"
           "  --report: print the report (scenario, trace) of passing runs too;\n"
           "  --keep-going: run each scenario to its end after a violation, counting\n"
           "    every invariant it breaks;\n"
           "  --only INVARIANT: check that invariant alone (for example agreement)\n";
}

std::vector<std::string> splitList(std::string_view text) {
    std::vector<std::string> out;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const std::size_t end = std::min(text.find(',', begin), text.size());
        out.emplace_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    return out;
}

bool parseValue(std::string_view flag, const std::string& value, Args& args) {
    if (flag == "--seeds") {
        args.seeds = std::stoul(value);
    } else if (flag == "--start") {
        args.start = std::stoull(value);
    } else if (flag == "--trace") {
        args.trace = std::stoul(value);
    } else if (flag == "--n") {
        args.sizes.clear();
        for (const auto& item : splitList(value)) {
            const std::size_t n = std::stoul(item);
            if (n == 0 || n > 64) {
                return false;
            }
            args.sizes.push_back(n);
        }
    } else if (flag == "--faults") {
        args.faults.clear();
        if (value != "all") {
            for (const auto& item : splitList(value)) {
                const auto fault = gridledger::sim::parseFault(item);
                if (!fault) {
                    return false;
                }
                args.faults.push_back(*fault);
            }
        }
    } else if (flag == "--only") {
        args.only = value;
    } else if (flag == "--reputation") {
        args.reputation = std::stoul(value);
        if (args.reputation > 10'000) {
            return false;
        }
    } else if (flag == "--rules") {
        const auto rules = gridledger::sim::parseRules(value);
        if (!rules) {
            return false;
        }
        args.rules = *rules;
    } else {
        return false;
    }
    return true;
}

bool parseArgs(int argc, char** argv, Args& args) {
    const std::vector<std::string> all(argv + 1, argv + argc);
    for (std::size_t k = 0; k < all.size(); ++k) {
        if (all[k] == "--stop") {
            args.stop = true;
            continue;
        }
        if (all[k] == "--report") {
            args.report = true;
            continue;
        }
        if (all[k] == "--keep-going") {
            args.keepGoing = true;
            continue;
        }
        if (k + 1 >= all.size()) {
            return false;
        }
        try {
            if (!parseValue(all[k], all[k + 1], args)) {
                return false;
            }
        } catch (const std::exception&) {
            return false;  // std::stoul on a non-number
        }
        ++k;
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parseArgs(argc, argv, args)) {
        usage();
        return 2;
    }
    const auto began = std::chrono::steady_clock::now();
    std::size_t runs = 0;
    std::size_t failures = 0;
    for (const std::size_t n : args.sizes) {
        const auto classes =
            args.faults.empty() ? gridledger::sim::faultClassesFor(n) : args.faults;
        for (const FaultClass fault : classes) {
            BatchOptions options;
            options.n = n;
            options.faults = fault;
            options.rules = args.rules;
            options.reputationWindow = args.reputation;
            options.startSeed = args.start;
            options.seeds = args.seeds;
            options.traceDepth = args.trace;
            options.stopAtFirst = args.stop;
            options.reportAll = args.report;
            options.keepGoing = args.keepGoing;
            options.only = args.only;
            const auto summary = gridledger::sim::runBatch(options);
            runs += summary.runs;
            failures += summary.failures;
            std::cout << summary.text() << "\n";
            for (const auto& report : summary.reports) {
                std::cout << report << "\n";
            }
            std::cout.flush();
        }
    }
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began);
    std::printf("total runs=%zu failures=%zu wall_s=%.1f\n", runs, failures, seconds.count());
    return failures == 0 ? 0 : 1;
}
