// Certified batches between the validators of a 4-validator network (real processes): each
// transaction signature is verified by f + 1 = 2 of them, and no faulty member gets a batch
// certified that an honest member did not verify.

#include <thread>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "network_support.h"
#include "support/faulty_member.h"

namespace gridledger::testing::batches_test {
namespace {

using namespace std::chrono_literals;

constexpr const char* kVerified = "gridledger_tx_signatures_verified_total";

/** `count` transfers of the dev account from nonce `first`, signed for node 0's chain. */
std::vector<codec::SignedTx> transfers(const Testnet& net, std::uint64_t first, std::size_t count) {
    const auto dev = node::Home(net.home(0)).loadKey("dev");
    EXPECT_TRUE(dev);
    const std::string domain = signingDomainOfHome(net.home(0));
    std::vector<codec::SignedTx> out;
    for (std::uint64_t nonce = first; nonce < first + count; ++nonce) {
        Address to;
        to[0] = 0xb0;
        to[1] = static_cast<std::uint8_t>(nonce);
        const codec::TxBody body{std::string(kTestnetChainId), dev->publicKey(), nonce, 100'000,
                                 codec::Transfer{to, u128{1}}, kDevFee};
        out.push_back(codec::signTx(body, *dev, domain));
    }
    return out;
}

bool committedOn(const Testnet& net, std::size_t node, const codec::SignedTx& tx) {
    const auto got = net.call(node, "tx_get", json::array{json::string(tx.hash.hex())});
    return got && got->as_object().contains("status") && field(*got, "status") == "committed";
}

// Before certified batches, every validator verified every signature: 4 checks per transaction.
// Now the author verifies at admission and one other member, picked by the batch's digest,
// before it acknowledges; the other two take the certificate's word.
TEST(CertifiedBatches, EachSignatureIsVerifiedByTwoOfFourValidators) {
    Testnet net(quickTestnet(4));
    net.startAll();
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 0) >= 3 && heightOf(net, 3) >= 3; }, 60s));
    constexpr std::size_t kRounds = 6;
    constexpr std::size_t kPerRound = 20;
    const auto txs = transfers(net, 0, kRounds * kPerRound);
    for (std::size_t round = 0; round < kRounds; ++round) {
        for (std::size_t i = round * kPerRound; i < (round + 1) * kPerRound; ++i) {
            ASSERT_TRUE(net.call(0, "tx_submit", json::array{json::string(toHex(txs[i].raw))}));
        }
        std::this_thread::sleep_for(50ms);  // a batch each round
    }
    ASSERT_TRUE(waitFor(
        [&] {
            for (std::size_t node = 0; node < net.size(); ++node) {
                if (!committedOn(net, node, txs.back())) {
                    return false;
                }
            }
            return std::ranges::all_of(txs,
                                       [&](const auto& tx) { return committedOn(net, 0, tx); });
        },
        60s))
        << "the transfers did not commit on every validator";
    std::this_thread::sleep_for(1s);  // the metric follows the consensus steps
    std::vector<double> verified;
    for (std::size_t node = 0; node < net.size(); ++node) {
        verified.push_back(net.metric(node, kVerified).value_or(-1));
    }
    const auto n = static_cast<double>(txs.size());
    // The author checked each one once, and needed no other check: the others' blocks held
    // nothing it did not know.
    EXPECT_EQ(verified[0], n);
    // Each batch was checked by one other member at least (the one asked), and by the others
    // only when that one did not answer within 400 ms: at most one batch here on a slow host.
    const double others = verified[1] + verified[2] + verified[3];
    EXPECT_GE(others, n);
    EXPECT_LE(others, n + 2 * kPerRound);

    // Every batch node 0 made was certified, and reached each other member once: on its
    // certificate, or verified there.
    const double made = net.metric(0, "gridledger_batches_made_total").value_or(-1);
    EXPECT_GE(made, static_cast<double>(kRounds));
    EXPECT_EQ(net.metric(0, "gridledger_batches_certified_total").value_or(-1), made);
    for (std::size_t node = 1; node < net.size(); ++node) {
        EXPECT_EQ(net.metric(node, "gridledger_batches_admitted_certified_total").value_or(-1) +
                      net.metric(node, "gridledger_batches_verified_here_total").value_or(-1),
                  made)
            << "validator " << node;
        EXPECT_EQ(net.metric(node, "gridledger_batches_made_total").value_or(-1), 0);
    }
}

