// The deterministic tokenomics run (docs/operations.md "A deterministic epoch run"): one genesis
// with a fixed block time, driven twice on fresh homes, gives the same epoch table and the same
// state root at every settlement; its figures match a hand computation from what was attested.

#include "support/epoch_run.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <gridledger/base/amount.h>

#include "support/dev_chain.h"
#include "support/temp_dir.h"

namespace gridledger::epoch_run_test {
namespace {

namespace json = boost::json;
using testing::EpochRunPlan;
using testing::EpochRunResult;

constexpr std::uint64_t kRewardShareBps = 2000;  // genesis/dev.json
constexpr u128 kRewardRate = 10'000'000'000;     // DPS base units per GFLOP/s
constexpr u128 kRewardPool = u128{1'000'000} * 1'000'000'000'000'000'000ULL;  // 10^6 DPS

std::uint64_t lowerMedian(std::vector<std::uint64_t> values) {
    std::sort(values.begin(), values.end());
    return values[(values.size() - 1) / 2];
}

std::string field(const json::object& o, const char* key) {
    return std::string(o.at(key).as_string());
}

/** The counts of halvings by period and by threshold seen while checking. */
struct Halvings {
    std::uint64_t byPeriod = 0;
    std::uint64_t byThreshold = 0;
};

/**
 * Recomputes every settlement from the slot values the driver attested: lower medians, the 20%
 * payout burn, DPS = burned × R / 2^n, supply = Σ medians, the halving rules and the pool, and
 * compares each with the exported table.
 */
Halvings checkByHand(const EpochRunResult& run, const EpochRunPlan& plan) {
    const json::array rows = json::parse(run.json).as_array();
    Halvings seen;
    std::uint64_t n = 0;
    std::uint64_t lastHalvingMs = plan.genesisTimeMs;
    std::uint64_t converted = 0;
    u128 pool = kRewardPool;
    std::array<std::uint64_t, testing::kRunProviders> balance{};
    for (std::uint64_t k = 0; k < rows.size(); ++k) {
        SCOPED_TRACE("epoch " + std::to_string(k));
        const json::object& row = rows[k].as_object();
        const std::uint64_t boundary = plan.genesisTimeMs + (k + 1) * plan.epochMs();
        EXPECT_EQ(field(row, "epoch"), std::to_string(k));
        EXPECT_EQ(field(row, "boundary_ms"), std::to_string(boundary));
        std::map<std::string, json::object> settled;
        for (const auto& s : row.at("settled").as_array()) {
            settled[field(s.as_object(), "provider")] = s.as_object();
        }
        std::uint64_t supply = 0;
        std::uint64_t burned = 0;
        u128 paid = 0;
        std::size_t present = 0;
        for (std::size_t p = 0; p < testing::kRunProviders; ++p) {
            const std::uint64_t median = lowerMedian(run.fed[k][p]);
            const std::uint64_t burn = balance[p] * kRewardShareBps / 10'000;
            const u128 owed = n >= 128 ? 0 : (u128{burn} * kRewardRate) >> n;
            supply += median;
            burned += burn;
            paid += owed;
            const auto it = settled.find(run.providers[p].hex());
            if (balance[p] == 0 && median == 0) {
                EXPECT_EQ(it, settled.end()) << "a provider with nothing is left out";
            } else {
                ++present;
                EXPECT_NE(it, settled.end());
                if (it != settled.end()) {
                    EXPECT_EQ(field(it->second, "median"), std::to_string(median));
                    EXPECT_EQ(field(it->second, "balance_before"), std::to_string(balance[p]));
                    EXPECT_EQ(field(it->second, "balance_after"), std::to_string(median));
                    EXPECT_EQ(field(it->second, "dps_paid"), toDecimal(owed));
                }
            }
            balance[p] = median;
        }
        EXPECT_EQ(settled.size(), present);
        converted += burned;
        const bool byPeriod = boundary - lastHalvingMs >= plan.halvingPeriodMs;
        const bool byThreshold = converted >= plan.halvingGflThreshold;
        if (byPeriod || byThreshold) {
            ++n;
            lastHalvingMs = boundary;
            converted = 0;
            seen.byPeriod += byPeriod ? 1 : 0;
            seen.byThreshold += byThreshold ? 1 : 0;
        }
        pool -= paid;
        EXPECT_EQ(field(row, "gfl_supply"), std::to_string(supply));
        EXPECT_EQ(field(row, "gfl_payout_burned"), std::to_string(burned));
        EXPECT_EQ(field(row, "dps_paid"), toDecimal(paid));
        EXPECT_EQ(field(row, "dps_shortfall"), "0");
        EXPECT_EQ(row.at("halvings").to_number<std::int64_t>(), static_cast<std::int64_t>(n));
        EXPECT_EQ(row.at("halved_by_period").as_bool(), byPeriod);
        EXPECT_EQ(row.at("halved_by_threshold").as_bool(), byThreshold);
        EXPECT_EQ(field(row, "converted_gfl"), std::to_string(converted));
        // Every transaction of a block before the settling one paid the dev fee into the pool.
        const auto feesPaid = static_cast<std::uint64_t>(std::count_if(
            run.txHeights.begin(), run.txHeights.end(),
            [&](std::uint64_t h) { return plan.genesisTimeMs + h * plan.blockTimeMs < boundary; }));
        EXPECT_EQ(field(row, "reward_pool"), toDecimal(pool + u128{feesPaid} * testing::kDevFee));
    }
    return seen;
}

TEST(EpochRun, TwoRunsOfOneGenesisSettleEightyEpochsWithIdenticalTablesAndStateRoots) {
    testing::TempDir dir;
    const EpochRunPlan plan;
    const auto templateHome = dir.path() / "template";
    testing::writeEpochRunHome(templateHome, plan);

    const EpochRunResult first = testing::runEpochs(templateHome, plan);
    const EpochRunResult second = testing::runEpochs(templateHome, plan);

    // The table, with the state root at every settlement height, is byte-identical.
    std::cout << first.csv;
    EXPECT_EQ(first.csv, second.csv);
    EXPECT_EQ(first.json, second.json);
    EXPECT_EQ(first.txHeights, second.txHeights);
    const json::array rows = json::parse(first.json).as_array();
    ASSERT_EQ(rows.size(), plan.lastEpoch + 1);
    ASSERT_GE(rows.size(), 80U);
    const std::size_t lines =
        static_cast<std::size_t>(std::count(first.csv.begin(), first.csv.end(), '\n'));
    EXPECT_EQ(lines, rows.size() + 1);  // a header, then one line per epoch
    // Each CSV line is its JSON row (no field of this run needs quoting).
    std::istringstream csv(first.csv);
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line.substr(0, 33), "epoch,boundary_ms,height,state_ro");
    for (const auto& r : rows) {
        std::getline(csv, line);
        const json::object& o = r.as_object();
        EXPECT_EQ(o.at("state_root").as_string().size(), 66U);
        const std::string expected = field(o, "epoch") + "," + field(o, "boundary_ms") + "," +
                                     field(o, "height") + "," + field(o, "state_root") + "," +
                                     field(o, "providers") + "," + field(o, "gfl_supply");
        EXPECT_EQ(line.substr(0, expected.size()), expected);
        EXPECT_NE(line.find("," + field(o, "medians") + "," + field(o, "provider_dps_paid")),
                  std::string::npos);
    }

    // Attestations, gaps and challenges all happened, and the medians differ between providers.
    EXPECT_GT(first.attestedGflops.size(), 300U);
    EXPECT_GE(first.challenges, 10U);

    const Halvings halvings = checkByHand(first, plan);
    const std::int64_t total = rows.back().at("halvings").to_number<std::int64_t>();
    std::cout << "settled epochs " << rows.size() << ", txs " << first.txHeights.size()
              << ", halvings " << total << " (" << halvings.byPeriod << " by period, "
              << halvings.byThreshold << " by threshold), challenges " << first.challenges << "\n";
    EXPECT_GE(total, 3);
    // The auditor's replay of the first run accepted every block of the fixed-time chain.
    std::cout << first.replay;
    EXPECT_NE(first.replay.find("every state root reproduced"), std::string::npos) << first.replay;
    EXPECT_GE(halvings.byPeriod, 1U);
    EXPECT_GE(halvings.byThreshold, 1U);
}

}  // namespace
}  // namespace gridledger::epoch_run_test
