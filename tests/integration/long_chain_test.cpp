// A chain of more than 10 000 blocks with every kind of activity, made by one real node and then
// replayed by `gridledger replay` (docs/operations.md "A long chain replayed"): transfers between
// several accounts, two admitted providers attesting every slot, tasks created, matched, started,
// given a result and accepted or cancelled, and dozens of epoch settlements. The replay must
// reproduce the state root the node stored at the last height and count the same transactions.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <regex>
#include <thread>

#include <boost/json.hpp>
#include <gtest/gtest.h>
#include <signal.h>

#include <gridledger/base/amount.h>
#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/epoch_run.h"
#include "support/node_process.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gridledger::long_chain_test {
namespace {

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kTargetHeight = 10'000;
constexpr std::size_t kAccounts = 4;
/** Per sender, below the mempool's nonce window of 64. */
constexpr std::size_t kMaxInFlight = 40;
constexpr std::size_t kLiveTasks = 2;
constexpr std::uint64_t kTransfersPerBlock = 2;
/** The empty blocks timed before any transaction, for the empty-block rate. */
constexpr std::uint64_t kEmptyBlocks = 300;
/** The node's default `rpc.max_batch`. */
constexpr std::size_t kBatch = 100;
const u128 kDps = u128{1'000'000'000'000'000'000ULL};

/** Blocks of 1 s of chain time; slots of 100 blocks, epochs of 300: 33 settlements by 10 000. */
testing::EpochRunPlan longChainPlan() {
    testing::EpochRunPlan plan;
    plan.slotMs = 100'000;
    plan.slotsPerEpoch = 3;
    plan.halvingPeriodMs = 3'000'000;
    plan.emptyBlockIntervalMs = 1;
    plan.roundTimeoutMs = 5'000;
    return plan;
}

std::uint64_t u64Of(const json::value& v) {
    return *parseU64(std::string(v.as_string()));
}

crypto::SecretKey seededKey(const std::string& name) {
    const Hash256 seed = crypto::sha256(asBytes("gridledger-long-chain/" + name));
    return crypto::SecretKey::fromBytes(seed.view()).value();
}

enum class Kind : std::uint8_t {
    kSetup,
    kTransfer,
    kAttest,
    kTaskCreate,
    kTaskStart,
    kTaskSubmit,
    kTaskAccept,
    kTaskCancel,
};
constexpr std::size_t kKinds = 8;
constexpr std::array<const char*, kKinds> kKindNames = {
    "setup",      "transfer",           "attest",      "task_create",
    "task_start", "task_submit_result", "task_accept", "task_cancel"};

/** A task the driver takes through its life; `next` is what it sends once `ready`. */
struct LiveTask {
    std::string id;  // empty until the creating transaction committed
    std::size_t provider = testing::kRunProviders;
    bool cancel = false;
    bool ready = false;
    Kind next = Kind::kTaskStart;
    bool done = false;
};

constexpr std::size_t kNoTask = SIZE_MAX;

struct Sent {
    std::string hash;
    Kind kind;
    Address sender;
    std::size_t task;
};

/** Keeps many transactions in flight through JSON-RPC batches and follows their receipts. */
class LoadDriver {
  public:
    explicit LoadDriver(const testing::NodeProcess& node) : node_(node) {
        const json::value status = call("node_getStatus", json::array{});
        chainId_ = std::string(status.at("chain_id").as_string());
        domain_ = testing::signingDomainOfStatus(status);
    }

    json::object call(const std::string& method, const json::value& params) const {
        return node_.require(method, params);
    }

    /** Every call's result, in order, in batches of at most kBatch; throws on any error. */
    std::vector<json::value> batch(const std::vector<node::RpcCall>& calls) const {
        std::vector<json::value> out;
        for (std::size_t i = 0; i < calls.size(); i += kBatch) {
            const std::vector<node::RpcCall> part(
                calls.begin() + static_cast<std::ptrdiff_t>(i),
                calls.begin() + static_cast<std::ptrdiff_t>(std::min(calls.size(), i + kBatch)));
            auto answers = node_.callBatch(part);
            if (!answers) {
                throw std::runtime_error("batch: " + answers.error().message);
            }
            for (std::size_t k = 0; k < answers->size(); ++k) {
                if (!(*answers)[k]) {
                    throw std::runtime_error(part[k].method + ": " + (*answers)[k].error().message);
                }
                out.push_back(*(*answers)[k]);
            }
        }
        return out;
    }

