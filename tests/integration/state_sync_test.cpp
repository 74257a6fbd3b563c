// State sync over P2P (`gridledger start --state-sync`): a full node of a 4-validator network
// starts from the state its peers serve instead of genesis, while one of those peers answers
// every chunk with one byte changed; the chunk is refused and asked of another peer, and the
// node then holds exactly the validators' state and follows the head.

#include <atomic>
#include <iostream>
#include <mutex>
#include <optional>

#include <signal.h>

#include <gridledger/contracts/accounts.h>
#include <gridledger/p2p/network.h>

#include "home.h"
#include "network_support.h"

namespace gridledger::testing::state_sync_test {
namespace {

namespace fs = std::filesystem;

/**
 * Stands in for validator 3 (its node key, its P2P port) and relays the state sync requests of
 * one node to validator 0, changing one byte of every state chunk on the way back.
 */
class ChunkTamperer {
  public:
    ChunkTamperer(const Testnet& net, std::size_t standIn, std::size_t upstream,
                  std::size_t client) {
        p2p::Options options;
        options.listenHost = "127.0.0.1";
        options.listenPort = net.p2pPort(standIn);
        for (std::size_t i = 0; i < net.size(); ++i) {
            options.allowed.insert(node::Home(net.home(i)).loadNodeKey().value().nodeId());
        }
        upstream_ = node::Home(net.home(upstream)).loadNodeKey().value().nodeId();
        client_ = node::Home(net.home(client)).loadNodeKey().value().nodeId();
        options.persistentPeers.push_back({upstream_, "127.0.0.1", net.p2pPort(upstream)});
        options.dialExchangedPeers = false;
        network_ = std::make_unique<p2p::Network>(
            std::move(options), node::Home(net.home(standIn)).loadNodeKey().value());
        network_->onMessage(
            [this](const NodeId& from, p2p::Message message) { relay(from, std::move(message)); });
        started_ = network_->start().has_value();
    }
    ~ChunkTamperer() { network_->stop(); }
    ChunkTamperer(const ChunkTamperer&) = delete;
    ChunkTamperer& operator=(const ChunkTamperer&) = delete;

    [[nodiscard]] bool started() const { return started_; }
    [[nodiscard]] bool connectedUpstream() const {
        const auto peers = network_->connectedPeers();
        return std::find(peers.begin(), peers.end(), upstream_) != peers.end();
    }
    [[nodiscard]] std::size_t tampered() const { return tampered_.load(); }

  private:
    void relay(const NodeId& from, p2p::Message message) {
        using codec::MessageKind;
        if (from == client_ && (message.kind == MessageKind::kStateManifestRequest ||
                                message.kind == MessageKind::kStateChunkRequest)) {
            (void)network_->send(upstream_, message);
        } else if (from == upstream_ && message.kind == MessageKind::kStateManifest) {
            (void)network_->send(client_, message);
        } else if (from == upstream_ && message.kind == MessageKind::kStateChunk) {
            auto chunk = codec::decodeStateChunk(message.payload);
            if (chunk && !chunk->range.empty()) {
                chunk->range[chunk->range.size() / 2] ^= 0x01U;
                ++tampered_;
                message.payload = codec::encodeStateChunk(*chunk);
            }
            (void)network_->send(client_, message);
        }
    }

    NodeId upstream_;
    NodeId client_;
    std::unique_ptr<p2p::Network> network_;
    std::atomic<std::size_t> tampered_{0};
    bool started_ = false;
};

TEST(StateSync, AFullNodeStartsFromItsPeersStateAndRefusesATamperedChunk) {
    TestnetOptions options = quickTestnet(4);
    options.fullNodes = 1;
    Testnet net(options);
    constexpr std::size_t kFull = 4;
    constexpr std::size_t kTampering = 3;
    for (std::size_t i = 0; i < 4; ++i) {
        net.start(i);
    }
    auto dev = node::Home(net.home(0)).loadKey("dev");
    ASSERT_TRUE(dev);
    Sender sender(net, 0, *dev, std::string(kTestnetChainId), 13);
    ASSERT_TRUE(sender.resync());
    ASSERT_TRUE(sendUntil(net, sender, 60, 80));

    // Validator 3's place is taken by a peer that changes one byte of every chunk it relays; the
    // other three validators go on committing.
    net.stop(kTampering, SIGTERM);
    ChunkTamperer tamperer(net, kTampering, 0, kFull);
    ASSERT_TRUE(tamperer.started());
    ASSERT_TRUE(waitFor([&] { return tamperer.connectedUpstream(); }, std::chrono::seconds(30)));

    // Small chunks, so that every peer is asked for some.
    net.start(kFull, {"--state-sync", "--state-sync-chunk-keys", "8"});
    const std::string log = readText(net.log(kFull));
    for (const auto& line : {std::regex("[^\n]*state sync[^\n]*")}) {
        for (auto it = std::sregex_iterator(log.begin(), log.end(), line);
             it != std::sregex_iterator(); ++it) {
            std::cout << it->str() << "\n";
        }
    }
    EXPECT_GT(tamperer.tampered(), 0U) << log;
    EXPECT_TRUE(std::regex_search(
        log, std::regex("state sync: chunk \\d+ from peer=0x[0-9a-f]+ refused: state range")))
        << log;
    std::smatch fetched;
    ASSERT_TRUE(std::regex_search(
        log, fetched, std::regex(R"(state sync fetched height=(\d+) chunks=(\d+) keys=(\d+))")))
        << log;
    const std::uint64_t base = std::stoull(fetched[1].str());
    EXPECT_GT(std::stoull(fetched[2].str()), 3U);
    auto status = net.call(kFull, "node_getStatus", json::array{});
    ASSERT_TRUE(status);
    EXPECT_EQ(field(*status, "first_height"), std::to_string(base));

    // It follows the head while transfers go on; at a height both executed it has the same
    // block and the same state root as a validator, and proves the same balance.
    const auto followed = followedHead(net, kFull, 0, sender);
    ASSERT_TRUE(followed) << readText(net.log(kFull));
    const std::uint64_t at = *followed;
    ASSERT_GE(heightOf(net, 0), at);
    EXPECT_EQ(blockOf(net, kFull, at), blockOf(net, 0, at));
    const json::array params{
        json::string(contracts::accountKey(crypto::addressOf(dev->publicKey())).hex()),
        json::string(std::to_string(at))};
    EXPECT_EQ(net.call(kFull, "state_getProof", params).value(),
              net.call(0, "state_getProof", params).value());
}

}  // namespace
}  // namespace gridledger::testing::state_sync_test
