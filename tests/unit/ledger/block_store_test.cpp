// The block store keeps a block's transaction receipts in one record: each reads back by its
// place and all of them at once, a place past the last reads as absent, the system receipt keeps
// a record of its own, receipts stored one record per transaction (as earlier versions did) still
// read, and a record that does not parse is reported corrupt rather than read.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/block.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/storage/kv_store.h>

#include "support/temp_dir.h"

namespace gridledger::ledger::block_store_test {
namespace {

constexpr std::uint64_t kHeight = 7;

codec::Receipt receiptNumber(std::uint32_t index) {
    codec::Receipt receipt;
    receipt.txHash = crypto::sha256(Bytes{static_cast<std::uint8_t>(index), 0x42});
    receipt.height = kHeight;
    receipt.index = index;
    receipt.code = index == 1 ? ErrorCode::kInsufficientBalance : ErrorCode::kOk;
    receipt.fee = 10 + index;
    return receipt;
}

Bytes receiptKey(std::uint64_t height, std::uint32_t index) {
    Bytes key;
    appendU64(key, height);
    appendU32(key, index);
    return key;
}

class BlockStoreTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto store = storage::KvStore::open(dir_.path(), columnNames(), storeOptions());
        ASSERT_TRUE(store) << store.error().message;
        store_ = std::move(*store);
        blocks_ = std::make_unique<BlockStore>(*store_);
    }

    /** Stages and writes a block at kHeight with `receipts`. */
    Status commit(const std::vector<codec::Receipt>& receipts) {
        codec::BlockHeader header;
        header.height = kHeight;
        header.round = kHeight;
        const codec::Block block = codec::makeBlock(header, {});
        std::vector<Bytes> encoded;
        encoded.reserve(receipts.size());
        for (const auto& receipt : receipts) {
            encoded.push_back(codec::encodeReceipt(receipt));
        }
        auto batch = store_->batch();
        GL_TRY(blocks_->stageExecuted(batch, block, codec::QuorumCert{}, receipts, encoded,
                                      ExecRoots{}));
        return store_->write(batch, false);
    }

    std::optional<codec::Receipt> read(std::uint32_t index) {
        auto receipt = blocks_->receiptAt(TxLocation{kHeight, index});
        EXPECT_TRUE(receipt) << receipt.error().message;
        return receipt ? *receipt : std::nullopt;
    }

    testing::TempDir dir_;
    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<BlockStore> blocks_;
};

TEST_F(BlockStoreTest, EachReceiptOfABlockReadsBackByItsPlace) {
    const std::vector<codec::Receipt> receipts{receiptNumber(0), receiptNumber(1),
                                               receiptNumber(2)};
    ASSERT_TRUE(commit(receipts));
    for (std::uint32_t i = 0; i < receipts.size(); ++i) {
        EXPECT_EQ(read(i), receipts[i]) << "receipt " << i;
        auto where = blocks_->locateTx(receipts[i].txHash);
        ASSERT_TRUE(where && *where);
        EXPECT_EQ((*where)->height, kHeight);
        EXPECT_EQ((*where)->index, i);
    }
    EXPECT_EQ(read(3), std::nullopt);
    EXPECT_EQ(blocks_->receiptAt(TxLocation{kHeight + 1, 0}).value(), std::nullopt);

    codec::Receipt system = receiptNumber(0);
    system.index = kSystemReceiptIndex;
    system.fee = 0;
    auto batch = store_->batch();
    blocks_->stageSystemReceipt(batch, kHeight, codec::encodeReceipt(system));
    ASSERT_TRUE(store_->write(batch, false));
    EXPECT_EQ(blocks_->systemReceiptAt(kHeight).value(), system);
    EXPECT_EQ(read(0), receipts[0]);  // the block's own record is untouched
    EXPECT_EQ(blocks_->receiptsAt(kHeight).value(), receipts);  // without the system receipt
    EXPECT_TRUE(blocks_->receiptsAt(kHeight + 1).value().empty());
}

TEST_F(BlockStoreTest, ReceiptsStoredOneRecordPerTransactionStillRead) {
    const std::vector<codec::Receipt> receipts{receiptNumber(0), receiptNumber(1)};
    codec::Receipt system = receiptNumber(2);
    system.index = kSystemReceiptIndex;
    for (const auto& receipt : {receipts[0], receipts[1], system}) {
        ASSERT_TRUE(store_->put(kReceiptsColumn, receiptKey(kHeight, receipt.index),
                                codec::encodeReceipt(receipt), false));
    }
    // The next block's receipts, one record per transaction too, are not this block's.
    ASSERT_TRUE(store_->put(kReceiptsColumn, receiptKey(kHeight + 1, 0),
                            codec::encodeReceipt(receiptNumber(3)), false));
    EXPECT_EQ(read(0), receipts[0]);
    EXPECT_EQ(read(1), receipts[1]);
    EXPECT_EQ(read(2), std::nullopt);
    EXPECT_EQ(blocks_->systemReceiptAt(kHeight).value(), system);
    EXPECT_EQ(blocks_->receiptsAt(kHeight).value(), receipts);
}

TEST_F(BlockStoreTest, ABlockRecordThatDoesNotParseIsCorrupt) {
    Bytes record;
    appendU32(record, 2);   // two receipts announced
    appendU32(record, 50);  // the first one 50 bytes long, and only 3 there
    record.insert(record.end(), {1, 2, 3});
    Bytes key;
    appendU64(key, kHeight);
    ASSERT_TRUE(store_->put(kReceiptsColumn, key, record, false));
    for (const std::uint32_t index : {0U, 1U, 5U}) {
        auto receipt = blocks_->receiptAt(TxLocation{kHeight, index});
        ASSERT_FALSE(receipt) << "receipt " << index;
        EXPECT_EQ(receipt.error().code, ErrorCode::kCorrupt);
    }
    auto all = blocks_->receiptsAt(kHeight);
    ASSERT_FALSE(all);
    EXPECT_EQ(all.error().code, ErrorCode::kCorrupt);
}

TEST_F(BlockStoreTest, ABlockRecordWithBytesPastItsLastReceiptIsCorrupt) {
    const Bytes encoded = codec::encodeReceipt(receiptNumber(0));
    Bytes record;
    appendU32(record, 1);
    appendU32(record, static_cast<std::uint32_t>(encoded.size()));
    append(record, encoded);
    record.push_back(0);
    Bytes key;
    appendU64(key, kHeight);
    ASSERT_TRUE(store_->put(kReceiptsColumn, key, record, false));
    auto receipt = blocks_->receiptAt(TxLocation{kHeight, 0});
    ASSERT_FALSE(receipt);
    EXPECT_EQ(receipt.error().code, ErrorCode::kCorrupt);
    record.pop_back();
    ASSERT_TRUE(store_->put(kReceiptsColumn, key, record, false));
    EXPECT_EQ(read(0), receiptNumber(0));
}

TEST_F(BlockStoreTest, ReceiptsOutOfTransactionOrderAreRefused) {
    const auto staged = commit({receiptNumber(1), receiptNumber(0)});
    ASSERT_FALSE(staged);
    EXPECT_EQ(staged.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace gridledger::ledger::block_store_test
