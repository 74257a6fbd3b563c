// Per-block execution cost against the number of pending tasks in state (docs/benchmarks.md): the
// same block (50 task creations, 50 cancels, 100 tasks falling due) executed on a state holding
// 1,000 and then 200,000 pending tasks of dust consumers, each consumer at the pending cap and
// funded with exactly what its tasks lock, while a provider that serves another category is
// online, so that matching looks at pending tasks it cannot assign. Reports the median time to
// execute the block and to hash its writes into the state tree, the bytes the commit would write,
// and the ratio.
//
// The pending tasks are put in state by the task contract's own escrowTask (what task_create
// does after its checks), a version at a time, rather than by signed transactions: the state is
// the same, and the setup stays in seconds.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/tasks.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>

#include "ledger_fixture.h"

namespace gridledger {
namespace {

constexpr std::string_view kChain = "gridledger-task-bench";
/** The chain's signing domain, made on first use. */
const std::string& domain() {
    static const std::string value = crypto::chainDomain(kChain, Hash256{});
    return value;
}
constexpr std::uint64_t kGenesisMs = 1'000'000;
constexpr std::uint64_t kDueAt = kGenesisMs + 1'000;     // the 100 tasks that fall due
constexpr std::uint64_t kLaterAt = kGenesisMs + 60'000;  // every other pending task
constexpr std::uint64_t kPerVersion = 20'000;
constexpr std::size_t kCreators = 50;
constexpr std::uint64_t kCancellingConsumers = 5;
constexpr std::uint64_t kCancelsEach = 10;
constexpr int kRuns = 15;

crypto::SecretKey keyOf(std::uint8_t kind, std::uint64_t n) {
    std::array<std::uint8_t, 32> seed{};
    seed[0] = kind;
    for (std::size_t i = 0; i < 8; ++i) {
        seed[24 + i] = static_cast<std::uint8_t>(n >> (56 - 8 * i));
    }
    return *crypto::SecretKey::fromBytes(seed);
}

Address addressOf(const crypto::SecretKey& key) {
    return crypto::addressOf(key.publicKey());
}

struct Figure {
    double medianMs = 0;
    /** Of which executing the block (the rest: hashing its writes into the tree). */
    double executeMs = 0;
    /** Keys and value bytes the block's state writes (the tree's nodes not counted). */
    std::size_t valueBytes = 0;
    std::size_t keys = 0;
    std::size_t bytes = 0;
    std::size_t due = 0;
};

class Bench {
  public:
    explicit Bench(std::uint64_t pending) : pending_(pending) {
        contracts::Genesis genesis;
        genesis.chainId = kChain;
        genesis.genesisTimeMs = kGenesisMs;
        params_ = genesis.chainParams();
        perConsumer_ = params_.tasks.maxPendingPerConsumer;
        const std::uint64_t consumers = (pending + perConsumer_ - 1) / perConsumer_;
        const u128 locked = task(Address{}, 0).escrow + task(Address{}, 0).deposit;
        const u128 fees = u128{kCancelsEach} * params_.fees.of(codec::Payload{codec::TaskCancel{}});
        for (std::uint64_t c = 0; c < consumers; ++c) {
            genesis.accounts.push_back(
                {addressOf(keyOf(1, c)),
                 locked * perConsumer_ + (c < kCancellingConsumers + 1 ? fees : 0)});
        }
        for (std::size_t c = 0; c < kCreators; ++c) {
            genesis.accounts.push_back({addressOf(keyOf(2, c)), contracts::kDpsUnit});
        }
        genesis.providers.push_back({provider(), inventory()});
        if (!ledger_.executor->commitGenesis(genesis)) {
            std::fprintf(stderr, "genesis failed\n");
            std::exit(1);
        }
        fill();
        attest();
    }

