#include "support/epoch_run.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include <boost/json.hpp>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "support/process.h"

namespace gridledger::testing {
namespace json = boost::json;

namespace {

/**
 * The inventories, by provider index (ascending address). Provider 0: 8 × "gpu-a", every factor at
 * the reference maximum, so W = 100% and a device counts its full 312 000 GFLOP/s. Provider 1:
 * 4 × "gpu-b" at half the reference bandwidth: W = (5000 · 50% + 3000 · 100% + 2000 · 100%) /
 * 10 000 = 75%, so a device counts ⌊989 000 × 0.75⌋ = 741 750 GFLOP/s.
 */
struct Inventory {
    const char* model;
    std::uint64_t count;
    std::uint64_t peakGflops;
    std::uint64_t bandwidthGbps;
    std::uint64_t correctedGflops;
};
constexpr std::array<Inventory, kRunProviders> kInventories = {
    Inventory{"gpu-a", 8, 312'000, 4000, 312'000}, Inventory{"gpu-b", 4, 989'000, 2000, 741'750}};

crypto::SecretKey seededKey(const std::string& name) {
    const Hash256 seed = crypto::sha256(asBytes("gridledger-epoch-run/" + name));
    return crypto::SecretKey::fromBytes(seed.view()).value();
}

Address sinkAddress() {
    return crypto::addressOf(seededKey("sink").publicKey());
}

// The schedule: a pure function of (epoch, slot), so two runs send the same transactions.
std::uint64_t deviceCount(std::size_t provider, std::uint64_t e, std::uint64_t s) {
    return provider == 0 ? 1 + (5 * e + 3 * s) % 8 : 1 + (e + 2 * s) % 4;
}
bool misses(std::size_t provider, std::uint64_t e, std::uint64_t s) {
    return provider == 0 ? (e % 7 == 3 && s == 2) || (e % 11 == 5 && s != 1)
                         : (e % 5 == 2 && s == 0);
}
/** In these slots the verifier challenges provider 0's attestation instead of provider 1 attesting.
 */
bool challenged(std::uint64_t e, std::uint64_t s) {
    return e % 6 == 4 && s == 1 && !misses(0, e, s);
}

std::uint64_t toU64(const json::value& v) {
    return std::stoull(std::string(v.as_string()));
}

/** Sends one transaction at a time to the node and checks where each lands. */
class Driver {
  public:
    Driver(const NodeProcess& node, const EpochRunPlan& plan, EpochRunResult& out)
        : node_(node), plan_(plan), out_(out) {
        const json::value status = call("node_getStatus", json::array{});
        chainId_ = std::string(status.at("chain_id").as_string());
        domain_ = signingDomainOfStatus(status);
    }

    json::object call(const std::string& method, const json::value& params) const {
        return node_.require(method, params);
    }

    /**
     * The height the next transaction will land at. A 1-validator chain with a long empty-block
     * interval moves only for a transaction: its block, then the empty block that certifies it
     * (and commits it). So the executed head h is followed by h + 1 (certified) and the next
     * transaction lands at h + 2; at genesis nothing is certified yet and it lands at 1.
     */
    std::uint64_t nextHeight() const {
        const json::object head = call("chain_getHead", json::array{});
        const std::uint64_t height = toU64(head.at("height"));
        const std::uint64_t ts = toU64(head.at("header").at("timestamp_ms"));
        if (ts != plan_.genesisTimeMs + height * plan_.blockTimeMs) {
            throw std::runtime_error("head at height " + std::to_string(height) +
                                     " is not stamped genesis + height × block_time");
        }
        return height == 0 ? 1 : height + 2;
    }

