// WebSocket subscriptions on a running node (docs/rpc.md, "Subscriptions"): under a stream of
// transfers, a newHeads subscriber receives every executed height exactly once, in order, each
// matching block_get; a subscriber that stops reading is disconnected while the node keeps
// committing and serving the others. An epochSettlements subscriber receives each settled epoch
// once, in order, as the chain's system receipts and epoch_get record it.

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <netinet/tcp.h>
#include <signal.h>

#include <gridledger/codec/tx.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "support/process.h"
#include "support/ws_client.h"

namespace gridledger::rpc_websocket_test {
namespace {

namespace json = boost::json;
using testing::NodeProcess;
using testing::WsClient;

/** Each head notification is about 1.3 KB; the node drops a client with this much queued. */
constexpr std::size_t kSendBufferBytes = std::size_t{64} * 1024;
constexpr std::size_t kMaxSubscriptions = 32;
/** Heights the good subscriber must see while the stream runs. */
constexpr std::uint64_t kHeights = 300;
/** Transfers the seen blocks must carry between them, so that they committed under load. */
constexpr std::uint64_t kMinTransfers = 300;
constexpr auto kTimeout = std::chrono::seconds(240);

std::string field(const json::value& v, std::string_view key) {
    return std::string(v.as_object().at(key).as_string());
}

/** Sets the WebSocket limits of this test in the node's config/node.conf. */
void configureLimits(const NodeProcess& node) {
    const auto path = node.home() / "config" / "node.conf";
    std::string config =
        std::regex_replace(testing::readText(path), std::regex("max_send_buffer_bytes = \\d+"),
                           "max_send_buffer_bytes = " + std::to_string(kSendBufferBytes));
    config = std::regex_replace(config, std::regex("max_subscriptions = \\d+"),
                                "max_subscriptions = " + std::to_string(kMaxSubscriptions));
    std::ofstream(path, std::ios::trunc) << config;
}

/** Streams transfers from the dev key, staying inside the node's nonce window. */
class TransferStream {
  public:
    TransferStream(NodeProcess& node, const crypto::SecretKey& key)
        : node_(node), key_(key), domain_(testing::signingDomainOfHome(node.home())) {
        auto account = node_.call(
            "account_get", json::array{json::string(crypto::addressOf(key_.publicKey()).hex())});
        EXPECT_TRUE(account);
        nonce_ = *parseU64(field(*account, "nonce"));
        validUntil_ = *parseU64(field(*account, "height")) + 100'000;
    }

    /** Submits up to 16 transfers; stops early when the node's nonce window is full. */
    void some() {
        for (int i = 0; i < 16; ++i) {
            Address to;
            to[0] = static_cast<std::uint8_t>(1 + nonce_ % 200);
            codec::TxBody body{"gridledger-dev",
                               key_.publicKey(),
                               nonce_,
                               validUntil_,
                               codec::Transfer{to, u128{1}},
                               testing::kDevFee};
            const auto tx = codec::signTx(body, key_, domain_);
            if (!node_.call("tx_submit", json::array{json::string(toHex(tx.raw))})) {
                return;  // The nonce window is full: wait for blocks.
            }
            ++nonce_;
        }
    }

    [[nodiscard]] std::uint64_t submitted() const { return nonce_; }

