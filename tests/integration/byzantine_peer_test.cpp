// One faulty committee member against three honest validators (real processes, a quorum of 3
// of 4, so every honest one is needed): the faulty member is this test process, holding
// validator 3's real keys and speaking the P2P protocol through the project's own transport.
// Whatever it claims, the honest validators keep committing.

#include <csignal>
#include <thread>

#include <gridledger/codec/block.h>
#include <gridledger/codec/p2p.h>
#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>
#include <gridledger/p2p/network.h>

#include "network_support.h"

namespace gridledger::testing {
namespace {

constexpr std::string_view kChainId = "gridledger-testnet";
constexpr std::size_t kFaulty = 3;

/** Validator 3's keys on a P2P endpoint of its own, connected to validators 0, 1 and 2. */
class FaultyMember {
  public:
    explicit FaultyMember(const Testnet& net)
        : home_(net.home(kFaulty)),
          key_(home_.loadKey("validator").value()),
          nodeKey_(home_.loadNodeKey().value()) {
        p2p::Options options;
        for (std::size_t i = 0; i < net.size(); ++i) {
            const NodeId id = node::Home(net.home(i)).loadNodeKey().value().nodeId();
            options.allowed.insert(id);
            if (i != kFaulty) {
                options.persistentPeers.push_back({id, "127.0.0.1", net.p2pPort(i)});
                honest_.push_back(id);
            }
        }
        options.dialExchangedPeers = false;
        network_ = std::make_unique<p2p::Network>(std::move(options), nodeKey_);
        EXPECT_TRUE(network_->start());
    }
    ~FaultyMember() { network_->stop(); }
    FaultyMember(const FaultyMember&) = delete;
    FaultyMember& operator=(const FaultyMember&) = delete;

    bool connectedToAll() const { return network_->connectedPeers().size() == honest_.size(); }

    /** Sends `message` to every honest validator; false if one was not connected. */
    bool sendAll(const p2p::Message& message) {
        bool all = true;
        for (const auto& id : honest_) {
            all = network_->send(id, message).has_value() && all;
        }
        return all;
    }

    /**
     * A proposal validly signed by this member on the epoch's genesis QC (which verifies by
     * convention) that claims a height far above the chain.
     */
    p2p::Message farHeightProposal(const Hash256& genesisId, std::uint64_t round) const {
        codec::BlockHeader header;
        header.round = round;
        header.height = 1'000'000;
        header.parentId = genesisId;
        header.qc = consensus::genesisQc(0, genesisId);
        header.author = key_.publicKey();
        header.timestampMs = 1;
        codec::Block block = codec::makeBlock(header, {});
        consensus::KeySigner signer(key_);
        consensus::signProposal(signer, std::string(kChainId), block);
        return {codec::MessageKind::kProposal, codec::encodeBlock(block)};
    }

    /** A vote of a later epoch: nothing about it can be checked by a node of epoch 0. */
    p2p::Message laterEpochVote(std::uint64_t round) const {
        codec::Vote vote;
        vote.epoch = 7;
        vote.round = round;
        vote.voter = key_.publicKey();
        return {codec::MessageKind::kVote, codec::encodeVote(vote)};
    }

  private:
    node::Home home_;
    crypto::SecretKey key_;
    crypto::NodeKey nodeKey_;
    std::vector<NodeId> honest_;
    std::unique_ptr<p2p::Network> network_;
};

class ByzantinePeer : public ::testing::Test {
  protected:
    void SetUp() override {
        net_ = std::make_unique<Testnet>(quickTestnet(4));
        for (std::size_t i = 0; i < net_->size(); ++i) {
            if (i != kFaulty) {
                net_->start(i);
            }
        }
        ASSERT_TRUE(waitFor([&] { return heightOf(*net_, 1) >= 3; }, std::chrono::seconds(60)));
        faulty_ = std::make_unique<FaultyMember>(*net_);
        ASSERT_TRUE(waitFor([&] { return faulty_->connectedToAll(); }, std::chrono::seconds(30)));
        auto genesis = net_->call(0, "chain_getBlock", json::array{json::string("0")});
        ASSERT_TRUE(genesis);
        genesisId_ = *Hash256::fromHex(field(genesis->as_object().at("header"), "id"));
    }

    /**
     * Sends `attack(i)` to every honest validator every 200 ms for `duration`, and returns how
     * many blocks validator 1 committed meanwhile.
     */
    std::uint64_t heightGainedUnder(const std::function<p2p::Message(std::uint64_t)>& attack,
                                    std::chrono::seconds duration) {
        const std::uint64_t before = heightOf(*net_, 1);
        const auto until = std::chrono::steady_clock::now() + duration;
        for (std::uint64_t i = 1; std::chrono::steady_clock::now() < until; ++i) {
            EXPECT_TRUE(faulty_->sendAll(attack(i)));
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return heightOf(*net_, 1) - before;
    }

    std::unique_ptr<Testnet> net_;
    std::unique_ptr<FaultyMember> faulty_;
    Hash256 genesisId_;
};

// Before: the claimed height put each honest validator into block sync with the faulty member,
// which never answered, and a syncing validator dropped every consensus event: no quorum.
TEST_F(ByzantinePeer, AProposalClaimingAFarHeightDoesNotStopTheHonestValidators) {
    const std::uint64_t gained = heightGainedUnder(
        [&](std::uint64_t i) { return faulty_->farHeightProposal(genesisId_, i); },
        std::chrono::seconds(12));
    EXPECT_GE(gained, 10U) << readText(net_->log(0));
    for (std::size_t i = 0; i < 3; ++i) {
        const auto ready = net_->get(i, "/readyz");
        ASSERT_TRUE(ready);
        EXPECT_EQ(ready->status, 200U) << "validator " << i << ": " << ready->body;
    }
}

// Before: any message of a later epoch, unsigned, did the same once every 5 s.
TEST_F(ByzantinePeer, AMessageOfALaterEpochDoesNotStopTheHonestValidators) {
    const std::uint64_t gained = heightGainedUnder(
        [&](std::uint64_t i) { return faulty_->laterEpochVote(i); }, std::chrono::seconds(12));
    EXPECT_GE(gained, 10U) << readText(net_->log(0));
}

}  // namespace
}  // namespace gridledger::testing
