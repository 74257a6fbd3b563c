// A task's whole life through the CLI on a running dev node, each step a real process: a provider
// registers, is admitted and attests; a consumer creates a task, the chain matches it, the
// provider starts it and submits a result, the consumer accepts it; a second task is cancelled
// while running. task_get and account_get show the transitions and the balances, checked against
// amounts computed by hand from the dev genesis (ml_training at C = 2.5·10^14, pool_share 10 %).
// A WebSocket subscriber to taskTransitions and attestations receives each of those events once,
// in order, as the chain's receipts hold them.

#include <algorithm>
#include <array>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/base/amount.h>

#include "support/dev_chain.h"
#include "support/node_process.h"
#include "support/ws_client.h"

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

/**
 * An account's balance with the fees of its transactions added back: every transaction here
 * applies and pays the dev fee, so they are its nonce × kDevFee.
 */
u128 balanceOf(const testing::NodeProcess& node, const std::string& address) {
    auto account = node.call("account_get", json::array{json::string(address)});
    EXPECT_TRUE(account) << account.error().message;
    if (!account) {
        return 0;
    }
    auto value = parseU128(std::string(account->at("balance").as_string()));
    auto nonce = parseU64(std::string(account->at("nonce").as_string()));
    EXPECT_TRUE(value && nonce);
    return value && nonce ? *value + u128{*nonce} * testing::kDevFee : 0;
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

/** The height a `tx … --wait` command's output reports. */
std::uint64_t committedHeight(const std::string& out) {
    std::smatch match;
    EXPECT_TRUE(std::regex_search(out, match, std::regex("\"height\":\"(\\d+)\""))) << out;
    return match.size() > 1 ? *parseU64(std::string(match[1])) : 0;
}

/** One event notification: its topic and the notification's result. */
struct Seen {
    std::string topic;
    json::object result;
};

/**
 * A WebSocket subscriber to taskTransitions, attestations and newHeads, reading on its own thread.
 * A connection's notifications come height by height, so once the head of height h + 1 arrived
 * every event of heights ≤ h did.
 */
class EventWatcher {
  public:
    explicit EventWatcher(std::uint16_t port) : ws_(port) {
        topics_[ws_.subscribe("taskTransitions", 1)] = "taskTransitions";
        topics_[ws_.subscribe("attestations", 2)] = "attestations";
        heads_ = ws_.subscribe("newHeads", 3);
        reader_ = std::thread([this] { run(); });
    }
    EventWatcher(const EventWatcher&) = delete;
    EventWatcher& operator=(const EventWatcher&) = delete;
    ~EventWatcher() {
        ws_.shutdown();
        reader_.join();
    }

    /** The events notified up to `height`, in arrival order; fails the test after 60 s. */
    std::vector<Seen> through(std::uint64_t height) {
        std::unique_lock lock(mutex_);
        const bool arrived = changed_.wait_for(lock, std::chrono::seconds(60),
                                               [&] { return failure_ || lastHead_ > height; });
        EXPECT_TRUE(arrived && !failure_)
            << "no head above " << height << " arrived; last head " << lastHead_;
        std::vector<Seen> out;
        for (const Seen& seen : seen_) {
            if (u64Of(seen.result.at("height")) <= height) {
                out.push_back(seen);
            }
        }
        return out;
    }

  private:
    void run() {
        try {
            for (;;) {
                const json::value message = ws_.read();
                const json::object& params = message.at("params").as_object();
                const std::string id(params.at("subscription").as_string());
                const json::object& result = params.at("result").as_object();
                const std::lock_guard lock(mutex_);
                if (id == heads_) {
                    lastHead_ = u64Of(result.at("height"));
                } else {
                    seen_.push_back(Seen{topics_.at(id), result});
                }
                changed_.notify_all();
            }
        } catch (const std::exception&) {
            const std::lock_guard lock(mutex_);
            failure_ = true;  // the connection ended: the node stopped, or the test is done
            changed_.notify_all();
        }
    }

    testing::WsClient ws_;
    std::map<std::string, std::string> topics_;
    std::string heads_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<Seen> seen_;
    std::uint64_t lastHead_ = 0;
    bool failure_ = false;
    std::thread reader_;
};

/** The events the chain holds for a notification: its tx's receipt, or its block's system work. */
json::array chainEventsOf(const testing::NodeProcess& node, const json::object& notified) {
    const std::string txHash(notified.at("tx_hash").as_string());
    auto block = node.call("block_get", json::array{notified.at("height")});
    EXPECT_TRUE(block) << block.error().message;
    if (!block) {
        return {};
    }
    const json::object* receipt = nullptr;
    auto tx = node.call("tx_get", json::array{json::string(txHash)});
    if (tx && tx->as_object().contains("receipt")) {
        EXPECT_EQ(tx->at("height"), notified.at("height"));
        receipt = &tx->at("receipt").as_object();
    } else {
        receipt = block->as_object().if_contains("system_receipt") != nullptr
                      ? &block->at("system_receipt").as_object()
                      : nullptr;
    }
    EXPECT_NE(receipt, nullptr) << "no receipt for " << json::serialize(notified);
    return receipt != nullptr ? receipt->at("events").as_array() : json::array{};
}

TEST(TaskCli, ATaskGoesFromCreateToSettledAndACancelBillsTheFeeThroughTheCli) {
    testing::NodeProcess node;
    node.start();
    EventWatcher watcher(node.port());
    const std::string gpu = newKey(node, "gpu");
    const std::string user = newKey(node, "user");
    const u128 funded = 10 * kDps;
    committed(node,
              {"tx", "transfer", "--from", "dev", "--to", user, "--amount", toDecimal(funded)});
    // The provider pays its fees from 1 DPS.
    committed(node, {"tx", "transfer", "--from", "dev", "--to", gpu, "--amount", toDecimal(kDps)});

    // 8 devices of 312 TFLOP/s at the index's reference values: 2.496 PFLOP/s of ml_training.
    const auto inventory = node.home().parent_path() / "inventory.json";
    std::ofstream(inventory) << R"({"devices": [{"model": "A100", "count": "8",
        "peak_gflops": "312000", "memory_bandwidth_gbps": "4000", "memory_capacity_gb": "80",
        "features": ["tensor_cores"], "power_watts": "400", "factors": []}],
        "labels": [{"key": "region", "value": "eu"}], "categories": ["ml_training"]})";
    committed(node,
              {"tx", "register-provider", "--from", "gpu", "--inventory", inventory.string()});
    committed(node, {"tx", "propose", "admit-provider", "--provider", gpu, "--from",
                     "validator-account"});
    committed(node, {"tx", "vote", "--proposal", "0", "--from", "validator-account"});
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
    // The creation deposit of genesis/dev.json, held beside the escrow until the task ends.
    const u128 deposit = u128{1'000'000'000};
    EXPECT_EQ(task.at("deposit").as_string(), toDecimal(deposit));
    EXPECT_TRUE(balanceOf(node, user) == funded - escrow - deposit);

    committed(node, {"tx", "task-start", "--from", "gpu", "--task", id});
    // A result of 0 reported minutes bills nothing, whatever the block times.
    committed(node, {"tx", "task-submit-result", "--from", "gpu", "--task", id, "--result-hash",
                     "0x" + std::string(63, '0') + "1", "--duration-ms", "0", "--output-uri",
                     "s3://bucket/out"});
    committed(node, {"tx", "task-verify", "--from", "user", "--task", id});
    task = taskOf(node, id);
    EXPECT_EQ(task.at("state").as_string(), "settled");
    EXPECT_EQ(task.at("escrow").as_string(), "0");
    EXPECT_EQ(task.at("deposit").as_string(), "0");
    const auto& history = task.at("history").as_array();
    ASSERT_EQ(history.size(), 4U) << json::serialize(task);
    const char* triggers[] = {"assign", "start", "submit_result", "accept"};
    for (std::size_t i = 0; i < history.size(); ++i) {
        EXPECT_EQ(history[i].at("trigger").as_string(), triggers[i]);
        EXPECT_GT(u64Of(history[i].at("height")), 0U);
    }
    EXPECT_EQ(history[0].at("actor").as_string(), "system");
    EXPECT_EQ(history[3].at("actor").as_string(), user);
    EXPECT_TRUE(balanceOf(node, user) == funded);  // refunded in full, deposit included
    EXPECT_TRUE(balanceOf(node, gpu) == kDps);

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
    EXPECT_TRUE(balanceOf(node, gpu) == kDps + bill - toPool) << toDecimal(balanceOf(node, gpu));

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

    // The subscriber saw every task transition and the attestation once, in chain order: 9
    // transitions of the two tasks written out by hand, then nothing for the refused start.
    const std::vector<Seen> seen = watcher.through(committedHeight(out));
    const std::string created = "task_created";
    const std::string moved = "task_transition";
    const std::vector<std::array<std::string, 6>> expected = {
        // kind, task, trigger, from, to, actor
        {created, id, "", "", "", ""},
        {moved, id, "assign", "pending", "assigned", "system"},
        {moved, id, "start", "assigned", "running", gpu},
        {moved, id, "submit_result", "running", "result_submitted", gpu},
        {moved, id, "accept", "result_submitted", "settled", user},
        {created, second, "", "", "", ""},
        {moved, second, "assign", "pending", "assigned", "system"},
        {moved, second, "start", "assigned", "running", gpu},
        {moved, second, "cancel", "running", "cancelled", user},
    };
    std::vector<json::object> transitions;
    std::vector<json::object> attestations;
    for (const Seen& event : seen) {
        (event.topic == "attestations" ? attestations : transitions).push_back(event.result);
        // Each notified event is one the chain stored for that transaction or block.
        const json::array events = chainEventsOf(node, event.result);
        const json::object stored{{"kind", event.result.at("kind")},
                                  {"attributes", event.result.at("attributes")}};
        EXPECT_NE(std::find(events.begin(), events.end(), json::value(stored)), events.end())
            << json::serialize(event.result) << " is not in " << json::serialize(events);
    }
    ASSERT_EQ(transitions.size(), expected.size());
    std::uint64_t previous = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        const json::object& got = transitions[i];
        const json::object& attributes = got.at("attributes").as_object();
        const auto& [kind, taskId, trigger, from, to, actor] = expected[i];
        EXPECT_EQ(got.at("kind").as_string(), kind) << i;
        EXPECT_EQ(attributes.at("task").as_string(), taskId) << i;
        EXPECT_GE(u64Of(got.at("height")), previous) << i;
        previous = u64Of(got.at("height"));
        if (kind == moved) {
            EXPECT_EQ(attributes.at("trigger").as_string(), trigger) << i;
            EXPECT_EQ(attributes.at("from").as_string(), from) << i;
            EXPECT_EQ(attributes.at("to").as_string(), to) << i;
            EXPECT_EQ(attributes.at("actor").as_string(), actor) << i;
        } else {
            EXPECT_EQ(attributes.at("consumer").as_string(), user) << i;
        }
    }
    ASSERT_EQ(attestations.size(), 1U);
    const json::object& attested = attestations[0].at("attributes").as_object();
    EXPECT_EQ(attestations[0].at("kind").as_string(), "attestation");
    EXPECT_EQ(attested.at("provider").as_string(), gpu);
    EXPECT_EQ(attested.at("gflops").as_string(), "2496000");  // 8 × 312 000

    // The provider leaves through the CLI: its (dev genesis: zero) bond starts unbonding, and it
    // may attest no more (docs/tokenomics.md "Provider stake").
    committed(node, {"tx", "provider-unbond", "--from", "gpu"});
    provider = node.call("provider_get", json::array{json::string(gpu)});
    ASSERT_TRUE(provider) << provider.error().message;
    EXPECT_EQ(provider->at("bond_state").as_string(), "unbonding");
    EXPECT_EQ(provider->at("bond").as_string(), "0");
    const auto [attestCode, attestOut] = node.cli({"tx", "attest", "--from", "gpu", "--category",
                                                   "ml_training", "--device", "A100=8", "--wait"});
    EXPECT_EQ(attestCode, 0) << attestOut;
    EXPECT_NE(attestOut.find("\"code\":125"), std::string::npos) << attestOut;
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger
