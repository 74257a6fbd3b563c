// Kills a 1-validator node with SIGKILL at random moments while a client streams transfers, and
// checks after every restart that nothing the node reported committed was lost or changed, and
// in the end that every transfer the node acknowledged as pending committed (the admission
// journal brings them back).

#include <map>
#include <optional>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <signal.h>

#include <gridledger/codec/tx.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"

namespace gridledger::crash_recovery_test {
namespace {

namespace json = boost::json;
using testing::NodeProcess;

/** What the client saw committed: receipts by tx hash, block ids and state roots by height. */
struct Observed {
    std::map<std::string, std::string> receipts;
    std::map<std::uint64_t, std::pair<std::string, std::string>> blocks;  // id, state root
    std::uint64_t maxHeight = 0;
};

std::string field(const json::value& v, std::string_view key) {
    return std::string(v.as_object().at(key).as_string());
}

class Client {
  public:
    static constexpr std::size_t kMaxPending = 48;

    Client(NodeProcess& node, crypto::SecretKey key, std::uint64_t seed)
        : node_(node), key_(key), domain_(testing::signingDomainOfHome(node.home())), rng_(seed) {}

    /** Reads the sender's committed nonce: where its transfers start. */
    void resync() {
        auto account = node_.call(
            "account_get", json::array{json::string(crypto::addressOf(key_.publicKey()).hex())});
        ASSERT_TRUE(account) << account.error().message;
        nonce_ = *parseU64(field(*account, "nonce"));
        validUntil_ = *parseU64(field(*account, "height")) + 10'000;
        pending_.clear();
    }

    /** New transfers stay valid for 10,000 blocks from the head (the chain outruns a fixed
     * bound); the nonce goes on where it was, since pending transfers survive a restart. */
    void renewValidity() {
        auto head = node_.call("chain_getHead", json::array{});
        ASSERT_TRUE(head) << head.error().message;
        validUntil_ = *parseU64(field(*head, "height")) + 10'000;
    }

    /** Transfers acknowledged as pending and not seen committed yet. */
    [[nodiscard]] const std::vector<std::string>& pending() const { return pending_; }

    /** Submits transfers and records what commits, for `duration`. */
    void stream(std::chrono::milliseconds duration, Observed& seen) {
        const auto until = std::chrono::steady_clock::now() + duration;
        while (std::chrono::steady_clock::now() < until) {
            // Like any client, stay inside the node's nonce window (64): a scheduling stall of
            // the node must slow the stream down, not make it send nonces it must refuse.
            for (int i = 0; i < 5 && pending_.size() < kMaxPending; ++i) {
                submitOne();
            }
            poll(seen);
        }
    }

    /** Records the receipts of submitted txs that are committed by now. */
    void poll(Observed& seen) {
        for (auto it = pending_.begin(); it != pending_.end();) {
            auto tx = node_.call("tx_get", json::array{json::string(*it)});
            if (tx && field(*tx, "status") == "committed") {
                seen.receipts[*it] = json::serialize(tx->as_object().at("receipt"));
                it = pending_.erase(it);
            } else {
                ++it;
            }
        }
        auto head = node_.call("chain_getHead", json::array{});
        if (head) {
            const std::uint64_t height = *parseU64(field(*head, "height"));
            seen.blocks[height] = {field(*head, "id"), field(*head, "state_root")};
            seen.maxHeight = std::max(seen.maxHeight, height);
        }
    }

  private:
    void submitOne() {
        settleUncertain();
        if (uncertain_) {
            return;  // the node is still down
        }
        Address to;
        for (std::size_t i = 0; i < to.size(); ++i) {
            to[i] = static_cast<std::uint8_t>(rng_());
        }
        codec::TxBody body{"gridledger-dev",
                           key_.publicKey(),
                           nonce_,
                           validUntil_,
                           codec::Transfer{to, u128{1 + rng_() % 1000}},
                           testing::kDevFee};
        const auto tx = codec::signTx(body, key_, domain_);
        auto submitted = node_.call("tx_submit", json::array{json::string(toHex(tx.raw))});
        // A refusal is expected only when the node is mid-crash; anything else is a bug.
        ASSERT_TRUE(submitted || submitted.error().code == ErrorCode::kUnavailable)
            << submitted.error().message;
        if (submitted) {
            ++nonce_;
            pending_.push_back(tx.hash.hex());
        } else {
            uncertain_ = tx;  // the node may have journaled it before it died
        }
    }