    /** Executes the measured block kRuns times on the same state, never committing it. */
    Figure measure() {
        const codec::Block block = measuredBlock();
        const contracts::KnownTxs cached = [](const Hash256&) { return ledger::KnownTx{true, {}}; };
        std::vector<double> times;
        std::vector<double> executes;
        Figure figure;
        for (int run = 0; run < kRuns; ++run) {
            const auto start = std::chrono::steady_clock::now();
            contracts::StateLayer state(*ledger_.tree, version_);
            auto done = ledger_.executor->execute(state, block, cached);
            const auto executed = std::chrono::steady_clock::now();
            auto batch = ledger_.store->batch();
            const auto updates = state.updates();
            const auto root = ledger_.tree->apply(version_ + 1, updates, batch);
            const auto stop = std::chrono::steady_clock::now();
            if (!done || !root) {
                std::fprintf(stderr, "execution failed\n");
                std::exit(1);
            }
            for (const auto& receipt : done->receipts) {
                if (!receipt.success()) {
                    std::fprintf(stderr, "a transaction failed: %s\n",
                                 std::string(reasonOf(receipt.code)).c_str());
                    std::exit(1);
                }
            }
            times.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
            executes.push_back(std::chrono::duration<double, std::milli>(executed - start).count());
            figure.valueBytes = 0;
            for (const auto& update : updates) {
                figure.valueBytes += Hash256::size() + (update.value ? update.value->size() : 0);
            }
            figure.keys = updates.size();
            figure.bytes = batch.byteSize();
            figure.due = done->systemReceipt ? done->systemReceipt->events.size() : 0;
        }
        std::sort(times.begin(), times.end());
        figure.medianMs = times[times.size() / 2];
        std::sort(executes.begin(), executes.end());
        figure.executeMs = executes[executes.size() / 2];
        return figure;
    }

  private:
    static Address provider() { return addressOf(keyOf(3, 0)); }

    /** Eight GPUs that serve ml_training only: no pending task (inference) fits. */
    static codec::RegisterProvider inventory() {
        codec::DeviceModel device;
        device.model = "bench-gpu";
        device.count = 8;
        device.peakGflops = 1'000'000;
        device.memoryBandwidthGbps = 1'000;
        device.memoryCapacityGb = 80;
        return codec::RegisterProvider{{device}, {}, {"ml_training"}};
    }

    /** The provider attests the slot of the measured block: it is online for matching. */
    void attest() {
        const std::uint64_t at = measuredTimeMs();
        const std::uint64_t slot = (at - kGenesisMs) / params_.tokenomics.slotMs;
        const std::uint64_t perEpoch = params_.tokenomics.slotsPerEpoch();
        codec::Attest attestation;
        attestation.epoch = slot / perEpoch;
        attestation.slot = slot % perEpoch;
        attestation.category = "ml_training";
        attestation.devices = {{"bench-gpu", 8}};
        contracts::StateLayer state(*ledger_.tree, version_);
        if (!contracts::executeAttest(state, {version_ + 1, at}, provider(), attestation)) {
            std::fprintf(stderr, "attestation failed\n");
            std::exit(1);
        }
        commit(state);
    }

    [[nodiscard]] std::uint64_t measuredTimeMs() const {
        return kDueAt + params_.tasks.assignTimeoutMs;
    }

    contracts::Task task(const Address& consumer, std::uint64_t n) const {
        contracts::Task t;
        t.id = contracts::taskIdOf(consumer, n);
        t.consumer = consumer;
        t.category = "inference";
        t.minGflops = 1;
        t.maxMinutes = 1;
        t.ratePerMinute =
            *contracts::taskRatePerMinute(params_.index.categories[1].priceRate, t.minGflops);
        t.escrow = t.ratePerMinute;
        t.deposit = params_.tasks.creationDeposit;
        t.clock.escrowMinutes = 1;
        return t;
    }

