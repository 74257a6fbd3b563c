// One peer flooding a validator (real processes on 127.0.0.1): a burst of sync requests, and
// hundreds of connections that each announce the largest frame. Validator 3's process is down
// and this test holds its keys, so the three honest validators form a quorum of 3 of 4 and the
// attacked validator's every vote is needed: a vote it checked late would stop a round.
//
// The burst's size is GRIDLEDGER_SYNC_FLOOD_REQUESTS (20,000 by default; docs/operations.md
// gives the command for 100,000).

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "network_support.h"
#include "support/faulty_member.h"
#include "support/sanitizer.h"
#include "unit/p2p/test_clients.h"

namespace gridledger::testing::p2p_flood_test {
namespace {

constexpr std::size_t kFlooder = 3;
constexpr std::uint64_t kRoundTimeoutMs = 2'000;
/** 256 MiB in an uninstrumented build; a sanitizer's shadow memory scales it. */
constexpr std::size_t kRssLimitBytes = (std::size_t{256} << 20U) * kSanitizerMemoryFactor;

std::size_t syncFloodRequests() {
    const char* text = std::getenv("GRIDLEDGER_SYNC_FLOOD_REQUESTS");
    return text != nullptr ? std::stoul(text) : 20'000;
}

/** VmRSS of process `pid` in bytes, 0 when it cannot be read. */
std::size_t residentBytes(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.starts_with("VmRSS:")) {
            return std::stoul(line.substr(6)) * 1024;  // in kB
        }
    }
    return 0;
}

/** The 4-byte header of a frame announcing `length` bytes of body. */
Bytes frameHeader(std::uint32_t length) {
    return Bytes{static_cast<std::uint8_t>(length >> 24U), static_cast<std::uint8_t>(length >> 16U),
                 static_cast<std::uint8_t>(length >> 8U), static_cast<std::uint8_t>(length)};
}

class P2pFlood : public ::testing::Test {
  protected:
    void SetUp() override {
        TestnetOptions options = quickTestnet(4);
        options.roundTimeoutMs = kRoundTimeoutMs;
        options.emptyBlockIntervalMs = 100;
        net_ = std::make_unique<Testnet>(options);
        for (std::size_t i = 0; i < net_->size(); ++i) {
            if (i != kFlooder) {
                net_->start(i);
            }
        }
        // Enough blocks that a sync request from height 1 makes the validator read many.
        ASSERT_TRUE(waitFor([&] { return heightOf(*net_, 0) >= 40; }, std::chrono::seconds(90)));
    }

    /**
     * The longest time validator 0 went without executing a block, polled every 20 ms while
     * `flooding()` holds and for at least `atLeast`.
     */
    std::chrono::milliseconds longestStallWhile(const std::function<bool()>& flooding,
                                                std::chrono::seconds atLeast) {
        using Clock = std::chrono::steady_clock;
        const auto start = Clock::now();
        std::uint64_t height = heightOf(*net_, 0);
        auto changedAt = start;
        std::chrono::milliseconds longest{0};
        while (flooding() || Clock::now() - start < atLeast) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            const auto now = Clock::now();
            const std::uint64_t current = heightOf(*net_, 0);
            if (current != height) {
                height = current;
                changedAt = now;
            }
            longest = std::max(
                longest, std::chrono::duration_cast<std::chrono::milliseconds>(now - changedAt));
        }
        return longest;
    }

    std::unique_ptr<Testnet> net_;
};

// Before: every request became a job on the one queue that also checked votes and proposals, and
// each made a worker read and encode up to 1,024 blocks: the votes waited behind the burst.
TEST_F(P2pFlood, ABurstOfSyncRequestsDelaysNoVoteByARoundTimeout) {
    FaultyMember flooder(*net_, kFlooder);
    ASSERT_TRUE(flooder.started());
    ASSERT_TRUE(waitFor([&] { return flooder.connectedToAll(); }, std::chrono::seconds(30)));

    const std::size_t requests = syncFloodRequests();
    const p2p::Message request{codec::MessageKind::kSyncRequest,
                               codec::encodeSyncRequest(codec::SyncRequest{1, 1'024})};
    const std::size_t queued = flooder.flood(0, request, requests);
    ASSERT_EQ(queued, requests);
    const auto stall = longestStallWhile([&] { return flooder.queuedTo(0).value_or(0) > 0; },
                                         std::chrono::seconds(5));
    const std::size_t unsent = flooder.queuedTo(0).value_or(0);
    std::cout << "sync flood: requests=" << requests << " longest_stall_ms=" << stall.count()
              << " round_timeout_ms=" << kRoundTimeoutMs
              << " refused=" << net_->metric(0, "gridledger_p2p_serving_refused_total").value_or(0)
              << " reads_throttled="
              << net_->metric(0, "gridledger_p2p_reads_throttled_total").value_or(0)
              << " bans=" << net_->metric(0, "gridledger_p2p_bans_total").value_or(0) << '\n';
    EXPECT_LT(stall.count(), static_cast<std::int64_t>(kRoundTimeoutMs)) << readText(net_->log(0));
    EXPECT_EQ(unsent, 0U);  // the flood ended: read, or cut off with the flooder's connection
    // The flooder paid for it: the validator banned it.
    EXPECT_GE(net_->metric(0, "gridledger_p2p_bans_total").value_or(0), 1.0);
    const std::uint64_t height = heightOf(*net_, 1);
    EXPECT_TRUE(
        waitFor([&] { return heightOf(*net_, 0) >= height + 10; }, std::chrono::seconds(30)));
}

// Before: each connection, once its hello was in, allocated the 16 MiB its next header announced
// (and zeroed it) before a byte of the body came, retired duplicates included.
TEST_F(P2pFlood, FiveHundredConnectionsAnnouncingTheLargestFramesLeaveTheMemoryBounded) {
    const crypto::NodeKey key = node::Home(net_->home(kFlooder)).loadNodeKey().value();
    const std::size_t before = residentBytes(net_->pid(0));
    ASSERT_GT(before, 0U);
    std::vector<std::unique_ptr<p2p::test::TlsTestClient>> clients;
    std::size_t joined = 0;
    std::size_t peak = before;
    for (int i = 0; i < 500; ++i) {
        clients.push_back(std::make_unique<p2p::test::TlsTestClient>(key, net_->p2pPort(0)));
        if (!clients.back()->join()) {
            continue;
        }
        ++joined;
        // Writes to a connection the validator closed fail; that is its answer.
        (void)clients.back()->writeRaw(frameHeader(std::uint32_t{16} << 20U));
        (void)clients.back()->writeRaw(Bytes(std::size_t{256} << 10U, 0));
        peak = std::max(peak, residentBytes(net_->pid(0)));
    }
    // The validator keeps committing with all of them open.
    const std::uint64_t height = heightOf(*net_, 0);
    EXPECT_TRUE(
        waitFor([&] { return heightOf(*net_, 0) >= height + 5; }, std::chrono::seconds(30)));
    peak = std::max(peak, residentBytes(net_->pid(0)));
    std::cout << "500 connections announcing 16 MiB: joined=" << joined
              << " rss_before_mib=" << (before >> 20U) << " rss_peak_mib=" << (peak >> 20U)
              << " inbound_buffer_bytes="
              << net_->metric(0, "gridledger_p2p_inbound_buffer_bytes").value_or(0) << '\n';
    EXPECT_GE(joined, 1U);
    EXPECT_LT(peak, kRssLimitBytes);
}

}  // namespace
}  // namespace gridledger::testing::p2p_flood_test
