// Four validators as real processes on 127.0.0.1: they commit a stream of transfers, survive
// SIGKILLs of one and of two validators without forking, catch up after a restart, never sign
// two votes for one round, and agree on every block and state root.

#include <algorithm>

#include <signal.h>

#include "home.h"
#include "network_support.h"

namespace gridledger::testing::network_test {
namespace {

constexpr std::string_view kChainId = "gridledger-testnet";

/** Funds each of `to` from the dev account (nonces 0, 1, …) through node 0 and waits. */
void fund(const Testnet& net, const std::vector<Address>& to) {
    auto dev = node::Home(net.home(0)).loadKey("dev");
    ASSERT_TRUE(dev);
    const std::string domain = testing::signingDomainOfHome(net.home(0));
    std::vector<std::string> hashes;
    for (std::uint64_t n = 0; n < to.size(); ++n) {
        codec::TxBody body{std::string(kChainId),
                           dev->publicKey(),
                           n,
                           50'000,
                           codec::Transfer{to[n], u128{1'000'000'000'000'000'000ULL}},
                           testing::kDevFee};
        const auto tx = codec::signTx(body, *dev, domain);
        auto submitted = net.call(0, "tx_submit", json::array{json::string(toHex(tx.raw))});
        ASSERT_TRUE(submitted) << submitted.error().message;
        hashes.push_back(tx.hash.hex());
    }
    ASSERT_TRUE(waitFor(
        [&] {
            return std::all_of(hashes.begin(), hashes.end(), [&](const std::string& hash) {
                auto tx = net.call(0, "tx_get", json::array{json::string(hash)});
                return tx && field(*tx, "status") == "committed";
            });
        },
        std::chrono::seconds(60)));
}

/** Streams transfers through every sender whose node runs, until `done` holds or `timeout`. */
bool streamUntil(Testnet& net, std::vector<Sender>& senders, const std::function<bool()>& done,
                 std::chrono::seconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        for (auto& sender : senders) {
            if (net.running(sender.node())) {
                sender.step(4);
            }
        }
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
}

void streamFor(Testnet& net, std::vector<Sender>& senders, std::chrono::seconds duration) {
    const auto until = std::chrono::steady_clock::now() + duration;
    streamUntil(
        net, senders, [&] { return std::chrono::steady_clock::now() >= until; },
        duration + std::chrono::seconds(1));
}

std::uint64_t maxHeight(const Testnet& net, const std::vector<std::size_t>& nodes) {
    std::uint64_t top = 0;
    for (const auto i : nodes) {
        top = std::max(top, heightOf(net, i));
    }
    return top;
}

TEST(FourValidators, AgreeUnderLoadSurviveCrashesAndCatchUp) {
    TestnetOptions options;
    options.validators = 4;
    options.roundTimeoutMs = 500;
    options.emptyBlockIntervalMs = 50;
    options.logLevel = "debug";
    Testnet net(options);
    net.startAll();
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= 3; }, std::chrono::seconds(60)));

    std::vector<Sender> senders;
    std::vector<Address> accounts;
    for (std::size_t i = 0; i < 4; ++i) {
        senders.emplace_back(net, i, crypto::SecretKey::generate(), std::string(kChainId), i + 1);
        accounts.push_back(senders.back().address());
    }
    ASSERT_NO_FATAL_FAILURE(fund(net, accounts));
    for (auto& sender : senders) {
        ASSERT_TRUE(sender.resync());
    }

    // All four under load.
    streamFor(net, senders, std::chrono::seconds(6));

    // SIGKILL one validator: the other three keep committing.
    net.stop(3, SIGKILL);
    const std::uint64_t atKill = maxHeight(net, {0, 1, 2});
    ASSERT_TRUE(streamUntil(
        net, senders,
        [&] { return heightOf(net, 0) >= atKill + 10 && heightOf(net, 1) >= atKill + 10; },
        std::chrono::seconds(60)))
        << "three validators stopped committing";

    // Restarted, it catches up and votes again.
    const auto votesBefore = loggedVotes(net.log(3)).size();
    net.start(3);
    ASSERT_TRUE(senders[3].resync());
    const std::uint64_t atRestart = maxHeight(net, {0, 1, 2});
    ASSERT_TRUE(streamUntil(
        net, senders, [&] { return heightOf(net, 3) >= atRestart + 5; }, std::chrono::seconds(90)))
        << "the restarted validator did not catch up";
    ASSERT_TRUE(waitFor([&] { return loggedVotes(net.log(3)).size() > votesBefore + 5; },
                        std::chrono::seconds(30)))
        << "the restarted validator does not vote";

    // SIGKILL two: the chain stops (2 of 4 make no quorum) without forking.
    net.stop(2, SIGKILL);
    net.stop(3, SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // what was certified may still commit
    const std::uint64_t stalled0 = heightOf(net, 0);
    const std::uint64_t stalled1 = heightOf(net, 1);
    streamFor(net, senders, std::chrono::seconds(5));
    EXPECT_EQ(heightOf(net, 0), stalled0) << "the chain went on without a quorum";
    EXPECT_EQ(heightOf(net, 1), stalled1) << "the chain went on without a quorum";

    // Restart them: it resumes.
    net.start(2);
    net.start(3);
    ASSERT_TRUE(senders[2].resync());
    ASSERT_TRUE(senders[3].resync());
    const std::uint64_t stalled = std::max(stalled0, stalled1);
    ASSERT_TRUE(streamUntil(
        net, senders,
        [&] {
            return std::all_of(senders.begin(), senders.end(), [&](const Sender& s) {
                return heightOf(net, s.node()) >= stalled + 10;
            });
        },
        std::chrono::seconds(90)))
        << "the chain did not resume after the restarts";
    streamFor(net, senders, std::chrono::seconds(3));

    // Every node holds the same block and state root at every height.
    std::uint64_t common = 0;
    ASSERT_TRUE(waitFor(
        [&] {
            common = heightOf(net, 0);
            for (std::size_t i = 1; i < 4; ++i) {
                common = std::min(common, heightOf(net, i));
            }
            return common > stalled + 10;
        },
        std::chrono::seconds(30)));
    expectSameChain(net, {0, 1, 2, 3}, common);

    // Every tx that a node reported committed is committed at the same height on all nodes.
    std::size_t committed = 0;
    for (const auto& sender : senders) {
        for (const auto& [hash, height] : sender.committed()) {
            ++committed;
            for (std::size_t i = 0; i < 4; ++i) {
                std::string got;
                ASSERT_TRUE(waitFor(
                    [&] {
                        auto tx = net.call(i, "tx_get", json::array{json::string(hash)});
                        got = tx && field(*tx, "status") == "committed" ? field(*tx, "height") : "";
                        return !got.empty();
                    },
                    std::chrono::seconds(30)))
                    << "tx " << hash << " missing on node " << i;
                EXPECT_EQ(got, height) << "tx " << hash << " on node " << i;
            }
        }
    }
    EXPECT_GT(committed, 100U) << "the load generator committed too little to prove anything";

    // No validator signed two different votes for one round, across all its restarts.
    std::size_t votes = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        for (const auto& [round, blocks] : loggedVotes(net.log(i))) {
            ++votes;
            EXPECT_EQ(blocks.size(), 1U)
                << "validator " << i << " voted for " << blocks.size() << " blocks in epoch "
                << round.first << " round " << round.second;
        }
    }
    EXPECT_GT(votes, 4 * common / 2) << "too few votes logged to check";
    std::printf(
        "[network] 4 validators, %llu common heights, %zu committed txs, %zu votes checked\n",
        static_cast<unsigned long long>(common), committed, votes);
    net.stopAll(SIGTERM);
}

}  // namespace
}  // namespace gridledger::testing::network_test
