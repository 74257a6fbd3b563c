// provider_list over a real executed chain (docs/rpc.md section 6.1): every provider once, in
// address order, across pages pinned to one height while more providers register; the status
// filter; cursors of another filter refused.

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include <gridledger/rpc/chain_methods.h>

#include "unit/contracts/chain_harness.h"

namespace gridledger::rpc::provider_list_test {
namespace {

using contracts::testing::addressOf;
using contracts::testing::Chain;
using contracts::testing::kDps;
using contracts::testing::kGenesisMs;
using contracts::testing::petaflopInventory;
using contracts::testing::testKey;
namespace json = boost::json;

constexpr std::uint8_t kFirstKey = 50;
constexpr std::uint8_t kProviders = 7;
constexpr std::uint8_t kAdmitted = 3;

class ProviderList : public ::testing::Test {
  protected:
    void SetUp() override {
        chain_ = std::make_unique<Chain>(contracts::testing::shortEpochGenesis(1, kDps));
        for (std::uint8_t i = 0; i < kProviders; ++i) {
            chain_->run(nextMs(), testKey(kFirstKey + i), petaflopInventory(100));
        }
        for (std::uint8_t i = 0; i < kAdmitted; ++i) {
            chain_->pass(nextMs(), codec::AdmitProvider{addressOf(testKey(kFirstKey + i))});
        }
        ChainContext ctx;
        ctx.chainId = chain_->genesis().chainId;
        ctx.blocks = &chain_->blocks();
        ctx.tree = &chain_->tree();
        ASSERT_TRUE(addChainMethods(table_, ctx));
    }

    std::uint64_t nextMs() { return kGenesisMs + 100 * ++blocks_; }

    Result<json::value> list(json::object params) {
        return (*table_.find("provider_list"))(json::value(std::move(params)));
    }

    /** Every page from `params` on, following next_cursor; the addresses and the page count. */
    std::pair<std::vector<std::string>, std::size_t> walk(json::object params,
                                                          const std::function<void()>& between) {
        std::vector<std::string> out;
        std::size_t pages = 0;
        std::string height;
        while (true) {
            auto page = list(params);
            EXPECT_TRUE(page) << page.error().message;
            if (!page) {
                break;
            }
            ++pages;
            if (height.empty()) {
                height = std::string(page->at("height").as_string());
            }
            EXPECT_EQ(page->at("height").as_string(), height);
            for (const auto& item : page->at("items").as_array()) {
                out.emplace_back(item.at("address").as_string());
                EXPECT_EQ(item.at("height").as_string(), height);
            }
            if (pages == 1 && between) {
                between();
            }
            if (page->at("next_cursor").is_null() || pages > 50) {
                break;
            }
            params["cursor"] = page->at("next_cursor");
        }
        return {out, pages};
    }

    std::unique_ptr<Chain> chain_;
    MethodTable table_;
    std::uint64_t blocks_ = 0;
};

TEST_F(ProviderList, PagesGiveEveryProviderOfThePinnedHeightOnceInAddressOrder) {
    std::set<std::string> expected;
    for (std::uint8_t i = 0; i < kProviders; ++i) {
        expected.insert(addressOf(testKey(kFirstKey + i)).hex());
    }
    const auto late = addressOf(testKey(kFirstKey + kProviders)).hex();
    const auto [seen, pages] = walk(json::object{{"limit", 2}}, [&] {
        chain_->run(nextMs(), testKey(kFirstKey + kProviders), petaflopInventory(100));
    });
    EXPECT_EQ(pages, 4U);  // 2 + 2 + 2 + 1
    EXPECT_EQ(seen.size(), expected.size());
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), expected);
    EXPECT_EQ(std::find(seen.begin(), seen.end(), late), seen.end());

    // At the head the late provider is there.
    auto now = list(json::object{});
    ASSERT_TRUE(now) << now.error().message;
    EXPECT_EQ(now->at("items").as_array().size(), kProviders + 1U);
    EXPECT_TRUE(now->at("next_cursor").is_null());
}

TEST_F(ProviderList, TheStatusFilterKeepsOnlyThatStatusAcrossPages) {
    const auto [admitted, admittedPages] =
        walk(json::object{{"status", "admitted"}, {"limit", 2}}, {});
    std::set<std::string> expected;
    for (std::uint8_t i = 0; i < kAdmitted; ++i) {
        expected.insert(addressOf(testKey(kFirstKey + i)).hex());
    }
    EXPECT_EQ(std::set<std::string>(admitted.begin(), admitted.end()), expected);
    EXPECT_EQ(admitted.size(), kAdmitted);
    const auto [registered, registeredPages] =
        walk(json::object{{"status", "registered"}, {"limit", 1}}, {});
    EXPECT_EQ(registered.size(), kProviders - kAdmitted);
    for (const auto& a : registered) {
        EXPECT_FALSE(expected.contains(a)) << a;
    }
}

TEST_F(ProviderList, CursorsOfAnotherFilterAndUnknownStatusesAreRefused) {
    auto page = list(json::object{{"status", "admitted"}, {"limit", 1}});
    ASSERT_TRUE(page) << page.error().message;
    ASSERT_TRUE(page->at("next_cursor").is_string());
    auto other = list(json::object{{"status", "registered"}, {"cursor", page->at("next_cursor")}});
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().code, ErrorCode::kMalformed);
    auto unfiltered = list(json::object{{"cursor", page->at("next_cursor")}});
    ASSERT_FALSE(unfiltered);
    EXPECT_EQ(unfiltered.error().code, ErrorCode::kMalformed);
    auto asleep = list(json::object{{"status", "asleep"}});
    ASSERT_FALSE(asleep);
    EXPECT_EQ(asleep.error().code, ErrorCode::kInvalidArgument);
    auto above = list(json::object{{"height", "1000"}});
    ASSERT_FALSE(above);
    EXPECT_EQ(above.error().code, ErrorCode::kInvalidArgument);
    auto huge = list(json::object{{"limit", 1001}});
    ASSERT_FALSE(huge);
    EXPECT_EQ(huge.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridledger::rpc::provider_list_test
