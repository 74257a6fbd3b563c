#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>

#include "support/temp_dir.h"

namespace gridledger::contracts {
namespace {

constexpr std::string_view kChain = "gridledger-test";
const u128 kDps = u128{1000000000000000000ULL};

class ExecutorTest : public ::testing::Test {
  protected:
    void SetUp() override {
        open();
        auto done = executor_->commitGenesis(genesis());
        ASSERT_TRUE(done) << done.error().message;
        genesisRoot_ = done->roots.stateRoot;
    }

    void open() {
        executor_.reset();
        blocks_.reset();
        tree_.reset();
        store_.reset();
        auto store = storage::KvStore::open(dir_.path(), ledger::columnNames());
        ASSERT_TRUE(store);
        store_ = std::move(*store);
        tree_ = std::make_unique<ledger::StateTree>(*store_, ledger::kStateNodesColumn,
                                                    ledger::kStateValuesColumn);
        blocks_ = std::make_unique<ledger::BlockStore>(*store_);
        executor_ = std::make_unique<Executor>(*store_, *tree_, *blocks_, std::string(kChain),
                                               signingDomainOf(genesis()));
    }

    [[nodiscard]] Genesis genesis() const {
        Genesis genesis;
        genesis.chainId = kChain;
        genesis.genesisTimeMs = 1000;
        genesis.validators.push_back(
            GenesisValidator{"v0", alice_.publicKey(), NodeId{}, address(alice_)});
        genesis.accounts.push_back(GenesisAccount{address(alice_), 100 * kDps});
        return genesis;
    }

    static Address address(const crypto::SecretKey& key) {
        return crypto::addressOf(key.publicKey());
    }

    /** The default fee of a transfer, which every transfer here pays. */
    static constexpr std::uint64_t kFee = FeeParams{}.byKind[0];

    Bytes transfer(const crypto::SecretKey& from, const crypto::SecretKey& to, std::uint64_t nonce,
                   u128 amount, std::string chain = std::string(kChain)) {
        const codec::Transfer payload{address(to), amount};
        codec::TxBody body{std::move(chain), from.publicKey(), nonce, 1000, payload, kFee};
        return codec::signTx(body, from, signingDomainOf(genesis())).raw;
    }

    Result<ExecutedBlock> run(std::vector<Bytes> txs) {
        auto height = blocks_->executedHeight();
        codec::BlockHeader header;
        header.height = **height + 1;
        header.round = header.height;
        return executor_->executeAndCommit(codec::makeBlock(header, std::move(txs)),
                                           codec::QuorumCert{}, nullptr);
    }

    Account account(const crypto::SecretKey& key) {
        auto height = blocks_->executedHeight();
        auto acc = readAccount(*tree_, **height, address(key));
        EXPECT_TRUE(acc);
        return *acc;
    }

