// The node's Prometheus endpoint reports what the chain did, under the gridledger_ prefix.

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>
#include <utility>

#include <gtest/gtest.h>
#include <signal.h>

#include <gridledger/codec/tx.h>

#include "home.h"
#include "network_support.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::metrics_test {
namespace {

/** The value of an unlabelled sample `name` in Prometheus text, or -1 when absent. */
double sample(const std::string& text, const std::string& name) {
    std::smatch match;
    if (std::regex_search(text, match, std::regex("\n" + name + " ([0-9.e+]+)\n"))) {
        return std::stod(match[1]);
    }
    return -1;
}

TEST(Metrics, ScrapeShowsTheExecutedHeightAndCommittedBlocks) {
    testing::NodeProcess node;
    node.start();
    std::string text;
    for (int i = 0; i < 100; ++i) {
        rpc::test::HttpTestClient client(node.metricsPort());
        const auto reply = client.get("/metrics");
        ASSERT_FALSE(reply.ec) << reply.ec.message();
        ASSERT_EQ(reply.status, 200U);
        text = reply.body;
        if (sample(text, "gridledger_executed_height") >= 3) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GE(sample(text, "gridledger_executed_height"), 3) << text;
    EXPECT_GE(sample(text, "gridledger_committed_blocks_total"), 3) << text;
    EXPECT_GE(sample(text, "gridledger_consensus_round"), 3) << text;
    EXPECT_EQ(sample(text, "gridledger_failed_txs_total"), 0) << text;
    EXPECT_GE(sample(text, "gridledger_consensus_timeouts_total"), 0) << text;
    EXPECT_NE(text.find("gridledger_block_execution_seconds_bucket"), std::string::npos);
    node.stop(SIGTERM);
}

// A lone validator's round writes its proposal, its safety data (its vote), the QC, the execution
// of the block the QC commits and the consensus store's pruning: one fsync of the chain database
// makes them all durable, the one that the vote needs anyway. A proposal fsynced before it is
// broadcast, or an execution fsynced on its own, would show as two or three fsyncs per round.
TEST(Metrics, ALoneValidatorFsyncsItsChainDatabaseOncePerRound) {
    testing::NodeProcess node;
    node.start();
    double round = 0;
    double fsyncs = 0;
    for (int i = 0; i < 200 && round < 20; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        rpc::test::HttpTestClient client(node.metricsPort());
        const auto reply = client.get("/metrics");
        ASSERT_FALSE(reply.ec) << reply.ec.message();
        fsyncs = sample(reply.body, "gridledger_chain_fsyncs_total");
        round = sample(reply.body, "gridledger_consensus_round");
    }
    ASSERT_GE(round, 20) << "the chain did not reach round 20";
    // The genesis write is fsynced too; each round's vote is, whether or not it formed the QC yet.
    EXPECT_GE(fsyncs, round - 2);
    EXPECT_LE(fsyncs, round + 2);
    node.stop(SIGTERM);
}

/** The (epoch, round) pairs of the timeouts a node logged ("signed timeout epoch=E round=R"),
 * and how many lines logged one. */
std::pair<std::set<std::pair<std::uint64_t, std::uint64_t>>, std::size_t> loggedTimeouts(
    const std::filesystem::path& log) {
    static const std::regex kTimeout(R"(signed timeout epoch=(\d+) round=(\d+))");
    std::set<std::pair<std::uint64_t, std::uint64_t>> rounds;
    std::size_t lines = 0;
    const std::string text = testing::readText(log);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kTimeout);
         it != std::sregex_iterator(); ++it) {
        rounds.insert({std::stoull((*it)[1].str()), std::stoull((*it)[2].str())});
        ++lines;
    }
    return {rounds, lines};
}

