// Sends a running node every kind of bad input over JSON-RPC and checks that each gets its own
// error (code and stable reason) while the node keeps serving and loses nothing.

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/sha256.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "support/tx_frames.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc_bad_input_test {
namespace {

namespace json = boost::json;
using rpc::test::HttpTestClient;

class RpcBadInput : public ::testing::Test {
  protected:
    void SetUp() override {
        node_.start();
        dev_ = *node::Home(node_.home()).loadKey("dev");
    }
    void TearDown() override { node_.stop(SIGTERM); }

    /** Posts `body` on a fresh connection; returns the parsed JSON reply. */
    json::value post(const std::string& body) {
        HttpTestClient client(node_.port());
        const auto reply = client.post(body);
        EXPECT_FALSE(reply.ec) << reply.ec.message();
        return reply.json();
    }

    json::value call(const std::string& method, const json::value& params) {
        return post(json::serialize(
            json::object{{"jsonrpc", "2.0"}, {"id", 7}, {"method", method}, {"params", params}}));
    }

    /** The node still answers and is at or past `height`. */
    void expectServing() {
        auto status = node_.call("node_getStatus", json::array{});
        ASSERT_TRUE(status) << status.error().message;
        EXPECT_TRUE(node_.running());
    }

    std::string domain() const { return testing::signingDomainOfHome(node_.home()); }

    json::value submit(const codec::TxBody& body, const crypto::SecretKey& key) {
        return call("tx_submit",
                    json::array{json::string(toHex(codec::signTx(body, key, domain()).raw))});
    }

    codec::TxBody transfer(std::uint64_t nonce, u128 amount = u128{5}) const {
        Address to;
        to[0] = 0x77;
        return codec::TxBody{
            "gridledger-dev", dev_.publicKey(), nonce, 5000, codec::Transfer{to, amount},
            testing::kDevFee};
    }

