// What nodes outside the validator set can and cannot do to a 4-validator network of real
// processes: a full node with a key that is not a validator's follows the chain without ever
// voting, and after being stopped for 2,000 blocks catches up by block sync; a peer with an
// allowed node id that sends forged consensus messages is banned; a peer with an unknown node id
// is refused at the handshake; garbage and oversized frames get the peer dropped. Through all of
// it the validators keep committing the same chain.

#include <regex>

#include <signal.h>

#include <gridledger/consensus/committee.h>
#include <gridledger/consensus/signer.h>
#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "network_support.h"
#include "unit/p2p/test_clients.h"

namespace gridledger::testing::outsider_test {
namespace {

using p2p::test::TlsTestClient;

codec::NetMessage voteMessage(const std::string& domain, const crypto::SecretKey& signer,
                              const PubKey& claimed, std::uint64_t round) {
    codec::Vote vote;
    vote.epoch = 1;
    vote.round = round;
    vote.blockId = crypto::sha256(asBytes("no such block"));
    vote.voter = claimed;
    vote.signature = signer.sign(consensus::voteDigest(domain, 1, round, vote.blockId));
    return {codec::MessageKind::kVote, codec::encodeVote(vote)};
}

codec::NetMessage proposalMessage(const std::string& domain, const crypto::SecretKey& author,
                                  std::uint64_t round) {
    codec::BlockHeader header;
    header.epoch = 1;
    header.round = round;
    header.height = round;
    header.author = author.publicKey();
    header.timestampMs = 1;
    codec::Block block = codec::makeBlock(header, {});
    consensus::KeySigner signer(author);
    consensus::signProposal(signer, domain, block);
    return {codec::MessageKind::kProposal, codec::encodeBlock(block)};
}

TEST(Outsiders, FollowWithoutInfluenceGetDroppedForBadFramesAndCatchUpTwoThousandBlocks) {
    TestnetOptions options;
    options.validators = 4;
    options.roundTimeoutMs = 400;
    options.emptyBlockIntervalMs = 10;
    options.logLevel = "debug";
    Testnet net(options);

    // A full node: its own home and keys, the network's genesis, the validators as peers.
    TempDir outsiderDir;
    const auto outsiderHome = outsiderDir.path() / "home";
    ASSERT_EQ(runCommand(net.bin(), {"init", "--home", outsiderHome.string()},
                         outsiderDir.path() / "init.log"),
              0);
    std::filesystem::copy_file(net.home(0) / "config" / "genesis.json",
                               outsiderHome / "config" / "genesis.json",
                               std::filesystem::copy_options::overwrite_existing);
    auto outsiderNode = node::Home(outsiderHome).loadNodeKey();
    ASSERT_TRUE(outsiderNode);
    const auto ports = freePortRange(4);
    const auto conf = outsiderHome / "config" / "node.conf";
    std::string peers;
    for (std::size_t i = 0; i < 4; ++i) {
        auto key = node::Home(net.home(i)).loadNodeKey();
        ASSERT_TRUE(key);
        peers += (i > 0 ? "," : "") + key->nodeId().hex() +
                 "@127.0.0.1:" + std::to_string(net.p2pPort(i));
    }
    // Three more allowed ids for hand-driven TLS peers, and one that no node allows.
    const auto forger = crypto::NodeKey::generate();
    const auto garbler = crypto::NodeKey::generate();
    const auto oversizer = crypto::NodeKey::generate();
    const auto stranger = crypto::NodeKey::generate();
    const std::string allowed = outsiderNode->nodeId().hex() + "," + forger.nodeId().hex() + "," +
                                garbler.nodeId().hex() + "," + oversizer.nodeId().hex();
    for (std::size_t i = 0; i < 4; ++i) {
        ASSERT_NO_FATAL_FAILURE(
            setConfig(net.home(i) / "config" / "node.conf", "allowed_nodes", allowed));
    }
    ASSERT_NO_FATAL_FAILURE(setConfig(conf, "persistent_peers", peers));
    ASSERT_NO_FATAL_FAILURE(setConfig(conf, "level", "debug"));
    ASSERT_NO_FATAL_FAILURE(setPorts(conf, ports));
    node::Endpoint outsiderRpc{"127.0.0.1", ports};
    // Only the full node's own answer counts: while it is stopped, a node of a test running
    // beside this one may have taken its port.
    const std::string outsiderId = outsiderNode->nodeId().hex();
    const auto outsiderHeight = [&]() -> std::uint64_t {
        auto status = node::callRpc(outsiderRpc, "node_getStatus", json::array{});
        if (!status || field(*status, "node_id") != outsiderId) {
            return 0;
        }
        return parseU64(field(*status, "executed_height")).value_or(0);
    };
    const auto outsiderLog = outsiderDir.path() / "node.log";
    auto startOutsider = [&] {
        auto process = std::make_unique<Process>(
            net.bin(), std::vector<std::string>{"start", "--home", outsiderHome.string()},
            outsiderLog);
        EXPECT_TRUE(waitFor([&] { return outsiderHeight() > 0 || !process->running(); },
                            std::chrono::seconds(30)));
        EXPECT_TRUE(process->running()) << readText(outsiderLog);
        return process;
    };

    net.startAll();
    auto outsider = startOutsider();
    ASSERT_TRUE(waitFor([&] { return outsiderHeight() >= 20; }, std::chrono::seconds(60)))
        << readText(outsiderLog);

    // An allowed peer forging consensus messages: a proposal by a non-member, a vote by a
    // non-member, a vote claiming a validator's key with another key's signature. Each fails the
    // checks; together they reach the ban threshold and the peer is dropped.
    const auto nonMember = crypto::SecretKey::generate();
    auto validatorKey = node::Home(net.home(1)).loadKey("validator");
    ASSERT_TRUE(validatorKey);
    {
        TlsTestClient client(forger, net.p2pPort(0));
        ASSERT_TRUE(client.join());
        const std::uint64_t round = 1'000;
        const std::string domain = signingDomainOfHome(net.home(0));
        for (const auto& message :
             {proposalMessage(domain, nonMember, round),
              voteMessage(domain, nonMember, nonMember.publicKey(), round),
              voteMessage(domain, nonMember, validatorKey->publicKey(), round),
              codec::NetMessage{codec::MessageKind::kTimeout, Bytes{0xde, 0xad}}}) {
            ASSERT_FALSE(client.writeEnvelope(message));
        }
        EXPECT_TRUE(client.waitClosed()) << "a peer sending forged messages was not dropped";
    }
    EXPECT_TRUE(waitFor([&] { return net.metric(0, "gridledger_p2p_bans_total").value_or(0) >= 1; },
                        std::chrono::seconds(10)));
    EXPECT_GE(net.metric(0, "gridledger_p2p_invalid_messages_total").value_or(0), 4);

    // An unknown node id is refused at the handshake.
    const double failedBefore = net.metric(0, "gridledger_p2p_handshakes_failed_total").value_or(0);
    {
        TlsTestClient client(stranger, net.p2pPort(0));
        EXPECT_FALSE(client.join()) << "a peer with an unknown node id was let in";
    }
    EXPECT_TRUE(waitFor(
        [&] {
            return net.metric(0, "gridledger_p2p_handshakes_failed_total").value_or(0) >
                   failedBefore;
        },
        std::chrono::seconds(10)));

    // A garbage frame and an oversized frame each get their peer dropped.
    {
        TlsTestClient client(garbler, net.p2pPort(0));
        ASSERT_TRUE(client.join());
        ASSERT_FALSE(
            client.writeRaw(Bytes{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
        EXPECT_TRUE(client.waitClosed()) << "a peer sending a garbage frame was not dropped";
    }
    {
        TlsTestClient client(oversizer, net.p2pPort(0));
        ASSERT_TRUE(client.join());
        ASSERT_FALSE(client.writeRaw(Bytes{0x7f, 0xff, 0xff, 0xff, 0x00}));
        EXPECT_TRUE(client.waitClosed()) << "a peer announcing an oversized frame was not dropped";
    }
    EXPECT_TRUE(waitFor(
        [&] { return net.metric(0, "gridledger_p2p_frames_rejected_total").value_or(0) >= 2; },
        std::chrono::seconds(10)));

    // The validators kept committing; the full node follows the same chain and never voted.
    const std::uint64_t afterAttacks = heightOf(net, 0);
    ASSERT_TRUE(
        waitFor([&] { return outsiderHeight() >= afterAttacks + 20; }, std::chrono::seconds(60)));
    EXPECT_TRUE(loggedVotes(outsiderLog).empty()) << "a node outside the validator set voted";

    // Stopped for 2,000 blocks, the full node catches up by block sync and logs its rate.
    outsider->stop(SIGTERM);
    const std::uint64_t stoppedAt = outsiderHeight() > 0 ? outsiderHeight() : afterAttacks + 20;
    const std::uint64_t target = heightOf(net, 0) + 2'000;
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= target; }, std::chrono::seconds(300)))
        << "the validators made too few blocks: " << heightOf(net, 0);
    // The log is appended to: what the restarted node logs starts here (its first start may
    // have synced too, when the validators were ahead of it).
    const std::size_t restartLog = readText(outsiderLog).size();
    // Ports chosen now: the ones it had were free for anyone while it was stopped.
    outsiderRpc.port = freePortRange(4);
    ASSERT_NO_FATAL_FAILURE(setPorts(conf, outsiderRpc.port));
    outsider = startOutsider();
    const std::uint64_t head = heightOf(net, 0);
    ASSERT_TRUE(waitFor([&] { return outsiderHeight() >= head; }, std::chrono::seconds(120)))
        << "the full node did not catch up from " << stoppedAt << " to " << head << " (it is at "
        << outsiderHeight() << "); its log since the restart ends:\n"
        << lastChars(readText(outsiderLog).substr(restartLog), 30'000);
    static const std::regex kSynced(
        R"(sync finished blocks=(\d+) from_height=(\d+) to_height=(\d+) seconds=([0-9.]+) rate_blocks_per_s=([0-9.]+))");
    // Sync ends when it reaches the head its peer reports; blocks keep coming meanwhile.
    std::string log;
    std::smatch synced;
    ASSERT_TRUE(waitFor(
        [&] {
            log = readText(outsiderLog).substr(restartLog);
            return std::regex_search(log, synced, kSynced);
        },
        std::chrono::seconds(120)))
        << "no sync rate in the log";
    EXPECT_GE(std::stoull(synced[1].str()), 2'000U);
    std::printf("[sync] %s blocks from height %s to %s in %s s: %s blocks/s\n",
                synced[1].str().c_str(), synced[2].str().c_str(), synced[3].str().c_str(),
                synced[4].str().c_str(), synced[5].str().c_str());

    // The validators and the full node hold one chain.
    const std::uint64_t common = std::min(heightOf(net, 0), outsiderHeight());
    for (std::uint64_t h = 1; h <= common; ++h) {
        auto mine =
            node::callRpc(outsiderRpc, "block_get", json::array{json::string(std::to_string(h))});
        ASSERT_TRUE(mine) << "height " << h;
        ASSERT_EQ(
            std::make_pair(field(mine->as_object().at("header"), "id"), field(*mine, "state_root")),
            blockOf(net, 0, h))
            << "height " << h;
    }
    expectSameChain(net, {0, 1, 2, 3}, std::min(common, heightOf(net, 3)));
    outsider->stop(SIGTERM);
    net.stopAll(SIGTERM);
}

}  // namespace
}  // namespace gridledger::testing::outsider_test
