#include <map>
#include <memory>
#include <set>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>

#include "support/temp_dir.h"

namespace gridledger::contracts::executor_test {
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

    codec::Block nextBlock(std::vector<Bytes> txs) {
        auto height = blocks_->executedHeight();
        codec::BlockHeader header;
        header.height = **height + 1;
        header.round = header.height;
        return codec::makeBlock(header, std::move(txs));
    }

    Result<ExecutedBlock> run(std::vector<Bytes> txs, const KnownTxs& known = nullptr) {
        return executor_->executeAndCommit(nextBlock(std::move(txs)), codec::QuorumCert{}, known);
    }

    Account account(const crypto::SecretKey& key) {
        auto height = blocks_->executedHeight();
        auto acc = readAccount(*tree_, **height, address(key));
        EXPECT_TRUE(acc);
        return *acc;
    }

    gridledger::testing::TempDir dir_;
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
    EXPECT_EQ(account(alice_), (Account{2, 99 * kDps - u128{2} * kFee}));
    EXPECT_EQ(account(bob_), (Account{0, 1 * kDps}));
}

TEST_F(ExecutorTest, AFailedTransferLeavesOnlyItsFeeAndNonceAmongTheBlocksWrites) {
    // A transfer runs on the block's own layer: what it wrote before failing would stay.
    StateLayer state(*tree_, 0);
    auto done = executor_->execute(
        state,
        nextBlock({transfer(alice_, bob_, 0, 30 * kDps), transfer(bob_, alice_, 0, 31 * kDps),
                   transfer(alice_, bob_, 1, 71 * kDps)}),
        nullptr);
    ASSERT_TRUE(done) << done.error().message;
    EXPECT_TRUE(done->receipts[0].success());
    EXPECT_EQ(done->receipts[1].code, ErrorCode::kInsufficientBalance);
    EXPECT_EQ(done->receipts[2].code, ErrorCode::kInsufficientBalance);
    EXPECT_EQ(*loadAccount(state, address(alice_)), (Account{2, 70 * kDps - u128{2} * kFee}));
    EXPECT_EQ(*loadAccount(state, AccountSlot(address(bob_))), (Account{1, 30 * kDps - kFee}));
    // Alice, Bob and the reward pool: no write of the failed amounts.
    EXPECT_EQ(state.updates().size(), 3U);
}

