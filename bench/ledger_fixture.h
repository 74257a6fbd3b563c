#pragma once

// For the benchmarks: a node's ledger (RocksDB store with the node's options, state tree, block
// store and executor) in a temporary directory, removed afterwards. Blocks are committed as the
// node commits them: one batch each, without an fsync of its own (the node's next vote makes it
// durable, docs/protocol.md §8).

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <gridledger/contracts/executor.h>
#include <gridledger/contracts/state.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>

#include "support/temp_dir.h"

namespace gridledger::bench {

struct LedgerFixture {
    LedgerFixture(std::string_view chainId, const std::string& signingDomain)
        : store(std::move(
              *storage::KvStore::open(dir.path(), ledger::columnNames(), ledger::storeOptions()))),
          tree(std::make_unique<ledger::StateTree>(*store, ledger::kStateNodesColumn,
                                                   ledger::kStateValuesColumn)),
          blocks(std::make_unique<ledger::BlockStore>(*store)),
          executor(std::make_unique<contracts::Executor>(*store, *tree, *blocks,
                                                         std::string(chainId), signingDomain)),
          batch(store->batch()) {
        executor->setSyncedWrites(false);
    }

    /**
     * Applies and writes `state` as `version` in one unsynced batch, the same one emptied for each
     * version as the executor's is, and tells the tree, as the executor does after a block, so
     * that later reads come from the latest values as in a node. The batch is written in place,
     * not behind (KvStore::writeBehind), so that a version's time holds its whole write. Exits on
     * failure.
     */
    void commitState(const contracts::StateLayer& state, std::uint64_t version) {
        batch.clear();
        const auto updates = state.updates();
        if (!tree->apply(version, updates, batch) || !store->write(batch, false)) {
            std::fprintf(stderr, "commit failed\n");
            std::exit(1);
        }
        tree->committed(version);
    }

    testing::TempDir dir;
    std::unique_ptr<storage::KvStore> store;
    std::unique_ptr<ledger::StateTree> tree;
    std::unique_ptr<ledger::BlockStore> blocks;
    std::unique_ptr<contracts::Executor> executor;
    storage::WriteBatch batch;
};

}  // namespace gridledger::bench
