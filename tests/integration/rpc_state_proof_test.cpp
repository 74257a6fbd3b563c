// state_getProof on a running node: 1,000 keys, present (accounts funded by transfers) and absent,
// each proof checked offline against the state root certified in a later block's header, with the
// library verifier, with the algorithm of docs/state_tree.md written out here, and for a sample
// with the `gridledger verify-proof` command. A changed value, key or root never verifies.

#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/state_tree.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc_state_proof_test {
namespace {

namespace json = boost::json;

constexpr std::size_t kFunded = 300;
constexpr std::size_t kTxWave = 60;  // below the mempool's nonce window of 64

std::string text(const json::value& v) {
    return std::string(v.as_string());
}

/** The account key as docs/state_tree.md defines it, computed here. */
Hash256 accountKeyOf(const Address& address) {
    Bytes bytes(asBytes(std::string_view("gridledger/state/account")).begin(),
                asBytes(std::string_view("gridledger/state/account")).end());
    bytes.insert(bytes.end(), address.view().begin(), address.view().end());
    return crypto::sha256(bytes);
}

Hash256 prefixedHash(std::string_view prefix, ByteView a, ByteView b) {
    Bytes bytes(asBytes(prefix).begin(), asBytes(prefix).end());
    bytes.insert(bytes.end(), a.begin(), a.end());
    bytes.insert(bytes.end(), b.begin(), b.end());
    return crypto::sha256(bytes);
}

bool bitOf(const Hash256& key, std::size_t i) {
    return ((static_cast<unsigned>(key[i / 8]) >> (7 - i % 8)) & 1U) != 0;
}

/**
 * The verification algorithm of docs/state_tree.md ("Verifying a proof offline"), on the proof
 * bytes, written from the document and not from ledger/state_tree_proof.cpp.
 */
bool verifyAsDocumented(const Hash256& root, const Hash256& key, const std::optional<Bytes>& value,
                        ByteView proof) {
    if (proof.size() < 4 || proof[0] != 1 || proof[1] > 1) {
        return false;
    }
    std::size_t offset = 2;
    std::optional<std::pair<Hash256, Hash256>> leaf;
    if (proof[1] == 1) {
        if (proof.size() < 68) {
            return false;
        }
        leaf.emplace(*Hash256::fromBytes(proof.subspan(2, 32)),
                     *Hash256::fromBytes(proof.subspan(34, 32)));
        offset = 66;
    }
    const std::size_t count = (std::size_t{proof[offset]} << 8U) | proof[offset + 1];
    const ByteView siblings = proof.subspan(offset + 2);
    if (count > 256 || siblings.size() != 32 * count) {
        return false;
    }
    if (value) {
        if (!leaf || leaf->first != key || leaf->second != crypto::sha256(*value)) {
            return false;
        }
    } else if (leaf) {
        if (leaf->first == key) {
            return false;
        }
        for (std::size_t i = 0; i < count; ++i) {
            if (bitOf(leaf->first, i) != bitOf(key, i)) {
                return false;
            }
        }
    }
    Hash256 h = leaf
                    ? prefixedHash("gridledger/state/leaf", leaf->first.view(), leaf->second.view())
                    : Hash256{};
    for (std::size_t i = count; i-- > 0;) {
        const ByteView sibling = siblings.subspan(32 * i, 32);
        h = bitOf(key, i) ? prefixedHash("gridledger/state/node", sibling, h.view())
                          : prefixedHash("gridledger/state/node", h.view(), sibling);
    }
    return h == root;
}

Hash256 flipped(Hash256 hash, std::size_t byte, std::uint8_t mask) {
    hash[byte] ^= mask;
    return hash;
}

/** One key asked for and what the test knows about it. */
struct Query {
    json::value keyParam;         // "0x…" or {"account": "0x…"}
    Hash256 key;                  // the state key the test expects
    std::uint64_t height;         // asked for
    std::optional<u128> balance;  // a funded account's balance, std::nullopt for an absent key
};

class RpcStateProof : public ::testing::Test {
  protected:
    void SetUp() override {
        node_.start();
        dev_ = *node::Home(node_.home()).loadKey("dev");
    }
    void TearDown() override { node_.stop(SIGTERM); }

