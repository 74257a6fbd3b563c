// State tree throughput: keys updated per second in 1,000-key versions on a 100k-key and on a
// 1M-key tree, each version committed (unsynced) before the next; and reads / proofs per second on
// the 100k-key tree.

#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::ledger {
namespace {

constexpr storage::Column kNodes = 0;
constexpr storage::Column kValues = 1;

Hash256 randomKey(std::mt19937_64& rng) {
    Hash256 key;
    for (std::size_t i = 0; i < Hash256::size(); ++i) {
        key[i] = static_cast<std::uint8_t>(rng());
    }
    return key;
}

Bytes randomValue(std::mt19937_64& rng) {
    Bytes value(32);
    for (auto& b : value) {
        b = static_cast<std::uint8_t>(rng());
    }
    return value;
}

/** A store in a temp dir holding a tree of `keys` random keys, removed on destruction. */
class BenchTree {
  public:
    explicit BenchTree(std::size_t keys)
        : dir_(std::filesystem::temp_directory_path() /
               ("gridledger_state_tree_bench_" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(dir_);
        auto store = storage::KvStore::open(
            dir_, {columnNames()[kStateNodesColumn], columnNames()[kStateValuesColumn]},
            ledger::storeOptions());
        if (!store) {
            throw std::runtime_error(store.error().message);
        }
        store_ = std::move(*store);
        tree_ = std::make_unique<StateTree>(*store_, kNodes, kValues);
        constexpr std::size_t kLoadBatch = 10'000;
        while (keys_.size() < keys) {
            std::vector<TreeUpdate> updates;
            for (std::size_t i = 0; i < kLoadBatch && keys_.size() < keys; ++i) {
                keys_.push_back(randomKey(rng_));
                updates.push_back(TreeUpdate{keys_.back(), randomValue(rng_)});
            }
            commit(updates);
        }
    }
    ~BenchTree() {
        tree_.reset();
        store_.reset();
        std::filesystem::remove_all(dir_);
    }
    BenchTree(const BenchTree&) = delete;
    BenchTree& operator=(const BenchTree&) = delete;

    /** Half updates of existing keys, a quarter inserts, a quarter deletes: the size holds. */
    std::vector<TreeUpdate> mixedUpdates(std::size_t count) {
        std::vector<TreeUpdate> updates;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t index = rng_() % keys_.size();
            switch (i % 4) {
                case 0:
                    keys_.push_back(randomKey(rng_));
                    updates.push_back(TreeUpdate{keys_.back(), randomValue(rng_)});
                    break;
                case 1:
                    updates.push_back(TreeUpdate{keys_[index], std::nullopt});
                    keys_[index] = keys_.back();
                    keys_.pop_back();
                    break;
                default:
                    updates.push_back(TreeUpdate{keys_[index], randomValue(rng_)});
                    break;
            }
        }
        return updates;
    }

    void commit(const std::vector<TreeUpdate>& updates) {
        auto batch = store_->batch();
        if (!tree_->apply(++version_, updates, batch) || !store_->write(batch, false)) {
            throw std::runtime_error("state tree bench: apply or commit failed");
        }
    }

    StateTree& tree() { return *tree_; }
    std::uint64_t version() const { return version_; }
    const Hash256& someKey() { return keys_[rng_() % keys_.size()]; }

  private:
    std::filesystem::path dir_;
    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<StateTree> tree_;
    std::mt19937_64 rng_{1};
    std::vector<Hash256> keys_;
    std::uint64_t version_ = 0;
};

void stateTreeUpdate(benchmark::State& state) {
    BenchTree tree(static_cast<std::size_t>(state.range(0)));
    const auto batchSize = static_cast<std::size_t>(state.range(1));
    for ([[maybe_unused]] auto _ : state) {
        state.PauseTiming();
        const auto updates = tree.mixedUpdates(batchSize);
        state.ResumeTiming();
        tree.commit(updates);
    }
    const auto keys = static_cast<double>(state.iterations()) * static_cast<double>(batchSize);
    state.SetItemsProcessed(static_cast<std::int64_t>(keys));
    state.counters["keys_per_s"] = benchmark::Counter(keys, benchmark::Counter::kIsRate);
}
BENCHMARK(stateTreeUpdate)
    ->Args({100'000, 1'000})
    ->Args({1'000'000, 1'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void stateTreeGet(benchmark::State& state) {
    BenchTree tree(static_cast<std::size_t>(state.range(0)));
    for ([[maybe_unused]] auto _ : state) {
        auto value = tree.tree().get(tree.someKey(), tree.version());
        benchmark::DoNotOptimize(value);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(stateTreeGet)->Arg(100'000);

void stateTreeProveAndVerify(benchmark::State& state) {
    BenchTree tree(static_cast<std::size_t>(state.range(0)));
    const Hash256 root = *tree.tree().rootAt(tree.version());
    for ([[maybe_unused]] auto _ : state) {
        const Hash256& key = tree.someKey();
        auto value = tree.tree().get(key, tree.version());
        auto proof = tree.tree().prove(key, tree.version());
        if (!value || !proof || !verifyProof(root, key, *value, *proof)) {
            state.SkipWithError("proof did not verify");
            break;
        }
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(stateTreeProveAndVerify)->Arg(100'000);

}  // namespace
}  // namespace gridledger::ledger

BENCHMARK_MAIN();
