// One faulty committee member against three honest validators (real processes, a quorum of 3
// of 4, so every honest one is needed): the faulty member is this test process, holding
// validator 3's real keys and speaking the P2P protocol through the project's own transport.
// Whatever it claims, and whatever proof it forges, the honest validators keep committing.

#include <csignal>
#include <thread>

#include "network_support.h"
#include "support/faulty_member.h"

namespace gridledger::testing::byzantine_peer_test {
namespace {

constexpr std::size_t kFaulty = 3;

class ByzantinePeer : public ::testing::Test {
  protected:
    /** Leader reputation on (the default); off where the member must keep leading rounds. */
    [[nodiscard]] virtual TestnetOptions testnetOptions() const { return quickTestnet(4); }

    void SetUp() override {
        net_ = std::make_unique<Testnet>(testnetOptions());
        for (std::size_t i = 0; i < net_->size(); ++i) {
            if (i != kFaulty) {
                net_->start(i);
            }
        }
        ASSERT_TRUE(waitFor([&] { return heightOf(*net_, 1) >= 3; }, std::chrono::seconds(60)));
        faulty_ = std::make_unique<FaultyMember>(*net_, kFaulty);
        ASSERT_TRUE(faulty_->started());
        ASSERT_TRUE(waitFor([&] { return faulty_->connectedToAll(); }, std::chrono::seconds(30)));
        auto genesis = net_->call(0, "block_get", json::array{json::string("0")});
        ASSERT_TRUE(genesis);
        genesisId_ = *Hash256::fromHex(field(genesis->as_object().at("header"), "id"));
        auto status = net_->call(0, "node_getStatus", json::array{});
        ASSERT_TRUE(status);
        epoch_ = parseU64(field(*status, "consensus_epoch")).value_or(0);
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
    std::uint64_t epoch_ = 0;
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

/** Without leader reputation, which would stop scheduling the silent member after a few blocks:
 * its rounds keep timing out. */
class ByzantineLeader : public ByzantinePeer {
  protected:
    [[nodiscard]] TestnetOptions testnetOptions() const override {
        TestnetOptions options = quickTestnet(4);
        options.leaderReputationWindow = 0;
        return options;
    }
};

// The faulty member leads its rounds with nothing, so they time out, and it hears the honest
// timeouts: it assembles TCs from them and its own claim of a QC one round below, with a high QC
// of a lower round (every TC it sends, not only those where no honest signer had that QC). A
// voter that trusted such a TC's highest QC round, where it is a lie, would refuse the next
// proposals.
TEST_F(ByzantineLeader, ATcThatDoesNotProveItsHighestQcDoesNotStopTheHonestValidators) {
    std::size_t forged = 0;
    const std::uint64_t before = heightOf(*net_, 1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(12);
    while (std::chrono::steady_clock::now() < until) {
        if (auto tc = faulty_->forgedTc()) {
            forged += faulty_->sendAll(*tc) ? 1U : 0U;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GE(heightOf(*net_, 1) - before, 10U) << readText(net_->log(0));
    EXPECT_GT(forged, 0U);  // the member did hear honest timeouts and sent forged TCs
    double refused = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        refused += net_->metric(i, "gridledger_p2p_invalid_messages_total").value_or(0);
    }
    EXPECT_GT(refused, 0.0);
}

// A signed proposal carrying 3 MiB of transactions, above max_block_bytes, sent again and again:
// refused before anything is stored or verified, and the chain goes on.
TEST_F(ByzantinePeer, AnOversizedProposalDoesNotStopTheHonestValidators) {
    const std::uint64_t gained = heightGainedUnder(
        [&](std::uint64_t i) {
            return faulty_->oversizedProposal(genesisId_, epoch_, i, 3U << 20U);
        },
        std::chrono::seconds(12));
    EXPECT_GE(gained, 10U) << readText(net_->log(0));
}

}  // namespace
}  // namespace gridledger::testing::byzantine_peer_test