  private:
    NodeProcess& node_;
    crypto::SecretKey key_;
    std::string domain_;
    std::uint64_t nonce_ = 0;
    std::uint64_t validUntil_ = 0;
};

std::uint64_t headHeight(const NodeProcess& node) {
    auto head = node.call("chain_getHead", json::array{});
    EXPECT_TRUE(head) << head.error().message;
    return head ? *parseU64(field(*head, "height")) : 0;
}

TEST(RpcWebSocket, NewHeadsArriveOnceInOrderUnderLoadAndASlowReaderIsDroppedAlone) {
    NodeProcess node;
    configureLimits(node);
    auto key = node::Home(node.home()).loadKey("dev");
    ASSERT_TRUE(key);
    node.start();

    // The good subscriber, reading on its own thread: (height, block id) of every notification.
    WsClient good(node.port());
    const std::string goodId = good.subscribe("newHeads", 1);
    ASSERT_FALSE(goodId.empty());
    const std::uint64_t subscribedAt = headHeight(node);
    std::vector<std::pair<std::uint64_t, std::string>> seen;
    std::uint64_t txsSeen = 0;
    std::atomic<bool> readerDone{false};
    std::atomic<bool> goodFailed{false};
    std::thread reader([&] {
        // Reads past kHeights until the blocks seen carried kMinTransfers: each submission waits
        // for the admission journal's sync, and the chain must not outrun the load it measures.
        try {
            while (seen.empty() || seen.back().first < subscribedAt + kHeights + 1 ||
                   txsSeen < kMinTransfers) {
                const json::value message = good.read();
                const json::object& params = message.at("params").as_object();
                if (field(message, "method") != "chain_subscription" ||
                    field(params, "subscription") != goodId) {
                    goodFailed = true;
                    readerDone = true;
                    return;
                }
                const json::value& head = params.at("result");
                seen.emplace_back(*parseU64(field(head, "height")), field(head, "id"));
                txsSeen += head.at("header").at("tx_count").to_number<std::uint64_t>();
            }
        } catch (const std::exception&) {
            goodFailed = true;
        }
        readerDone = true;
    });

    // The slow subscriber: a small receive buffer, every subscription it may hold, never reads.
    WsClient slow(node.port(), 4096);
    for (std::size_t i = 0; i < kMaxSubscriptions; ++i) {
        ASSERT_FALSE(slow.subscribe("newHeads", static_cast<int>(100 + i)).empty());
    }
    const auto established = slow.tcpState();
    EXPECT_EQ(established, TCP_ESTABLISHED);

    TransferStream transfers(node, *key);
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    std::uint64_t droppedAtHeight = 0;
    while (std::chrono::steady_clock::now() < deadline && !goodFailed && !readerDone) {
        transfers.some();
        if (droppedAtHeight == 0 && slow.tcpState() == TCP_CLOSE) {
            droppedAtHeight = headHeight(node);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Keep the chain moving until the slow client is gone too.
    while (std::chrono::steady_clock::now() < deadline && droppedAtHeight == 0) {
        transfers.some();
        if (slow.tcpState() == TCP_CLOSE) {
            droppedAtHeight = headHeight(node);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!readerDone) {
        node.stop(SIGTERM);  // The reader still waits: stopping the node ends its read.
    }
    reader.join();
    ASSERT_FALSE(goodFailed) << "the good subscriber's connection failed";
    ASSERT_GE(seen.size(), kHeights) << "too few notifications before the timeout";
    ASSERT_GT(droppedAtHeight, 0U) << "the client that stopped reading was never disconnected";
    EXPECT_GE(txsSeen, kMinTransfers) << "the blocks seen carried too few transfers";

    // Every height exactly once and in order, each the block the chain has at that height.
    EXPECT_LE(seen.front().first, subscribedAt + 1);
    for (std::size_t i = 1; i < seen.size(); ++i) {
        ASSERT_EQ(seen[i].first, seen[i - 1].first + 1) << "after height " << seen[i - 1].first;
    }
    for (const auto& [height, id] : seen) {
        auto block = node.call("block_get", json::array{json::string(std::to_string(height))});
        ASSERT_TRUE(block) << "height " << height << ": " << block.error().message;
        EXPECT_EQ(field(block->at("header"), "id"), id) << "height " << height;
    }

    // The node kept committing after the drop and still serves: heads move on, reads answer.
    const auto moved = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (headHeight(node) < droppedAtHeight + 3 && std::chrono::steady_clock::now() < moved) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GE(headHeight(node), droppedAtHeight + 3);
    EXPECT_TRUE(node.call("node_getStatus", json::array{}));
    WsClient another(node.port());
    EXPECT_FALSE(another.subscribe("newHeads", 7).empty());
    std::cout << "heights seen " << seen.front().first << ".." << seen.back().first
              << ", slow client dropped at height " << droppedAtHeight << ", transfers in them "
              << txsSeen << " of " << transfers.submitted() << " submitted\n";
}

TEST(RpcWebSocket, EachSettledEpochIsNotifiedOnceInOrderAsTheChainRecordsIt) {
    // Epochs of 2 s (4 slots of 500 ms): a dev chain's empty blocks settle one every 4 blocks.
    constexpr std::uint64_t kEpochMs = 2000;
    constexpr std::size_t kSettlements = 4;
    NodeProcess node;
    const auto genesisPath = node.home() / "config" / "genesis.json";
    json::value genesis = json::parse(testing::readText(genesisPath));
    genesis.at("tokenomics").as_object()["epoch_ms"] = std::to_string(kEpochMs);
    genesis.at("tokenomics").as_object()["slot_ms"] = "500";
    std::ofstream(genesisPath, std::ios::trunc) << json::serialize(genesis);
    const std::uint64_t genesisMs = *parseU64(field(genesis, "genesis_time_ms"));
    node.start();

    WsClient client(node.port());
    const std::string id = client.subscribe("epochSettlements", 1);
    ASSERT_FALSE(id.empty());
    std::vector<json::object> settled;
    while (settled.size() < kSettlements) {
        const json::value message = client.read();  // the node sends one every 2 s
        ASSERT_EQ(field(message.at("params"), "subscription"), id) << json::serialize(message);
        settled.push_back(message.at("params").at("result").as_object());
    }
    for (std::size_t i = 0; i < settled.size(); ++i) {
        const json::object& n = settled[i];
        ASSERT_EQ(field(n, "kind"), "epoch_settled") << json::serialize(n);
        const json::object& attributes = n.at("attributes").as_object();
        const std::uint64_t epoch = *parseU64(field(attributes, "epoch"));
        if (i > 0) {
            EXPECT_EQ(epoch, *parseU64(field(settled[i - 1].at("attributes"), "epoch")) + 1);
        }
        // Epoch e ends (genesis + (e + 1) × epoch length) after its last slot.
        EXPECT_EQ(*parseU64(field(attributes, "boundary_ms")), genesisMs + (epoch + 1) * kEpochMs);
        // The chain's own record of the epoch: settled at that height, by that block's system work.
        auto summary = node.call("epoch_get", json::array{json::string(std::to_string(epoch))});
        ASSERT_TRUE(summary) << summary.error().message;
        EXPECT_EQ(field(*summary, "height"), field(n, "height"));
        auto block = node.call("block_get", json::array{n.at("height")});
        ASSERT_TRUE(block) << block.error().message;
        const json::array& events = block->at("system_receipt").at("events").as_array();
        const json::object stored{{"kind", "epoch_settled"}, {"attributes", attributes}};
        EXPECT_NE(std::find(events.begin(), events.end(), json::value(stored)), events.end())
            << json::serialize(n);
    }
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger::rpc_websocket_test
