// A task's whole life through the CLI on a running dev node, each step a real process: a provider
// registers, is admitted and attests; a consumer creates a task, the chain matches it, the
// provider starts it and submits a result, the consumer accepts it; a second task is cancelled
// while running. task_get and account_get show the transitions and the balances, checked against
// amounts computed by hand from the dev genesis (ml_training at C = 2.5·10^14, pool_share 10 %).
// A WebSocket subscriber to taskTransitions and attestations receives each of those events once,
// in order, as the chain's receipts hold them.
//
// Checked results (docs/tasks.md "Redundant tasks", "Spot checks"), on a chain whose providers are
// bonded: a task run by three providers pays the two that agree and slashes the third; two that
// disagree wait for a verifier's verdict naming the result it upholds; a settled result
// spot-checked by one verifier and upheld by another refunds the consumer from the slash.

#include <algorithm>
#include <array>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/base/amount.h>
#include <gridledger/contracts/tasks.h>

#include "support/dev_chain.h"
#include "support/node_process.h"
#include "support/ws_client.h"

namespace gridledger::task_cli_test {
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

/** The receipt events a `tx … --wait` command printed (its last line is tx_get's answer). */
json::array receiptEventsOf(const std::string& out) {
    const std::size_t end = out.find_last_not_of('\n') + 1;  // 0 when there is no line
    const std::size_t start = out.rfind('\n', end == 0 ? 0 : end - 1);
    const std::string last = start == std::string::npos || start >= end
                                 ? out.substr(0, end)
                                 : out.substr(start + 1, end - start - 1);
    boost::system::error_code error;
    const json::value tx = json::parse(last, error);
    const json::object* object = error ? nullptr : tx.if_object();
    const json::value* receipt = object != nullptr ? object->if_contains("receipt") : nullptr;
    EXPECT_NE(receipt, nullptr) << out;
    return receipt != nullptr ? receipt->at("events").as_array() : json::array{};
}

/** The attributes of the events of `kind`, in receipt order. */
std::vector<json::object> eventsOf(const json::array& events, std::string_view kind) {
    std::vector<json::object> out;
    for (const auto& event : events) {
        if (event.at("kind").as_string() == kind) {
            out.push_back(event.at("attributes").as_object());
        }
    }
    return out;
}

/** Runs a `tx … --wait` command that commits and is refused with the stable `code`. */
void refusedWith(const testing::NodeProcess& node, std::vector<std::string> args, int code) {
    args.push_back("--wait");
    const auto [exit, out] = node.cli(args);
    EXPECT_EQ(exit, 0) << out;  // submitted; the receipt carries the refusal
    EXPECT_NE(out.find("\"success\":false"), std::string::npos) << out;
    EXPECT_NE(out.find("\"code\":" + std::to_string(code)), std::string::npos) << out;
}

u128 rawBalanceOf(const testing::NodeProcess& node, const std::string& address) {
    auto account = node.call("account_get", json::array{json::string(address)});
    EXPECT_TRUE(account) << account.error().message;
    if (!account) {
        return 0;
    }
    auto value = parseU128(std::string(account->at("balance").as_string()));
    EXPECT_TRUE(value.has_value());
    return value ? *value : 0;
}

/** Waits until the head's block time reaches `ms` (block times follow the wall clock). */
void awaitBlockTime(const testing::NodeProcess& node, std::uint64_t ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(180);
    while (std::chrono::steady_clock::now() < deadline) {
        auto head = node.call("chain_getHead", json::array{});
        if (head && u64Of(head->at("header").at("timestamp_ms")) >= ms) {
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ADD_FAILURE() << "no block reached time " << ms;
}

/** The block time a task's transition `trigger` happened, from task_get's history. */
std::uint64_t transitionMs(const json::object& task, std::string_view trigger) {
    for (const auto& step : task.at("history").as_array()) {
        if (step.at("trigger").as_string() == trigger) {
            return u64Of(step.at("timestamp_ms"));
        }
    }
    ADD_FAILURE() << "no " << trigger << " in " << json::serialize(task);
    return 0;
}

/** The bond every provider locks on this chain: 1 DPS, so that a slash (10 %) is 0.1 DPS. */
const u128 kBond = kDps;

/**
 * A dev node on which providers are bonded (stake.provider_bond = kBond, set by governance before
 * they register), `providers` of them registered, admitted and attesting this slot; two verifiers,
 * `checker` and `judge`; and a consumer, `user`, holding 10 DPS. Every step is a CLI process.
 */
class CheckedResultsChain {
  public:
    explicit CheckedResultsChain(std::size_t providers) {
        node_.start();
        user = newKey(node_, "user");
        checker = newKey(node_, "checker");
        judge = newKey(node_, "judge");
        committed(node_, {"tx", "transfer", "--from", "dev", "--to", user, "--amount",
                          toDecimal(10 * kDps)});
        for (const auto& verifier : {checker, judge}) {
            committed(node_, {"tx", "transfer", "--from", "dev", "--to", verifier, "--amount",
                              toDecimal(kDps)});
            govern({"grant-verifier", "--account", verifier});
        }
        govern(
            {"set-parameter", "--parameter", "stake.provider_bond", "--value", toDecimal(kBond)});
        const auto inventory = node_.home().parent_path() / "inventory.json";
        std::ofstream(inventory) << R"({"devices": [{"model": "A100", "count": "8",
            "peak_gflops": "312000", "memory_bandwidth_gbps": "4000", "memory_capacity_gb": "80",
            "features": ["tensor_cores"], "power_watts": "400", "factors": []}],
            "labels": [{"key": "region", "value": "eu"}], "categories": ["ml_training"]})";
        for (std::size_t i = 0; i < providers; ++i) {
            const std::string name = "gpu" + std::to_string(i + 1);
            gpus.push_back({name, newKey(node_, name)});
            // The bond and the fees.
            committed(node_, {"tx", "transfer", "--from", "dev", "--to", gpus.back().address,
                              "--amount", toDecimal(2 * kDps)});
            committed(node_, {"tx", "register-provider", "--from", name, "--inventory",
                              inventory.string()});
            govern({"admit-provider", "--provider", gpus.back().address});
        }
        // Matching takes providers online: attested in this slot (an hour) or the previous one.
        for (const auto& gpu : gpus) {
            committed(node_, {"tx", "attest", "--from", gpu.key, "--category", "ml_training",
                              "--device", "A100=8"});
            auto provider = node_.call("provider_get", json::array{json::string(gpu.address)});
            EXPECT_TRUE(provider && provider->at("bond").as_string() == toDecimal(kBond))
                << (provider ? json::serialize(*provider) : provider.error().message);
        }
    }

    [[nodiscard]] testing::NodeProcess& node() { return node_; }

    /** The key name of the provider at `address`. */
    [[nodiscard]] std::string keyOf(const std::string& address) const {
        for (const auto& gpu : gpus) {
            if (gpu.address == address) {
                return gpu.key;
            }
        }
        ADD_FAILURE() << address << " is none of the providers";
        return {};
    }

    struct Gpu {
        std::string key;
        std::string address;
    };
    std::string user;
    std::string checker;
    std::string judge;
    std::vector<Gpu> gpus;

  private:
    /** Proposes `action` from the dev validator and votes for it: the proposal passes at once. */
    void govern(std::vector<std::string> action) {
        std::vector<std::string> args{"tx", "propose"};
        args.insert(args.end(), action.begin(), action.end());
        args.insert(args.end(), {"--from", "validator-account"});
        committed(node_, args);
        committed(node_, {"tx", "vote", "--proposal", std::to_string(proposals_++), "--from",
                          "validator-account"});
    }

    testing::NodeProcess node_;
    std::uint64_t proposals_ = 0;
};

