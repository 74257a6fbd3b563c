// The node's checks on itself: certified roots against its own execution, and the WAL fsync a
// message waits for.

#include "exec_check.h"

#include <gtest/gtest.h>

#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/columns.h>

#include "support/temp_dir.h"

namespace gridledger::node::exec_check_test {
namespace {

codec::BlockHeader certifying(const ledger::ExecRoots& roots) {
    codec::BlockHeader header;
    header.height = 12;
    header.execHeight = 10;
    header.execStateRoot = roots.stateRoot;
    header.execResultsRoot = roots.resultsRoot;
    return header;
}

const ledger::ExecRoots kRoots{crypto::sha256(asBytes("state")),
                               crypto::sha256(asBytes("results"))};

TEST(CertifiedRoots, TheNodesOwnRootsAtTheExecHeightPass) {
    EXPECT_TRUE(checkCertifiedRoots(certifying(kRoots), kRoots).has_value());
}

TEST(CertifiedRoots, AnotherStateRootIsDivergenceNamingHeightsAndBothRoots) {
    ledger::ExecRoots local = kRoots;
    local.stateRoot[0] ^= 0x01;
    const auto status = checkCertifiedRoots(certifying(kRoots), local);
    ASSERT_FALSE(status.has_value());
    EXPECT_EQ(status.error().code, ErrorCode::kDiverged);
    for (const std::string& part : {std::string("height=12"), std::string("exec_height=10"),
                                    kRoots.stateRoot.hex(), local.stateRoot.hex()}) {
        EXPECT_NE(status.error().message.find(part), std::string::npos) << part;
    }
}

TEST(CertifiedRoots, AnotherResultsRootOrNoneAtAllIsDivergence) {
    ledger::ExecRoots local = kRoots;
    local.resultsRoot[31] ^= 0x80;
    EXPECT_EQ(checkCertifiedRoots(certifying(kRoots), local).error().code, ErrorCode::kDiverged);
    EXPECT_EQ(checkCertifiedRoots(certifying(kRoots), std::nullopt).error().code,
              ErrorCode::kDiverged);
}

class SendBarrierTest : public ::testing::Test {
  protected:
    gridledger::testing::TempDir dir_;
    std::unique_ptr<storage::KvStore> store_ =
        storage::KvStore::open(dir_.path(), ledger::columnNames()).value();
    SendBarrier barrier_{*store_};

    void write(bool sync) {
        ASSERT_TRUE(store_->put(ledger::kConsensusColumn, asBytes("key"), asBytes("value"), sync));
        barrier_.wrote(sync);
    }
};

// A leader's proposal is written without an fsync of its own; the broadcast that follows must
// not leave before it is durable, or after a power loss the leader could propose again.
TEST_F(SendBarrierTest, AnUnsyncedWriteIsSyncedOnceBeforeTheNextMessage) {
    const std::uint64_t before = store_->walSyncs();
    write(false);
    write(false);
    EXPECT_TRUE(barrier_.pending());
    ASSERT_TRUE(barrier_.beforeSend().has_value());
    EXPECT_EQ(store_->walSyncs(), before + 1);
    EXPECT_FALSE(barrier_.pending());
    ASSERT_TRUE(barrier_.beforeSend().has_value());
    EXPECT_EQ(store_->walSyncs(), before + 1) << "nothing new to make durable";
}

TEST_F(SendBarrierTest, ASyncedWriteMakesEveryEarlierOneDurableSoNoSecondSyncIsMade) {
    write(false);
    write(true);
    const std::uint64_t afterSyncedWrite = store_->walSyncs();
    ASSERT_TRUE(barrier_.beforeSend().has_value());
    EXPECT_EQ(store_->walSyncs(), afterSyncedWrite);
}

}  // namespace
}  // namespace gridledger::node::exec_check_test
