#pragma once

// The state tree tests' fixture and reference model: a RocksDB store in a temp dir, random
// contents, and the documented root computed independently of the implementation.

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>
#include <gridledger/storage/kv_store.h>

namespace gridledger::ledger::tree_testing {

inline constexpr storage::Column kNodes = 0;
inline constexpr storage::Column kValues = 1;

/**
 * A RocksDB store with the two state columns in a fresh temp dir, removed afterwards; opened with
 * the node's options (the prefix filter of the values column) unless `nodeOptions` is false.
 */
class TestDb {
  public:
    explicit TestDb(bool nodeOptions = true,
                    std::size_t applyCacheBytes = StateTree::kApplyCacheBytes)
        : dir_(uniqueDir()), nodeOptions_(nodeOptions), applyCacheBytes_(applyCacheBytes) {
        open();
    }
    ~TestDb() {
        tree_.reset();
        store_.reset();
        std::filesystem::remove_all(dir_);
    }
    TestDb(const TestDb&) = delete;
    TestDb& operator=(const TestDb&) = delete;

    StateTree& tree() { return *tree_; }
    storage::KvStore& store() { return *store_; }

    /** StateTree::shareAppliesFrom, kept across reopen. */
    void shareAppliesFrom(std::size_t keys) {
        sharedApplyOps_ = keys;
        tree_->shareAppliesFrom(keys);
    }

    /**
     * Closes and reopens the store, as a node restart does (which flushes what the write-ahead
     * log held into table files), with the node's options or not.
     */
    void reopen(bool nodeOptions = true) {
        tree_.reset();
        store_.reset();
        nodeOptions_ = nodeOptions;
        open();
    }

    /**
     * Applies `updates` as `version`, commits the batch and tells the tree, as the executor does;
     * returns the new root.
     */
    Hash256 commit(std::uint64_t version, const std::vector<TreeUpdate>& updates) {
        return commitTo(*tree_, version, updates);
    }

    /** commit, through another tree over the same store. */
    Hash256 commitTo(StateTree& tree, std::uint64_t version,
                     const std::vector<TreeUpdate>& updates) {
        auto batch = store_->batch();
        auto root = tree.apply(version, updates, batch);
        if (!root) {
            throw std::runtime_error("apply failed: " + root.error().message);
        }
        if (!store_->write(batch, false)) {
            throw std::runtime_error("commit failed");
        }
        tree.committed(version);
        return *root;
    }

  private:
    static std::filesystem::path uniqueDir() {
        static std::atomic<int> counter{0};
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        return std::filesystem::temp_directory_path() /
               ("gridledger_state_tree_" + std::string(info->name()) + "_" +
                std::to_string(::getpid()) + "_" + std::to_string(counter++));
    }

    void open() {
        auto store = storage::KvStore::open(
            dir_, {columnNames()[kStateNodesColumn], columnNames()[kStateValuesColumn]},
            nodeOptions_ ? storeOptions() : storage::KvOptions{});
        if (!store) {
            throw std::runtime_error("cannot open store: " + store.error().message);
        }
        store_ = std::move(*store);
        tree_ = std::make_unique<StateTree>(*store_, kNodes, kValues, applyCacheBytes_);
        tree_->shareAppliesFrom(sharedApplyOps_);
    }

    std::filesystem::path dir_;
    bool nodeOptions_ = true;
    std::size_t applyCacheBytes_;
    std::size_t sharedApplyOps_ = StateTree::kSharedApplyOps;
    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<StateTree> tree_;
};

inline bool bitOf(const Hash256& key, std::size_t index) {
    const unsigned byte = key[index / 8];
    return ((byte >> (7U - index % 8)) & 1U) != 0;
}

inline Hash256 flipBit(Hash256 key, std::size_t index) {
    key[index / 8] = static_cast<std::uint8_t>(key[index / 8] ^ (0x80U >> (index % 8)));
    return key;
}

inline Hash256 randomKey(std::mt19937_64& rng) {
    Hash256 key;
    for (std::size_t i = 0; i < Hash256::size(); ++i) {
        key[i] = static_cast<std::uint8_t>(rng());
    }
    return key;
}

inline Bytes randomValue(std::mt19937_64& rng) {
    Bytes value(rng() % 41);  // empty values are values too
    for (auto& b : value) {
        b = static_cast<std::uint8_t>(rng());
    }
    return value;
}

/** The documented hashing (docs/state_tree.md), written independently of the implementation. */
inline Hash256 docHash(std::string_view domain, const Hash256& a, const Hash256& b) {
    crypto::Sha256 h;
    h.update(domain).update(a.view()).update(b.view());
    return h.finish();
}

/** The root of the canonical binary sparse Merkle tree over sorted (key, value) pairs. */
inline Hash256 referenceRoot(const std::vector<std::pair<Hash256, Bytes>>& kv, std::size_t lo,
                             std::size_t hi, std::size_t bit) {
    if (lo == hi) {
        return Hash256{};
    }
    if (hi - lo == 1) {
        return docHash("gridledger/state/leaf", kv[lo].first, crypto::sha256(kv[lo].second));
    }
    std::size_t mid = lo;
    while (mid < hi && !bitOf(kv[mid].first, bit)) {
        ++mid;
    }
    return docHash("gridledger/state/node", referenceRoot(kv, lo, mid, bit + 1),
                   referenceRoot(kv, mid, hi, bit + 1));
}

inline Hash256 referenceRoot(const std::map<Hash256, Bytes>& model) {
    const std::vector<std::pair<Hash256, Bytes>> kv(model.begin(), model.end());
    return referenceRoot(kv, 0, kv.size(), 0);
}

inline std::vector<TreeUpdate> asUpdates(const std::map<Hash256, Bytes>& model) {
    std::vector<TreeUpdate> out;
    out.reserve(model.size());
    for (const auto& [key, value] : model) {
        out.push_back(TreeUpdate{key, value});
    }
    return out;
}

/** Random keys plus keys one bit away from others (deep shared prefixes, down to bit 255). */
inline std::map<Hash256, Bytes> randomContents(std::mt19937_64& rng, std::size_t count) {
    std::map<Hash256, Bytes> model;
    while (model.size() < count) {
        Hash256 key = randomKey(rng);
        if (!model.empty() && rng() % 5 == 0) {
            key = flipBit(std::next(model.begin(), static_cast<long>(rng() % model.size()))->first,
                          rng() % 256);
        }
        model[key] = randomValue(rng);
    }
    return model;
}

}  // namespace gridledger::ledger::tree_testing