/** A result hash: 0x followed by 63 zeros and `digit`. */
std::string resultHash(char digit) {
    return "0x" + std::string(63, '0') + digit;
}

TEST(TaskCli, ARedundantTaskPaysTheTwoAgreeingReplicasAndSlashesTheMinorityProvider) {
    CheckedResultsChain chain(3);
    testing::NodeProcess& node = chain.node();
    const std::string out =
        committed(node, {"tx", "task-create", "--from", "user", "--category", "ml_training",
                         "--min-gflops", "1000000", "--max-minutes", "60", "--replicas", "3"});
    // Three task_created events, replica i under replicaIdOf(group, i), and the group's event.
    const json::array created = receiptEventsOf(out);
    const auto groups = eventsOf(created, "task_group_created");
    ASSERT_EQ(groups.size(), 1U) << out;
    EXPECT_EQ(groups[0].at("replicas").as_string(), "3");
    const std::string group(groups[0].at("group").as_string());
    const auto replicasCreated = eventsOf(created, "task_created");
    ASSERT_EQ(replicasCreated.size(), 3U) << out;
    std::vector<std::string> replicas;
    for (std::uint32_t i = 0; i < 3; ++i) {
        replicas.push_back(contracts::replicaIdOf(*Hash256::fromHex(group), i).hex());
        EXPECT_EQ(replicasCreated[i].at("task").as_string(), replicas[i]);
        EXPECT_EQ(replicasCreated[i].at("group").as_string(), group);
    }

    // Each replica goes to another provider; each starts it.
    std::vector<std::string> runners;
    std::uint64_t lastStart = 0;
    for (const auto& id : replicas) {
        const json::object task = awaitState(node, id, "assigned");
        runners.push_back(chain.keyOf(std::string(task.at("provider").as_string())));
        committed(node, {"tx", "task-start", "--from", runners.back(), "--task", id});
        lastStart = std::max(lastStart, transitionMs(taskOf(node, id), "start"));
    }
    EXPECT_EQ(std::set<std::string>(runners.begin(), runners.end()).size(), 3U);
    // Only a settled result is spot-checked: a running replica is refused (spot_check_closed).
    refusedWith(node, {"tx", "task-spot-check", "--from", "checker", "--task", replicas[0]}, 127);

    // A minute of block time runs, so that each result bills a minute; the minority reports last.
    awaitBlockTime(node, lastStart + 61'000);
    std::string last;
    for (std::size_t i = 0; i < 3; ++i) {
        last = committed(
            node, {"tx", "task-submit-result", "--from", runners[i], "--task", replicas[i],
                   "--result-hash", resultHash(i < 2 ? '1' : '2'), "--duration-ms", "60000"});
    }
    const json::array decided = receiptEventsOf(last);
    const auto resolved = eventsOf(decided, "task_group_resolved");
    ASSERT_EQ(resolved.size(), 1U) << last;
    EXPECT_EQ(resolved[0].at("outcome").as_string(), "majority");
    EXPECT_EQ(resolved[0].at("result_hash").as_string(), resultHash('1'));
    EXPECT_EQ(resolved[0].at("replicas").as_string(), "3 replicas: 2 paid, 1 rejected, 1 slashed");
    EXPECT_EQ(taskOf(node, replicas[0]).at("state").as_string(), "settled");
    EXPECT_EQ(taskOf(node, replicas[1]).at("state").as_string(), "settled");
    EXPECT_EQ(taskOf(node, replicas[2]).at("state").as_string(), "rejected");

    // The minority's provider, and only it, is slashed 10 % of its bond by the chain.
    const std::string minority = chain.gpus[0].key == runners[2]   ? chain.gpus[0].address
                                 : chain.gpus[1].key == runners[2] ? chain.gpus[1].address
                                                                   : chain.gpus[2].address;
    const auto slashed = eventsOf(decided, "provider_slashed");
    ASSERT_EQ(slashed.size(), 1U) << last;
    EXPECT_EQ(slashed[0].at("provider").as_string(), minority);
    EXPECT_EQ(slashed[0].at("task").as_string(), replicas[2]);
    EXPECT_EQ(slashed[0].at("challenger").as_string(), "system");
    EXPECT_EQ(slashed[0].at("slashed").as_string(), toDecimal(kBond / 10));
    auto provider = node.call("provider_get", json::array{json::string(minority)});
    ASSERT_TRUE(provider) << provider.error().message;
    EXPECT_EQ(provider->at("bond").as_string(), toDecimal(kBond - kBond / 10));

    // A verdict naming a result waits for a tie: on a group decided by majority it is refused.
    refusedWith(
        node,
        {"tx", "task-verify", "--from", "judge", "--task", group, "--result-hash", resultHash('1')},
        126);
    node.stop(SIGTERM);
}

TEST(TaskCli, ATiedRedundantTaskWaitsForAVerifierWhoseVerdictNamesTheResultItUpholds) {
    CheckedResultsChain chain(2);
    testing::NodeProcess& node = chain.node();
    const std::string out =
        committed(node, {"tx", "task-create", "--from", "user", "--category", "ml_training",
                         "--min-gflops", "1000000", "--max-minutes", "60", "--replicas", "2"});
    const auto groups = eventsOf(receiptEventsOf(out), "task_group_created");
    ASSERT_EQ(groups.size(), 1U) << out;
    const std::string group(groups[0].at("group").as_string());
    std::vector<std::string> replicas;
    std::vector<std::string> runners;
    for (std::uint32_t i = 0; i < 2; ++i) {
        replicas.push_back(contracts::replicaIdOf(*Hash256::fromHex(group), i).hex());
        const json::object task = awaitState(node, replicas[i], "assigned");
        runners.push_back(chain.keyOf(std::string(task.at("provider").as_string())));
        committed(node, {"tx", "task-start", "--from", runners[i], "--task", replicas[i]});
    }
    // Two results, one each: no strict majority, the group waits for a verifier.
    std::string last;
    for (std::size_t i = 0; i < 2; ++i) {
        last = committed(node,
                         {"tx", "task-submit-result", "--from", runners[i], "--task", replicas[i],
                          "--result-hash", resultHash(i == 0 ? '1' : '2'), "--duration-ms", "0"});
    }
    const auto tied = eventsOf(receiptEventsOf(last), "task_group_tied");
    ASSERT_EQ(tied.size(), 1U) << last;
    EXPECT_EQ(tied[0].at("results").as_string(), "2");
    for (const auto& id : replicas) {
        EXPECT_EQ(taskOf(node, id).at("state").as_string(), "result_submitted");
    }
    // Not the consumer's verdict on a replica, nor a non-verifier's on the group; and a verdict
    // that upholds no submitted result is refused.
    refusedWith(node, {"tx", "task-verify", "--from", "user", "--task", replicas[0]}, 126);
    refusedWith(
        node,
        {"tx", "task-verify", "--from", "user", "--task", group, "--result-hash", resultHash('2')},
        114);
    refusedWith(
        node,
        {"tx", "task-verify", "--from", "judge", "--task", group, "--result-hash", resultHash('3')},
        126);

    // The judge upholds the second result: its replica is paid, the other rejected and its
    // provider slashed, the judge as the challenger.
    const json::array decided = receiptEventsOf(
        committed(node, {"tx", "task-verify", "--from", "judge", "--task", group, "--result-hash",
                         resultHash('2'), "--reason", "rerun gives 2"}));
    const auto resolved = eventsOf(decided, "task_group_resolved");
    ASSERT_EQ(resolved.size(), 1U);
    EXPECT_EQ(resolved[0].at("outcome").as_string(), "verdict");
    EXPECT_EQ(resolved[0].at("result_hash").as_string(), resultHash('2'));
    EXPECT_EQ(resolved[0].at("decided_by").as_string(), chain.judge);
    EXPECT_EQ(resolved[0].at("reason").as_string(), "rerun gives 2");
    EXPECT_EQ(taskOf(node, replicas[0]).at("state").as_string(), "rejected");
    EXPECT_EQ(taskOf(node, replicas[1]).at("state").as_string(), "settled");
    const auto slashed = eventsOf(decided, "provider_slashed");
    ASSERT_EQ(slashed.size(), 1U);
    EXPECT_EQ(slashed[0].at("task").as_string(), replicas[0]);
    // The verifier gains nothing by its verdict: the slash has no challenger.
    EXPECT_EQ(slashed[0].at("challenger").as_string(), "system");
    EXPECT_EQ(slashed[0].at("to_challenger").as_string(), "0");
    EXPECT_EQ(slashed[0].at("slashed").as_string(), toDecimal(kBond / 10));
    node.stop(SIGTERM);
}

TEST(TaskCli, AnUpheldSpotCheckSlashesTheProviderAndRefundsTheConsumerFromTheSlash) {
    CheckedResultsChain chain(1);
    testing::NodeProcess& node = chain.node();
    const std::string id = createdTaskId(
        committed(node, {"tx", "task-create", "--from", "user", "--category", "ml_training",
                         "--min-gflops", "1000000", "--max-minutes", "60"}));
    awaitState(node, id, "assigned");
    committed(node, {"tx", "task-start", "--from", "gpu1", "--task", id});
    // A minute of block time, so that the settled result charges one minute of the rate.
    awaitBlockTime(node, transitionMs(taskOf(node, id), "start") + 61'000);
    committed(node, {"tx", "task-submit-result", "--from", "gpu1", "--task", id, "--result-hash",
                     resultHash('1'), "--duration-ms", "60000"});
    const json::array settled =
        receiptEventsOf(committed(node, {"tx", "task-verify", "--from", "user", "--task", id}));
    const auto accepted = eventsOf(settled, "task_transition");
    ASSERT_EQ(accepted.size(), 1U);
    EXPECT_EQ(accepted[0].at("charged").as_string(), toDecimal(kRatePerMinute));

    // The checker locks the spot-check bond (genesis/dev.json: 10^9).
    const u128 checkerBefore = rawBalanceOf(node, chain.checker);
    const json::array opened = receiptEventsOf(
        committed(node, {"tx", "task-spot-check", "--from", "checker", "--task", id, "--reason",
                         "output does not reproduce", "--evidence", resultHash('e')}));
    const auto open = eventsOf(opened, "task_spot_check_opened");
    ASSERT_EQ(open.size(), 1U);
    EXPECT_EQ(open[0].at("evidence").as_string(), resultHash('e'));
    const u128 bond = *parseU128(std::string(open[0].at("bond").as_string()));
    EXPECT_TRUE(bond == u128{1'000'000'000});
    EXPECT_TRUE(rawBalanceOf(node, chain.checker) == checkerBefore - bond - testing::kDevFee);
    // Its challenger does not decide it; a second spot check of the task is refused.
    refusedWith(node,
                {"tx", "task-spot-check-verdict", "--from", "checker", "--task", id, "--upheld"},
                121);
    refusedWith(node, {"tx", "task-spot-check", "--from", "judge", "--task", id}, 127);

    // Another verifier upholds it: the provider is slashed, the consumer refunded from the slash
    // up to what the task charged, the challenger gets its bond back and the challenger's share.
    const u128 userBefore = rawBalanceOf(node, chain.user);
    const json::array verdict = receiptEventsOf(
        committed(node, {"tx", "task-spot-check-verdict", "--from", "judge", "--task", id,
                         "--upheld", "--reason", "rerun gives another hash"}));
    const auto decided = eventsOf(verdict, "task_spot_check_decided");
    ASSERT_EQ(decided.size(), 1U);
    EXPECT_EQ(decided[0].at("outcome").as_string(), "upheld");
    EXPECT_EQ(decided[0].at("bond_to").as_string(), chain.checker);
    const auto slashed = eventsOf(verdict, "provider_slashed");
    ASSERT_EQ(slashed.size(), 1U);
    EXPECT_EQ(slashed[0].at("provider").as_string(), chain.gpus[0].address);
    EXPECT_EQ(slashed[0].at("slashed").as_string(), toDecimal(kBond / 10));
    ASSERT_TRUE(slashed[0].contains("refund")) << json::serialize(slashed[0]);
    EXPECT_EQ(slashed[0].at("refund_to").as_string(), chain.user);
    const u128 refund = *parseU128(std::string(slashed[0].at("refund").as_string()));
    EXPECT_TRUE(refund == kRatePerMinute) << toDecimal(refund);  // min(charged, slashed)
    EXPECT_TRUE(rawBalanceOf(node, chain.user) == userBefore + refund)
        << toDecimal(rawBalanceOf(node, chain.user)) << " after a refund of " << toDecimal(refund);
    const u128 toChecker = *parseU128(std::string(slashed[0].at("to_challenger").as_string()));
    EXPECT_TRUE(rawBalanceOf(node, chain.checker) ==
                checkerBefore - u128{2} * testing::kDevFee + toChecker);
    // Decided: no verdict is left to give.
    refusedWith(node,
                {"tx", "task-spot-check-verdict", "--from", "judge", "--task", id, "--rejected"},
                128);
    // An auditor's task report carries the charge and the decided spot check.
    const auto [exported, report] = node.cli({"export", "tasks", "--format", "json"});
    ASSERT_EQ(exported, 0) << report;
    bool found = false;
    const json::value rows = json::parse(report);
    for (const auto& row : rows.as_array()) {
        if (row.at("id").as_string() == id) {
            found = true;
            EXPECT_EQ(row.at("charged").as_string(), toDecimal(kRatePerMinute));
            EXPECT_EQ(row.at("spot_check").at("state").as_string(), "upheld");
            EXPECT_EQ(row.at("spot_check").at("decided_by").as_string(), chain.judge);
        }
    }
    EXPECT_TRUE(found) << report;
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger::task_cli_test