TEST(AccountSlot, NamesTheSameStateEntryAsItsAddress) {
    const Address address = crypto::addressOf(crypto::SecretKey::generate().publicKey());
    const AccountSlot slot(address);
    EXPECT_EQ(slot.address, address);
    EXPECT_EQ(slot.key, accountKey(address));
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

// A transaction the caller knows decoded is executed from that decoding, and a known verdict
// stands for its signature check. The caller vouches that both come from the block's bytes: the
// mempool gives only what it decoded from bytes of the same hash. Garbage bytes whose hash is
// known as a valid transfer therefore execute as that transfer, which shows they were not decoded.
TEST_F(ExecutorTest, AKnownTransactionIsNeitherDecodedNorVerifiedAgain) {
    const Bytes garbage{0xde, 0xad};
    const Hash256 garbageHash = crypto::sha256(garbage);
    const auto decoded =
        std::make_shared<const codec::SignedTx>(*codec::decodeTx(transfer(alice_, bob_, 0, kDps)));
    const KnownTxs known = [&](const Hash256& hash) {
        return hash == garbageHash ? ledger::KnownTx{true, decoded} : ledger::KnownTx{};
    };
    auto done = run({garbage}, known);
    ASSERT_TRUE(done) << done.error().message;
    EXPECT_EQ(done->receipts[0].code, ErrorCode::kOk);
    EXPECT_EQ(done->receipts[0].txHash, garbageHash) << "a receipt names the block's bytes";
    EXPECT_EQ(account(bob_), (Account{0, kDps}));
}

TEST_F(ExecutorTest, AKnownDecodingWithoutAVerdictHasItsSignatureChecked) {
    Bytes forged = transfer(alice_, bob_, 0, kDps);
    forged.back() ^= 0x01;  // last byte of the signature
    const auto decoded = std::make_shared<const codec::SignedTx>(*codec::decodeTx(forged));
    const KnownTxs known = [&](const Hash256& hash) {
        return hash == decoded->hash ? ledger::KnownTx{false, decoded} : ledger::KnownTx{};
    };
    auto done = run({forged}, known);
    ASSERT_TRUE(done);
    EXPECT_EQ(done->receipts[0].code, ErrorCode::kBadSignature);
    EXPECT_EQ(account(alice_), (Account{0, 100 * kDps}));
}

// Given what a mempool would know (valid transactions decoded and verified, a forged one decoded
// without a verdict, garbage unknown), a block executes to the same receipts and state writes as
// when the executor decodes and verifies everything itself.
TEST_F(ExecutorTest, KnownTransactionsExecuteAsDecodedOnes) {
    Bytes forged = transfer(alice_, bob_, 1, kDps);
    forged.back() ^= 0x01;
    const Bytes first = transfer(alice_, bob_, 0, kDps);
    const std::vector<Bytes> txs{first,
                                 Bytes{0xde, 0xad},
                                 forged,
                                 first,
                                 transfer(alice_, bob_, 1, 2 * kDps),
                                 transfer(alice_, bob_, 2, 1000 * kDps),
                                 transfer(alice_, bob_, 9, kDps)};
    std::map<Hash256, ledger::KnownTx> held;
    for (const Bytes& raw : txs) {
        auto decoded = codec::decodeTx(raw);
        if (decoded) {
            const bool valid = codec::verifyTxSignature(*decoded, signingDomainOf(genesis()));
            const Hash256 hash = decoded->hash;
            held[hash] = {valid, std::make_shared<const codec::SignedTx>(std::move(*decoded))};
        }
    }
    ASSERT_EQ(held.size(), 5U);
    const KnownTxs known = [&held](const Hash256& hash) {
        const auto it = held.find(hash);
        return it == held.end() ? ledger::KnownTx{} : it->second;
    };
    const codec::Block block = nextBlock(txs);
    StateLayer own(*tree_, block.header.height - 1);
    StateLayer given(*tree_, block.header.height - 1);
    auto decodedHere = executor_->execute(own, block, nullptr);
    auto fromKnown = executor_->execute(given, block, known);
    ASSERT_TRUE(decodedHere);
    ASSERT_TRUE(fromKnown);
    ASSERT_EQ(decodedHere->receipts.size(), txs.size());
    ASSERT_EQ(fromKnown->receipts.size(), txs.size());
    std::set<ErrorCode> codes;
    for (std::size_t i = 0; i < txs.size(); ++i) {
        EXPECT_EQ(codec::encodeReceipt(fromKnown->receipts[i]),
                  codec::encodeReceipt(decodedHere->receipts[i]))
            << "receipt " << i;
        codes.insert(decodedHere->receipts[i].code);
    }
    EXPECT_EQ(codes.size(), 6U) << "success and five kinds of failure";
    const auto ownUpdates = own.updates();
    const auto givenUpdates = given.updates();
    ASSERT_FALSE(ownUpdates.empty());
    ASSERT_EQ(givenUpdates.size(), ownUpdates.size());
    for (std::size_t i = 0; i < ownUpdates.size(); ++i) {
        EXPECT_EQ(givenUpdates[i].key, ownUpdates[i].key);
        EXPECT_EQ(givenUpdates[i].value, ownUpdates[i].value);
    }
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

// Every later copy in the block is the duplicate, wherever it stands: the first keeps its place.
TEST_F(ExecutorTest, EachLaterCopyInABlockIsADuplicateWhereverItStands) {
    const Bytes first = transfer(alice_, bob_, 0, kDps);
    const Bytes second = transfer(alice_, bob_, 1, kDps);
    auto done = run({second, first, second, first, first, second});
    ASSERT_TRUE(done);
    ASSERT_EQ(done->receipts.size(), 6U);
    EXPECT_EQ(done->receipts[0].code, ErrorCode::kNonceGap);
    EXPECT_EQ(done->receipts[1].code, ErrorCode::kOk);
    for (const std::size_t i : {2U, 3U, 4U, 5U}) {
        EXPECT_EQ(done->receipts[i].code, ErrorCode::kDuplicateTx) << "receipt " << i;
    }
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
    EXPECT_EQ(account(alice_), (Account{5, 95 * kDps - u128{5} * kFee}));
}

// A ledger that keeps the state alone (a replay's scratch copy) executes the same blocks to the
// same receipts and roots as one that keeps the blocks, and stores their roots and its executed
// height, but neither the blocks, their certificates, receipts nor transaction index.
TEST_F(ExecutorTest, ALedgerWithoutBlocksReachesTheSameRootsAndStoresOnlyThem) {
    gridledger::testing::TempDir otherDir;
    auto otherStore = storage::KvStore::open(otherDir.path(), ledger::columnNames());
    ASSERT_TRUE(otherStore);
    ledger::StateTree otherTree(**otherStore, ledger::kStateNodesColumn,
                                ledger::kStateValuesColumn);
    ledger::BlockStore otherBlocks(**otherStore);
    Executor stateOnly(**otherStore, otherTree, otherBlocks, std::string(kChain),
                       signingDomainOf(genesis()));
    stateOnly.setKeepsBlocks(false);
    ASSERT_TRUE(stateOnly.commitGenesis(genesis()));

    const Bytes once = transfer(alice_, bob_, 0, kDps);
    // The second block repeats a committed transaction, which reads the index where one is kept.
    for (const std::vector<Bytes>& txs :
         {std::vector<Bytes>{once, transfer(alice_, bob_, 1, 2 * kDps)},
          std::vector<Bytes>{once, transfer(bob_, alice_, 0, kDps / 2), Bytes{0x01}}}) {
        const codec::Block block = nextBlock(txs);
        codec::QuorumCert qc;
        qc.round = block.header.round;
        qc.blockId = block.id;
        auto kept = executor_->executeAndCommit(block, qc, nullptr);
        auto alone = stateOnly.executeAndCommit(block, qc, nullptr);
        ASSERT_TRUE(kept && alone);
        EXPECT_EQ(alone->roots, kept->roots);
        ASSERT_EQ(alone->receipts.size(), txs.size());
        for (std::size_t i = 0; i < txs.size(); ++i) {
            EXPECT_EQ(codec::encodeReceipt(alone->receipts[i]),
                      codec::encodeReceipt(kept->receipts[i]));
        }
        const std::uint64_t h = block.header.height;
        EXPECT_EQ(*otherBlocks.executedHeight(), std::optional<std::uint64_t>(h));
        EXPECT_EQ(*otherBlocks.rootsAt(h), std::optional<ledger::ExecRoots>(kept->roots));
        EXPECT_TRUE(blocks_->blockAt(h)->has_value());
        EXPECT_FALSE(otherBlocks.blockAt(h)->has_value());
        EXPECT_FALSE(otherBlocks.certAt(h)->has_value());
        EXPECT_TRUE(otherBlocks.receiptsAt(h)->empty());
        EXPECT_FALSE(otherBlocks.locateTx(kept->receipts[1].txHash)->has_value());
    }
    const auto first = blocks_->locateTx(crypto::sha256(once));
    ASSERT_TRUE(first && *first);
    EXPECT_EQ((*first)->height, 1U);
    EXPECT_FALSE(otherBlocks.locateTx(crypto::sha256(once))->has_value());
    EXPECT_TRUE(otherBlocks.blockAt(0)->has_value()) << "genesis is stored whole";
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
}  // namespace gridledger::contracts::executor_test
