#pragma once

// For the benchmarks: a node's ledger (RocksDB store with the node's options, state tree, block
// store and executor) in a temporary directory, removed afterwards. Blocks are committed as the
// node commits them: one batch each, without an fsync of its own (the node's next vote makes it
// durable, docs/protocol.md §8).

#include <memory>
#include <string>
#include <string_view>

#include <gridledger/contracts/executor.h>
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
                                                         std::string(chainId), signingDomain)) {
        executor->setSyncedWrites(false);
    }

    testing::TempDir dir;
    std::unique_ptr<storage::KvStore> store;
    std::unique_ptr<ledger::StateTree> tree;
    std::unique_ptr<ledger::BlockStore> blocks;
    std::unique_ptr<contracts::Executor> executor;
};

}  // namespace gridledger::bench