    /** Consumer c holds tasks n = 0…99; consumer 0's fall due at the measured block. */
    void fill() {
        std::uint64_t done = 0;
        while (done < pending_) {
            contracts::StateLayer state(*ledger_.tree, version_);
            const std::uint64_t end = std::min(pending_, done + kPerVersion);
            for (; done < end; ++done) {
                const Address consumer = addressOf(keyOf(1, done / perConsumer_));
                const std::uint64_t at = done < perConsumer_ ? kDueAt : kLaterAt;
                if (!contracts::escrowTask(state, task(consumer, done % perConsumer_),
                                           {version_ + 1, at})) {
                    std::fprintf(stderr, "filling failed at task %llu\n",
                                 static_cast<unsigned long long>(done));
                    std::exit(1);
                }
            }
            commit(state);
        }
    }

    /** Commits `state` as the next version, as a node commits a block. */
    void commit(const contracts::StateLayer& state) { ledger_.commitState(state, ++version_); }

    Bytes sign(const crypto::SecretKey& key, std::uint64_t nonce, codec::Payload payload) const {
        const std::uint64_t fee = params_.fees.of(payload);
        codec::TxBody body{std::string(kChain), key.publicKey(),    nonce,
                           ~std::uint64_t{0},   std::move(payload), fee};
        return codec::signTx(body, key, domain()).raw;
    }

    codec::Block measuredBlock() const {
        std::vector<Bytes> txs;
        for (std::size_t c = 0; c < kCreators; ++c) {
            txs.push_back(sign(keyOf(2, c), 0, codec::TaskCreate{"inference", 1, {}, 1, {}}));
        }
        for (std::uint64_t c = 1; c <= kCancellingConsumers; ++c) {
            const auto key = keyOf(1, c);
            for (std::uint64_t n = 0; n < kCancelsEach; ++n) {
                txs.push_back(
                    sign(key, n, codec::TaskCancel{contracts::taskIdOf(addressOf(key), n)}));
            }
        }
        codec::BlockHeader header;
        header.height = version_ + 1;
        header.round = header.height;
        header.timestampMs = measuredTimeMs();
        return codec::makeBlock(header, std::move(txs));
    }

    bench::LedgerFixture ledger_{kChain, domain()};
    contracts::ChainParams params_;
    std::uint64_t pending_ = 0;
    std::uint64_t perConsumer_ = 1;
    std::uint64_t version_ = 0;
};

Figure run(std::uint64_t pending) {
    const auto start = std::chrono::steady_clock::now();
    Bench bench(pending);
    const auto built = std::chrono::steady_clock::now();
    const Figure figure = bench.measure();
    std::printf(
        "%7llu pending tasks: %.2f ms per block (median of %d; execution %.2f ms), %zu "
        "keys, %zu bytes of keys and values, %zu bytes written with the tree's nodes, "
        "%zu system events; state built in %.1f s\n",
        static_cast<unsigned long long>(pending), figure.medianMs, kRuns, figure.executeMs,
        figure.keys, figure.valueBytes, figure.bytes, figure.due,
        std::chrono::duration<double>(built - start).count());
    return figure;
}

}  // namespace
}  // namespace gridledger

int main() {
    using namespace gridledger;
    std::printf("task admission: one block of 50 task_create, 50 task_cancel and 100 expiries\n");
    const Figure small = run(1'000);
    const Figure large = run(200'000);
    const auto ratio = [](double a, double b) { return a / b; };
    std::printf(
        "ratio 200k / 1k: time %.2f (execution %.2f), keys %.2f, key and value bytes "
        "%.2f, bytes written with the tree's nodes %.2f\n",
        ratio(large.medianMs, small.medianMs), ratio(large.executeMs, small.executeMs),
        ratio(static_cast<double>(large.keys), static_cast<double>(small.keys)),
        ratio(static_cast<double>(large.valueBytes), static_cast<double>(small.valueBytes)),
        ratio(static_cast<double>(large.bytes), static_cast<double>(small.bytes)));
    std::printf("within 2x of the 1k figure: block %s, execution %s\n",
                large.medianMs < 2 * small.medianMs ? "yes" : "no",
                large.executeMs < 2 * small.executeMs ? "yes" : "no");
    return 0;
}