    /** Signs and submits, waits for the receipt; it must succeed at `expectedHeight`. */
    json::object send(const crypto::SecretKey& key, codec::Payload payload,
                      std::uint64_t expectedHeight) {
        const Address sender = crypto::addressOf(key.publicKey());
        const codec::TxBody body{chainId_,           key.publicKey(),
                                 nonces_[sender]++,  expectedHeight + 100,
                                 std::move(payload), kDevFee};
        const codec::SignedTx tx = codec::signTx(body, key, domain_);
        (void)call("tx_submit", json::array{json::string(toHex(tx.raw))});
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        for (;;) {
            const json::object got = call("tx_get", json::array{json::string(tx.hash.hex())});
            if (got.at("status").as_string() == "committed") {
                const json::object& receipt = got.at("receipt").as_object();
                const std::uint64_t height = toU64(got.at("height"));
                if (!receipt.at("success").as_bool()) {
                    throw std::runtime_error("tx at height " + std::to_string(height) +
                                             " failed: " + json::serialize(receipt));
                }
                if (height != expectedHeight) {
                    throw std::runtime_error("tx landed at height " + std::to_string(height) +
                                             ", expected " + std::to_string(expectedHeight));
                }
                out_.txHeights.push_back(height);
                return receipt;
            }
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error("tx not committed within 60 s");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }

  private:
    const NodeProcess& node_;
    const EpochRunPlan& plan_;
    EpochRunResult& out_;
    std::string chainId_;
    std::string domain_;
    std::map<Address, std::uint64_t> nonces_;
};

}  // namespace

std::array<crypto::SecretKey, kRunProviders> runProviderKeys() {
    std::array<crypto::SecretKey, kRunProviders> keys = {seededKey("provider-0"),
                                                         seededKey("provider-1")};
    std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
        return crypto::addressOf(a.publicKey()) < crypto::addressOf(b.publicKey());
    });
    return keys;
}

crypto::SecretKey runVerifierKey() {
    return seededKey("verifier");
}

std::string eventAttribute(const json::object& receipt, const std::string& kind,
                           const std::string& key) {
    for (const auto& e : receipt.at("events").as_array()) {
        if (e.at("kind").as_string() == kind) {
            return std::string(e.at("attributes").at(key).as_string());
        }
    }
    throw std::runtime_error("no " + kind + " event on " + json::serialize(receipt));
}

codec::RegisterProvider providerInventory(std::size_t provider) {
    const Inventory& inv = kInventories[provider];
    codec::DeviceModel device;
    device.model = inv.model;
    device.count = inv.count;
    device.peakGflops = inv.peakGflops;
    device.memoryBandwidthGbps = inv.bandwidthGbps;
    device.memoryCapacityGb = 80;
    device.features = {"tensor_cores"};
    device.powerWatts = 700;
    codec::RegisterProvider inventory;
    inventory.devices = {device};
    inventory.labels = {codec::Label{"region", provider == 0 ? "eu" : "us"}};
    inventory.categories = {kRunCategory};
    return inventory;
}

void admitRunProviders(const SendAndWait& send, const crypto::SecretKey& validator,
                       const std::array<crypto::SecretKey, kRunProviders>& keys) {
    for (std::size_t p = 0; p < kRunProviders; ++p) {
        (void)send(keys[p], providerInventory(p));
    }
    for (std::size_t p = 0; p < kRunProviders; ++p) {
        const codec::Propose propose{codec::AdmitProvider{crypto::addressOf(keys[p].publicKey())}};
        const json::object created = send(validator, propose);
        const std::uint64_t id = std::stoull(eventAttribute(created, "proposal_created", "id"));
        const json::object voted = send(validator, codec::ProposalVote{id, true});
        (void)eventAttribute(voted, "provider_admitted", "provider");
    }
}

std::uint64_t deviceGflops(std::size_t provider) {
    return kInventories.at(provider).correctedGflops;
}

void writeEpochRunHome(const std::filesystem::path& home, const EpochRunPlan& plan) {
    const auto log = home.parent_path() / "init.log";
    if (runCommand(GRIDLEDGER_BIN, {"init", "--home", home.string(), "--chain-id", "epoch-run"},
                   log) != 0) {
        throw std::runtime_error("gridledger init failed: " + readText(log));
    }
    const node::Home h(home);
    json::value genesis = json::parse(readText(h.genesisFile()));
    json::object& root = genesis.as_object();
    root["genesis_time_ms"] = std::to_string(plan.genesisTimeMs);
    json::object& consensus = root["consensus"].as_object();
    consensus["round_timeout_ms"] = std::to_string(plan.roundTimeoutMs);
    consensus["empty_block_interval_ms"] = std::to_string(plan.emptyBlockIntervalMs);
    consensus["block_time_ms"] = std::to_string(plan.blockTimeMs);
    json::object& tokenomics = root["tokenomics"].as_object();
    tokenomics["epoch_ms"] = std::to_string(plan.epochMs());
    tokenomics["slot_ms"] = std::to_string(plan.slotMs);
    tokenomics["halving_period_ms"] = std::to_string(plan.halvingPeriodMs);
    tokenomics["halving_gfl_threshold"] = std::to_string(plan.halvingGflThreshold);
    root["verifiers"] =
        json::array{json::string(crypto::addressOf(runVerifierKey().publicKey()).hex())};
    // The providers and the verifier pay their fees from 1 DPS each.
    json::array& accounts = root["accounts"].as_array();
    const auto fund = [&](const crypto::SecretKey& key) {
        accounts.push_back(json::object{{"address", crypto::addressOf(key.publicKey()).hex()},
                                        {"balance", "1000000000000000000"}});
    };
    for (const auto& key : runProviderKeys()) {
        fund(key);
    }
    fund(runVerifierKey());
    std::ofstream(h.genesisFile(), std::ios::trunc) << json::serialize(genesis);
}