    /** Polls tx_get until the tx is committed and returns its receipt. */
    json::value waitReceipt(const std::string& hash) {
        for (int i = 0; i < 200; ++i) {
            auto tx = node_.call("tx_get", json::array{json::string(hash)});
            if (tx && tx->at("status") == "committed") {
                return tx->at("receipt");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ADD_FAILURE() << "tx " << hash << " never committed";
        return {};
    }

    testing::NodeProcess node_;
    crypto::SecretKey dev_ = crypto::SecretKey::generate();
};

TEST_F(RpcBadInput, MalformedJsonWrongTypesAndBadHexEachGetTheirError) {
    rpc::test::expectRpcError(post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"), -32700,
                              "parse_error");
    rpc::test::expectRpcError(post("\xff\xfe{}"), -32700, "invalid_utf8");
    rpc::test::expectRpcError(post("[]"), -32600, "empty_batch");
    rpc::test::expectRpcError(call("no_such_method", json::array{}), -32601, "method_not_found");
    rpc::test::expectRpcError(call("tx_submit", json::array{12345}), -32602, "invalid_argument");
    rpc::test::expectRpcError(call("account_get", json::array{json::array{}}), -32602,
                              "invalid_argument");
    rpc::test::expectRpcError(call("tx_submit", json::array{"0xzz"}), -32602, "bad_hex");
    rpc::test::expectRpcError(call("tx_submit", json::array{"deadbeef"}), -32602, "bad_hex");
    rpc::test::expectRpcError(call("account_get", json::array{"0x1234"}), -32602, "bad_length");
    rpc::test::expectRpcError(call("tx_submit", json::array{"0xdeadbeef"}), -32602, "malformed");
    rpc::test::expectRpcError(call("tx_get", json::array{json::string(Hash256{}.hex())}), -32001,
                              "not_found");
    expectServing();
}

TEST_F(RpcBadInput, SignatureChainIdAndNonceViolationsAreRejected) {
    // Bad signature: sign with another key than the sender's.
    const auto other = crypto::SecretKey::generate();
    auto forged = codec::signTx(transfer(0), other, domain());
    rpc::test::expectRpcError(call("tx_submit", json::array{json::string(toHex(forged.raw))}),
                              -32003, "bad_signature");

    // Signed for another chain of the same name (every `init` names its chain gridledger-dev):
    // the signature binds the genesis hash, so it does not hold here.
    const std::string otherGenesis =
        crypto::chainDomain("gridledger-dev", crypto::sha256(asBytes("another genesis")));
    rpc::test::expectRpcError(
        call("tx_submit",
             json::array{json::string(toHex(codec::signTx(transfer(0), dev_, otherGenesis).raw))}),
        -32003, "bad_signature");

    auto wrongChain = transfer(0);
    wrongChain.chainId = "another-chain";
    rpc::test::expectRpcError(submit(wrongChain, dev_), -32003, "wrong_chain_id");

    rpc::test::expectRpcError(submit(transfer(64), dev_), -32003, "nonce_gap");  // window is 64

    const auto accepted = submit(transfer(0), dev_);
    ASSERT_TRUE(accepted.as_object().contains("result")) << json::serialize(accepted);
    const std::string hash(accepted.at("result").at("hash").as_string());
    EXPECT_TRUE(waitReceipt(hash).at("success").as_bool());

    // Replays: the same tx again, and another tx with the used nonce.
    rpc::test::expectRpcError(
        call("tx_submit",
             json::array{json::string(toHex(codec::signTx(transfer(0), dev_, domain()).raw))}),
        -32003, "nonce_too_low");
    rpc::test::expectRpcError(submit(transfer(0, u128{6}), dev_), -32003, "nonce_too_low");
    expectServing();
}

TEST_F(RpcBadInput, RawBatchesAdmitAndRefuseEachTransactionAsTxSubmitWould) {
    // Five consecutive nonces, a forged one, one beyond the nonce window and bytes that are no
    // transaction, in one body.
    std::vector<Bytes> txs;
    std::vector<std::string> hashes;
    for (std::uint64_t nonce = 0; nonce < 5; ++nonce) {
        const auto tx = codec::signTx(transfer(nonce), dev_, domain());
        txs.push_back(tx.raw);
        hashes.push_back(tx.hash.hex());
    }
    txs.push_back(codec::signTx(transfer(5), crypto::SecretKey::generate(), domain()).raw);
    txs.push_back(codec::signTx(transfer(64), dev_, domain()).raw);
    txs.push_back(Bytes{0x0a, 0x01});
    HttpTestClient client(node_.port());
    auto request = rpc::test::requestOf(boost::beast::http::verb::post, "/txs");
    request.set(boost::beast::http::field::content_type, "application/octet-stream");
    request.body() = testing::txFrames(txs);
    request.prepare_payload();
    const auto reply = client.send(request);
    ASSERT_EQ(reply.status, 200U) << reply.body;

    std::vector<std::pair<std::string, std::string>> outcomes;  // (hash, reason)
    for (std::size_t at = 0; at + Hash256::size() < reply.body.size();) {
        const auto* hash = reinterpret_cast<const std::uint8_t*>(reply.body.data() + at);
        const auto length = static_cast<std::uint8_t>(reply.body[at + Hash256::size()]);
        outcomes.emplace_back(toHex(ByteView(hash, Hash256::size())),
                              reply.body.substr(at + Hash256::size() + 1, length));
        at += Hash256::size() + 1 + length;
    }
    ASSERT_EQ(outcomes.size(), txs.size());
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(outcomes[i], (std::pair{hashes[i], std::string()})) << "nonce " << i;
    }
    EXPECT_EQ(outcomes[5].second, "bad_signature");
    EXPECT_EQ(outcomes[6].second, "nonce_gap");
    EXPECT_EQ(outcomes[7].first, crypto::sha256(txs[7]).hex());
    EXPECT_FALSE(outcomes[7].second.empty());
    for (const auto& hash : hashes) {
        EXPECT_TRUE(waitReceipt(hash).at("success").as_bool());
    }
    expectServing();
}

TEST_F(RpcBadInput, InsufficientBalanceCommitsAsAFailedReceiptAndMovesNothing) {
    const auto poor = crypto::SecretKey::generate();
    Address to;
    to[0] = 0x78;
    // Fund `poor` with its fee and 10 units, then have it send 11.
    codec::TxBody fund{
        "gridledger-dev",
        dev_.publicKey(),
        0,
        5000,
        codec::Transfer{crypto::addressOf(poor.publicKey()), u128{testing::kDevFee + 10}},
        testing::kDevFee};
    const auto funded = submit(fund, dev_);
    ASSERT_TRUE(funded.as_object().contains("result")) << json::serialize(funded);
    EXPECT_TRUE(waitReceipt(std::string(funded.at("result").at("hash").as_string()))
                    .at("success")
                    .as_bool());

    codec::TxBody spend{"gridledger-dev", poor.publicKey(), 0, 5000, codec::Transfer{to, u128{11}},
                        testing::kDevFee};
    const auto sent = submit(spend, poor);
    ASSERT_TRUE(sent.as_object().contains("result")) << json::serialize(sent);
    const auto receipt = waitReceipt(std::string(sent.at("result").at("hash").as_string()));
    EXPECT_FALSE(receipt.at("success").as_bool());
    EXPECT_EQ(receipt.at("reason"), "insufficient_balance");

    auto account = node_.call("account_get",
                              json::array{json::string(crypto::addressOf(poor.publicKey()).hex())});
    ASSERT_TRUE(account);
    EXPECT_EQ(account->at("balance"), "10");
    EXPECT_EQ(account->at("nonce"), "1");  // the failed transfer consumed its nonce, paid its fee
    expectServing();
}

TEST_F(RpcBadInput, OversizedBodyIsRefusedWith413AndTheNodeKeepsServing) {
    HttpTestClient client(node_.port());
    const auto reply = client.post(std::string(2 << 20, ' '));
    EXPECT_EQ(reply.status, 413U);
    rpc::test::expectRpcError(reply.json(), -32005, "body_too_large");

    // An oversized transaction inside a normal body gets its own reason.
    rpc::test::expectRpcError(
        call("tx_submit", json::array{json::string(toHex(Bytes(codec::kMaxTxBytes + 1, 0)))}),
        -32003, "tx_too_large");
    expectServing();
}

}  // namespace
}  // namespace gridledger::rpc_bad_input_test