    testing::TempDir dir_;
    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<ledger::StateTree> tree_;
    std::unique_ptr<ledger::BlockStore> blocks_;
    std::unique_ptr<Executor> executor_;
    crypto::SecretKey alice_ = crypto::SecretKey::generate();
    crypto::SecretKey bob_ = crypto::SecretKey::generate();
    Hash256 genesisRoot_;
};

TEST_F(ExecutorTest, TransferMovesBalanceAndBumpsNonce) {
    auto done = run({transfer(alice_, bob_, 0, 30 * kDps)});
    ASSERT_TRUE(done) << done.error().message;
    ASSERT_EQ(done->receipts.size(), 1U);
    EXPECT_TRUE(done->receipts[0].success());
    EXPECT_EQ(account(alice_), (Account{1, 70 * kDps - kFee}));
    EXPECT_EQ(account(bob_), (Account{0, 30 * kDps}));
    EXPECT_NE(done->roots.stateRoot, genesisRoot_);

    auto where = blocks_->locateTx(done->receipts[0].txHash);
    ASSERT_TRUE(where && *where);
    auto receipt = blocks_->receiptAt(**where);
    ASSERT_TRUE(receipt && *receipt);
    EXPECT_EQ(**receipt, done->receipts[0]);
    auto roots = blocks_->rootsAt(1);
    ASSERT_TRUE(roots && *roots);
    EXPECT_EQ(**roots, done->roots);
}

TEST_F(ExecutorTest, InsufficientBalanceFailsWithReceiptButConsumesTheNonce) {
    auto done = run({transfer(alice_, bob_, 0, 101 * kDps), transfer(alice_, bob_, 1, 1 * kDps)});
    ASSERT_TRUE(done);
    EXPECT_EQ(done->receipts[0].code, ErrorCode::kInsufficientBalance);
    EXPECT_TRUE(done->receipts[1].success());
    EXPECT_EQ(account(alice_), (Account{2, 99 * kDps - 2 * kFee}));
    EXPECT_EQ(account(bob_), (Account{0, 1 * kDps}));
}

TEST_F(ExecutorTest, InvalidTransactionsFailWithoutTouchingState) {
    Bytes badSig = transfer(alice_, bob_, 0, kDps);
    badSig[badSig.size() - 1] ^= 0x01;  // last byte of the signature
    auto done = run({
        Bytes{0xde, 0xad},                                 // garbage
        transfer(alice_, bob_, 0, kDps, "another-chain"),  // wrong chain
        badSig,                                            // bad signature
        transfer(alice_, bob_, 5, kDps),                   // nonce gap
        transfer(bob_, alice_, 0, kDps),                   // bob cannot pay the fee
    });
    ASSERT_TRUE(done);
    EXPECT_EQ(done->receipts[0].code, ErrorCode::kMalformed);
    EXPECT_EQ(done->receipts[1].code, ErrorCode::kWrongChainId);
    EXPECT_EQ(done->receipts[2].code, ErrorCode::kBadSignature);
    EXPECT_EQ(done->receipts[3].code, ErrorCode::kNonceGap);
    EXPECT_EQ(done->receipts[4].code, ErrorCode::kInsufficientFee);
    EXPECT_EQ(account(alice_), (Account{0, 100 * kDps}));
    EXPECT_EQ(account(bob_), (Account{0, 0})) << "bob's nonce is not consumed";
    EXPECT_EQ(done->roots.stateRoot, genesisRoot_) << "nothing was written";
}

// A copy of an earlier block's transaction fails from the state alone (its nonce is spent), as
// it does on a ledger started from a snapshot that never saw the first; a second copy in one
// block is a duplicate. The index keeps the first place.
TEST_F(ExecutorTest, ReplayedTransactionFailsOnItsSpentNonceAndKeepsItsFirstReceipt) {
    const Bytes tx = transfer(alice_, bob_, 0, kDps);
    auto first = run({tx});
    ASSERT_TRUE(first);
    auto second = run({tx, tx});
    ASSERT_TRUE(second);
    EXPECT_EQ(second->receipts[0].code, ErrorCode::kNonceTooLow);
    EXPECT_EQ(second->receipts[1].code, ErrorCode::kDuplicateTx);
    auto where = blocks_->locateTx(first->receipts[0].txHash);
    ASSERT_TRUE(where && *where);
    EXPECT_EQ((*where)->height, 1U);
    EXPECT_EQ(account(alice_).balance, 99 * kDps - kFee);
}

TEST_F(ExecutorTest, SameBlocksGiveSameRootsAfterReopen) {
    std::vector<Hash256> roots;
    for (std::uint64_t i = 0; i < 5; ++i) {
        auto done = run({transfer(alice_, bob_, i, kDps)});
        ASSERT_TRUE(done);
        roots.push_back(done->roots.stateRoot);
    }
    open();
    for (std::uint64_t h = 1; h <= 5; ++h) {
        auto stored = blocks_->rootsAt(h);
        ASSERT_TRUE(stored && *stored);
        EXPECT_EQ((*stored)->stateRoot, roots[h - 1]);
        EXPECT_EQ(*tree_->rootAt(h), roots[h - 1]);
    }
    EXPECT_EQ(account(alice_), (Account{5, 95 * kDps - 5 * kFee}));
}

TEST_F(ExecutorTest, BlockAtTheWrongHeightIsRefused) {
    codec::BlockHeader header;
    header.height = 7;
    auto done =
        executor_->executeAndCommit(codec::makeBlock(header, {}), codec::QuorumCert{}, nullptr);
    ASSERT_FALSE(done);
    EXPECT_EQ(done.error().code, ErrorCode::kInvalidBlock);
}

}  // namespace
}  // namespace gridledger::contracts
