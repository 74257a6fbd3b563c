// Mempool admission rate with signature verification spread over the verify pool, reported
// against the single-core verification rate measured in the same run (docs/benchmarks.md).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/ledger/mempool.h>

namespace gridledger {
namespace {

constexpr std::string_view kChain = "gridledger-bench";
/** The chain's signing domain, made on first use. */
const std::string& domain() {
    static const std::string value = crypto::chainDomain(kChain, Hash256{});
    return value;
}
constexpr std::uint64_t kSenders = 200;
constexpr std::uint64_t kNoncesPerSender = 50;

/** 10,000 signed transfers from 200 fresh accounts, nonces 0..49 each; built once. */
const std::vector<codec::SignedTx>& workload() {
    static const std::vector<codec::SignedTx> txs = [] {
        std::vector<codec::SignedTx> out;
        out.reserve(kSenders * kNoncesPerSender);
        Address to;
        to[0] = 0x42;
        for (std::uint64_t s = 0; s < kSenders; ++s) {
            const auto key = crypto::SecretKey::generate();
            for (std::uint64_t n = 0; n < kNoncesPerSender; ++n) {
                codec::TxBody body;
                body.chainId = std::string(kChain);
                body.sender = key.publicKey();
                body.nonce = n;
                body.validUntilHeight = 1000;
                body.payload = codec::Transfer{to, u128{1}};
                out.push_back(codec::signTx(body, key, domain()));
            }
        }
        return out;
    }();
    return txs;
}

/** The workload's raw bytes, as a node hands a body of them to Mempool::submitBatch. */
const std::vector<ByteView>& workloadRaws() {
    static const std::vector<ByteView> raws = [] {
        std::vector<ByteView> out;
        out.reserve(workload().size());
        for (const auto& tx : workload()) {
            out.emplace_back(tx.raw);
        }
        return out;
    }();
    return raws;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/** Transaction signatures verified per second by the calling thread alone. */
double verifyRatePerCore(const std::vector<codec::SignedTx>& txs) {
    const std::size_t count = std::min(txs.size(), std::size_t{4000});
    const auto start = std::chrono::steady_clock::now();
    std::size_t valid = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (crypto::verify(txs[i].body.sender, codec::txSigningDigest(txs[i], domain()),
                           txs[i].signature)) {
            ++valid;
        }
    }
    benchmark::DoNotOptimize(valid);
    return static_cast<double>(count) / secondsSince(start);
}

/**
 * Runs the benchmark's iterations, each into a fresh mempool made with `options`: `submitters`
 * threads each call `submit(pool, t)` (t = 0 .. submitters - 1), which must admit the whole
 * workload between them. Returns the transactions admitted per second of that admitting.
 */
template <typename Submit>
double admissionRate(benchmark::State& state, const ledger::MempoolOptions& options,
                     std::size_t submitters, const Submit& submit) {
    double admittingSeconds = 0;
    std::size_t admitted = 0;
    for ([[maybe_unused]] auto _ : state) {
        state.PauseTiming();
        ledger::Mempool pool(options, [](const Address&) {
            return Result<ledger::AccountView>(ledger::AccountView{});
        });
        state.ResumeTiming();

        const auto start = std::chrono::steady_clock::now();
        std::vector<std::thread> workers;
        for (std::size_t t = 0; t < submitters; ++t) {
            workers.emplace_back([&pool, &submit, t] { submit(pool, t); });
        }
        for (auto& worker : workers) {
            worker.join();
        }
        admittingSeconds += secondsSince(start);

        state.PauseTiming();
        admitted += pool.size();
        if (pool.size() != workload().size()) {
            state.SkipWithError("not every transaction was admitted");
        }
        state.ResumeTiming();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(admitted));
    return static_cast<double>(admitted) / admittingSeconds;
}

/** A mempool of the bench chain; without `verifySignatures`, every signature is taken as valid. */
ledger::MempoolOptions mempoolOptions(std::size_t verifierThreads, bool verifySignatures) {
    ledger::MempoolOptions options;
    options.chainId = std::string(kChain);
    options.signingDomain = domain();
    options.verifierThreads = verifierThreads;
    if (!verifySignatures) {
        options.verifier = [](const codec::SignedTx&) { return true; };
    }
    return options;
}

/**
 * Admits the whole workload into a fresh mempool from several submitting threads (submit is
 * synchronous, so it takes more submitters than verifier threads to keep the pool busy).
 * state.range(0) = verifier threads, 0 meaning one per hardware thread.
 */
void admit(benchmark::State& state, bool verifySignatures) {
    const auto& txs = workload();
    const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
    const auto verifierThreads = static_cast<std::size_t>(state.range(0));
    const std::size_t threads = verifierThreads == 0 ? cores : verifierThreads;
    const std::size_t submitters = threads * 4;
    const double perCore = verifyRatePerCore(txs);

    const double rate = admissionRate(state, mempoolOptions(threads, verifySignatures), submitters,
                                      [&txs, submitters](ledger::Mempool& pool, std::size_t t) {
                                          for (std::size_t i = t; i < txs.size(); i += submitters) {
                                              const auto hash = pool.submit(txs[i].raw);
                                              benchmark::DoNotOptimize(hash);
                                          }
                                      });
    state.counters["cores"] = static_cast<double>(cores);
    state.counters["verifier_threads"] = static_cast<double>(threads);
    state.counters["verify_per_core_per_s"] = perCore;
    state.counters["admitted_per_s"] = rate;
    if (verifySignatures) {
        state.counters["ratio_to_one_core"] = rate / perCore;
        state.counters["ratio_to_all_cores"] = rate / (perCore * static_cast<double>(cores));
    }
}
void mempoolAdmission(benchmark::State& state) {
    admit(state, true);
}
BENCHMARK(mempoolAdmission)
    ->Arg(1)
    ->Arg(0)
    ->Iterations(5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

/** The same without signature checks (a verifier that accepts all): the mempool's own cost. */
void mempoolAdmissionBookkeepingOnly(benchmark::State& state) {
    admit(state, false);
}
BENCHMARK(mempoolAdmissionBookkeepingOnly)
    ->Arg(0)
    ->Iterations(5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

/**
 * Admission in batches, as a node admits a `POST /txs` body, a peer's gossip or a member's
 * batch (Mempool::submitBatch): two submitters (the RPC threads) of `range(0)` transactions
 * each, with a verifier that accepts all, so that the figure is the bookkeeping per transaction.
 */
void mempoolBatchAdmissionBookkeepingOnly(benchmark::State& state) {
    const auto batchSize = static_cast<std::size_t>(state.range(0));
    constexpr std::size_t kSubmitters = 2;
    const auto& raws = workloadRaws();
    // Submitter t takes every other batch; a sender's nonces split between two batches may come
    // out of order, within the nonce window, which admits them.
    const double rate = admissionRate(
        state, mempoolOptions(0, false), kSubmitters,
        [&raws, batchSize](ledger::Mempool& pool, std::size_t t) {
            for (std::size_t first = t * batchSize; first < raws.size();
                 first += kSubmitters * batchSize) {
                const std::size_t count = std::min(batchSize, raws.size() - first);
                const auto outcomes =
                    pool.submitBatch(std::span<const ByteView>(raws).subspan(first, count));
                benchmark::DoNotOptimize(outcomes);
            }
        });
    state.counters["admitted_per_s"] = rate;
    state.counters["us_per_tx"] = 1e6 / rate;
}
BENCHMARK(mempoolBatchAdmissionBookkeepingOnly)
    ->Arg(256)
    ->Iterations(20)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

/**
 * The mempool's side of a commit, as a node's consensus thread calls it after each block
 * (Mempool::onCommitted): the whole workload admitted, then committed in blocks of 1,000 (five
 * nonces of each of the 200 senders), the account reader giving each sender's committed nonce.
 * The figure is the time of the onCommitted calls per committed transaction.
 */
void mempoolCommitBookkeeping(benchmark::State& state) {
    const auto& txs = workload();
    constexpr std::uint64_t kNoncesPerBlock = 5;
    // Read by the mempool without its lock while onCommitted runs, written only between calls.
    std::map<Address, std::uint64_t> committed;
    for (std::size_t s = 0; s < kSenders; ++s) {
        committed[txs[s * kNoncesPerSender].sender] = 0;
    }
    double committingSeconds = 0;
    std::size_t removed = 0;
    for ([[maybe_unused]] auto _ : state) {
        state.PauseTiming();
        for (auto& [sender, nonce] : committed) {
            nonce = 0;
        }
        ledger::Mempool pool(mempoolOptions(0, false), [&committed](const Address& sender) {
            return Result<ledger::AccountView>(ledger::AccountView{committed.at(sender), 0});
        });
        const auto outcomes = pool.submitBatch(workloadRaws());
        benchmark::DoNotOptimize(outcomes);
        if (pool.size() != txs.size()) {
            state.SkipWithError("not every transaction was admitted");
            break;
        }
        std::uint64_t height = 0;
        for (std::uint64_t first = 0; first < kNoncesPerSender; first += kNoncesPerBlock) {
            std::vector<Hash256> block;
            for (std::size_t s = 0; s < kSenders; ++s) {
                for (std::uint64_t n = first; n < first + kNoncesPerBlock; ++n) {
                    block.push_back(txs[s * kNoncesPerSender + n].hash);
                }
            }
            for (auto& [sender, nonce] : committed) {
                nonce = first + kNoncesPerBlock;
            }
            const auto start = std::chrono::steady_clock::now();
            pool.onCommitted(block, ++height);
            committingSeconds += secondsSince(start);
            removed += block.size();
        }
        if (pool.size() != 0) {
            state.SkipWithError("a committed transaction stayed in the mempool");
            break;
        }
        state.ResumeTiming();
    }
    state.counters["us_per_tx"] = 1e6 * committingSeconds / static_cast<double>(removed);
}
BENCHMARK(mempoolCommitBookkeeping)->Iterations(20)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gridledger

BENCHMARK_MAIN();
