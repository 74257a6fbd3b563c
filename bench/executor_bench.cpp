// Block execution rate: committed blocks of signed transfers executed through the accounts
// contract, the state tree and one RocksDB batch per block (unsynced, as the node writes it).
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

/**
 * Executes blocks of `range(0)` transfers. With `range(1)`, the transactions are known decoded and
 * verified, as a node's mempool holds those it admitted (Mempool::known); without, execution
 * decodes them and verifies their signatures.
 */
void executeBlock(benchmark::State& state) {
    const auto txsPerBlock = static_cast<std::size_t>(state.range(0));
    const bool cached = state.range(1) != 0;
    Chain chain(256);
    for ([[maybe_unused]] auto _ : state) {
        state.PauseTiming();
        const auto txs = chain.signedTransfers(txsPerBlock);
        std::vector<Bytes> raws;
        std::map<Hash256, ledger::TxPtr> held;
        for (const auto& tx : txs) {
            raws.push_back(tx->raw);
            held.emplace(tx->hash, tx);
        }
        codec::BlockHeader header;
        header.height = ++chain.height;
        header.round = header.height;
        const codec::Block block = codec::makeBlock(header, std::move(raws));
        const contracts::KnownTxs known = [&held](const Hash256& hash) {
            const auto it = held.find(hash);
            return it == held.end() ? ledger::KnownTx{} : ledger::KnownTx{true, it->second};
        };
        state.ResumeTiming();
        auto done = chain.ledger.executor->executeAndCommit(block, codec::QuorumCert{},
                                                            cached ? known : nullptr);
        if (!done) {
            state.SkipWithError(done.error().message.c_str());
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
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace gridledger

BENCHMARK_MAIN();
