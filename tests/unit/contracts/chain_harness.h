#pragma once

// A chain for contract tests: a real RocksDB in a temp dir, the executor, deterministic keys,
// helpers that sign payloads with the right nonces and execute blocks at chosen timestamps.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/contracts/governance.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/providers.h>
#include <gridledger/contracts/settlement.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>

#include "support/temp_dir.h"

namespace gridledger::contracts::testing {

inline constexpr std::string_view kChain = "gridledger-contracts-test";
inline const u128 kDps = u128{1'000'000'000'000'000'000ULL};

/** A key derived from a small number, the same in every run. */
inline crypto::SecretKey testKey(std::uint8_t n) {
    std::array<std::uint8_t, 32> seed{};
    seed[0] = 0x42;
    seed[31] = n;
    return *crypto::SecretKey::fromBytes(seed);
}

inline Address addressOf(const crypto::SecretKey& key) {
    return crypto::addressOf(key.publicKey());
}

/**
 * A power index where a device at the reference bandwidth keeps its full FLOP/s: category "flat"
 * weighs only memory_bandwidth (reference 1000 GB/s) at 10 000 bps, so W = 1 for such a device.
 */
inline PowerIndexParams flatIndex() {
    PowerIndexParams index;
    index.factors = {{"memory_bandwidth", 1000}, {"memory_capacity", 80}};
    index.categories = {{"flat", {{"memory_bandwidth", 10'000}}, 1},
                        {"other", {{"memory_capacity", 10'000}}, 1}};
    return index;
}

/**
 * An inventory of `count` devices "pf1" of 1 PFLOP/s (10^6 GFLOP/s) each at the reference
 * bandwidth, serving "flat": each device counts 1 PFLOP/s, i.e. 1 GFL.
 */
inline codec::RegisterProvider petaflopInventory(std::uint64_t count) {
    codec::DeviceModel device;
    device.model = "pf1";
    device.count = count;
    device.peakGflops = 1'000'000;
    device.memoryBandwidthGbps = 1000;
    device.memoryCapacityGb = 80;
    return codec::RegisterProvider{{device}, {{"region", "eu"}}, {"flat"}};
}

inline codec::Attest petaflops(std::uint64_t epoch, std::uint64_t slot, std::uint64_t count) {
    codec::Attest a;
    a.epoch = epoch;
    a.slot = slot;
    a.category = "flat";
    a.devices = {{"pf1", count}};
    return a;
}

/** Short epochs: 10 slots of 1 s; genesis at kGenesisMs. */
inline constexpr std::uint64_t kGenesisMs = 1'000'000;
inline constexpr std::uint64_t kSlotMs = 1'000;
inline constexpr std::uint64_t kEpochMs = 10'000;

/**
 * What each validator key and each actor key (testKey(kFirstActor…kLastActor)) holds at genesis
 * in shortEpochGenesis, to pay its fees: fees are one base unit there, so balances stay whole
 * numbers of DPS plus this float minus the fees paid.
 */
inline constexpr u128 kFeeFloat = 1'000'000;
inline constexpr std::uint8_t kFirstActor = 20;
inline constexpr std::uint8_t kLastActor = 69;

/**
 * A genesis with `validators` validators (keys testKey(1…)), short epochs, the flat index, every
 * fee one base unit, no task creation deposit (tests of the deposit set one), and the validators
 * and actors funded with kFeeFloat.
 */
inline Genesis shortEpochGenesis(std::size_t validators, u128 pool) {
    Genesis g;
    g.chainId = std::string(kChain);
    g.genesisTimeMs = kGenesisMs;
    for (std::size_t i = 0; i < validators; ++i) {
        NodeId node;
        node[0] = static_cast<std::uint8_t>(i + 1);
        // For brevity each validator's account is its consensus key's address here; the
        // protocol allows it, and the CLI's homes keep the two apart (governance_test shows it).
        const auto key = testKey(static_cast<std::uint8_t>(i + 1));
        g.validators.push_back(
            GenesisValidator{"v" + std::to_string(i), key.publicKey(), node, addressOf(key)});
        g.accounts.push_back(GenesisAccount{addressOf(key), kFeeFloat});
    }
    for (auto n = kFirstActor; n <= kLastActor; ++n) {
        g.accounts.push_back(GenesisAccount{addressOf(testKey(n)), kFeeFloat});
    }
    g.fees.byKind.fill(1);
    g.tasks.creationDeposit = 0;
    g.tokenomics.epochMs = kEpochMs;
    g.tokenomics.slotMs = kSlotMs;
    g.rewardPool = pool;
    g.powerIndex = flatIndex();
    return g;
}

/** The executor over a fresh database, with nonce-tracking transaction builders. */
class Chain {
  public:
    explicit Chain(const Genesis& genesis) : genesis_(genesis) {
        auto store = storage::KvStore::open(dir_.path(), ledger::columnNames());
        EXPECT_TRUE(store) << store.error().message;
        store_ = std::move(*store);
        tree_ = std::make_unique<ledger::StateTree>(*store_, ledger::kStateNodesColumn,
                                                    ledger::kStateValuesColumn);
        blocks_ = std::make_unique<ledger::BlockStore>(*store_);
        executor_ = std::make_unique<Executor>(*store_, *tree_, *blocks_, genesis.chainId,
                                               signingDomainOf(genesis));
        auto done = executor_->commitGenesis(genesis);
        EXPECT_TRUE(done) << done.error().message;
    }

    /** The chain's signing domain, which every transaction here is signed in. */
    [[nodiscard]] std::string domain() const { return signingDomainOf(genesis_); }

    /**
     * Signs `payload` from `key` with its next nonce and the current fee of its kind (every tx
     * built must reach execution).
     */
    Bytes tx(const crypto::SecretKey& key, codec::Payload payload) {
        auto& nonce = nonces_[addressOf(key)];
        const std::uint64_t fee = params().fees.of(payload);
        codec::TxBody body{genesis_.chainId, key.publicKey(),    nonce++,
                           1'000'000,        std::move(payload), fee};
        const codec::SignedTx signedTx = codec::signTx(body, key, domain());
        senders_[signedTx.hash] = addressOf(key);
        return signedTx.raw;
    }

    /** Fees paid to the reward pool by the transactions of the blocks run so far. */
    [[nodiscard]] u128 feesPaid() const { return feesPaid_; }
    /** Fees paid by `who`'s transactions in the blocks run so far. */
    [[nodiscard]] u128 feesPaidBy(const Address& who) const {
        const auto paid = feesBy_.find(who);
        return paid == feesBy_.end() ? u128{0} : paid->second;
    }
    /** What is left of an actor's or validator's kFeeFloat after the fees it paid. */
    [[nodiscard]] u128 floatLeft(const Address& who) const { return kFeeFloat - feesPaidBy(who); }

    /** The next block at `timestampMs` with `txs`, executed and committed. */
    ExecutedBlock block(std::uint64_t timestampMs, std::vector<Bytes> txs) {
        const codec::Block b = makeBlock(timestampMs, std::move(txs));
        auto done = executor_->executeAndCommit(b, codec::QuorumCert{}, nullptr);
        EXPECT_TRUE(done) << done.error().message;
        blocksRun_.push_back(b);
        for (const auto& receipt : done ? done->receipts : std::vector<codec::Receipt>{}) {
            feesPaid_ += receipt.fee;
            if (const auto sender = senders_.find(receipt.txHash); sender != senders_.end()) {
                feesBy_[sender->second] += receipt.fee;
            }
        }
        return done ? std::move(*done) : ExecutedBlock{};
    }

    /** One transaction in its own block; returns its receipt. */
    codec::Receipt run(std::uint64_t timestampMs, const crypto::SecretKey& key,
                       codec::Payload payload) {
        auto done = block(timestampMs, {tx(key, std::move(payload))});
        EXPECT_EQ(done.receipts.size(), 1U);
        return done.receipts.empty() ? codec::Receipt{} : done.receipts[0];
    }

    /** The block the chain would execute next, at `timestampMs`. */
    codec::Block makeBlock(std::uint64_t timestampMs, std::vector<Bytes> txs) const {
        codec::BlockHeader header;
        header.height = height() + 1;
        header.round = header.height;
        header.timestampMs = timestampMs;
        return codec::makeBlock(header, std::move(txs));
    }

    [[nodiscard]] std::uint64_t height() const { return **blocks_->executedHeight(); }

    /** Proposes `action` from validator 1 and has every validator vote yes, in one block. */
    ExecutedBlock pass(std::uint64_t timestampMs, const codec::ProposalAction& action) {
        auto id = proposalCount();
        std::vector<Bytes> txs{tx(testKey(1), codec::Propose{action})};
        for (std::size_t i = 0; i < genesis_.validators.size(); ++i) {
            txs.push_back(
                tx(testKey(static_cast<std::uint8_t>(i + 1)), codec::ProposalVote{id, true}));
        }
        auto done = block(timestampMs, std::move(txs));
        for (const auto& r : done.receipts) {
            EXPECT_TRUE(r.success()) << reasonOf(r.code);
        }
        return done;
    }

    std::uint64_t proposalCount() const {
        StateLayer state(*tree_, height());
        return *loadProposalCount(state);
    }
    Account account(const Address& a) const { return *readAccount(*tree_, height(), a); }
    std::uint64_t gfl(const Address& a) const { return *readGfl(*tree_, height(), a); }
    TokenomicsState tokenomics() const { return *readTokenomics(*tree_, height()); }
    ValidatorSet validators() const { return *readValidatorSet(*tree_, height()); }
    ChainParams params() const { return *readParams(*tree_, height()); }
    std::optional<Proposal> proposal(std::uint64_t id) const {
        return *readProposal(*tree_, height(), id);
    }
    std::optional<Provider> provider(const Address& a) const {
        return *readProvider(*tree_, height(), a);
    }
    std::vector<Address> readVerifiers() const {
        return *contracts::readVerifiers(*tree_, height());
    }
    std::optional<EpochRecord> epochRecord(std::uint64_t epoch) const {
        return *readEpochRecord(*tree_, height(), epoch);
    }

    Executor& executor() { return *executor_; }
    ledger::StateTree& tree() { return *tree_; }
    storage::KvStore& store() { return *store_; }
    ledger::BlockStore& blocks() { return *blocks_; }
    const std::vector<codec::Block>& blocksRun() const { return blocksRun_; }
    const Genesis& genesis() const { return genesis_; }

  private:
    Genesis genesis_;
    gridledger::testing::TempDir dir_;
    std::unique_ptr<storage::KvStore> store_;
    std::unique_ptr<ledger::StateTree> tree_;
    std::unique_ptr<ledger::BlockStore> blocks_;
    std::unique_ptr<Executor> executor_;
    std::map<Address, std::uint64_t> nonces_;
    std::vector<codec::Block> blocksRun_;
    std::map<Hash256, Address> senders_;  // of the transactions tx() built
    u128 feesPaid_ = 0;
    std::map<Address, u128> feesBy_;
};

/** The events of `kind` in `events`. */
inline std::vector<codec::Event> eventsOf(const std::vector<codec::Event>& events,
                                          std::string_view kind) {
    std::vector<codec::Event> out;
    for (const auto& e : events) {
        if (e.kind == kind) {
            out.push_back(e);
        }
    }
    return out;
}

/** The value of attribute `key` of `event` ("" when absent). */
inline std::string attr(const codec::Event& event, std::string_view key) {
    for (const auto& [k, v] : event.attributes) {
        if (k == key) {
            return v;
        }
    }
    return "";
}

}  // namespace gridledger::contracts::testing
