// block_getRaw over a real executed chain: the stored bytes of each block and certificate,
// the range and its limits, and the errors of bad ranges.

#include <gtest/gtest.h>

#include <gridledger/rpc/chain_methods.h>

#include "unit/contracts/chain_harness.h"

namespace gridledger::rpc::raw_blocks_test {
namespace {

using contracts::testing::addressOf;
using contracts::testing::Chain;
using contracts::testing::kDps;
using contracts::testing::kGenesisMs;
using contracts::testing::testKey;
namespace json = boost::json;

class RawBlocks : public ::testing::Test {
  protected:
    void SetUp() override {
        chain_ = std::make_unique<Chain>(contracts::testing::shortEpochGenesis(1, kDps));
        for (std::uint64_t i = 1; i <= kBlocks; ++i) {
            chain_->block(kGenesisMs + i * 100,
                          {chain_->tx(testKey(1), codec::Transfer{addressOf(testKey(2)), i})});
        }
        ChainContext ctx;
        ctx.chainId = chain_->genesis().chainId;
        ctx.blocks = &chain_->blocks();
        ctx.tree = &chain_->tree();
        ASSERT_TRUE(addChainMethods(table_, ctx));
    }

    Result<json::value> call(const json::value& params) {
        return (*table_.find("block_getRaw"))(params);
    }

    static constexpr std::uint64_t kBlocks = 5;
    std::unique_ptr<Chain> chain_;
    MethodTable table_;
};

TEST_F(RawBlocks, ServesTheStoredBytesOfEveryBlockAndCertificateFromGenesisUp) {
    auto out = call(json::object{{"from", "0"}, {"count", 256}});
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(out->at("chain_id").as_string(), chain_->genesis().chainId);
    EXPECT_EQ(out->at("executed_height").as_string(), std::to_string(kBlocks));
    const auto& blocks = out->at("blocks").as_array();
    ASSERT_EQ(blocks.size(), kBlocks + 1);  // the head ends the range
    for (std::uint64_t h = 0; h <= kBlocks; ++h) {
        const auto& entry = blocks[h].as_object();
        EXPECT_EQ(entry.at("height").as_string(), std::to_string(h));
        auto stored = chain_->blocks().blockAt(h);
        ASSERT_TRUE(stored && *stored);
        auto raw = fromHex(entry.at("block").as_string());
        ASSERT_TRUE(raw);
        EXPECT_EQ(*raw, codec::encodeBlock(**stored)) << h;
        auto decoded = codec::decodeBlock(*raw);
        ASSERT_TRUE(decoded);
        EXPECT_EQ(decoded->id, (*stored)->id);
        EXPECT_EQ(decoded->txs.size(), h == 0 ? 0U : 1U);
        auto roots = chain_->blocks().rootsAt(h);
        ASSERT_TRUE(roots && *roots);
        EXPECT_EQ(entry.at("state_root").as_string(), (*roots)->stateRoot.hex());
        EXPECT_EQ(entry.at("results_root").as_string(), (*roots)->resultsRoot.hex());
        // Every block has the certificate stored with it (the genesis QC at height 0).
        auto storedCert = chain_->blocks().certAt(h);
        ASSERT_TRUE(storedCert && *storedCert);
        auto cert = fromHex(entry.at("certificate").as_string());
        ASSERT_TRUE(cert);
        EXPECT_EQ(*cert, codec::encodeQc(**storedCert)) << h;
    }
}

TEST_F(RawBlocks, ARangeStartsAtFromAndDefaultsToOneBlock) {
    auto two = call(json::array{json::string("2"), 2});
    ASSERT_TRUE(two) << two.error().message;
    ASSERT_EQ(two->at("blocks").as_array().size(), 2U);
    EXPECT_EQ(two->at("blocks").at(0).at("height").as_string(), "2");
    EXPECT_EQ(two->at("blocks").at(1).at("height").as_string(), "3");
    auto one = call(json::object{{"from", std::to_string(kBlocks)}});
    ASSERT_TRUE(one) << one.error().message;
    ASSERT_EQ(one->at("blocks").as_array().size(), 1U);
    EXPECT_EQ(one->at("blocks").at(0).at("height").as_string(), std::to_string(kBlocks));
}

TEST_F(RawBlocks, RefusesHeightsAboveTheHeadAndCountsOutsideOneTo256) {
    auto above = call(json::object{{"from", std::to_string(kBlocks + 1)}});
    ASSERT_FALSE(above);
    EXPECT_EQ(above.error().code, ErrorCode::kNotFound);
    for (const std::uint64_t count : {std::uint64_t{0}, kMaxRawBlocks + 1}) {
        auto bad = call(json::object{{"from", "0"}, {"count", count}});
        ASSERT_FALSE(bad) << count;
        EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument) << count;
    }
    auto notDecimal = call(json::object{{"from", "-1"}});
    EXPECT_FALSE(notDecimal);
    auto unknown = call(json::object{{"from", "0"}, {"limit", 3}});
    EXPECT_FALSE(unknown);
}

}  // namespace
}  // namespace gridledger::rpc::raw_blocks_test
