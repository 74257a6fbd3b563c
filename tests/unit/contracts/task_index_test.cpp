// The task indexes as one state key per entry (docs/tasks.md "State"): a layer lists keys by
// range with its own writes over the tree's, and a task transition writes the same keys and
// bytes whatever the number of tasks already in state.

#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include <gridledger/contracts/tasks.h>

#include "chain_harness.h"

namespace gridledger::contracts::task_index_test {
namespace {

using testing::Chain;
using testing::shortEpochGenesis;

Hash256 keyAt(std::uint8_t first, std::uint8_t last) {
    Hash256 key;
    key[0] = first;
    key[31] = last;
    return key;
}

Address dust(std::uint64_t n) {
    std::array<std::uint8_t, 20> bytes{};
    bytes[0] = 0xd0;
    for (std::size_t i = 0; i < 8; ++i) {
        bytes[12 + i] = static_cast<std::uint8_t>(n >> (56 - 8 * i));
    }
    return Address{bytes};
}

Task pendingTask(const Address& consumer, std::uint64_t nonce) {
    Task task;
    task.id = taskIdOf(consumer, nonce);
    task.consumer = consumer;
    task.category = "flat";
    task.minGflops = 1'000'000;
    task.maxMinutes = 1;
    task.ratePerMinute = 60;
    task.escrow = 60;
    task.clock.escrowMinutes = 1;
    return task;
}

/** Commits `layer` to the chain's tree as the next version; returns that version. */
std::uint64_t commitLayer(Chain& chain, const StateLayer& layer, std::uint64_t version) {
    auto batch = chain.store().batch();
    const auto updates = layer.updates();
    EXPECT_TRUE(chain.tree().apply(version, updates, batch));
    EXPECT_TRUE(chain.store().write(batch, false));
    return version;
}

/** What one transition step wrote: the number of keys and their key and value bytes. */
struct Written {
    std::size_t keys = 0;
    std::size_t bytes = 0;

