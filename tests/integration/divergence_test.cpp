// A validator whose state is not the one a quorum certified halts: its stored roots are altered
// while it is stopped, and once restarted it refuses to execute past them, says why on /readyz
// and in its log, and keeps serving /livez while the three others go on.

#include <csignal>

#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "network_support.h"

namespace gridledger::testing::divergence_test {
namespace {

/** Flips a bit of the stored state root at every height 1..head of a stopped node's ledger. */
std::uint64_t alterStoredRoots(const std::filesystem::path& home) {
    auto store = storage::KvStore::open(home / "data" / "chain", ledger::columnNames());
    EXPECT_TRUE(store) << store.error().message;
    if (!store) {
        return 0;
    }
    ledger::BlockStore blocks(**store);
    const std::uint64_t head = blocks.executedHeight().value().value_or(0);
    const auto before = blocks.rootsAt(head).value();
    auto batch = (*store)->batch();
    for (std::uint64_t h = 1; h <= head; ++h) {
        const auto roots = blocks.rootsAt(h).value();
        EXPECT_TRUE(roots.has_value());
        Bytes key(std::string_view("roots/").begin(), std::string_view("roots/").end());
        appendU64(key, h);
        Bytes value;
        append(value, roots->stateRoot.view());
        append(value, roots->resultsRoot.view());
        value[0] ^= 0x01;
        batch.put(ledger::kMetaColumn, key, value);
    }
    EXPECT_TRUE((*store)->write(batch, true));
    EXPECT_NE(blocks.rootsAt(head).value(), before) << "the ledger reads the altered roots";
    return head;
}

TEST(Divergence, AValidatorWhoseRootsDifferFromTheCertifiedOnesHaltsAndIsNotReady) {
    Testnet net(quickTestnet(4));
    net.startAll();
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 3) >= 8; }, std::chrono::seconds(60)));
    // A fresh data dir holds its signatures until f + 1 peers' probes say it is at the head: the
    // chain may pass height 8 before that, so wait for the node to be ready, not for a height.
    ASSERT_TRUE(waitFor(
        [&] {
            const auto ready = net.get(3, "/readyz");
            return ready && ready->status == 200;
        },
        std::chrono::seconds(60)))
        << readText(net.log(3));

    net.stop(3, SIGTERM);
    const std::uint64_t altered = alterStoredRoots(net.home(3));
    ASSERT_GE(altered, 8U);
    net.start(3);

    ASSERT_TRUE(waitFor(
        [&] {
            const auto answer = net.get(3, "/readyz");
            return answer && answer->status == 503 &&
                   answer->body.find("halted: diverged") != std::string::npos;
        },
        std::chrono::seconds(60)))
        << readText(net.log(3));
    ASSERT_TRUE(waitFor([&] { return net.metric(3, "gridledger_node_halted") == 1.0; },
                        std::chrono::seconds(10)));
    EXPECT_EQ(net.metric(0, "gridledger_node_halted"), 0.0);
    const auto live = net.get(3, "/livez");
    ASSERT_TRUE(live);
    EXPECT_EQ(live->status, 200U);
    const std::string log = readText(net.log(3));
    EXPECT_NE(log.find("halted: consensus and sync stopped"), std::string::npos);
    EXPECT_NE(log.find("reason=diverged"), std::string::npos);

    // The halted node executes nothing more while the others commit on.
    const std::uint64_t haltedAt = heightOf(net, 3);
    EXPECT_EQ(haltedAt, altered);
    const std::uint64_t others = heightOf(net, 0);
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= others + 10; }, std::chrono::seconds(60)));
    EXPECT_EQ(heightOf(net, 3), haltedAt);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto answer = net.get(i, "/readyz");
        ASSERT_TRUE(answer);
        EXPECT_EQ(answer->status, 200U) << "node " << i << ": " << answer->body;
    }
}

}  // namespace
}  // namespace gridledger::testing::divergence_test