bool knownTo(const Testnet& net, std::size_t node, const codec::SignedTx& tx) {
    const auto got = net.call(node, "tx_get", json::array{json::string(tx.hash.hex())});
    return got.has_value();
}

// Member 3 is this test process. With f = 1 a certificate needs one honest signature besides its
// own, and no honest member signs a batch holding a forgery. Its made-up certificate is refused,
// so its batches are verified by each member itself: the forgery is refused and a valid transfer
// still commits.
TEST(CertifiedBatches, AFaultyMemberGetsNoForgeryCertified) {
    constexpr std::size_t kFaulty = 3;
    Testnet net(quickTestnet(4));
    for (std::size_t i = 0; i < kFaulty; ++i) {
        net.start(i);
    }
    ASSERT_TRUE(waitFor([&] { return heightOf(net, 1) >= 3; }, 60s));
    FaultyMember faulty(net, kFaulty);
    ASSERT_TRUE(faulty.started());
    ASSERT_TRUE(waitFor([&] { return faulty.connectedToAll(); }, 30s));
    const auto status = net.call(0, "node_getStatus", json::array{});
    ASSERT_TRUE(status);
    const std::uint64_t epoch = parseU64(field(*status, "consensus_epoch")).value_or(0);

    auto txs = transfers(net, 0, 3);
    const codec::SignedTx& valid = txs[0];
    for (std::size_t i = 1; i < txs.size(); ++i) {
        txs[i].raw.back() ^= 0x01U;  // the signature's last byte
        txs[i].hash = crypto::sha256(txs[i].raw);
    }
    std::vector<double> invalidBefore;
    for (std::size_t i = 0; i < kFaulty; ++i) {
        invalidBefore.push_back(
            net.metric(i, "gridledger_p2p_invalid_messages_total").value_or(-1));
    }
    // Asked to sign a forgery: every honest member verifies it and refuses.
    ASSERT_TRUE(faulty.sendAll(faulty.batch(epoch, 1, true, {txs[1].raw})));
    // Its own acknowledgement twice, for a forgery and for a valid transfer, asking no one.
    ASSERT_TRUE(faulty.sendAll(faulty.batch(epoch, 2, false, {txs[2].raw})));
    ASSERT_TRUE(faulty.sendAll(faulty.forgedBatchCert(epoch, 2, {txs[2].raw})));
    ASSERT_TRUE(faulty.sendAll(faulty.batch(epoch, 3, false, {valid.raw})));
    ASSERT_TRUE(faulty.sendAll(faulty.forgedBatchCert(epoch, 3, {valid.raw})));

    EXPECT_TRUE(waitFor(
        [&] {
            for (std::size_t i = 0; i < kFaulty; ++i) {
                if (!committedOn(net, i, valid)) {
                    return false;
                }
            }
            return true;
        },
        30s))
        << "the valid transfer of the refused certificate's batch did not commit";
    for (std::size_t i = 0; i < kFaulty; ++i) {
        EXPECT_FALSE(knownTo(net, i, txs[1])) << "validator " << i;
        EXPECT_FALSE(knownTo(net, i, txs[2])) << "validator " << i;
        // The forged batch and the two made-up certificates.
        EXPECT_GE(net.metric(i, "gridledger_p2p_invalid_messages_total").value_or(-1),
                  invalidBefore[i] + 3)
            << "validator " << i;
    }
}

}  // namespace
}  // namespace gridledger::testing::batches_test