    bool operator==(const Written&) const = default;
};

Written writtenBy(const StateLayer& layer) {
    Written out;
    for (const auto& update : layer.updates()) {
        out.keys += 1;
        out.bytes += Hash256::size() + (update.value ? update.value->size() : 0);
    }
    return out;
}

/**
 * A chain with `pending` pending tasks of 1 000 dust consumers in state, then the same three
 * steps (a new task, the assignment of another, its start), each measured in its own layer.
 */
std::vector<Written> stepsAt(std::uint64_t pending) {
    Chain chain(shortEpochGenesis(1, 0));
    StateLayer fill(chain.tree(), chain.height());
    for (std::uint64_t i = 0; i < pending; ++i) {
        EXPECT_TRUE(insertTask(fill, pendingTask(dust(i % 1'000), i / 1'000), {1, 1'000'000}));
    }
    const Address consumer = dust(1'000'000);
    const Task measured = pendingTask(consumer, 0);
    EXPECT_TRUE(insertTask(fill, measured, {1, 1'000'000}));
    const std::uint64_t version = commitLayer(chain, fill, chain.height() + 1);

    StateLayer base(chain.tree(), version);
    std::vector<Written> steps;
    StateLayer create(base);
    EXPECT_TRUE(insertTask(create, pendingTask(consumer, 1), {2, 2'000'000}));
    steps.push_back(writtenBy(create));
    Task task = **loadTask(base, measured.id);
    StateLayer assign(base);
    EXPECT_TRUE(transitionTask(assign, task, TaskTrigger::kAssign, {2, 2'000'000}, Address{},
                               dust(2'000'000)));
    steps.push_back(writtenBy(assign));
    assign.mergeIntoParent();
    StateLayer start(base);
    EXPECT_TRUE(transitionTask(start, task, TaskTrigger::kStart, {2, 2'000'000}, dust(2'000'000)));
    steps.push_back(writtenBy(start));
    // The filler tasks plus the measured one, which the assignment took out of the list.
    EXPECT_EQ(loadTasksByState(base, TaskState::kPending)->size(), pending);
    return steps;
}

TEST(TaskIndexes, ALayerListsItsWritesOverTheTreeInKeyOrder) {
    Chain chain(shortEpochGenesis(1, 0));
    StateLayer fill(chain.tree(), chain.height());
    for (std::uint8_t i = 1; i <= 5; ++i) {
        fill.put(keyAt(0xee, i), Bytes{i});
    }
    const std::uint64_t version = commitLayer(chain, fill, chain.height() + 1);
    StateLayer block(chain.tree(), version);
    block.erase(keyAt(0xee, 2));
    block.put(keyAt(0xee, 9), Bytes{9});
    StateLayer tx(block);
    tx.put(keyAt(0xee, 2), Bytes{2});  // back again in the child
    tx.erase(keyAt(0xee, 4));
    tx.erase(keyAt(0xee, 7));  // never there
    const auto inBlock = block.keysBetween(keyAt(0xee, 0), keyAt(0xee, 0xff));
    ASSERT_TRUE(inBlock);
    EXPECT_EQ(*inBlock, (std::vector<Hash256>{keyAt(0xee, 1), keyAt(0xee, 3), keyAt(0xee, 4),
                                              keyAt(0xee, 5), keyAt(0xee, 9)}));
    const auto inTx = tx.keysBetween(keyAt(0xee, 2), keyAt(0xee, 5));
    ASSERT_TRUE(inTx);
    EXPECT_EQ(*inTx, (std::vector<Hash256>{keyAt(0xee, 2), keyAt(0xee, 3), keyAt(0xee, 5)}));
}

TEST(TaskIndexes, ARangeReadWithALimitGivesTheFirstKeysOfTheWholeRange) {
    Chain chain(shortEpochGenesis(1, 0));
    StateLayer fill(chain.tree(), chain.height());
    for (std::uint8_t i = 1; i <= 40; ++i) {
        fill.put(keyAt(0xee, i), Bytes{i});
    }
    const std::uint64_t version = commitLayer(chain, fill, chain.height() + 1);
    // The block erases the first ten keys and every third after; the transaction erases more and
    // writes some back, so that the tree's first keys are hidden twice over.
    StateLayer block(chain.tree(), version);
    for (std::uint8_t i = 1; i <= 40; ++i) {
        if (i <= 10 || i % 3 == 0) {
            block.erase(keyAt(0xee, i));
        }
    }
    block.put(keyAt(0xee, 50), Bytes{50});
    StateLayer tx(block);
    for (std::uint8_t i = 11; i <= 20; ++i) {
        tx.erase(keyAt(0xee, i));
    }
    tx.put(keyAt(0xee, 3), Bytes{3});
    const Hash256 first = keyAt(0xee, 0);
    const Hash256 last = keyAt(0xee, 0xff);
    const auto wholeTree = chain.tree().keysBetween(first, last, version);
    const auto wholeBlock = block.keysBetween(first, last);
    const auto wholeTx = tx.keysBetween(first, last);
    ASSERT_TRUE(wholeTree && wholeBlock && wholeTx);
    ASSERT_EQ(wholeTree->size(), 40U);
    ASSERT_EQ(wholeTx->front(), keyAt(0xee, 3));
    const auto prefix = [](const std::vector<Hash256>& keys, std::size_t n) {
        return std::vector<Hash256>(
            keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(std::min(n, keys.size())));
    };
    for (std::size_t limit = 0; limit <= 42; ++limit) {
        EXPECT_EQ(*chain.tree().keysBetween(first, last, version, limit), prefix(*wholeTree, limit))
            << "tree, limit " << limit;
        EXPECT_EQ(*block.keysBetween(first, last, limit), prefix(*wholeBlock, limit))
            << "block, limit " << limit;
        EXPECT_EQ(*tx.keysBetween(first, last, limit), prefix(*wholeTx, limit))
            << "transaction, limit " << limit;
    }
}

TEST(TaskIndexes, TheDueIndexListsExactlyTheTasksDueByDueTimeThenId) {
    Chain chain(shortEpochGenesis(1, 0));
    const std::uint64_t timeout = chain.params().tasks.assignTimeoutMs;
    StateLayer state(chain.tree(), chain.height());
    // 600 pending tasks created at 200 block times: each is due at its creation + the timeout.
    std::vector<std::pair<std::uint64_t, Hash256>> expected;
    for (std::uint64_t i = 0; i < 600; ++i) {
        const std::uint64_t created = 2'000'000 + (i * 7 % 200) * 1'000;
        const Task task = pendingTask(dust(i), 0);
        ASSERT_TRUE(insertTask(state, task, {1, created}));
        expected.emplace_back(created + timeout, task.id);
    }
    std::sort(expected.begin(), expected.end());
    for (const std::uint64_t now : {std::uint64_t{0}, 2'000'000 + timeout - 1, 2'000'000 + timeout,
                                    2'050'500 + timeout, 2'199'000 + timeout, ~std::uint64_t{0}}) {
        std::vector<Hash256> due;
        for (const auto& [at, id] : expected) {
            if (at <= now) {
                due.push_back(id);
            }
        }
        const auto found = loadDueTasks(state, now);
        ASSERT_TRUE(found) << found.error().message;
        EXPECT_EQ(*found, due) << "at " << now;
    }
    // A task that is assigned leaves its pending due time for its claim deadline, listed once.
    Task first = **loadTask(state, expected.front().second);
    ASSERT_TRUE(
        transitionTask(state, first, TaskTrigger::kAssign, {2, 3'000'000}, Address{}, dust(9'999)));
    const std::uint64_t claimDue = 3'000'000 + chain.params().tasks.claimTimeoutMs;
    EXPECT_EQ(first.dueMs, claimDue);
    EXPECT_TRUE(loadDueTasks(state, claimDue - 1)->empty());
    EXPECT_EQ(*loadDueTasks(state, claimDue), std::vector<Hash256>{first.id});
    const auto atFirst = loadDueTasks(state, expected.front().first);
    ASSERT_TRUE(atFirst);
    EXPECT_EQ(std::count(atFirst->begin(), atFirst->end(), first.id), 1);
}

TEST(TaskIndexes, ATransitionWritesTheSameBytesWhateverTheNumberOfPendingTasks) {
    const auto started = std::chrono::steady_clock::now();
    const auto small = stepsAt(1'000);
    const auto large = stepsAt(50'000);
    ASSERT_EQ(small.size(), 3U);
    const char* names[] = {"create", "assign", "start"};
    for (std::size_t i = 0; i < small.size(); ++i) {
        EXPECT_EQ(small[i], large[i])
            << names[i] << ": " << small[i].keys << " keys, " << small[i].bytes << " bytes at 1k; "
            << large[i].keys << " keys, " << large[i].bytes << " bytes at 50k";
        EXPECT_GT(small[i].keys, 0U);
    }
    std::cout << "built and measured in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - started)
                     .count()
              << " ms\n";
}

}  // namespace
}  // namespace gridledger::contracts::task_index_test