    /** Signs the next transaction of the key's sender; sent by the next flush. */
    std::string queue(const crypto::SecretKey& key, codec::Payload payload, Kind kind,
                      std::size_t task = kNoTask) {
        const Address sender = crypto::addressOf(key.publicKey());
        const codec::TxBody body{chainId_,    key.publicKey(),    nonces_[sender]++,
                                 validUntil_, std::move(payload), testing::kDevFee};
        const codec::SignedTx tx = codec::signTx(body, key, domain_);
        submits_.push_back({"tx_submit", json::array{json::string(toHex(tx.raw))}});
        inFlight_.push_back({tx.hash.hex(), kind, sender, task});
        ++perSender_[sender];
        return tx.hash.hex();
    }

    void flush() {
        (void)batch(submits_);
        submits_.clear();
    }

    /** Collects the receipts of every committed transaction; calls `onCommit` for each. */
    template <typename F>
    void poll(F&& onCommit) {
        std::vector<node::RpcCall> calls;
        calls.reserve(inFlight_.size());
        for (const Sent& s : inFlight_) {
            calls.push_back({"tx_get", json::array{json::string(s.hash)}});
        }
        const std::vector<json::value> got = batch(calls);
        std::vector<Sent> still;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const json::object& tx = got[i].as_object();
            if (tx.at("status").as_string() != "committed") {
                still.push_back(inFlight_[i]);
                continue;
            }
            --perSender_[inFlight_[i].sender];
            ++committed_;
            onCommit(inFlight_[i], tx.at("receipt").as_object());
        }
        inFlight_ = std::move(still);
    }

    /** Sends one transaction and waits for its receipt; throws unless it succeeded. */
    json::object sendAndWait(const crypto::SecretKey& key, const codec::Payload& payload) {
        const std::string hash = queue(key, payload, Kind::kSetup);
        flush();
        const auto deadline = Clock::now() + std::chrono::seconds(120);
        json::object receipt;
        bool seen = false;
        while (!seen) {
            if (Clock::now() > deadline) {
                throw std::runtime_error("tx " + hash + " not committed within 120 s");
            }
            poll([&](const Sent& s, const json::object& r) {
                if (s.hash == hash) {
                    receipt = r;
                    seen = true;
                }
            });
        }
        if (!receipt.at("success").as_bool()) {
            throw std::runtime_error("setup tx failed: " + json::serialize(receipt));
        }
        return receipt;
    }

    [[nodiscard]] std::size_t inFlight(const crypto::SecretKey& key) {
        return perSender_[crypto::addressOf(key.publicKey())];
    }
    [[nodiscard]] std::size_t inFlight() const { return inFlight_.size(); }
    [[nodiscard]] std::uint64_t committed() const { return committed_; }
    void setValidUntil(std::uint64_t height) { validUntil_ = height; }

  private:
    const testing::NodeProcess& node_;
    std::string chainId_;
    std::string domain_;
    std::uint64_t validUntil_ = 50'000;  // within the node's 100 000 ahead
    std::map<Address, std::uint64_t> nonces_;
    std::map<Address, std::size_t> perSender_;
    std::vector<node::RpcCall> submits_;
    std::vector<Sent> inFlight_;
    std::uint64_t committed_ = 0;
};

/** Committed transactions by kind: successful and failed receipts. */
struct Tally {
    std::array<std::uint64_t, kKinds> ok{};
    std::array<std::uint64_t, kKinds> failed{};
};

