// A task's whole life through the CLI on a running dev node, each step a real process: a provider
// registers, is admitted and attests; a consumer creates a task, the chain matches it, the
// provider starts it and submits a result, the consumer accepts it; a second task is cancelled
// while running. task_get and account_get show the transitions and the balances, checked against
// amounts computed by hand from the dev genesis (ml_training at C = 2.5·10^14, pool_share 10 %).

#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/base/amount.h>

#include "support/node_process.h"

namespace gridledger {
namespace {

namespace json = boost::json;

/** 1 PFLOP/s of ml_training for one minute: 2.5·10^14 × 10^6 GFLOP/s × 60 s / 10^6. */
const u128 kRatePerMinute = u128{15'000'000'000'000'000ULL};
const u128 kDps = u128{1'000'000'000'000'000'000ULL};

/** Runs a `tx … --wait` command and checks that it committed successfully. */
std::string committed(const testing::NodeProcess& node, std::vector<std::string> args) {
    args.push_back("--wait");
    const auto [code, out] = node.cli(args);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("\"status\":\"committed\""), std::string::npos) << out;
    EXPECT_NE(out.find("\"success\":true"), std::string::npos) << out;
    return out;
}

std::string newKey(const testing::NodeProcess& node, const std::string& name) {
    const auto [code, out] = node.cli({"keys", "new", name});
    EXPECT_EQ(code, 0) << out;
    std::smatch match;
    EXPECT_TRUE(std::regex_search(out, match, std::regex("address +(0x[0-9a-f]{40})"))) << out;
    return match.size() > 1 ? std::string(match[1]) : std::string();
}

u128 balanceOf(const testing::NodeProcess& node, const std::string& address) {
    auto account = node.call("account_get", json::array{json::string(address)});
    EXPECT_TRUE(account) << account.error().message;
    if (!account) {
        return 0;
    }
    auto value = parseU128(std::string(account->at("balance").as_string()));
    EXPECT_TRUE(value);
    return value ? *value : 0;
}

json::object taskOf(const testing::NodeProcess& node, const std::string& id) {
    auto task = node.call("task_get", json::array{json::string(id)});
    EXPECT_TRUE(task) << task.error().message;
    return task ? task->as_object() : json::object{};
}

/** Polls task_get until the task is in `state` (matching runs in the chain's next block). */
json::object awaitState(const testing::NodeProcess& node, const std::string& id,
                        const std::string& state) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    json::object task;
    while (std::chrono::steady_clock::now() < deadline) {
        task = taskOf(node, id);
        if (task.contains("state") && task.at("state").as_string() == state) {
            return task;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "task " << id << " never reached " << state << ": " << json::serialize(task);
    return task;
}

std::string createdTaskId(const std::string& out) {
    std::smatch match;
    EXPECT_TRUE(std::regex_search(out, match, std::regex("\"task\":\"(0x[0-9a-f]{64})\""))) << out;
    return match.size() > 1 ? std::string(match[1]) : std::string();
}

std::uint64_t u64Of(const json::value& v) {
    return *parseU64(std::string(v.as_string()));
}

TEST(TaskCli, ATaskGoesFromCreateToSettledAndACancelBillsTheFeeThroughTheCli) {
    testing::NodeProcess node;
    node.start();
    const std::string gpu = newKey(node, "gpu");
    const std::string user = newKey(node, "user");
    const u128 funded = 10 * kDps;
    committed(node,
              {"tx", "transfer", "--from", "dev", "--to", user, "--amount", toDecimal(funded)});

    // 8 devices of 312 TFLOP/s at the index's reference values: 2.496 PFLOP/s of ml_training.
    const auto inventory = node.home().parent_path() / "inventory.json";
    std::ofstream(inventory) << R"({"devices": [{"model": "A100", "count": "8",
        "peak_gflops": "312000", "memory_bandwidth_gbps": "4000", "memory_capacity_gb": "80",
        "features": ["tensor_cores"], "power_watts": "400", "factors": []}],
        "labels": [{"key": "region", "value": "eu"}], "categories": ["ml_training"]})";
    committed(node,
              {"tx", "register-provider", "--from", "gpu", "--inventory", inventory.string()});
    committed(node, {"tx", "propose", "admit-provider", "--provider", gpu, "--from", "validator"});
    committed(node, {"tx", "vote", "--proposal", "0", "--from", "validator"});
    committed(node,
              {"tx", "attest", "--from", "gpu", "--category", "ml_training", "--device", "A100=8"});

    // Task 1: 1 PFLOP/s for 60 minutes escrows 60 × 1.5·10^16 = 9·10^17.
    const std::string id = createdTaskId(committed(
        node, {"tx", "task-create", "--from", "user", "--category", "ml_training", "--min-gflops",
               "1000000", "--max-minutes", "60", "--constraint", "region == eu"}));
    const u128 escrow = u128{900'000'000'000'000'000ULL};
    auto task = awaitState(node, id, "assigned");
    EXPECT_EQ(task.at("provider").as_string(), gpu);
    EXPECT_EQ(task.at("escrow").as_string(), toDecimal(escrow));
    EXPECT_TRUE(balanceOf(node, user) == funded - escrow);

    committed(node, {"tx", "task-start", "--from", "gpu", "--task", id});
    // A result of 0 reported minutes bills nothing, whatever the block times.
    committed(node, {"tx", "task-submit-result", "--from", "gpu", "--task", id, "--result-hash",
                     "0x" + std::string(63, '0') + "1", "--duration-ms", "0", "--output-uri",
                     "s3://bucket/out"});
    committed(node, {"tx", "task-verify", "--from", "user", "--task", id});
    task = taskOf(node, id);
    EXPECT_EQ(task.at("state").as_string(), "settled");
    EXPECT_EQ(task.at("escrow").as_string(), "0");
    const auto& history = task.at("history").as_array();
    ASSERT_EQ(history.size(), 4U) << json::serialize(task);
    const char* triggers[] = {"assign", "start", "submit_result", "accept"};
    for (std::size_t i = 0; i < history.size(); ++i) {
        EXPECT_EQ(history[i].at("trigger").as_string(), triggers[i]);
        EXPECT_GT(u64Of(history[i].at("height")), 0U);
    }
    EXPECT_EQ(history[0].at("actor").as_string(), "system");
    EXPECT_EQ(history[3].at("actor").as_string(), user);
    EXPECT_TRUE(balanceOf(node, user) == funded);  // refunded in full
    EXPECT_TRUE(balanceOf(node, gpu) == 0);

    // Task 2: cancelled while running bills the elapsed whole minutes plus the 5-minute fee.
    // The provider stays online by its attestation of this slot (or, past an hour, the previous).
    const std::string second = createdTaskId(
        committed(node, {"tx", "task-create", "--from", "user", "--category", "ml_training",
                         "--min-gflops", "1000000", "--max-minutes", "60"}));
    awaitState(node, second, "assigned");
    committed(node, {"tx", "task-start", "--from", "gpu", "--task", second});
    committed(node, {"tx", "task-cancel", "--from", "user", "--task", second});
    task = taskOf(node, second);
    EXPECT_EQ(task.at("state").as_string(), "cancelled");
    const auto& steps = task.at("history").as_array();
    ASSERT_EQ(steps.size(), 3U) << json::serialize(task);
    const std::uint64_t runMs =
        u64Of(steps[2].at("timestamp_ms")) - u64Of(steps[1].at("timestamp_ms"));
    const u128 bill = u128{runMs / 60'000 + 5} * kRatePerMinute;
    const u128 toPool = bill / 10;
    std::cout << "cancelled after " << runMs << " ms of running: bill " << toDecimal(bill)
              << ", to the pool " << toDecimal(toPool) << "\n";
    EXPECT_TRUE(balanceOf(node, user) == funded - bill)
        << toDecimal(balanceOf(node, user)) << " after a bill of " << toDecimal(bill);
    EXPECT_TRUE(balanceOf(node, gpu) == bill - toPool) << toDecimal(balanceOf(node, gpu));

    auto provider = node.call("provider_get", json::array{json::string(gpu)});
    ASSERT_TRUE(provider) << provider.error().message;
    const auto& jobs = provider->at("jobs");
    EXPECT_EQ(jobs.at("assigned").as_string(), "2");
    EXPECT_EQ(jobs.at("settled").as_string(), "1");
    EXPECT_EQ(jobs.at("cancelled").as_string(), "1");

    // Refused with a stable code, reported, not crashed on: a second start of a cancelled task.
    const auto [code, out] =
        node.cli({"tx", "task-start", "--from", "gpu", "--task", second, "--wait"});
    EXPECT_EQ(code, 0) << out;  // submitted; the receipt carries the refusal
    EXPECT_NE(out.find("\"success\":false"), std::string::npos) << out;
    EXPECT_NE(out.find("\"code\":120"), std::string::npos) << out;
    EXPECT_EQ(node.cli({"tx", "task-start", "--from", "gpu", "--task", "0x12"}).first, 1);
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger
