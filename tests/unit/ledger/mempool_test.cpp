#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/mempool.h>
#include <gridledger/ledger/verify_pool.h>

namespace gridledger::ledger::mempool_test {
namespace {

constexpr std::string_view kChain = "gridledger-test";
const std::string kDomain = crypto::chainDomain(kChain, Hash256{});

struct TransferSpec {
    std::uint64_t nonce = 0;
    std::uint64_t validUntil = 100;
    u128 amount = 1;
    std::optional<Address> to;
    std::string chainId{kChain};
    std::uint64_t fee = 0;
};

codec::TxBody transferBody(const PubKey& sender, const TransferSpec& spec) {
    codec::TxBody body;
    body.chainId = spec.chainId;
    body.sender = sender;
    body.nonce = spec.nonce;
    body.validUntilHeight = spec.validUntil;
    body.fee = spec.fee;
    Address other;
    other[0] = 0x42;
    body.payload = codec::Transfer{spec.to.value_or(other), spec.amount};
    return body;
}

codec::SignedTx signedTransfer(const crypto::SecretKey& key, const TransferSpec& spec = {}) {
    return codec::signTx(transferBody(key.publicKey(), spec), key, kDomain);
}

codec::SignedTx withNonce(const crypto::SecretKey& key, std::uint64_t nonce) {
    TransferSpec spec;
    spec.nonce = nonce;
    return signedTransfer(key, spec);
}

ErrorCode codeOf(const Result<Hash256>& result) {
    return result ? ErrorCode::kOk : result.error().code;
}

std::vector<Hash256> hashesOf(const std::vector<TxPtr>& txs) {
    std::vector<Hash256> out;
    out.reserve(txs.size());
    for (const TxPtr& tx : txs) {
        out.push_back(tx->hash);
    }
    return out;
}

/**
 * A verifier that counts its calls and can hold back one transaction until the test opens the
 * gate, so that tests can line up concurrent admissions without sleeping.
 */
class CountingVerifier {
  public:
    TxVerifier fn() {
        return [this](const codec::SignedTx& tx) {
            calls_.fetch_add(1);
            if (held_ && tx.hash == *held_) {
                entered_.set_value();
                open_.wait();
            }
            return codec::verifyTxSignature(tx, kDomain);
        };
    }
    /** Holds back the verification of `hash` until open(); returns when it has started. */
    std::future<void> hold(const Hash256& hash) {
        held_ = hash;
        return entered_.get_future();
    }
    /** Lets the held verification finish; idempotent. */
    void open() {
        std::call_once(opened_, [this] { gate_.set_value(); });
    }
    int calls() const { return calls_.load(); }

  private:
    std::atomic<int> calls_{0};
    std::optional<Hash256> held_;
    std::promise<void> entered_;
    std::promise<void> gate_;
    std::once_flag opened_;
    std::shared_future<void> open_ = gate_.get_future().share();
};

/** Opens the gate when a test leaves early, so that no worker stays held and joins hang. */
struct OpenOnExit {
    CountingVerifier& verifier;
    ~OpenOnExit() { verifier.open(); }
};

class MempoolTest : public ::testing::Test {
  protected:
    MempoolOptions options() {
        MempoolOptions out;
        out.chainId = std::string(kChain);
        out.signingDomain = kDomain;
        out.verifierThreads = 2;
        out.maxValidityBlocks = 1000;
        out.verifier = verifier_.fn();
        return out;
    }
    std::unique_ptr<Mempool> make(MempoolOptions opts) {
        return std::make_unique<Mempool>(std::move(opts), [this](const Address& account) {
            const std::lock_guard lock(noncesMutex_);
            const auto nonce = nonces_.find(account);
            const auto balance = balances_.find(account);
            return Result<AccountView>(
                AccountView{nonce == nonces_.end() ? 0 : nonce->second,
                            balance == balances_.end() ? u128{0} : balance->second});
        });
    }
    std::unique_ptr<Mempool> make() { return make(options()); }
    /** A mempool that holds at most `maxTxs` transactions. */
    std::unique_ptr<Mempool> holding(std::size_t maxTxs) {
        MempoolOptions opts = options();
        opts.maxTxs = maxTxs;
        return make(std::move(opts));
    }
    void setCommittedNonce(const crypto::SecretKey& key, std::uint64_t nonce) {
        const std::lock_guard lock(noncesMutex_);
        nonces_[crypto::addressOf(key.publicKey())] = nonce;
    }
    void setBalance(const crypto::SecretKey& key, u128 balance) {
        const std::lock_guard lock(noncesMutex_);
        balances_[crypto::addressOf(key.publicKey())] = balance;
    }
    /** A new key whose account holds 1,000. */
    crypto::SecretKey fundedKey() {
        auto key = crypto::SecretKey::generate();
        setBalance(key, 1'000);
        return key;
    }
    /** Submits `tx`, expects refusal with `code`, counted once, and no signature verified. */
    void expectCheapRefusal(Mempool& pool, const Bytes& raw, ErrorCode code) {
        const int before = verifier_.calls();
        const std::uint64_t counted = pool.counters().rejected(code);
        EXPECT_EQ(codeOf(pool.submit(raw)), code) << reasonOf(code);
        EXPECT_EQ(pool.counters().rejected(code), counted + 1);
        EXPECT_EQ(verifier_.calls(), before) << "refused before any signature verification";
    }

    CountingVerifier verifier_;
    std::mutex noncesMutex_;
    std::map<Address, std::uint64_t> nonces_;
    std::map<Address, u128> balances_;
    crypto::SecretKey alice_ = crypto::SecretKey::generate();
    crypto::SecretKey bob_ = crypto::SecretKey::generate();
};

// ---- admission ----

TEST_F(MempoolTest, AdmitsAValidTxOnceVerifiedAndReportsIt) {
    auto pool = make();
    const codec::SignedTx tx = signedTransfer(alice_);
    auto admitted = pool->submit(tx.raw);
    ASSERT_TRUE(admitted) << admitted.error().message;
    EXPECT_EQ(*admitted, tx.hash);
    EXPECT_TRUE(pool->contains(tx.hash));
    const ledger::KnownTx known = pool->known(tx.hash);
    EXPECT_TRUE(known.verified);
    ASSERT_NE(known.decoded, nullptr) << "a held transaction is given decoded";
    EXPECT_EQ(known.decoded->raw, tx.raw);
    EXPECT_EQ(known.decoded->sender, tx.sender);
    const auto pending = pool->get(tx.hash);
    ASSERT_TRUE(pending);
    EXPECT_EQ(pending->tx->raw, tx.raw);
    EXPECT_FALSE(pending->proposed);
    EXPECT_EQ(pool->size(), 1U);
    EXPECT_EQ(pool->bytes(), tx.raw.size());
    EXPECT_EQ(pool->counters().admitted.load(), 1U);
    EXPECT_EQ(verifier_.calls(), 1);
}

TEST_F(MempoolTest, RefusesAnotherChainIdWithWrongChainId) {
    auto pool = make();
    TransferSpec spec;
    spec.chainId = "gridledger-other";
    expectCheapRefusal(*pool, signedTransfer(alice_, spec).raw, ErrorCode::kWrongChainId);
}

TEST_F(MempoolTest, RefusesAFlippedSignatureByteWithBadSignature) {
    auto pool = make();
    Bytes raw = signedTransfer(alice_).raw;
    raw.back() ^= 0x01;  // the 64 signature bytes end the encoding
    EXPECT_EQ(codeOf(pool->submit(raw)), ErrorCode::kBadSignature);
    EXPECT_EQ(pool->counters().rejected(ErrorCode::kBadSignature), 1U);
    EXPECT_EQ(pool->size(), 0U);
}

TEST_F(MempoolTest, RefusesATxSignedByAnotherKeyThanItsSenderWithBadSignature) {
    auto pool = make();
    const codec::SignedTx forged =
        codec::signTx(transferBody(alice_.publicKey(), {}), bob_, kDomain);
    EXPECT_EQ(codeOf(pool->submit(forged.raw)), ErrorCode::kBadSignature);
    EXPECT_FALSE(pool->known(forged.hash).verified);
}

TEST_F(MempoolTest, RefusesAnExpiredTxWithExpired) {
    MempoolOptions opts = options();
    opts.committedHeight = 50;  // next height 51
    auto pool = make(opts);
    TransferSpec spec;
    spec.validUntil = 50;
    expectCheapRefusal(*pool, signedTransfer(alice_, spec).raw, ErrorCode::kExpired);
    spec.validUntil = 51;
    EXPECT_TRUE(pool->submit(signedTransfer(alice_, spec).raw));
}

TEST_F(MempoolTest, RefusesAnExpiryTooFarAheadWithInvalidArgument) {
    auto pool = make();  // next height 1, horizon 1000 blocks
    TransferSpec spec;
    spec.validUntil = 1002;
    expectCheapRefusal(*pool, signedTransfer(alice_, spec).raw, ErrorCode::kInvalidArgument);
}

TEST_F(MempoolTest, RefusesAnUsedNonceWithNonceTooLow) {
    auto pool = make();
    setCommittedNonce(alice_, 5);
    expectCheapRefusal(*pool, withNonce(alice_, 4).raw, ErrorCode::kNonceTooLow);
    EXPECT_TRUE(pool->submit(withNonce(alice_, 5).raw));
}

TEST_F(MempoolTest, RefusesASecondTxForAPendingNonceWithNonceTaken) {
    auto pool = make();
    ASSERT_TRUE(pool->submit(withNonce(alice_, 0).raw));
    TransferSpec spec;
    spec.amount = 2;
    expectCheapRefusal(*pool, signedTransfer(alice_, spec).raw, ErrorCode::kNonceTaken);
}

TEST_F(MempoolTest, RefusesANonceBeyondTheWindowWithNonceGap) {
    auto pool = make();
    setCommittedNonce(alice_, 10);
    expectCheapRefusal(*pool, withNonce(alice_, 10 + kDefaultNonceWindow).raw,
                       ErrorCode::kNonceGap);
    EXPECT_TRUE(pool->submit(withNonce(alice_, 10 + kDefaultNonceWindow - 1).raw));
}

TEST_F(MempoolTest, RefusesAPendingTxWithDuplicateTx) {
    auto pool = make();
    const codec::SignedTx tx = signedTransfer(alice_);
    ASSERT_TRUE(pool->submit(tx.raw));
    expectCheapRefusal(*pool, tx.raw, ErrorCode::kDuplicateTx);
    EXPECT_EQ(pool->size(), 1U);
}

TEST_F(MempoolTest, RefusesBeyondTheCountBoundWithMempoolFull) {
    auto pool = holding(2);
    ASSERT_TRUE(pool->submit(withNonce(alice_, 0).raw));
    ASSERT_TRUE(pool->submit(withNonce(alice_, 1).raw));
    expectCheapRefusal(*pool, withNonce(bob_, 0).raw, ErrorCode::kMempoolFull);
    EXPECT_EQ(pool->size(), 2U);
}

TEST_F(MempoolTest, RefusesBeyondTheByteBoundWithMempoolFull) {
    const codec::SignedTx first = withNonce(alice_, 0);
    MempoolOptions opts = options();
    opts.maxBytes = first.raw.size() * 2 + first.raw.size() / 2;
    auto pool = make(opts);
    ASSERT_TRUE(pool->submit(first.raw));
    ASSERT_TRUE(pool->submit(withNonce(alice_, 1).raw));
    expectCheapRefusal(*pool, withNonce(alice_, 2).raw, ErrorCode::kMempoolFull);
    EXPECT_LE(pool->bytes(), opts.maxBytes);
}

TEST_F(MempoolTest, RefusesAnOversizedTxWithTxTooLarge) {
    const codec::SignedTx tx = signedTransfer(alice_);
    MempoolOptions opts = options();
    opts.maxTxBytes = tx.raw.size() - 1;
    auto pool = make(opts);
    expectCheapRefusal(*pool, tx.raw, ErrorCode::kTxTooLarge);
    expectCheapRefusal(*pool, Bytes(codec::kMaxTxBytes + 1, 0x0a), ErrorCode::kTxTooLarge);
}

TEST_F(MempoolTest, RefusesAZeroTransferWithZeroAmount) {
    auto pool = make();
    TransferSpec spec;
    spec.amount = 0;
    expectCheapRefusal(*pool, signedTransfer(alice_, spec).raw, ErrorCode::kZeroAmount);
}

TEST_F(MempoolTest, RefusesATransferToTheSenderWithSelfTransfer) {
    auto pool = make();
    TransferSpec spec;
    spec.to = crypto::addressOf(alice_.publicKey());
    expectCheapRefusal(*pool, signedTransfer(alice_, spec).raw, ErrorCode::kSelfTransfer);
}

TEST_F(MempoolTest, GarbageIsRefusedWithoutCrashingOrVerifying) {
    auto pool = make();
    std::mt19937_64 rng(7);
    const Bytes valid = signedTransfer(alice_).raw;
    for (int i = 0; i < 250; ++i) {
        Bytes junk(rng() % 300);
        for (auto& b : junk) {
            b = static_cast<std::uint8_t>(rng());
        }
        EXPECT_FALSE(pool->submit(junk));
        const Bytes truncated(valid.begin(),
                              valid.begin() + static_cast<std::ptrdiff_t>(rng() % valid.size()));
        EXPECT_FALSE(pool->submit(truncated));
    }
    EXPECT_EQ(pool->size(), 0U);
    EXPECT_EQ(verifier_.calls(), 0);
}

// ---- fees, quotas and eviction ----

/** A transfer from `key` at `nonce` offering `fee`. */
codec::SignedTx paying(const crypto::SecretKey& key, std::uint64_t nonce, std::uint64_t fee) {
    TransferSpec spec;
    spec.nonce = nonce;
    spec.fee = fee;
    return signedTransfer(key, spec);
}

/** A mempool whose every payload kind costs `floor`. */
MempoolOptions withFloor(MempoolOptions opts, std::uint64_t floor) {
    opts.feeReader = [floor](const codec::Payload&) { return Result<std::uint64_t>(floor); };
    return opts;
}

TEST_F(MempoolTest, AFeeBelowTheKindsFeeIsRefusedBeforeAnySignatureIsVerified) {
    auto pool = make(withFloor(options(), 10));
    setBalance(alice_, 1'000);
    expectCheapRefusal(*pool, paying(alice_, 0, 9).raw, ErrorCode::kFeeTooLow);
    EXPECT_TRUE(pool->submit(paying(alice_, 0, 10).raw));
}

TEST_F(MempoolTest, AKeyThatHoldsNothingIsRefusedBeforeAnySignatureIsVerified) {
    auto pool = make(withFloor(options(), 10));
    const auto stranger = crypto::SecretKey::generate();
    expectCheapRefusal(*pool, paying(stranger, 0, 10).raw, ErrorCode::kInsufficientFee);
    EXPECT_EQ(pool->size(), 0U);
}

TEST_F(MempoolTest, TheSendersPendingFeesCountAgainstItsBalance) {
    auto pool = make(withFloor(options(), 10));
    setBalance(alice_, 25);
    const auto first = paying(alice_, 0, 10);
    ASSERT_TRUE(pool->submit(first.raw));
    ASSERT_TRUE(pool->submit(paying(alice_, 1, 10).raw));
    // 20 pending: the third fee of 10 is beyond the balance of 25, one of 5 would be below 10.
    expectCheapRefusal(*pool, paying(alice_, 2, 10).raw, ErrorCode::kInsufficientFee);
    // Once the first commits (its fee paid: 25 - 10 - 1 transferred), it no longer counts as
    // pending: 14 pays 10 pending and not 10 more; with 20 it does.
    setCommittedNonce(alice_, 1);
    setBalance(alice_, 14);
    pool->onCommitted(std::vector<Hash256>{first.hash}, 1);
    EXPECT_EQ(codeOf(pool->submit(paying(alice_, 2, 10).raw)), ErrorCode::kInsufficientFee);
    setBalance(alice_, 20);
    const auto admitted = pool->submit(paying(alice_, 2, 10).raw);
    EXPECT_TRUE(admitted) << admitted.error().message;
}

TEST_F(MempoolTest, WhenFullAHigherFeeEvictsTheCheapestSendersLastTransaction) {
    auto pool = holding(3);
    const auto carol = crypto::SecretKey::generate();
    setBalance(alice_, 1'000);
    setBalance(bob_, 1'000);
    setBalance(carol, 1'000);
    const auto a0 = paying(alice_, 0, 5);
    const auto a1 = paying(alice_, 1, 1);  // the cheapest, and alice's last
    const auto b0 = paying(bob_, 0, 3);
    for (const auto* tx : {&a0, &a1, &b0}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    const auto c0 = paying(carol, 0, 2);
    ASSERT_TRUE(pool->submit(c0.raw)) << "a fee of 2 outbids the fee of 1";
    EXPECT_FALSE(pool->contains(a1.hash));
    EXPECT_TRUE(pool->contains(a0.hash));
    EXPECT_EQ(pool->size(), 3U);
    EXPECT_EQ(pool->counters().evicted.load(), 1U);
    // Now the cheapest is carol's 2: an equal fee does not evict it, a higher one does.
    const auto stranger = crypto::SecretKey::generate();
    setBalance(stranger, 1'000);
    EXPECT_EQ(codeOf(pool->submit(paying(stranger, 0, 2).raw)), ErrorCode::kMempoolFull);
    ASSERT_TRUE(pool->submit(paying(stranger, 0, 4).raw));
    EXPECT_FALSE(pool->contains(c0.hash));
}

TEST_F(MempoolTest, EvictionNeverLeavesAGapInASendersRunAndSparesProposedTransactions) {
    auto pool = holding(3);
    setBalance(alice_, 1'000);
    setBalance(bob_, 1'000);
    const auto a0 = paying(alice_, 0, 1);
    const auto a1 = paying(alice_, 1, 9);
    const auto a2 = paying(alice_, 2, 9);
    for (const auto* tx : {&a0, &a1, &a2}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    // a0 is the cheapest but not alice's last: evicting it would strand a1 and a2.
    EXPECT_EQ(codeOf(pool->submit(paying(bob_, 0, 5).raw)), ErrorCode::kMempoolFull);
    ASSERT_TRUE(pool->submit(paying(bob_, 0, 10).raw));
    EXPECT_FALSE(pool->contains(a2.hash));
    EXPECT_TRUE(pool->contains(a0.hash));
    EXPECT_TRUE(pool->contains(a1.hash));
    // A transaction in a proposed block is never evicted: alice's last (9) is cheaper than
    // bob's 10, but once proposed it stays and bob's goes.
    const auto b0 = paying(bob_, 0, 10);
    pool->markProposed(std::vector<Hash256>{a1.hash});
    const auto carol = crypto::SecretKey::generate();
    setBalance(carol, 1'000);
    ASSERT_TRUE(pool->submit(paying(carol, 0, 100).raw));
    EXPECT_TRUE(pool->contains(a1.hash));
    EXPECT_FALSE(pool->contains(b0.hash));
}

TEST_F(MempoolTest, AFloodOfCheapTransactionsFromManyKeysCannotLockOutAHigherFee) {
    MempoolOptions opts = withFloor(options(), 1);
    opts.maxTxs = 200;
    auto pool = make(opts);
    std::vector<crypto::SecretKey> flood;
    for (int i = 0; i < 300; ++i) {
        flood.push_back(crypto::SecretKey::generate());
        setBalance(flood.back(), 10);
    }
    std::size_t refused = 0;
    for (const auto& key : flood) {
        refused += pool->submit(paying(key, 0, 1).raw) ? 0U : 1U;
    }
    EXPECT_EQ(pool->size(), 200U);
    EXPECT_EQ(refused, 100U) << "a full mempool refuses a fee that outbids nothing";
    setBalance(alice_, 1'000);
    const auto honest = paying(alice_, 0, 2);
    ASSERT_TRUE(pool->submit(honest.raw));
    EXPECT_TRUE(pool->contains(honest.hash));
    // And a key that holds nothing cannot even take part.
    const auto stranger = crypto::SecretKey::generate();
    EXPECT_EQ(codeOf(pool->submit(paying(stranger, 0, 1'000).raw)), ErrorCode::kInsufficientFee);
}

TEST_F(MempoolTest, CollectServesTheHigherFeeFirstAcrossSendersAndNonceOrderWithinOne) {
    auto pool = make();
    setBalance(alice_, 1'000);
    setBalance(bob_, 1'000);
    const auto a0 = paying(alice_, 0, 1);
    const auto a1 = paying(alice_, 1, 50);
    const auto b0 = paying(bob_, 0, 10);
    for (const auto* tx : {&a0, &a1, &b0}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    // bob's 10 beats alice's head of 1; alice's 50 waits for her nonce 0.
    EXPECT_EQ(hashesOf(pool->collect(10, std::size_t{1} << 20U)),
              (std::vector<Hash256>{b0.hash, a0.hash, a1.hash}));
}

// ---- ordering and block building ----

TEST_F(MempoolTest, OutOfOrderNoncesAreAdmittedButCollectTakesOnlyTheContiguousRun) {
    auto pool = make();
    const codec::SignedTx n0 = withNonce(alice_, 0);
    const codec::SignedTx n1 = withNonce(alice_, 1);
    const codec::SignedTx n2 = withNonce(alice_, 2);
    const codec::SignedTx n3 = withNonce(alice_, 3);
    ASSERT_TRUE(pool->submit(n2.raw));
    ASSERT_TRUE(pool->submit(n0.raw));
    ASSERT_TRUE(pool->submit(n3.raw));
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), std::vector<Hash256>{n0.hash});
    ASSERT_TRUE(pool->submit(n1.raw));
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)),
              (std::vector<Hash256>{n0.hash, n1.hash, n2.hash, n3.hash}));
}

TEST_F(MempoolTest, CollectStartsAtTheCommittedNonce) {
    setCommittedNonce(alice_, 7);
    auto pool = make();
    const codec::SignedTx n8 = withNonce(alice_, 8);
    ASSERT_TRUE(pool->submit(n8.raw));
    EXPECT_TRUE(pool->collect(100, 1 << 20).empty()) << "nonce 7 is missing";
    const codec::SignedTx n7 = withNonce(alice_, 7);
    ASSERT_TRUE(pool->submit(n7.raw));
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), (std::vector<Hash256>{n7.hash, n8.hash}));
}

TEST_F(MempoolTest, CollectSkipsProposedTxsUntilReleased) {
    auto pool = make();
    const codec::SignedTx n0 = withNonce(alice_, 0);
    const codec::SignedTx n1 = withNonce(alice_, 1);
    const codec::SignedTx n2 = withNonce(alice_, 2);
    for (const auto* tx : {&n0, &n1, &n2}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    const std::vector<Hash256> proposed{n0.hash, n1.hash};
    pool->markProposed(proposed);
    EXPECT_TRUE(pool->get(n0.hash)->proposed);
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), std::vector<Hash256>{n2.hash});
    pool->markProposed(std::vector<Hash256>{n2.hash});
    EXPECT_TRUE(pool->collect(100, 1 << 20).empty());
    pool->release(std::vector<Hash256>{n0.hash});
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), std::vector<Hash256>{n0.hash});
    pool->releaseAll();
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)),
              (std::vector<Hash256>{n0.hash, n1.hash, n2.hash}));
}

TEST_F(MempoolTest, CollectInterleavesSendersByArrivalWithinTheLimits) {
    auto pool = make();
    const codec::SignedTx a0 = withNonce(alice_, 0);
    const codec::SignedTx b0 = withNonce(bob_, 0);
    const codec::SignedTx a1 = withNonce(alice_, 1);
    const codec::SignedTx b1 = withNonce(bob_, 1);
    for (const auto* tx : {&a0, &b0, &a1, &b1}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    const std::vector<Hash256> all{a0.hash, b0.hash, a1.hash, b1.hash};
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), all);
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), all) << "collect is deterministic";
    EXPECT_EQ(hashesOf(pool->collect(3, 1 << 20)),
              (std::vector<Hash256>{a0.hash, b0.hash, a1.hash}));
    const std::size_t two = a0.raw.size() + b0.raw.size();
    EXPECT_EQ(hashesOf(pool->collect(100, two)), (std::vector<Hash256>{a0.hash, b0.hash}));
    EXPECT_TRUE(pool->collect(0, 1 << 20).empty());
}

TEST_F(MempoolTest, OnCommittedRemovesCommittedDropsStaleAndEvictsExpired) {
    auto pool = make();
    const codec::SignedTx a0 = withNonce(alice_, 0);
    const codec::SignedTx a1 = withNonce(alice_, 1);
    const codec::SignedTx a2 = withNonce(alice_, 2);
    TransferSpec shortLived;
    shortLived.validUntil = 20;
    const codec::SignedTx b0 = signedTransfer(bob_, shortLived);
    for (const auto* tx : {&a0, &a1, &a2, &b0}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    pool->markProposed(std::vector<Hash256>{a0.hash});

    // Height 25 commits a0 and another node's tx with alice's nonce 1: her next nonce is 2.
    setCommittedNonce(alice_, 2);
    const Hash256 foreign = withNonce(alice_, 1).hash;
    pool->onCommitted(std::vector<Hash256>{a0.hash, foreign}, 25);

    EXPECT_FALSE(pool->contains(a0.hash));
    EXPECT_FALSE(pool->contains(a1.hash)) << "nonce 1 is used by the committed tx";
    EXPECT_FALSE(pool->contains(b0.hash)) << "valid until 20 < next height 26";
    EXPECT_TRUE(pool->contains(a2.hash));
    EXPECT_EQ(pool->nextHeight(), 26U);
    EXPECT_EQ(pool->size(), 1U);
    EXPECT_EQ(pool->bytes(), a2.raw.size());
    EXPECT_EQ(pool->counters().committed.load(), 1U);
    EXPECT_EQ(pool->counters().stale.load(), 1U);
    EXPECT_EQ(pool->counters().expired.load(), 1U);
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), std::vector<Hash256>{a2.hash});
    expectCheapRefusal(*pool, a1.raw, ErrorCode::kNonceTooLow);
}

TEST_F(MempoolTest, EveryKindOfRemovalLeavesTheFeeAndExpiryOrdersWhole) {
    auto pool = holding(7);
    setBalance(alice_, 1'000);
    setBalance(bob_, 1'000);
    const auto carol = fundedKey();
    // Most of them share one last valid height, as a client's transactions often do.
    const auto spec = [](std::uint64_t nonce, std::uint64_t fee, std::uint64_t validUntil) {
        TransferSpec out;
        out.nonce = nonce;
        out.fee = fee;
        out.validUntil = validUntil;
        return out;
    };
    std::vector<codec::SignedTx> alice;
    for (std::uint64_t nonce = 0; nonce < 4; ++nonce) {
        alice.push_back(signedTransfer(alice_, spec(nonce, 5, 30)));
    }
    const auto b0 = signedTransfer(bob_, spec(0, 3, 30));
    const auto b1 = signedTransfer(bob_, spec(1, 2, 30));  // the cheapest, and bob's last
    const auto c0 = signedTransfer(carol, spec(0, 4, 60));
    for (const auto& tx : alice) {
        ASSERT_TRUE(pool->submit(tx.raw));
    }
    for (const auto* tx : {&b0, &b1, &c0}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    ASSERT_EQ(pool->size(), 7U);

    // Committed: alice's nonce 0; stale: her nonce 1, taken by another node's transaction.
    setCommittedNonce(alice_, 2);
    pool->onCommitted(std::vector<Hash256>{alice[0].hash, withNonce(alice_, 1).hash}, 10);
    EXPECT_EQ(pool->counters().committed.load(), 1U);
    EXPECT_EQ(pool->counters().stale.load(), 1U);
    // Evicted: two newcomers fill the room the removals made, and a third outbids bob's last.
    const auto dave = fundedKey();
    const auto erin = fundedKey();
    const auto frank = fundedKey();
    const auto d0 = signedTransfer(dave, spec(0, 6, 30));
    const auto e0 = signedTransfer(erin, spec(0, 6, 60));
    const auto f0 = signedTransfer(frank, spec(0, 7, 30));
    for (const auto* tx : {&d0, &e0, &f0}) {
        ASSERT_TRUE(pool->submit(tx->raw));
    }
    EXPECT_FALSE(pool->contains(b1.hash));
    EXPECT_EQ(pool->counters().evicted.load(), 1U);
    ASSERT_EQ(pool->size(), 7U);

    // Expired: every transaction valid until 30, whatever its arrival; those valid until 60 stay.
    pool->onCommitted({}, 30);
    EXPECT_EQ(pool->counters().expired.load(), 5U) << "alice's 2 and 3, b0, d0 and f0";
    EXPECT_EQ(pool->size(), 2U);
    EXPECT_EQ(pool->bytes(), c0.raw.size() + e0.raw.size());
    EXPECT_EQ(hashesOf(pool->collect(100, 1 << 20)), (std::vector<Hash256>{e0.hash, c0.hash}))
        << "the higher fee first";
    pool->onCommitted({}, 60);
    EXPECT_EQ(pool->size(), 0U);
    EXPECT_EQ(pool->bytes(), 0U);
    EXPECT_EQ(pool->counters().expired.load(), 7U);
}

// ---- verification once ----

TEST_F(MempoolTest, ABadSignatureIsVerifiedOnceAndItsVerdictRemembered) {
    auto pool = make();
    Bytes raw = signedTransfer(alice_).raw;
    raw.back() ^= 0x01;
    EXPECT_EQ(codeOf(pool->submit(raw)), ErrorCode::kBadSignature);
    EXPECT_EQ(codeOf(pool->submit(raw)), ErrorCode::kBadSignature);
    EXPECT_EQ(verifier_.calls(), 1);
}

TEST_F(MempoolTest, AProposalsUncachedSignaturesAreVerifiedOnceInABatchAndRemembered) {
    auto pool = make();
    const auto held = withNonce(alice_, 0);
    ASSERT_TRUE(pool->submit(held.raw).has_value());
    const int afterAdmission = verifier_.calls();
    const auto fresh = withNonce(bob_, 0);
    Bytes forged = withNonce(bob_, 1).raw;
    forged.back() ^= 0x01;
    const Hash256 forgedHash = crypto::sha256(forged);
    const std::vector<Bytes> block = {held.raw, fresh.raw, forged, Bytes{0x01, 0x02}};
    EXPECT_FALSE(pool->known(fresh.hash).verified);

    EXPECT_EQ(pool->verifyProposed(block), 2U);  // the held one and the undecodable one skipped
    EXPECT_EQ(verifier_.calls(), afterAdmission + 2);
    EXPECT_TRUE(pool->known(fresh.hash).verified);
    EXPECT_EQ(pool->known(fresh.hash).decoded, nullptr) << "verified, not held";
    EXPECT_FALSE(pool->known(forgedHash).verified);
    EXPECT_EQ(pool->size(), 1U) << "verified block txs are remembered, not admitted";

    EXPECT_EQ(pool->verifyProposed(block), 0U);
    EXPECT_EQ(verifier_.calls(), afterAdmission + 2);
}

TEST_F(MempoolTest, StartedChecksOfABlockRunOnTheWorkersAndAreRememberedOnlyWhenFinished) {
    auto pool = make();
    OpenOnExit opener{verifier_};
    const auto first = withNonce(bob_, 0);
    const auto second = withNonce(alice_, 0);
    Bytes forged = withNonce(bob_, 1).raw;
    forged.back() ^= 0x01;
    const Hash256 forgedHash = crypto::sha256(forged);
    const std::vector<Bytes> block = {first.raw, forged, second.raw, Bytes{0x01, 0x02}};

    std::future<void> entered = verifier_.hold(first.hash);
    Mempool::ProposedChecks checks = pool->startVerifyingProposed(block);
    entered.wait();  // a worker checks the block while this thread goes on
    EXPECT_FALSE(pool->known(first.hash).verified) << "nothing remembered before the end";
    verifier_.open();
    EXPECT_EQ(pool->finishVerifyingProposed(std::move(checks)), 3U);
    EXPECT_EQ(verifier_.calls(), 3);
    EXPECT_TRUE(pool->known(first.hash).verified);
    EXPECT_TRUE(pool->known(second.hash).verified);
    EXPECT_FALSE(pool->known(forgedHash).verified);
    EXPECT_EQ(pool->size(), 0U) << "checked, not admitted";

    // Judged transactions are not checked again; a dropped start remembers nothing.
    EXPECT_EQ(pool->finishVerifyingProposed(pool->startVerifyingProposed(block)), 0U);
    EXPECT_EQ(verifier_.calls(), 3);
    const auto later = withNonce(alice_, 1);
    { const Mempool::ProposedChecks dropped = pool->startVerifyingProposed({{later.raw}}); }
    EXPECT_FALSE(pool->known(later.hash).verified);
}

TEST_F(MempoolTest, ABatchIsVerifiedTogetherAndAdmittedInOrderEachWithItsOwnOutcome) {
    auto pool = make();
    Bytes forged = withNonce(bob_, 1).raw;
    forged.back() ^= 0x01;
    const Bytes first = withNonce(alice_, 0).raw;
    const std::vector<Bytes> raws = {first,
                                     withNonce(alice_, 1).raw,
                                     withNonce(bob_, 0).raw,
                                     forged,
                                     withNonce(alice_, kDefaultNonceWindow + 5).raw,
                                     Bytes{0x01, 0x02},
                                     first,
                                     withNonce(alice_, 1).raw};  // signed again: another tx
    const std::vector<ByteView> views(raws.begin(), raws.end());

    const auto outcomes = pool->submitBatch(views);
    ASSERT_EQ(outcomes.size(), raws.size());
    EXPECT_EQ(codeOf(outcomes[0]), ErrorCode::kOk);
    EXPECT_EQ(codeOf(outcomes[1]), ErrorCode::kOk);
    EXPECT_EQ(codeOf(outcomes[2]), ErrorCode::kOk);
    EXPECT_EQ(codeOf(outcomes[3]), ErrorCode::kBadSignature);
    EXPECT_EQ(codeOf(outcomes[4]), ErrorCode::kNonceGap);
    EXPECT_NE(codeOf(outcomes[5]), ErrorCode::kOk);
    EXPECT_EQ(codeOf(outcomes[6]), ErrorCode::kDuplicateTx) << "the same tx twice in one batch";
    EXPECT_EQ(codeOf(outcomes[7]), ErrorCode::kNonceTaken);
    EXPECT_EQ(*outcomes[0], crypto::sha256(raws[0]));
    EXPECT_EQ(pool->size(), 3U);
    // The three admitted and the forged one; the doomed, the undecodable and the repeated ones
    // cost nothing.
    EXPECT_EQ(verifier_.calls(), 4);
    EXPECT_EQ(pool->counters().admitted.load(), 3U);
}

TEST_F(MempoolTest, ABatchDoesNotWaitForOneSignatureBeforeVerifyingTheNext) {
    auto pool = make();
    OpenOnExit opener{verifier_};
    std::vector<Bytes> raws;
    for (std::uint64_t nonce = 0; nonce < 8; ++nonce) {
        raws.push_back(withNonce(alice_, nonce).raw);
    }
    const std::vector<ByteView> views(raws.begin(), raws.end());
    auto held = verifier_.hold(crypto::sha256(raws.front()));
    auto batch = std::async(std::launch::async, [&] { return pool->submitBatch(views); });
    held.wait();
    // While the first signature is held, the other seven are verified by the other threads.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (verifier_.calls() < 8 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
    }
    EXPECT_EQ(verifier_.calls(), 8);
    EXPECT_EQ(pool->size(), 0U) << "nothing is admitted before every verdict is known";
    verifier_.open();
    const auto outcomes = batch.get();
    for (const auto& outcome : outcomes) {
        EXPECT_TRUE(outcome.has_value());
    }
    EXPECT_EQ(pool->size(), 8U);
    EXPECT_EQ(verifier_.calls(), 8) << "each verified once";
}

TEST_F(MempoolTest, AVerifiedTxThatLostTheRaceIsNeverVerifiedAgain) {
    auto pool = make();
    TransferSpec shortLived;
    shortLived.validUntil = 20;
    const codec::SignedTx first = signedTransfer(alice_, shortLived);
    TransferSpec later;
    later.amount = 2;  // same nonce 0, another tx
    const codec::SignedTx second = signedTransfer(alice_, later);

    std::future<void> entered = verifier_.hold(second.hash);
    auto loser = std::async(std::launch::async, [&] { return pool->submit(second.raw); });
    const OpenOnExit guard{verifier_};
    entered.wait();  // `second` passed the cheap checks and is being verified
    ASSERT_TRUE(pool->submit(first.raw));
    verifier_.open();
    EXPECT_EQ(codeOf(loser.get()), ErrorCode::kNonceTaken);
    EXPECT_EQ(verifier_.calls(), 2);
    EXPECT_TRUE(pool->known(second.hash).verified) << "its verdict is cached though it was refused";

    pool->onCommitted({}, 20);  // `first` expires, nonce 0 is free again
    ASSERT_FALSE(pool->contains(first.hash));
    ASSERT_TRUE(pool->submit(second.raw));
    EXPECT_EQ(verifier_.calls(), 2) << "no second verification of `second`";
}

TEST_F(MempoolTest, ANonceReadBeforeACommitIsReadAgainSoTheTxIsNotStranded) {
    // Alice's nonce 0 is pending; nonce 1 is admitted while nonce 0 commits and leaves the pool.
    // Nonce 1 read the committed nonce (0) before that commit: it must not stay uncollectable.
    auto pool = make();
    const codec::SignedTx first = withNonce(alice_, 0);
    const codec::SignedTx second = withNonce(alice_, 1);
    ASSERT_TRUE(pool->submit(first.raw));

    std::future<void> entered = verifier_.hold(second.hash);
    auto admission = std::async(std::launch::async, [&] { return pool->submit(second.raw); });
    const OpenOnExit guard{verifier_};
    entered.wait();  // `second` read committed nonce 0 and is being verified
    setCommittedNonce(alice_, 1);
    const std::vector<Hash256> committed{first.hash};
    pool->onCommitted(committed, 1);
    ASSERT_EQ(pool->size(), 0U) << "alice holds nothing now";
    verifier_.open();
    ASSERT_TRUE(admission.get());

    EXPECT_EQ(hashesOf(pool->collect(10, 1 << 20)), std::vector<Hash256>{second.hash});
}

TEST_F(MempoolTest, ConcurrentSubmissionsOfOneTxShareOneVerification) {
    auto pool = make();
    const codec::SignedTx tx = signedTransfer(alice_);
    constexpr int kThreads = 8;
    std::latch start(kThreads);
    std::vector<std::future<Result<Hash256>>> results;
    results.reserve(kThreads);
    for (int i = 0; i < kThreads; ++i) {
        results.push_back(std::async(std::launch::async, [&] {
            start.arrive_and_wait();
            return pool->submit(tx.raw);
        }));
    }
    int admitted = 0;
    for (auto& result : results) {
        const Result<Hash256> r = result.get();
        if (r) {
            ++admitted;
        } else {
            EXPECT_EQ(r.error().code, ErrorCode::kDuplicateTx);
        }
    }
    EXPECT_EQ(admitted, 1);
    EXPECT_EQ(verifier_.calls(), 1);
}

// A validator receives a transaction in gossip from several peers, and in a proposal, often
// while it is still verifying the first copy: every later arrival waits for that verdict.
TEST_F(MempoolTest, ABlockHoldingATxThatABatchIsVerifyingWaitsForThatVerdictInsteadOfVerifying) {
    auto pool = make();
    const auto gossiped = withNonce(alice_, 0);
    const auto other = withNonce(bob_, 0);
    std::future<void> entered = verifier_.hold(gossiped.hash);
    const OpenOnExit guard{verifier_};
    auto batch = std::async(std::launch::async, [&] {
        const std::vector<ByteView> raws{ByteView(gossiped.raw)};
        return pool->submitBatch(raws);
    });
    entered.wait();  // the batch is verifying `gossiped`
    Mempool::ProposedChecks checks = pool->startVerifyingProposed({{gossiped.raw, other.raw}});
    verifier_.open();
    EXPECT_EQ(pool->finishVerifyingProposed(std::move(checks)), 1U) << "only `other` verified";
    EXPECT_TRUE(pool->known(gossiped.hash).verified);
    EXPECT_TRUE(pool->known(other.hash).verified);
    const auto outcomes = batch.get();
    ASSERT_EQ(outcomes.size(), 1U);
    EXPECT_TRUE(outcomes[0]);
    EXPECT_EQ(verifier_.calls(), 2);
}

TEST_F(MempoolTest, ASecondBatchOfATxThatABatchIsVerifyingWaitsForThatVerdict) {
    auto pool = make();
    const auto tx = withNonce(alice_, 0);
    const std::vector<ByteView> raws{ByteView(tx.raw)};
    std::future<void> entered = verifier_.hold(tx.hash);
    const OpenOnExit guard{verifier_};
    auto first = std::async(std::launch::async, [&] { return pool->submitBatch(raws); });
    entered.wait();  // the first batch is verifying `tx`
    auto second = std::async(std::launch::async, [&] { return pool->submitBatch(raws); });
    // Time for the second batch to find the first one's verification under way. Had it come
    // after that verification ended, it would have found the verdict and verified nothing either.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    verifier_.open();
    const auto a = first.get();
    const auto b = second.get();
    ASSERT_EQ(a.size(), 1U);
    ASSERT_EQ(b.size(), 1U);
    EXPECT_NE(a[0].has_value(), b[0].has_value()) << "admitted once";
    EXPECT_EQ(codeOf(a[0] ? b[0] : a[0]), ErrorCode::kDuplicateTx);
    EXPECT_EQ(verifier_.calls(), 1);
}

/**
 * A verifier that holds back each check of a transaction the test arms, until the test opens it;
 * an armed check may throw instead of judging, so that the pool gives kInternal and the mempool
 * remembers no verdict.
 */
class GatedVerifier {
  public:
    TxVerifier fn() {
        return [this](const codec::SignedTx& tx) {
            calls_.fetch_add(1);
            std::shared_ptr<Gate> gate;
            {
                const std::lock_guard lock(mutex_);
                if (const auto armed = gates_.find(tx.hash); armed != gates_.end()) {
                    gate = armed->second;
                    gates_.erase(armed);
                }
            }
            if (gate) {
                gate->entered.set_value();
                gate->opened.wait();
                if (gate->throws) {
                    throw std::runtime_error("held check fails");
                }
            }
            return codec::verifyTxSignature(tx, kDomain);
        };
    }
    /** Holds back the next check of `hash`; the future is ready once that check has begun. */
    std::future<void> hold(const Hash256& hash, bool throws = false) {
        auto gate = std::make_shared<Gate>();
        gate->throws = throws;
        gate->opened = gate->open.get_future().share();
        std::future<void> entered = gate->entered.get_future();
        const std::lock_guard lock(mutex_);
        gates_[hash] = gate;
        held_.push_back(gate);
        return entered;
    }
    int calls() const { return calls_.load(); }
    /** Lets the held check of the gate armed `index`-th (from 0) go on. */
    void open(std::size_t index) {
        const std::lock_guard lock(mutex_);
        openLocked(*held_.at(index));
    }
    ~GatedVerifier() {
        const std::lock_guard lock(mutex_);
        for (const auto& gate : held_) {
            openLocked(*gate);
        }
    }
    GatedVerifier() = default;
    GatedVerifier(const GatedVerifier&) = delete;
    GatedVerifier& operator=(const GatedVerifier&) = delete;

  private:
    struct Gate {
        bool throws = false;
        bool isOpen = false;
        std::promise<void> entered;
        std::promise<void> open;
        std::shared_future<void> opened;
    };
    static void openLocked(Gate& gate) {
        if (!gate.isOpen) {
            gate.isOpen = true;
            gate.open.set_value();
        }
    }
    std::atomic<int> calls_{0};
    std::mutex mutex_;
    std::map<Hash256, std::shared_ptr<Gate>> gates_;
    std::vector<std::shared_ptr<Gate>> held_;
};

TEST_F(MempoolTest, TwoBatchesThatEachVerifyATxOfTheOtherShareTheirVerdicts) {
    GatedVerifier verifier;  // declared before the pool, so that it opens its gates after
    MempoolOptions opts = options();
    opts.verifier = verifier.fn();
    auto pool = make(std::move(opts));
    const auto x = withNonce(alice_, 0);
    const auto y = withNonce(bob_, 0);
    // A single admission of x is under way while batch B lists its transactions, so B verifies
    // y alone; that check of x then fails without a verdict to remember.
    std::future<void> enteredX = verifier.hold(x.hash, true);
    auto single = std::async(std::launch::async, [&] { return pool->submit(x.raw); });
    enteredX.wait();
    std::future<void> enteredY = verifier.hold(y.hash);
    auto batchB = std::async(std::launch::async, [&] {
        const std::vector<ByteView> raws{ByteView(y.raw), ByteView(x.raw)};
        return pool->submitBatch(raws);
    });
    enteredY.wait();  // B is verifying y
    verifier.open(0);
    EXPECT_EQ(codeOf(single.get()), ErrorCode::kInternal);
    // Batch A comes while B verifies y: A verifies x alone and waits for B's verdict on y.
    enteredX = verifier.hold(x.hash);
    auto batchA = std::async(std::launch::async, [&] {
        const std::vector<ByteView> raws{ByteView(x.raw), ByteView(y.raw)};
        return pool->submitBatch(raws);
    });
    enteredX.wait();  // A is verifying x
    // B finishes y and goes on to x, which A is verifying, while A is still held.
    verifier.open(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    verifier.open(2);
    ASSERT_EQ(batchA.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "A waits for B's verdict on y while B waits for A's on x";
    ASSERT_EQ(batchB.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    const auto a = batchA.get();
    const auto b = batchB.get();
    ASSERT_EQ(a.size(), 2U);
    ASSERT_EQ(b.size(), 2U);
    EXPECT_TRUE(a[0]) << "A admits x";
    EXPECT_EQ(codeOf(a[1]), ErrorCode::kDuplicateTx) << "B admitted y";
    EXPECT_TRUE(b[0]) << "B admits y";
    EXPECT_EQ(codeOf(b[1]), ErrorCode::kDuplicateTx) << "A admitted x";
    EXPECT_EQ(verifier.calls(), 3) << "x checked by the single admission and by A, y by B";
}

TEST_F(MempoolTest, ConcurrentSubmittersAdmitEveryTxExactlyOnce) {
    constexpr int kThreads = 4;
    constexpr int kPerThread = 500;
    constexpr int kNoncesPerSender = 50;
    std::vector<codec::SignedTx> txs;
    std::size_t totalBytes = 0;
    for (int s = 0; s < kThreads * kPerThread / kNoncesPerSender; ++s) {
        const auto key = crypto::SecretKey::generate();
        for (int n = kNoncesPerSender - 1; n >= 0; --n) {  // highest nonce first
            txs.push_back(withNonce(key, static_cast<std::uint64_t>(n)));
            totalBytes += txs.back().raw.size();
        }
    }
    auto pool = make();
    // Every thread submits every tx, each starting at another quarter: 3 of 4 are duplicates.
    std::latch start(kThreads);
    std::vector<std::future<std::pair<int, int>>> results;
    results.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        results.push_back(std::async(std::launch::async, [&, t] {
            start.arrive_and_wait();
            int admitted = 0;
            int duplicates = 0;
            for (std::size_t i = 0; i < txs.size(); ++i) {
                const auto& tx = txs[(i + static_cast<std::size_t>(t * kPerThread)) % txs.size()];
                const auto r = pool->submit(tx.raw);
                admitted += r ? 1 : 0;
                duplicates += (!r && r.error().code == ErrorCode::kDuplicateTx) ? 1 : 0;
            }
            return std::pair{admitted, duplicates};
        }));
    }
    int admitted = 0;
    int duplicates = 0;
    for (auto& result : results) {
        const auto [a, d] = result.get();
        admitted += a;
        duplicates += d;
    }
    EXPECT_EQ(admitted, kThreads * kPerThread);
    EXPECT_EQ(duplicates, (kThreads - 1) * kThreads * kPerThread);
    EXPECT_EQ(pool->size(), txs.size());
    EXPECT_EQ(pool->bytes(), totalBytes);
    EXPECT_EQ(verifier_.calls(), kThreads * kPerThread);
    EXPECT_EQ(pool->counters().admitted.load(), txs.size());

    // Block building sees every sender's full run, each in nonce order.
    const auto collected = pool->collect(txs.size(), 1 << 30);
    ASSERT_EQ(collected.size(), txs.size());
    std::map<Address, std::uint64_t> expectedNonce;
    for (const TxPtr& tx : collected) {
        EXPECT_EQ(tx->body.nonce, expectedNonce[tx->sender]++);
    }
}

// ---- verify pool ----

/** Submits `tx` to `pool` and gives its verdict through a future. */
Result<std::future<Status>> verdictOf(VerifyPool& pool, TxPtr tx) {
    auto promise = std::make_shared<std::promise<Status>>();
    std::future<Status> verdict = promise->get_future();
    GL_TRY(pool.submit(std::move(tx),
                       [promise](Status status) { promise->set_value(std::move(status)); }));
    return verdict;
}

TEST(VerifyPool, DeliversVerdictsThroughFuturesAndCallbacks) {
    const auto key = crypto::SecretKey::generate();
    auto good = std::make_shared<const codec::SignedTx>(signedTransfer(key));
    codec::SignedTx badTx = signedTransfer(key);
    badTx.signature[0] ^= 0x01;
    auto bad = std::make_shared<const codec::SignedTx>(badTx);

    VerifyPool pool(
        VerifyPoolOptions{.threads = 2, .maxQueue = 16, .verifier = {}, .domain = kDomain});
    EXPECT_EQ(pool.threads(), 2U);
    auto goodVerdict = verdictOf(pool, good);
    auto badVerdict = verdictOf(pool, bad);
    ASSERT_TRUE(goodVerdict && badVerdict);
    EXPECT_TRUE(goodVerdict->get());
    EXPECT_EQ(badVerdict->get().error().code, ErrorCode::kBadSignature);

    std::promise<Status> viaCallback;
    ASSERT_TRUE(pool.submit(good, [&viaCallback](Status s) { viaCallback.set_value(s); }));
    EXPECT_TRUE(viaCallback.get_future().get());
    EXPECT_EQ(pool.verifiedCount(), 3U);
    EXPECT_EQ(pool.submit(nullptr, [](Status) {}).error().code, ErrorCode::kInvalidArgument);
}

TEST(VerifyPool, BatchReturnsPerTxResultsEvenAfterShutdown) {
    const auto key = crypto::SecretKey::generate();
    std::vector<codec::SignedTx> txs;
    std::vector<bool> expected;
    for (std::uint64_t i = 0; i < 60; ++i) {
        txs.push_back(withNonce(key, i));
        if (i % 3 == 0) {
            txs.back().signature[5] ^= 0x80;
        }
        expected.push_back(i % 3 != 0);
    }
    VerifyPool pool(
        VerifyPoolOptions{.threads = 3, .maxQueue = 16, .verifier = {}, .domain = kDomain});
    EXPECT_EQ(pool.verifyBatch(txs), expected);
    EXPECT_TRUE(pool.verifyBatch({}).empty());
    pool.shutdown();
    EXPECT_EQ(pool.verifyBatch(txs), expected) << "the caller verifies alone";
}

TEST(VerifyPool, AStartedBatchIsVerifiedByTheWorkersWhileTheCallerGoesOn) {
    const auto key = crypto::SecretKey::generate();
    std::vector<codec::SignedTx> txs;
    std::vector<bool> expected;
    for (std::uint64_t i = 0; i < 40; ++i) {
        txs.push_back(withNonce(key, i));
        if (i % 4 == 1) {
            txs.back().signature[9] ^= 0x04;
        }
        expected.push_back(i % 4 != 1);
    }
    CountingVerifier verifier;
    std::future<void> entered = verifier.hold(txs.front().hash);
    VerifyPool pool(VerifyPoolOptions{
        .threads = 1, .maxQueue = 1, .verifier = verifier.fn(), .domain = kDomain});
    const OpenOnExit guard{verifier};
    // The held signature would keep a caller that verified it waiting: startBatch returns while
    // the worker holds it, and is not refused although the batch is beyond the queue's bound.
    auto pending = pool.startBatch(txs);
    auto later = pool.startBatch(std::span(txs).last(4));
    entered.wait();
    verifier.open();
    EXPECT_EQ(pool.finishBatch(std::move(pending)), expected);
    EXPECT_EQ(pool.finishBatch(std::move(later)),
              std::vector<bool>(expected.end() - 4, expected.end()));
    EXPECT_EQ(verifier.calls(), 44);
    EXPECT_TRUE(pool.finishBatch(pool.startBatch({})).empty());

    VerifyPool stopped(
        VerifyPoolOptions{.threads = 2, .maxQueue = 16, .verifier = {}, .domain = kDomain});
    stopped.shutdown();
    EXPECT_EQ(stopped.finishBatch(stopped.startBatch(txs)), expected)
        << "the caller verifies alone";
}

TEST(VerifyPool, ADroppedBatchWithdrawsWhatNoWorkerTookAndWaitsForTheRunningCheck) {
    const auto key = crypto::SecretKey::generate();
    std::vector<codec::SignedTx> txs;
    for (std::uint64_t i = 0; i < 10; ++i) {
        txs.push_back(withNonce(key, i));
    }
    CountingVerifier verifier;
    std::future<void> entered = verifier.hold(txs.front().hash);
    VerifyPool pool(VerifyPoolOptions{
        .threads = 1, .maxQueue = 16, .verifier = verifier.fn(), .domain = kDomain});
    const OpenOnExit guard{verifier};
    auto pending = std::make_unique<VerifyPool::PendingBatch>(pool.startBatch(txs));
    entered.wait();  // the worker checks the first signature and holds
    auto dropper = std::async(std::launch::async, [&pending] { pending.reset(); });
    EXPECT_EQ(dropper.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout)
        << "the batch went while a worker still read its first transaction";
    verifier.open();
    dropper.get();
    EXPECT_EQ(verifier.calls(), 1) << "the nine signatures no worker took were withdrawn";
}

TEST(VerifyPool, AFullQueueRefusesAtOnceWithMempoolFull) {
    const auto key = crypto::SecretKey::generate();
    CountingVerifier verifier;
    auto first = std::make_shared<const codec::SignedTx>(withNonce(key, 0));
    std::future<void> entered = verifier.hold(first->hash);
    VerifyPool pool(VerifyPoolOptions{
        .threads = 1, .maxQueue = 2, .verifier = verifier.fn(), .domain = kDomain});
    const OpenOnExit guard{verifier};
    auto running = verdictOf(pool, first);
    ASSERT_TRUE(running);
    entered.wait();  // the only worker is busy: further jobs wait in the queue
    auto second = verdictOf(pool, std::make_shared<const codec::SignedTx>(withNonce(key, 1)));
    auto third = verdictOf(pool, std::make_shared<const codec::SignedTx>(withNonce(key, 2)));
    ASSERT_TRUE(second && third);
    auto refused = verdictOf(pool, std::make_shared<const codec::SignedTx>(withNonce(key, 3)));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kMempoolFull);
    EXPECT_EQ(pool.queued(), 2U);

    // A block's batch is not refused by the full queue.
    const std::vector<codec::SignedTx> block{withNonce(key, 4), withNonce(key, 5)};
    EXPECT_EQ(pool.verifyBatch(block), (std::vector<bool>{true, true}));

    verifier.open();
    EXPECT_TRUE(running->get());
    EXPECT_TRUE(second->get());
    EXPECT_TRUE(third->get());
}

TEST(VerifyPool, ShutdownWithQueuedWorkCancelsItFinishesTheRunningJobAndJoins) {
    const auto key = crypto::SecretKey::generate();
    CountingVerifier verifier;
    auto first = std::make_shared<const codec::SignedTx>(withNonce(key, 0));
    std::future<void> entered = verifier.hold(first->hash);
    VerifyPool pool(VerifyPoolOptions{
        .threads = 1, .maxQueue = 64, .verifier = verifier.fn(), .domain = kDomain});
    const OpenOnExit guard{verifier};
    auto running = verdictOf(pool, first);
    ASSERT_TRUE(running);
    entered.wait();
    std::vector<std::future<Status>> queued;
    for (std::uint64_t i = 1; i <= 10; ++i) {
        auto verdict = verdictOf(pool, std::make_shared<const codec::SignedTx>(withNonce(key, i)));
        ASSERT_TRUE(verdict);
        queued.push_back(std::move(*verdict));
    }
    auto stopper = std::async(std::launch::async, [&pool] { pool.shutdown(); });
    for (auto& verdict : queued) {
        EXPECT_EQ(verdict.get().error().code, ErrorCode::kUnavailable);
    }
    verifier.open();  // the running job completes, then shutdown joins its worker
    stopper.get();
    EXPECT_TRUE(running->get());
    EXPECT_EQ(verifier.calls(), 1);
    EXPECT_EQ(pool.queued(), 0U);
    EXPECT_EQ(verdictOf(pool, first).error().code, ErrorCode::kUnavailable);
    pool.shutdown();  // idempotent
}

TEST_F(MempoolTest, SubmissionsAfterShutdownAreRefusedWithUnavailable) {
    auto pool = make();
    ASSERT_TRUE(pool->submit(withNonce(alice_, 0).raw));
    pool->shutdown();
    EXPECT_EQ(codeOf(pool->submit(withNonce(alice_, 1).raw)), ErrorCode::kUnavailable);
    EXPECT_EQ(pool->size(), 1U);
}

// A member acknowledges a batch only when every signature in it is valid (docs/protocol.md §14).
TEST_F(MempoolTest, ABatchsSignaturesAreValidOnlyWhenEachIs) {
    auto pool = make();
    const auto good = withNonce(alice_, 0);
    const auto other = withNonce(bob_, 0);
    Bytes forged = withNonce(alice_, 1).raw;
    forged.back() ^= 0x01U;
    EXPECT_TRUE(pool->signaturesValid({{good.raw, other.raw}}));
    EXPECT_EQ(verifier_.calls(), 2);
    EXPECT_FALSE(pool->signaturesValid({{good.raw, forged}}));
    EXPECT_EQ(verifier_.calls(), 3) << "the good one's verdict was remembered";
    EXPECT_FALSE(pool->signaturesValid({{Bytes{0x01, 0x02}}})) << "one that does not decode";
}

// A certified batch's transactions are admitted without a verification of their own.
TEST_F(MempoolTest, ACertifiedTxIsKnownVerifiedAndAdmittedWithoutVerifying) {
    auto pool = make();
    const auto tx = withNonce(alice_, 0);
    pool->acceptCertified({{tx.raw}});
    EXPECT_TRUE(pool->known(tx.hash).verified);
    EXPECT_TRUE(pool->submit(tx.raw));
    EXPECT_EQ(verifier_.calls(), 0);
}

// A batching member proposes its own transactions once their batch is certified: a held one
// ends its sender's run, and holding off lets every one go.
TEST_F(MempoolTest, AHeldTxIsNotCollectedUntilReadyAndStopsItsSendersRun) {
    auto pool = make();
    pool->holdAdmissions(true);
    const auto first = withNonce(alice_, 0);
    const auto second = withNonce(alice_, 1);
    ASSERT_TRUE(pool->submit(first.raw));
    ASSERT_TRUE(pool->submit(second.raw));
    EXPECT_TRUE(pool->collect(100, 1 << 20).empty());
    pool->ready(std::vector<Hash256>{second.hash});
    EXPECT_TRUE(pool->collect(100, 1 << 20).empty()) << "nonce 1 waits for nonce 0";
    pool->ready(std::vector<Hash256>{first.hash});
    EXPECT_EQ(pool->collect(100, 1 << 20).size(), 2U);

    const auto third = withNonce(alice_, 2);
    ASSERT_TRUE(pool->submit(third.raw));
    EXPECT_EQ(pool->collect(100, 1 << 20).size(), 2U);
    pool->holdAdmissions(false);
    EXPECT_EQ(pool->collect(100, 1 << 20).size(), 3U);
}

}  // namespace
}  // namespace gridledger::ledger::mempool_test
