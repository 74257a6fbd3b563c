// The list methods on a running node (docs/rpc.md section 6.1): task_list paged with a small
// limit while more tasks commit gives exactly the tasks of the pinned height, once each; a page at
// an older height shows that block's state; bad cursors, heights and limits are refused with
// -32602 and their reason token.

#include <algorithm>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>

#include "home.h"
#include "support/dev_chain.h"
#include "support/node_process.h"
#include "unit/rpc/http_test_client.h"

namespace gridledger::rpc_lists_test {
namespace {

namespace json = boost::json;

constexpr std::size_t kWave = 12;
constexpr std::uint64_t kPageLimit = 5;

std::string text(const json::value& v) {
    return std::string(v.as_string());
}

/** A task created by a transaction: its id (from the receipt's event) and its height. */
struct Created {
    std::string id;
    std::uint64_t height = 0;
};

class RpcLists : public ::testing::Test {
  protected:
    void SetUp() override {
        node_.start();
        dev_ = *node::Home(node_.home()).loadKey("dev");
        devAddress_ = crypto::addressOf(dev_.publicKey()).hex();
    }
    void TearDown() override { node_.stop(SIGTERM); }

    /** The JSON-RPC response (result or error) of one call. */
    json::value raw(const std::string& method, const json::value& params) {
        return rpc::test::HttpTestClient(node_.port()).call(method, params);
    }

    json::value result(const std::string& method, const json::value& params) {
        const json::value response = raw(method, params);
        EXPECT_TRUE(response.as_object().contains("result")) << json::serialize(response);
        return response.as_object().contains("result") ? response.at("result") : json::value();
    }

