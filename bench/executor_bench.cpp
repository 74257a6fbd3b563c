// Block execution rate: committed blocks of signed transfers executed through the accounts
// contract, the state tree and one RocksDB batch per block (unsynced, landing behind the next
// block's execution, as the node writes it).
#include <map>
#include <memory>
#include <vector>

#include <benchmark/benchmark.h>

#include <gridledger/codec/tx.h>

#include "ledger_fixture.h"

namespace gridledger {
namespace {

constexpr std::string_view kChain = "gridledger-bench";
/** The chain's signing domain, made on first use. */
const std::string& domain() {
    static const std::string value = crypto::chainDomain(kChain, Hash256{});
    return value;
}

struct Chain {
    bench::LedgerFixture ledger{kChain, domain()};
    std::vector<crypto::SecretKey> senders;
    std::vector<std::uint64_t> nonces;
    std::uint64_t height = 0;

    explicit Chain(std::size_t senderCount) {
        contracts::Genesis genesis;
        genesis.chainId = kChain;
        for (std::size_t i = 0; i < senderCount; ++i) {
            senders.push_back(crypto::SecretKey::generate());
            genesis.accounts.push_back(contracts::GenesisAccount{
                crypto::addressOf(senders.back().publicKey()), u128{1} << 100U});
        }
        nonces.assign(senderCount, 0);
        (void)ledger.executor->commitGenesis(genesis);
    }

    /** `count` transfers to fresh recipients, round-robin over the senders. */
    std::vector<ledger::TxPtr> signedTransfers(std::size_t count) {
        std::vector<ledger::TxPtr> txs;
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t s = i % senders.size();
            Address to;
            to[0] = static_cast<std::uint8_t>(i);
            to[1] = static_cast<std::uint8_t>(i >> 8U);
            to[2] = static_cast<std::uint8_t>(height);
            const codec::Transfer transfer{to, u128{1000}};
            const std::uint64_t fee = contracts::FeeParams{}.of(codec::Payload{transfer});
            codec::TxBody body{
                std::string(kChain), senders[s].publicKey(), nonces[s]++, 1'000'000, transfer, fee};
            txs.push_back(
                std::make_shared<const codec::SignedTx>(codec::signTx(body, senders[s], domain())));
        }
        return txs;
    }
};

/** One block of signed transfers, with the mempool's view of its transactions. */
struct PreparedBlock {
    codec::Block block;
    std::map<Hash256, ledger::TxPtr> held;
};

/** Blocks each run executes, signed before it starts. */
constexpr std::int64_t kBlocksPerRun = 64;

/**
 * Executes kBlocksPerRun blocks of `range(0)` transfers, one after the other. With `range(1)`, the
 * transactions are known decoded and verified, as a node's mempool holds those it admitted
 * (Mempool::known); without, execution decodes them and verifies their signatures. A block's
 * write lands behind the next block's execution, as in the node (KvStore::writeBehind); the last
 * block's write lands inside the timing.
 */
void executeBlock(benchmark::State& state) {
    const auto txsPerBlock = static_cast<std::size_t>(state.range(0));
    const bool cached = state.range(1) != 0;
    Chain chain(256);
    std::vector<PreparedBlock> blocks;
    for (std::int64_t i = 0; i < kBlocksPerRun; ++i) {
        PreparedBlock& prepared = blocks.emplace_back();
        std::vector<Bytes> raws;
        for (const auto& tx : chain.signedTransfers(txsPerBlock)) {
            raws.push_back(tx->raw);
            prepared.held.emplace(tx->hash, tx);
        }
        codec::BlockHeader header;
        header.height = ++chain.height;
        header.round = header.height;
        prepared.block = codec::makeBlock(header, std::move(raws));
    }
    std::size_t next = 0;
    for ([[maybe_unused]] auto _ : state) {
        const PreparedBlock& prepared = blocks.at(next++);
        const contracts::KnownTxs known = [&prepared](const Hash256& hash) {
            const auto it = prepared.held.find(hash);
            return it == prepared.held.end() ? ledger::KnownTx{}
                                             : ledger::KnownTx{true, it->second};
        };
        auto done = chain.ledger.executor->executeAndCommit(prepared.block, codec::QuorumCert{},
                                                            cached ? known : nullptr);
        const Status landed =
            done && next == blocks.size() ? chain.ledger.store->settle() : Status{};
        if (!done || !landed) {
            state.SkipWithError((done ? landed.error() : done.error()).message.c_str());
            return;
        }
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
    state.SetLabel(cached ? "transactions decoded and verified by the mempool"
                          : "signatures verified here");
}
BENCHMARK(executeBlock)
    ->Args({1000, 1})
    ->Args({1000, 0})
    ->Iterations(kBlocksPerRun)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gridledger

BENCHMARK_MAIN();