    /**
     * Sends again the transfer whose answer a crash cut off: acknowledged now (or held, or
     * committed already), it keeps its nonce; refused otherwise, its nonce is used again.
     */
    void settleUncertain() {
        if (!uncertain_) {
            return;
        }
        const codec::SignedTx tx = *uncertain_;
        auto again = node_.call("tx_submit", json::array{json::string(toHex(tx.raw))});
        if (!again && again.error().code == ErrorCode::kUnavailable) {
            return;
        }
        uncertain_.reset();
        auto known = node_.call("tx_get", json::array{json::string(tx.hash.hex())});
        if (again || known) {
            ++nonce_;
            pending_.push_back(tx.hash.hex());
        }
    }

    NodeProcess& node_;
    crypto::SecretKey key_;
    std::string domain_;
    std::mt19937_64 rng_;
    std::uint64_t nonce_ = 0;
    std::uint64_t validUntil_ = 0;
    std::vector<std::string> pending_;
    std::optional<codec::SignedTx> uncertain_;
};

void expectUnchanged(NodeProcess& node, const Observed& seen) {
    for (const auto& [hash, receipt] : seen.receipts) {
        auto tx = node.call("tx_get", json::array{json::string(hash)});
        ASSERT_TRUE(tx) << "committed tx " << hash << " lost: " << tx.error().message;
        ASSERT_EQ(field(*tx, "status"), "committed") << hash;
        EXPECT_EQ(json::serialize(tx->as_object().at("receipt")), receipt) << hash;
    }
    for (const auto& [height, block] : seen.blocks) {
        auto got = node.call("block_get", json::array{json::string(std::to_string(height))});
        ASSERT_TRUE(got) << "block " << height << " lost: " << got.error().message;
        EXPECT_EQ(field(got->as_object().at("header"), "id"), block.first) << "height " << height;
        EXPECT_EQ(field(*got, "state_root"), block.second) << "height " << height;
    }
}

TEST(CrashRecovery, SigkillAtRandomMomentsLosesNoAcknowledgedTxAndChangesNoRoot) {
    constexpr int kKills = 24;
    const std::uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);

    NodeProcess node;
    auto key = node::Home(node.home()).loadKey("dev");
    ASSERT_TRUE(key);
    Client client(node, *key, rng());
    Observed seen;
    node.start();
    client.resync();
    std::size_t pendingAtKills = 0;
    for (int kill = 0; kill < kKills; ++kill) {
        SCOPED_TRACE("kill " + std::to_string(kill));
        client.renewValidity();
        client.stream(std::chrono::milliseconds(100 + rng() % 900), seen);
        pendingAtKills += client.pending().size();
        node.stop(SIGKILL);

        node.start();
        expectUnchanged(node, seen);
        if (::testing::Test::HasFatalFailure()) {
            return;
        }
        auto head = node.call("chain_getHead", json::array{});
        ASSERT_TRUE(head);
        EXPECT_GE(*parseU64(field(*head, "height")), seen.maxHeight);
    }
    // The chain keeps growing after the last restart, and every acknowledged transfer commits.
    client.stream(std::chrono::milliseconds(500), seen);
    const std::uint64_t before = seen.maxHeight;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        client.poll(seen);
    } while ((!client.pending().empty() || seen.maxHeight == before) &&
             std::chrono::steady_clock::now() < deadline);
    EXPECT_GT(seen.maxHeight, before);
    EXPECT_TRUE(client.pending().empty())
        << client.pending().size() << " acknowledged transfers never committed, the first "
        << client.pending().front();
    EXPECT_GT(pendingAtKills, 0U) << "no kill caught a transfer pending: nothing was shown";
    EXPECT_GT(seen.receipts.size(), 100U) << "too few transfers committed to mean anything";
    expectUnchanged(node, seen);
    node.stop(SIGTERM);
    std::cout << "kills=" << kKills << " committed_txs=" << seen.receipts.size()
              << " pending_at_kills=" << pendingAtKills << " heights_checked=" << seen.blocks.size()
              << " head=" << seen.maxHeight << "\n";
}

}  // namespace
}  // namespace gridledger::crash_recovery_test