TEST(LongChain, TenThousandBlocksOfTransfersAttestationsTasksAndEpochsReplayToTheSameRoot) {
    testing::TempDir dir;
    const testing::EpochRunPlan plan = longChainPlan();
    const auto templateHome = dir.path() / "template";
    testing::writeEpochRunHome(templateHome, plan);
    testing::NodeProcess node(templateHome);
    const auto started = Clock::now();
    node.start();
    const node::Home home(node.home());
    const crypto::SecretKey validator = home.loadKey("validator-account").value();
    const crypto::SecretKey dev = home.loadKey("dev").value();
    const auto providers = testing::runProviderKeys();
    std::vector<crypto::SecretKey> accounts;
    for (std::size_t i = 0; i < kAccounts; ++i) {
        accounts.push_back(seededKey("account-" + std::to_string(i)));
    }
    const crypto::SecretKey consumer = seededKey("consumer");

    LoadDriver driver(node);
    Tally tally;
    // Empty blocks alone first: how fast the node makes them with nothing to execute.
    const auto headHeight = [&] {
        return u64Of(driver.call("chain_getHead", json::array{}).at("height"));
    };
    const std::uint64_t firstHeight = headHeight();
    const auto emptyStart = Clock::now();
    std::uint64_t emptyHeight = firstHeight;
    while (emptyHeight < firstHeight + kEmptyBlocks) {
        ASSERT_LT(Clock::now(), emptyStart + std::chrono::seconds(120)) << "at " << emptyHeight;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        emptyHeight = headHeight();
    }
    const double emptyRate = static_cast<double>(emptyHeight - firstHeight) /
                             std::chrono::duration<double>(Clock::now() - emptyStart).count();
    // Setup: the providers funded for their fees and admitted by governance, the accounts and the
    // consumer funded.
    for (const auto& key : providers) {
        (void)driver.sendAndWait(dev, codec::Transfer{crypto::addressOf(key.publicKey()), kDps});
    }
    testing::admitRunProviders(
        [&](const crypto::SecretKey& key, const codec::Payload& payload) {
            return driver.sendAndWait(key, payload);
        },
        validator, providers);
    for (const auto& key : accounts) {
        (void)driver.sendAndWait(dev, codec::Transfer{crypto::addressOf(key.publicKey()), kDps});
    }
    (void)driver.sendAndWait(dev,
                             codec::Transfer{crypto::addressOf(consumer.publicKey()), 1000 * kDps});

    std::vector<LiveTask> tasks;
    std::array<std::uint64_t, testing::kRunProviders> attestedSlot{UINT64_MAX, UINT64_MAX};
    const auto onCommit = [&](const Sent& s, const json::object& receipt) {
        const bool ok = receipt.at("success").as_bool();
        ++(ok ? tally.ok : tally.failed)[static_cast<std::size_t>(s.kind)];
        if (s.task == kNoTask) {
            return;
        }
        LiveTask& task = tasks[s.task];
        if (!ok) {
            task.done = true;
            std::cout << "task tx " << kKindNames[static_cast<std::size_t>(s.kind)]
                      << " failed: " << json::serialize(receipt) << "\n";
            return;
        }
        switch (s.kind) {
            case Kind::kTaskCreate:
                task.id = testing::eventAttribute(receipt, "task_created", "task");
                break;  // matched by the chain: followed through task_get
            case Kind::kTaskStart:
                task.next = task.cancel ? Kind::kTaskCancel : Kind::kTaskSubmit;
                task.ready = true;
                break;
            case Kind::kTaskSubmit:
                task.next = Kind::kTaskAccept;
                task.ready = true;
                break;
            default:
                task.done = true;
        }
    };

    const auto deadline = Clock::now() + std::chrono::seconds(600);
    std::uint64_t height = 0;
    std::uint64_t transfers = 0;
    for (;;) {
        ASSERT_LT(Clock::now(), deadline) << "the chain did not reach " << kTargetHeight;
        const json::object head = driver.call("chain_getHead", json::array{});
        const std::uint64_t previous = height;
        height = u64Of(head.at("height"));
        if (height == previous) {
            // Nothing committed and no task moved since the last pass: spare the node.
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            continue;
        }
        const bool loading = height < kTargetHeight;
        if (loading) {
            driver.setValidUntil(height + 2'000);
            const std::uint64_t offset =
                u64Of(head.at("header").at("timestamp_ms")) - plan.genesisTimeMs;
            const std::uint64_t epoch = offset / plan.epochMs();
            const std::uint64_t slot = offset % plan.epochMs() / plan.slotMs;
            // Both providers attest the head's slot once; a late one fails with its receipt.
            for (std::size_t p = 0; p < testing::kRunProviders; ++p) {
                const std::uint64_t key = epoch * plan.slotsPerEpoch + slot;
                if (attestedSlot[p] == key || driver.inFlight(providers[p]) >= kMaxInFlight) {
                    continue;
                }
                const codec::DeviceModel device = testing::providerInventory(p).devices.front();
                codec::Attest attest;
                attest.epoch = epoch;
                attest.slot = slot;
                attest.category = testing::kRunCategory;
                attest.devices = {codec::DeviceCount{device.model, device.count}};
                (void)driver.queue(providers[p], attest, Kind::kAttest);
                attestedSlot[p] = key;
            }
            // Transfers around the ring of accounts, and from the dev account into it, about
            // kTransfersPerBlock per block.
            for (std::size_t i = 0; i <= kAccounts && transfers < kTransfersPerBlock * height;
                 ++i) {
                const crypto::SecretKey& from = i < kAccounts ? accounts[i] : dev;
                if (driver.inFlight(from) < kMaxInFlight) {
                    const Address to = crypto::addressOf(
                        accounts[i < kAccounts ? (i + 1) % kAccounts : height % kAccounts]
                            .publicKey());
                    (void)driver.queue(from, codec::Transfer{to, 1000 + i}, Kind::kTransfer);
                    ++transfers;
                }
            }
            // Tasks: new ones while fewer than kLiveTasks live; every third is cancelled.
            const auto live = static_cast<std::size_t>(std::count_if(
                tasks.begin(), tasks.end(), [](const LiveTask& t) { return !t.done; }));
            for (std::size_t k = live; k < kLiveTasks; ++k) {
                codec::TaskCreate create;
                create.category = testing::kRunCategory;
                create.minGflops = 500'000;
                create.maxMinutes = 60;
                LiveTask task;
                task.cancel = tasks.size() % 3 == 2;
                tasks.push_back(task);
                (void)driver.queue(consumer, create, Kind::kTaskCreate, tasks.size() - 1);
            }
        }
        // Tasks waiting for the chain's matching: read their state.
        std::vector<std::size_t> waiting;
        std::vector<node::RpcCall> reads;
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            if (!tasks[t].done && !tasks[t].id.empty() &&
                tasks[t].provider == testing::kRunProviders) {
                waiting.push_back(t);
                reads.push_back({"task_get", json::array{json::string(tasks[t].id)}});
            }
        }
        const std::vector<json::value> states = driver.batch(reads);
        for (std::size_t k = 0; k < waiting.size(); ++k) {
            LiveTask& task = tasks[waiting[k]];
            const json::object& got = states[k].as_object();
            if (got.at("state").as_string() != "assigned") {
                continue;
            }
            for (std::size_t p = 0; p < testing::kRunProviders; ++p) {
                if (crypto::addressOf(providers[p].publicKey()).hex() ==
                    got.at("provider").as_string()) {
                    task.provider = p;
                }
            }
            ASSERT_LT(task.provider, testing::kRunProviders) << json::serialize(got);
            task.next = Kind::kTaskStart;
            task.ready = true;
        }
        for (std::size_t t = 0; t < tasks.size(); ++t) {
            LiveTask& task = tasks[t];
            if (task.done || !task.ready) {
                continue;
            }
            task.ready = false;
            const Hash256 id = Hash256::fromHex(task.id).value();
            const crypto::SecretKey& provider = providers[task.provider];
            switch (task.next) {
                case Kind::kTaskStart:
                    (void)driver.queue(provider, codec::TaskStart{id}, Kind::kTaskStart, t);
                    break;
                case Kind::kTaskSubmit: {
                    codec::TaskSubmitResult result;
                    result.taskId = id;
                    result.resultHash = crypto::sha256(asBytes("result " + task.id));
                    result.outputUri = "s3://long-chain/" + std::to_string(t);
                    result.durationMs = 30'000;
                    (void)driver.queue(provider, result, Kind::kTaskSubmit, t);
                    break;
                }
                case Kind::kTaskAccept:
                    (void)driver.queue(consumer, codec::TaskVerify{id, true, "", {}},
                                       Kind::kTaskAccept, t);
                    break;
                default:
                    (void)driver.queue(consumer, codec::TaskCancel{id}, Kind::kTaskCancel, t);
            }
        }
        driver.flush();
        driver.poll(onCommit);
        if (!loading && driver.inFlight() == 0) {
            break;
        }
    }
    // Every transaction sent has committed: read the stored root and the epochs at the head.
    const json::object head = driver.call("chain_getHead", json::array{});
    height = u64Of(head.at("height"));
    const double produceSeconds = std::chrono::duration<double>(Clock::now() - started).count();
    const std::string storedRoot =
        std::string(driver.call("block_get", json::array{json::string(std::to_string(height))})
                        .at("state_root")
                        .as_string());
    const std::uint64_t settled =
        u64Of(driver.call("tokenomics_get", json::array{}).at("next_epoch"));
    std::uint64_t accepted = 0;
    for (const LiveTask& task : tasks) {
        if (task.done && !task.id.empty()) {
            const json::object got = driver.call("task_get", json::array{json::string(task.id)});
            const json::array& history = got.at("history").as_array();
            if (got.at("state").as_string() == "settled" && !history.empty() &&
                history.back().at("trigger").as_string() == "accept") {
                ++accepted;
            }
        }
    }
    node.stop(SIGTERM);

    // The auditor's replay of every height up to the one read.
    const auto replayLog = dir.path() / "replay.log";
    const auto replayStart = Clock::now();
    const int code = testing::runCommand(
        node.bin(), {"replay", "--home", node.home().string(), "--to", std::to_string(height)},
        replayLog);
    const double replaySeconds = std::chrono::duration<double>(Clock::now() - replayStart).count();
    const std::string out = testing::readText(replayLog);
    ASSERT_EQ(code, 0) << out;
    std::smatch summary;
    ASSERT_TRUE(std::regex_search(
        out, summary,
        std::regex(
            R"(replay ok: .*heights 1\.\.(\d+), (\d+) blocks, (\d+) txs,.*every state root reproduced, head state root (0x[0-9a-f]+))")))
        << out;
    const std::uint64_t replayed = std::stoull(summary[1].str());
    const std::uint64_t replayedTxs = std::stoull(summary[3].str());

    std::cout << out;
    for (std::size_t k = 0; k < kKinds; ++k) {
        std::cout << kKindNames[k] << ": " << tally.ok[k] << " ok, " << tally.failed[k]
                  << " failed\n";
    }
    std::cout << "empty blocks: " << emptyHeight - firstHeight << " at " << emptyRate
              << " blocks/s\n";
    std::cout << "tasks " << tasks.size() << ", settled by an accepted result " << accepted
              << ", epochs settled " << settled << "\n"
              << "produced " << height << " blocks and " << driver.committed() << " txs in "
              << produceSeconds << " s (" << static_cast<double>(height) / produceSeconds
              << " blocks/s, " << static_cast<double>(driver.committed()) / produceSeconds
              << " txs/s)\n"
              << "replayed " << replayed << " blocks and " << replayedTxs << " txs in "
              << replaySeconds << " s (" << static_cast<double>(replayed) / replaySeconds
              << " blocks/s, " << static_cast<double>(replayedTxs) / replaySeconds
              << " txs/s, process included)\n";

    EXPECT_EQ(replayed, height);
    EXPECT_GE(replayed, kTargetHeight);
    EXPECT_EQ(summary[4].str(), storedRoot);
    EXPECT_EQ(replayedTxs, driver.committed());
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kTransfer)], 1000U);
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kAttest)], 100U);
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kTaskCreate)], 10U);
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kTaskStart)], 10U);
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kTaskSubmit)], 0U);
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kTaskAccept)], 0U);
    EXPECT_GT(tally.ok[static_cast<std::size_t>(Kind::kTaskCancel)], 0U);
    EXPECT_GT(accepted, 0U);
    EXPECT_EQ(accepted, tally.ok[static_cast<std::size_t>(Kind::kTaskAccept)]);
    EXPECT_GE(settled, 20U);
}

}  // namespace
}  // namespace gridledger::long_chain_test
