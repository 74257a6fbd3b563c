// One faulty committee member against three honest validators (real processes, a quorum of 3
// of 4, so every honest one is needed): the faulty member is this test process, holding
// validator 3's real keys and speaking the P2P protocol through the project's own transport.
// Whatever it claims, and whatever proof it forges, the honest validators keep committing.

#include <atomic>
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
        network_->onMessage([this](const NodeId& from, p2p::Message message) {
            if (message.kind == codec::MessageKind::kEpochProofRequest && forgeEpochProofs_) {
                auto request = codec::decodeEpochProofRequest(message.payload);
                if (request) {
                    ++forgedProofsSent_;
                    (void)network_->send(from, forgedEpochProof(request->epoch));
                }
            }
        });
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

    /** From now on, answers every epoch proof request with forgedEpochProof(). */
    void forgeEpochProofs() { forgeEpochProofs_ = true; }
    [[nodiscard]] std::size_t forgedProofsSent() const { return forgedProofsSent_.load(); }

    /**
     * A proof that epoch `epoch` ended at a block a million heights up: the headers are well
     * formed and signed by this member, but every certificate carries its signature alone, one
     * of the three a quorum needs.
     */
    p2p::Message forgedEpochProof(std::uint64_t epoch) const {
        codec::BlockHeader reconfig;
        reconfig.epoch = epoch;
        reconfig.round = 1'000'000;
        reconfig.height = 1'000'000;
        reconfig.author = key_.publicKey();
        const codec::Block block = codec::makeBlock(reconfig, {});
        codec::BlockHeader child;
        child.epoch = epoch;
        child.round = reconfig.round + 1;
        child.height = reconfig.height + 1;
        child.parentId = block.id;
        child.qc = soloQc(epoch, reconfig.round, block.id);
        child.author = key_.publicKey();
        const codec::Block childBlock = codec::makeBlock(child, {});
        codec::EpochProof proof;
        proof.reconfig = codec::ProofHeader{block.header, block.headerBytes, block.id};
        proof.proof = codec::makeCommitProof(childBlock.headerBytes,
                                             soloQc(epoch, child.round, childBlock.id))
                          .value();
        return {codec::MessageKind::kEpochProof, codec::encodeEpochProof(proof)};
    }

  private:
    /** A QC on (round, blockId) with this member's vote only (bit 3 of a 4-member committee). */
    codec::QuorumCert soloQc(std::uint64_t epoch, std::uint64_t round, const Hash256& id) const {
        consensus::KeySigner signer(key_);
        const codec::Vote vote =
            consensus::signVote(signer, std::string(kChainId), epoch, round, id);
        codec::QuorumCert qc;
        qc.epoch = epoch;
        qc.round = round;
        qc.blockId = id;
        qc.signers = Bytes{static_cast<std::uint8_t>(1U << kFaulty)};
        qc.signatures.push_back(vote.signature);
        return qc;
    }

    node::Home home_;
    crypto::SecretKey key_;
    crypto::NodeKey nodeKey_;
    std::vector<NodeId> honest_;
    std::atomic<bool> forgeEpochProofs_{false};
    std::atomic<std::size_t> forgedProofsSent_{0};
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

// A later epoch's message only makes an honest validator ask the sender for the proof that
// ended its epoch; a forged answer is refused and costs the sender, and starts no sync.
TEST_F(ByzantinePeer, AForgedEpochProofStartsNoSync) {
    faulty_->forgeEpochProofs();
    const std::uint64_t before = heightOf(*net_, 1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(12);
    for (std::uint64_t i = 1; std::chrono::steady_clock::now() < until; ++i) {
        // Sends may fail once the honest validators ban the forger: that is the point.
        (void)faulty_->sendAll(faulty_->laterEpochVote(i));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_GE(heightOf(*net_, 1) - before, 10U) << readText(net_->log(0));
    EXPECT_GT(faulty_->forgedProofsSent(), 0U);  // the honest validators did ask
    double refused = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        const std::string log = readText(net_->log(i));
        EXPECT_EQ(log.find("epoch proof epoch="), std::string::npos) << "validator " << i;
        EXPECT_EQ(log.find("sync started"), std::string::npos) << "validator " << i;
        refused += net_->metric(i, "gridledger_p2p_invalid_messages_total").value_or(0);
    }
    EXPECT_GT(refused, 0.0);
}

}  // namespace
}  // namespace gridledger::testing