    json::value call(const std::string& method, const json::value& params) {
        auto result = node_.call(method, params);
        EXPECT_TRUE(result) << method << ": " << (result ? "" : result.error().message);
        return result ? *result : json::value();
    }

    /** The JSON-RPC response (result or error) of one call. */
    json::value raw(const std::string& method, const json::value& params) {
        return rpc::test::HttpTestClient(node_.port()).call(method, params);
    }

    std::uint64_t committedHeight(const std::string& hash) {
        for (int i = 0; i < 600; ++i) {
            auto tx = node_.call("tx_get", json::array{json::string(hash)});
            if (tx && tx->at("status") == "committed") {
                EXPECT_TRUE(tx->at("receipt").at("success").as_bool());
                return std::stoull(text(tx->at("height")));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ADD_FAILURE() << "tx " << hash << " never committed";
        return 0;
    }

    /**
     * Reads the headers of the committed blocks after the last one read, up to the head, and
     * records the state root each certifies: its exec_state_root for its exec_height. Not every
     * height is named by a header (a proposal names the latest height executed by then).
     */
    void readHeaders() {
        const std::uint64_t head =
            std::stoull(text(call("chain_getHead", json::array{}).at("height")));
        for (; nextBlock_ <= head; ++nextBlock_) {
            const json::value block =
                call("block_get", json::array{json::string(std::to_string(nextBlock_))});
            ASSERT_TRUE(block.is_object());
            const auto& header = block.at("header");
            const Hash256 root = *Hash256::fromHex(text(header.at("exec_state_root")));
            const auto [it, added] =
                certified_.emplace(std::stoull(text(header.at("exec_height"))), root);
            EXPECT_EQ(it->second, root) << "two headers certify different roots";
        }
    }

    /** The highest height <= `height` that a header certifies (waiting for one if needed). */
    std::uint64_t certifiedAtOrBelow(std::uint64_t height) {
        for (int i = 0; i < 600; ++i) {
            readHeaders();
            auto it = certified_.upper_bound(height);
            if (it != certified_.begin() && (it != certified_.end() || i > 0)) {
                return std::prev(it)->first;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ADD_FAILURE() << "no header certifies a height <= " << height;
        return 0;
    }

    testing::NodeProcess node_;
    crypto::SecretKey dev_ = crypto::SecretKey::generate();
    std::map<std::uint64_t, Hash256> certified_;  // height -> root a signed header certifies
    std::uint64_t nextBlock_ = 1;
};

TEST_F(RpcStateProof, ThousandKeysPresentAndAbsentVerifyOfflineAndTamperingNeverVerifies) {
    const std::uint64_t seed = std::random_device{}();
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto randomAddress = [&rng] {
        Address address;
        for (std::size_t k = 0; k < Address::size(); ++k) {
            address[k] = static_cast<std::uint8_t>(rng());
        }
        return address;
    };

    // Fund kFunded fresh accounts, each with its own amount, in waves inside the nonce window.
    std::vector<std::pair<Address, u128>> funded;
    std::vector<std::uint64_t> fundedAt;
    const std::string domain = testing::signingDomainOfHome(node_.home());
    for (std::size_t wave = 0; wave < kFunded; wave += kTxWave) {
        std::vector<std::string> hashes;
        for (std::size_t i = wave; i < std::min(kFunded, wave + kTxWave); ++i) {
            const Address to = randomAddress();
            const u128 amount = u128{1'000} + u128{i};
            const codec::TxBody body{
                "gridledger-dev", dev_.publicKey(), i, 50'000, codec::Transfer{to, amount},
                testing::kDevFee};
            auto submitted =
                node_.call("tx_submit",
                           json::array{json::string(toHex(codec::signTx(body, dev_, domain).raw))});
            ASSERT_TRUE(submitted) << submitted.error().message;
            hashes.push_back(text(submitted->at("hash")));
            funded.emplace_back(to, amount);
        }
        for (const auto& hash : hashes) {
            fundedAt.push_back(committedHeight(hash));
        }
    }
    // Ask at the last height a header certifies once every transfer is in; wait for a header
    // that certifies the height of the last transfer or a later one.
    const std::uint64_t lastFunding = *std::ranges::max_element(fundedAt);
    ASSERT_TRUE(rpc::test::waitUntil(
        [&] {
            readHeaders();
            return !certified_.empty() && certified_.rbegin()->first >= lastFunding;
        },
        std::chrono::milliseconds(30'000)));
    const std::uint64_t head = certified_.rbegin()->first;

    std::vector<Query> queries;
    const auto accountParam = [](const Address& a) {
        return json::value(json::object{{"account", a.hex()}});
    };
    for (std::size_t i = 0; i < kFunded; ++i) {  // 300 present at the certified head
        const auto& [address, amount] = funded[i];
        queries.push_back({accountParam(address), accountKeyOf(address), head, amount});
    }
    for (std::size_t i = 0; i < 100; ++i) {  // 100 absent: the height before their funding
        const auto& [address, amount] = funded[i * 3];
        queries.push_back({json::string(accountKeyOf(address).hex()), accountKeyOf(address),
                           certifiedAtOrBelow(fundedAt[i * 3] - 1), std::nullopt});
    }
    for (std::size_t i = 0; i < 300; ++i) {  // 300 absent raw keys
        Hash256 key;
        for (std::size_t k = 0; k < Hash256::size(); ++k) {
            key[k] = static_cast<std::uint8_t>(rng());
        }
        queries.push_back({json::string(key.hex()), key, head, std::nullopt});
    }
    for (std::size_t i = 0; i < 300; ++i) {  // 300 absent accounts
        const Address address = randomAddress();
        queries.push_back({accountParam(address), accountKeyOf(address), head, std::nullopt});
    }
    ASSERT_EQ(queries.size(), 1'000U);

    const auto tmp = node_.home().parent_path();
    std::size_t cliRuns = 0;
    for (std::size_t i = 0; i < queries.size(); ++i) {
        const Query& q = queries[i];
        SCOPED_TRACE("query " + std::to_string(i));
        const json::value got =
            call("state_getProof", json::array{q.keyParam, json::string(std::to_string(q.height))});
        ASSERT_TRUE(got.is_object()) << json::serialize(got);
        EXPECT_EQ(text(got.at("key")), q.key.hex());
        EXPECT_EQ(text(got.at("height")), std::to_string(q.height));
        const Hash256 root = certified_.at(q.height);
        ASSERT_EQ(text(got.at("state_root")), root.hex());

        std::optional<Bytes> value;
        if (q.balance) {
            ASSERT_TRUE(got.at("value").is_string()) << json::serialize(got);
            value = *fromHex(text(got.at("value")));
            const auto account = contracts::decodeAccount(*value);
            ASSERT_TRUE(account);
            EXPECT_TRUE(account->balance == *q.balance);
            EXPECT_EQ(account->nonce, 0U);
        } else {
            ASSERT_TRUE(got.at("value").is_null()) << json::serialize(got);
        }
        const Bytes proofBytes = *fromHex(text(got.at("proof")));
        const auto proof = ledger::decodeProof(proofBytes);
        ASSERT_TRUE(proof);
        EXPECT_TRUE(ledger::verifyProof(root, q.key, value, *proof));
        EXPECT_TRUE(verifyAsDocumented(root, q.key, value, proofBytes));

        // A changed value (a present one altered, an absent one claimed), key or root fails.
        std::optional<Bytes> otherValue = value ? *value : Bytes{0x00};
        if (value) {
            otherValue->back() ^= 0x01;
        }
        EXPECT_FALSE(ledger::verifyProof(root, q.key, otherValue, *proof));
        EXPECT_FALSE(verifyAsDocumented(root, q.key, otherValue, proofBytes));
        if (value) {  // and a present key claimed absent
            EXPECT_FALSE(ledger::verifyProof(root, q.key, std::nullopt, *proof));
        }
        // A key on another path from the root (its first bit flipped) fails. Not for a
        // non-inclusion proof without siblings (a tree of one key): it rightly shows every other
        // key absent.
        const Hash256 otherKey = flipped(q.key, 0, 0x80);
        const bool keyBound = value.has_value() || !proof->siblings.empty();
        if (keyBound) {
            EXPECT_FALSE(ledger::verifyProof(root, otherKey, value, *proof));
            EXPECT_FALSE(verifyAsDocumented(root, otherKey, value, proofBytes));
        }
        const Hash256 otherRoot = flipped(root, i % 32, 0x01);
        EXPECT_FALSE(ledger::verifyProof(otherRoot, q.key, value, *proof));
        EXPECT_FALSE(verifyAsDocumented(otherRoot, q.key, value, proofBytes));

        // Every 50th query also through the CLI, offline: from the JSON, then with flags.
        if (i % 50 != 0) {
            continue;
        }
        const auto file = tmp / "proof.json";
        std::ofstream(file) << json::serialize(got);
        const auto out = tmp / "verify.out";
        const auto cli = [&](std::vector<std::string> args) {
            args.insert(args.begin(), "verify-proof");
            std::filesystem::remove(out);
            const int code = testing::runCommand(node_.bin(), args, out);
            std::ifstream in(out);
            std::stringstream printed;
            printed << in.rdbuf();
            return std::pair{code, printed.str()};
        };
        const auto [jsonCode, jsonOut] = cli({"--json", file.string()});
        EXPECT_EQ(jsonCode, 0) << jsonOut;
        EXPECT_TRUE(jsonOut.starts_with("valid")) << jsonOut;
        std::vector<std::string> flags{"--root",    root.hex(), "--key",
                                       q.key.hex(), "--proof",  text(got.at("proof"))};
        std::vector<std::string> claim = flags;
        if (value) {
            claim.insert(claim.end(), {"--value", toHex(*value)});
        } else {
            claim.push_back("--absent");
        }
        EXPECT_EQ(cli(claim).first, 0);
        EXPECT_EQ(cli({"--json", file.string(), "--root", otherRoot.hex()}).first, 1);
        std::vector<std::string> badKey{"--root",       root.hex(), "--key",
                                        otherKey.hex(), "--proof",  text(got.at("proof"))};
        if (value) {
            badKey.insert(badKey.end(), {"--value", toHex(*value)});
        }
        EXPECT_EQ(cli(badKey).first, keyBound ? 1 : 0);
        std::vector<std::string> badValue = flags;
        badValue.insert(badValue.end(), {"--value", toHex(*otherValue)});
        const auto [badCode, badOut] = cli(badValue);
        EXPECT_EQ(badCode, 1);
        EXPECT_TRUE(badOut.starts_with("invalid")) << badOut;
        cliRuns += 5;
    }
    EXPECT_EQ(cliRuns, 100U);
}

TEST_F(RpcStateProof, UnknownHeightsAndMalformedKeysGetStableReasons) {
    const std::string key = Hash256{}.hex();
    const auto head = std::stoull(text(call("chain_getHead", json::array{}).at("height")));
    rpc::test::expectRpcError(
        raw("state_getProof",
            json::array{json::string(key), json::string(std::to_string(head + 1'000))}),
        -32001, "not_found");
    rpc::test::expectRpcError(raw("state_getProof", json::array{"0x1234"}), -32602, "bad_length");
    rpc::test::expectRpcError(raw("state_getProof", json::array{"0xzz"}), -32602, "bad_hex");
    rpc::test::expectRpcError(raw("state_getProof", json::array{}), -32602, "invalid_argument");
    rpc::test::expectRpcError(raw("state_getProof", json::array{json::object{{"account", "0x12"}}}),
                              -32602, "bad_length");
    rpc::test::expectRpcError(
        raw("state_getProof", json::array{json::object{{"contract", Address{}.hex()}}}), -32602,
        "invalid_argument");
    rpc::test::expectRpcError(raw("state_getProof", json::array{json::string(key), "-1"}), -32602,
                              "invalid_argument");
    // Named parameters work too, and genesis (height 0) has a proof.
    const json::value genesis = call("state_getProof", json::object{{"key", key}, {"height", "0"}});
    ASSERT_TRUE(genesis.is_object());
    EXPECT_EQ(text(genesis.at("height")), "0");
    EXPECT_TRUE(genesis.at("value").is_null());
}

}  // namespace
}  // namespace gridledger::rpc_state_proof_test