EpochRunResult runEpochs(const std::filesystem::path& templateHome, const EpochRunPlan& plan) {
    NodeProcess node(templateHome);
    node.start();
    EpochRunResult out;
    const auto keys = runProviderKeys();
    for (std::size_t p = 0; p < kRunProviders; ++p) {
        out.providers[p] = crypto::addressOf(keys[p].publicKey());
    }
    const node::Home home(node.home());
    const crypto::SecretKey validator = home.loadKey("validator-account").value();
    const crypto::SecretKey dev = home.loadKey("dev").value();
    const crypto::SecretKey verifier = runVerifierKey();
    out.fed.assign(plan.lastEpoch + 1,
                   {SlotValues(plan.slotsPerEpoch, 0), SlotValues(plan.slotsPerEpoch, 0)});
    Driver driver(node, plan, out);
    admitRunProviders(
        [&](const crypto::SecretKey& key, const codec::Payload& payload) {
            return driver.send(key, payload, driver.nextHeight());
        },
        validator, keys);

    const auto filler = [&](std::uint64_t height) {
        (void)driver.send(dev, codec::Transfer{sinkAddress(), 1}, height);
    };
    for (;;) {
        const std::uint64_t height = driver.nextHeight();
        const std::uint64_t offset = height * plan.blockTimeMs;
        const std::uint64_t e = offset / plan.epochMs();
        if (e > plan.lastEpoch) {
            filler(height);  // its block's certifier crosses the last boundary: lastEpoch settles
            break;
        }
        const std::uint64_t s = offset % plan.epochMs() / plan.slotMs;
        const std::size_t p = offset % plan.slotMs / (2 * plan.blockTimeMs);
        if (p == 1 && challenged(e, s)) {
            codec::Challenge ch{out.providers[0], e, s, "benchmark does not reproduce",
                                crypto::sha256(asBytes("evidence " + std::to_string(e)))};
            (void)driver.send(verifier, ch, height);
            out.fed[e][0][s] = 0;
            ++out.challenges;
            continue;
        }
        if (p >= kRunProviders || misses(p, e, s)) {
            filler(height);
            continue;
        }
        const std::uint64_t count = deviceCount(p, e, s);
        codec::Attest attest;
        attest.epoch = e;
        attest.slot = s;
        attest.category = kRunCategory;
        attest.devices = {codec::DeviceCount{kInventories[p].model, count}};
        const json::object receipt = driver.send(keys[p], attest, height);
        const std::uint64_t gflops = std::stoull(eventAttribute(receipt, "attestation", "gflops"));
        if (gflops != count * deviceGflops(p)) {
            throw std::runtime_error("attestation valued " + std::to_string(gflops) +
                                     ", expected " + std::to_string(count * deviceGflops(p)));
        }
        out.attestedGflops.push_back(gflops);
        out.fed[e][p][s] = gflops;
    }

    const std::string rpc = "127.0.0.1:" + std::to_string(node.port());
    for (const auto& [format, text] : {std::pair{"csv", &out.csv}, std::pair{"json", &out.json}}) {
        const auto file = node.home().parent_path() / (std::string("export.") + format);
        if (runCommand(node.bin(), {"export", "epochs", "--format", format, "--rpc", rpc}, file) !=
            0) {
            throw std::runtime_error("gridledger export failed: " + readText(file));
        }
        *text = readText(file);
    }
    node.stop(SIGTERM);
    // An auditor's replay checks every certificate, root and fixed-block-time stamp.
    const auto replayLog = node.home().parent_path() / "replay.log";
    if (runCommand(node.bin(), {"replay", "--home", node.home().string()}, replayLog) != 0 ||
        readText(replayLog).find("replay ok") == std::string::npos) {
        throw std::runtime_error("gridledger replay failed: " + readText(replayLog));
    }
    out.replay = readText(replayLog);
    return out;
}

}  // namespace gridledger::testing
