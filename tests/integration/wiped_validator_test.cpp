// A validator whose data dir is wiped (keys and config kept) and restarted into a running
// network must sign nothing until it is at the head of the chain and no recent certificate
// holds a vote of its key; then it signs again by itself, above every round it may have
// signed in before. Real processes, four validators on 127.0.0.1.

#include <bit>
#include <csignal>
#include <regex>

#include "network_support.h"

namespace gridledger::testing::wiped_validator_test {
namespace {

constexpr std::size_t kWiped = 3;

/** The signer bitmap of the QC in node 0's block at `height`. */
Bytes signersAt(const Testnet& net, std::uint64_t height) {
    auto block = net.call(0, "block_get", json::array{json::string(std::to_string(height))});
    if (!block) {
        ADD_FAILURE() << "no block at height " << height;
        return {};
    }
    const auto& qc = block->as_object().at("header").as_object().at("qc");
    return fromHex(field(qc, "signers")).value();
}

/**
 * The committee index of the member that signed none of the QCs of node 0's blocks `from..to`
 * (taken while that member is down: the others then all sign, a quorum being 3 of 4).
 */
std::size_t absentMember(const Testnet& net, std::uint64_t from, std::uint64_t to) {
    std::uint8_t seen = 0;
    for (std::uint64_t h = from; h <= to; ++h) {
        const Bytes signers = signersAt(net, h);
        seen = static_cast<std::uint8_t>(seen | (signers.empty() ? 0 : signers[0]));
    }
    EXPECT_EQ(std::popcount(static_cast<unsigned>(seen & 0x0fU)), 3) << "one member absent";
    return static_cast<std::size_t>(std::countr_one(seen));
}

/** The rounds of the QCs in node 0's blocks 1..to that member `index` signed. */
std::vector<std::uint64_t> signedRounds(const Testnet& net, std::size_t index, std::uint64_t to) {
    std::vector<std::uint64_t> rounds;
    for (std::uint64_t h = 1; h <= to; ++h) {
        auto block = net.call(0, "block_get", json::array{json::string(std::to_string(h))});
        if (!block) {
            ADD_FAILURE() << "no block at height " << h;
            return rounds;
        }
        const auto& qc = block->as_object().at("header").as_object().at("qc");
        const Bytes signers = fromHex(field(qc, "signers")).value();
        if (index / 8 < signers.size() &&
            ((static_cast<unsigned>(signers[index / 8]) >> (index % 8)) & 1U) != 0) {
            rounds.push_back(parseU64(field(qc, "round")).value());
        }
    }
    return rounds;
}

TEST(WipedValidator, SignsNothingUntilAtTheHeadThenResumesAboveEveryRoundItSignedIn) {
    Testnet net(quickTestnet(4));
    net.startAll();
    ASSERT_TRUE(waitFor([&] { return heightOf(net, kWiped) >= 30; }, std::chrono::seconds(60)));

    net.stop(kWiped, SIGKILL);
    // Its last votes reach certificates in the blocks that commit while it is down.
    const std::uint64_t killedAt = heightOf(net, 0);
    ASSERT_TRUE(
        waitFor([&] { return heightOf(net, 0) >= killedAt + 10; }, std::chrono::seconds(60)));
    const std::uint64_t downTo = heightOf(net, 0);
    const std::size_t index = absentMember(net, killedAt + 5, downTo);
    const auto before = signedRounds(net, index, downTo);
    ASSERT_FALSE(before.empty()) << "the validator signed before the wipe";
    const std::uint64_t lastSigned = *std::max_element(before.begin(), before.end());
    std::filesystem::remove_all(net.home(kWiped) / "data");
    const std::size_t logBefore = readText(net.log(kWiped)).size();  // the log is appended to
    net.start(kWiped);

    // The way back needs no second wipe: it resumes by itself.
    const std::regex resumed(R"(signing resumed epoch=\d+ last_voted_round=(\d+))");
    std::smatch match;
    std::string log;
    ASSERT_TRUE(waitFor(
        [&] {
            log = readText(net.log(kWiped)).substr(logBefore);
            return std::regex_search(log, match, resumed);
        },
        std::chrono::seconds(90)))
        << log;
    const std::uint64_t resumedAbove = std::stoull(match[1].str());
    EXPECT_GE(resumedAbove, lastSigned) << "its safety data starts above its old votes";
    EXPECT_LT(log.find("signing held"), log.find("signing resumed"));

    // Every QC it signed after the wipe is of a round above the one it resumed at: it signed
    // nothing while it was catching up.
    const std::uint64_t resumedAt = heightOf(net, 0);
    ASSERT_TRUE(
        waitFor([&] { return heightOf(net, 0) >= resumedAt + 30; }, std::chrono::seconds(60)));
    const std::uint64_t top = heightOf(net, 0);
    std::size_t signedAfter = 0;
    for (const std::uint64_t round : signedRounds(net, index, top)) {
        if (round > lastSigned) {
            EXPECT_GT(round, resumedAbove) << "a vote signed before signing resumed";
            ++signedAfter;
        }
    }
    EXPECT_GT(signedAfter, 0U) << "the validator signs again";
    const auto ready = net.get(kWiped, "/readyz");
    ASSERT_TRUE(ready);
    EXPECT_EQ(ready->status, 200U) << ready->body;
}

}  // namespace
}  // namespace gridledger::testing::wiped_validator_test