    /** Submits `count` task creations from dev and waits until every one has committed. */
    std::vector<Created> createTasks(std::size_t count) {
        const std::string domain = testing::signingDomainOfHome(node_.home());
        std::vector<std::string> hashes;
        for (std::size_t i = 0; i < count; ++i) {
            const codec::TxBody body{"gridledger-dev",
                                     dev_.publicKey(),
                                     nonce_++,
                                     50'000,
                                     codec::TaskCreate{"ml_training", 1'000'000, {}, 2, {}},
                                     testing::kDevFee};
            const json::value submitted =
                result("tx_submit",
                       json::array{json::string(toHex(codec::signTx(body, dev_, domain).raw))});
            hashes.push_back(text(submitted.at("hash")));
        }
        std::vector<Created> out;
        for (const auto& hash : hashes) {
            json::value receipt;
            EXPECT_TRUE(rpc::test::waitUntil(
                [&] {
                    auto tx = node_.call("tx_get", json::array{json::string(hash)});
                    if (tx && tx->at("status") == "committed") {
                        receipt = tx->at("receipt");
                        return true;
                    }
                    return false;
                },
                std::chrono::milliseconds(60'000)))
                << "tx " << hash << " never committed";
            if (!receipt.is_object()) {
                continue;
            }
            EXPECT_TRUE(receipt.at("success").as_bool()) << json::serialize(receipt);
            for (const auto& event : receipt.at("events").as_array()) {
                if (event.at("kind") == "task_created") {
                    out.push_back({text(event.at("attributes").at("task")),
                                   std::stoull(text(receipt.at("height")))});
                }
            }
        }
        EXPECT_EQ(out.size(), count);
        return out;
    }

    std::uint64_t head() {
        return std::stoull(text(result("chain_getHead", json::array{}).at("height")));
    }

    json::object consumerParams() const {
        return json::object{{"by", "consumer"}, {"key", devAddress_}};
    }

    testing::NodeProcess node_;
    crypto::SecretKey dev_ = crypto::SecretKey::generate();
    std::string devAddress_;
    std::uint64_t nonce_ = 0;
};

TEST_F(RpcLists, PagesWhileTasksCommitGiveExactlyTheTasksOfThePinnedHeight) {
    const std::vector<Created> first = createTasks(kWave);

    // Page 1 pins the height; more tasks commit before the later pages are read.
    json::object params = consumerParams();
    params["limit"] = kPageLimit;
    json::value page = result("task_list", params);
    ASSERT_TRUE(page.is_object());
    const std::string pinned = text(page.at("height"));
    std::vector<std::string> seen;
    std::size_t pages = 0;
    std::vector<Created> second;
    while (true) {
        ++pages;
        const auto& items = page.at("items").as_array();
        EXPECT_LE(items.size(), kPageLimit);
        for (const auto& item : items) {
            EXPECT_EQ(text(item.at("height")), pinned);
            EXPECT_EQ(text(item.at("consumer")), devAddress_);
            EXPECT_LE(std::stoull(text(item.at("created_height"))), std::stoull(pinned))
                << json::serialize(item);
            seen.push_back(text(item.at("id")));
        }
        if (pages == 1) {
            second = createTasks(kWave);
            ASSERT_GT(head(), std::stoull(pinned));
        }
        if (page.at("next_cursor").is_null()) {
            break;
        }
        ASSERT_LT(pages, 100U);
        json::object next = consumerParams();
        next["cursor"] = page.at("next_cursor");
        next["limit"] = kPageLimit;
        page = result("task_list", next);
        ASSERT_TRUE(page.is_object());
        EXPECT_EQ(text(page.at("height")), pinned);
    }

    std::set<std::string> expected;
    for (const auto& c : first) {
        expected.insert(c.id);
    }
    EXPECT_EQ(pages, (kWave + kPageLimit - 1) / kPageLimit);
    EXPECT_EQ(seen.size(), kWave) << "duplicates or later tasks in the pages";
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), expected);
    for (const auto& c : second) {
        EXPECT_EQ(std::find(seen.begin(), seen.end(), c.id), seen.end())
            << "a task committed after the pin";
    }

    // At the head, with one page of the largest size, both waves are there.
    json::object all = consumerParams();
    all["limit"] = 1000;
    const json::value now = result("task_list", all);
    EXPECT_EQ(now.at("items").as_array().size(), 2 * kWave);
    EXPECT_TRUE(now.at("next_cursor").is_null());

    // An older height shows that block's state: nothing before the first task, then exactly the
    // tasks committed up to the first task's block.
    const std::uint64_t firstHeight = std::ranges::min_element(first, {}, &Created::height)->height;
    json::object before = consumerParams();
    before["height"] = std::to_string(firstHeight - 1);
    const json::value empty = result("task_list", before);
    EXPECT_TRUE(empty.at("items").as_array().empty());
    EXPECT_TRUE(empty.at("next_cursor").is_null());
    EXPECT_EQ(text(empty.at("height")), std::to_string(firstHeight - 1));
    json::object at = consumerParams();
    at["height"] = std::to_string(firstHeight);
    const json::value atFirst = result("task_list", at);
    std::set<std::string> expectedAtFirst;
    for (const auto& c : first) {
        if (c.height <= firstHeight) {
            expectedAtFirst.insert(c.id);
        }
    }
    std::set<std::string> gotAtFirst;
    for (const auto& item : atFirst.at("items").as_array()) {
        EXPECT_EQ(text(item.at("state")), "pending");
        gotAtFirst.insert(text(item.at("id")));
    }
    EXPECT_FALSE(expectedAtFirst.empty());
    EXPECT_EQ(gotAtFirst, expectedAtFirst);
}

TEST_F(RpcLists, BadCursorsHeightsAndLimitsAreInvalidParamsWithTheirReason) {
    createTasks(3);
    json::object params = consumerParams();
    params["limit"] = 1;
    const json::value page = result("task_list", params);
    ASSERT_TRUE(page.at("next_cursor").is_string());
    const std::string cursor = text(page.at("next_cursor"));
    const std::string pinned = text(page.at("height"));

    const auto refused = [&](const json::object& p, std::string_view reason) {
        const json::value response = raw("task_list", p);
        ASSERT_TRUE(response.as_object().contains("error")) << json::serialize(response);
        EXPECT_EQ(response.at("error").at("code"), -32602) << json::serialize(response);
        EXPECT_EQ(text(response.at("error").at("data").at("reason")), reason)
            << json::serialize(response);
    };
    std::string changed = cursor;
    changed[10] = changed[10] == 'a' ? 'b' : 'a';
    json::object p = consumerParams();
    p["cursor"] = changed;
    refused(p, "malformed");
    p["cursor"] = "0x1234";
    refused(p, "malformed");
    p["cursor"] = "next please";
    refused(p, "malformed");
    // A cursor of another filter: the same list by state.
    refused(json::object{{"by", "state"}, {"key", "pending"}, {"cursor", cursor}}, "malformed");
    // Another height next to the cursor than the cursor's own.
    p = consumerParams();
    p["cursor"] = cursor;
    p["height"] = std::to_string(std::stoull(pinned) - 1);
    refused(p, "malformed");
    p = consumerParams();
    p["height"] = "999999999";
    refused(p, "invalid_argument");
    for (const json::value& limit :
         {json::value(0), json::value(1001), json::value(-1), json::value("5"), json::value(2.5)}) {
        p = consumerParams();
        p["limit"] = limit;
        refused(p, "invalid_argument");
    }
    // The same cursor with the same height is accepted and goes on from the cursor.
    p = consumerParams();
    p["cursor"] = cursor;
    p["height"] = pinned;
    p["limit"] = 1;
    const json::value next = result("task_list", p);
    ASSERT_EQ(next.at("items").as_array().size(), 1U);
    EXPECT_GT(text(next.at("items").at(0).at("id")), text(page.at("items").at(0).at("id")));

    const json::value providers = raw("provider_list", json::object{{"status", "asleep"}});
    EXPECT_EQ(providers.at("error").at("code"), -32602) << json::serialize(providers);
}

}  // namespace
}  // namespace gridledger::rpc_lists_test