// With two of 4 validators down no quorum forms: each live validator times out its round and,
// since no timeout certificate forms either, re-sends its timeout at every fire of the round's
// timer. gridledger_consensus_timeouts_total counts each round once: it equals the number of
// distinct rounds the node logged a signed timeout for, fewer than the timeouts it logged. (With
// one validator down, only the rounds it leads time out, and leader reputation may already have
// taken it out of the leader line, so that it leads none for a while: not a state to wait for.)
TEST(Metrics, RoundTimeoutsCountEachRoundAValidatorTimedOutOnce) {
    using namespace std::chrono_literals;
    auto options = testing::quickTestnet(4);
    options.logLevel = "debug";
    testing::Testnet net(options);
    net.startAll();
    ASSERT_TRUE(testing::waitFor([&] { return testing::heightOf(net, 0) >= 5; }, 30s));
    const auto timeouts = [&net] {
        return net.metric(0, "gridledger_consensus_timeouts_total").value_or(-1);
    };
    const double before = timeouts();
    ASSERT_GE(before, 0);

    net.stop(3, SIGKILL);
    net.stop(2, SIGKILL);
    EXPECT_TRUE(testing::waitFor([&] { return timeouts() > before; }, 30s))
        << "no round timed out on node 0 with nodes 2 and 3 down";
    // Several fires of the stuck round's timer (500 ms, then longer).
    std::this_thread::sleep_for(testing::scaledWait(5s));
    const double counted = timeouts();
    net.stop(0, SIGTERM);
    const auto [rounds, lines] = loggedTimeouts(net.log(0));
    EXPECT_EQ(counted, static_cast<double>(rounds.size()));
    EXPECT_GT(lines, rounds.size()) << "no timeout was re-sent: the test proves nothing";
}

// Admission verifies a transaction's signature and remembers the verdict, which the block's
// execution then takes: each signature counts once in gridledger_tx_signatures_verified_total,
// a refused forgery's too.
TEST(Metrics, EachTransactionSignatureIsVerifiedOnceFromAdmissionToExecution) {
    namespace json = boost::json;
    testing::NodeProcess node;
    node.start();
    const auto dev = node::Home(node.home()).loadKey("dev");
    ASSERT_TRUE(dev) << dev.error().message;
    const std::string domain = testing::signingDomainOfHome(node.home());
    const auto status = node.call("node_getStatus", json::array{});
    ASSERT_TRUE(status) << status.error().message;
    const std::uint64_t validUntil =
        parseU64(testing::field(*status, "executed_height")).value_or(0) + 1'000;
    std::vector<std::string> hashes;
    for (std::uint64_t nonce = 0; nonce < 4; ++nonce) {
        Address to;
        to[0] = static_cast<std::uint8_t>(nonce + 1);
        const codec::TxBody body{
            "gridledger-dev", dev->publicKey(), nonce, validUntil, codec::Transfer{to, u128{1}},
            testing::kDevFee};
        codec::SignedTx tx = codec::signTx(body, *dev, domain);
        if (nonce == 3) {
            tx.raw.back() ^= 0x01U;  // the signature's last byte: refused as a bad signature
        }
        const auto submitted = node.call("tx_submit", json::array{json::string(toHex(tx.raw))});
        EXPECT_EQ(submitted.has_value(), nonce < 3)
            << (submitted ? std::string("admitted") : submitted.error().message);
        if (nonce < 3) {
            hashes.push_back(tx.hash.hex());
        }
    }
    const auto committed = [&] {
        return std::ranges::all_of(hashes, [&](const std::string& hash) {
            const auto tx = node.call("tx_get", json::array{json::string(hash)});
            return tx && tx->as_object().contains("status") &&
                   testing::field(*tx, "status") == "committed";
        });
    };
    for (int i = 0; i < 100 && !committed(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(committed()) << "the three transfers did not commit";
    // The metric follows the consensus steps: a few more blocks carry it past the commit.
    double verified = -1;
    for (int i = 0; i < 50 && verified < 4; ++i) {
        verified =
            testing::scrapeMetric(node.metricsPort(), "gridledger_tx_signatures_verified_total")
                .value_or(-1);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(verified, 4);
    node.stop(SIGTERM);
}

}  // namespace
}  // namespace gridledger::metrics_test
