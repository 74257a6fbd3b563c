// Per-block commit cost and resident memory against the number of accounts (docs/benchmarks.md):
// the same kind of block (1,000 transfers from 1,000 senders, each to an account drawn from the
// whole state) executed, hashed into the state tree and written (one batch, as a node commits it)
// on a state of 10,000 accounts, then of 1,000,000. Reports the median time per block at both
// sizes, their ratio, the same for the process's CPU time per block (the block's work without its
// waits, on every thread: the state tree's second thread for a large apply, RocksDB's background
// work while the block runs; before each size the bench waits until the background work of the
// state's growth is done), and the process's resident memory after each.
//
// The accounts beyond the senders are put in state by the accounts contract's own storeAccount
// (what a transfer to a new address does), a version of 20,000 at a time, rather than by signed
// transactions: the state is the same, and the setup stays in seconds.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gridledger/codec/tx.h>
#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/executor.h>
#include <gridledger/contracts/params.h>
#include <gridledger/crypto/sha256.h>
#include <gridledger/ledger/block_store.h>
#include <gridledger/ledger/columns.h>
#include <gridledger/ledger/state_tree.h>

#include "ledger_fixture.h"

namespace gridledger {
namespace {

constexpr std::string_view kChain = "gridledger-accounts-bench";
/** The chain's signing domain, made on first use. */
const std::string& domain() {
    static const std::string value = crypto::chainDomain(kChain, Hash256{});
    return value;
}
constexpr std::size_t kSenders = 1'000;
constexpr std::size_t kSmall = 10'000;
constexpr std::size_t kLarge = 1'000'000;
constexpr std::size_t kPerVersion = 20'000;
/** Blocks measured at each size: the median of 31 moves less with one stall of the host than that
 * of 9. */
constexpr int kRuns = 31;
const u128 kBalance = u128{1} << 80U;

/** The i-th account that is not a sender: an address only the bench derives. */
Address holder(std::size_t i) {
    crypto::Sha256 h;
    h.update("gridledger/accounts-bench").updateU64(i);
    const Hash256 digest = h.finish();
    Address out;
    std::copy_n(digest.data(), Address::size(), out.data());
    return out;
}

/** Resident memory of this process now, in MiB (VmRSS). */
double residentMiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stod(line.substr(6)) / 1024.0;
        }
    }
    return 0;
}

/** CPU time this process has used, on all its threads, in ms. */
double processCpuMs() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

/**
 * Waits until the process's other threads (RocksDB's flushes and compactions of the state just
 * grown) have used under 2 ms of CPU in 0.2 s, for at most a minute, so that the process's CPU
 * time over the blocks measured next is their own work and what they set off.
 */
void waitUntilIdle() {
    constexpr int kPolls = 300;
    for (int poll = 0; poll < kPolls; ++poll) {
        const double before = processCpuMs();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (processCpuMs() - before < 2.0) {
            return;
        }
    }
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

struct Figure {
    double medianMs = 0;
    double medianCpuMs = 0;
    double residentMiB = 0;
};

class Bench {
  public:
    Bench() {
        contracts::Genesis genesis;
        genesis.chainId = kChain;
        for (std::size_t i = 0; i < kSenders; ++i) {
            senders_.push_back(crypto::SecretKey::generate());
            genesis.accounts.push_back({crypto::addressOf(senders_.back().publicKey()), kBalance});
        }
        nonces_.assign(kSenders, 0);
        fee_ = genesis.chainParams().fees.of(codec::Payload{codec::Transfer{}});
        if (!ledger_.executor->commitGenesis(genesis)) {
            std::fprintf(stderr, "genesis failed\n");
            std::exit(1);
        }
        accounts_ = kSenders;
    }

    /** Adds accounts (a balance each, nonce 0) until the state holds `total`. */
    void growTo(std::size_t total) {
        while (accounts_ < total) {
            contracts::StateLayer state(*ledger_.tree, version_);
            const std::size_t end = std::min(total, accounts_ + kPerVersion);
            for (; accounts_ < end; ++accounts_) {
                contracts::storeAccount(state, holder(accounts_ - kSenders),
                                        contracts::Account{0, u128{1'000}});
            }
            commit(state);
        }
    }

    /** Median time (and process CPU time) of kRuns blocks executed, hashed and written, and the
     * memory after them. */
    Figure measure() {
        std::vector<double> times;
        std::vector<double> cpuTimes;
        for (int run = 0; run < kRuns; ++run) {
            const codec::Block block = nextBlock();
            const auto start = std::chrono::steady_clock::now();
            const double cpuStart = processCpuMs();
            contracts::StateLayer state(*ledger_.tree, version_);
            // Signatures count as verified (as by a mempool); the transactions are decoded here.
            auto done = ledger_.executor->execute(state, block, [](const Hash256&) {
                return ledger::KnownTx{true, {}};
            });
            if (!done) {
                std::fprintf(stderr, "execution failed: %s\n", done.error().message.c_str());
                std::exit(1);
            }
            for (const auto& receipt : done->receipts) {
                if (!receipt.success()) {
                    std::fprintf(stderr, "a transfer failed: %s\n",
                                 std::string(reasonOf(receipt.code)).c_str());
                    std::exit(1);
                }
            }
            commit(state);
            cpuTimes.push_back(processCpuMs() - cpuStart);
            times.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
        }
        return Figure{median(times), median(cpuTimes), residentMiB()};
    }

  private:
    /** 1,000 transfers, one per sender, each to an account drawn from the whole state. */
    codec::Block nextBlock() {
        std::vector<Bytes> txs;
        const std::size_t holders = accounts_ - kSenders;
        for (std::size_t s = 0; s < kSenders; ++s) {
            const codec::Transfer transfer{holder(rng_() % holders), u128{1}};
            codec::TxBody body{std::string(kChain),
                               senders_[s].publicKey(),
                               nonces_[s]++,
                               version_ + 100,
                               transfer,
                               fee_};
            txs.push_back(codec::signTx(body, senders_[s], domain()).raw);
        }
        codec::BlockHeader header;
        header.height = version_ + 1;
        header.round = header.height;
        header.timestampMs = version_ + 1;
        return codec::makeBlock(header, std::move(txs));
    }

    /** Commits `state` as the next version. */
    void commit(const contracts::StateLayer& state) { ledger_.commitState(state, ++version_); }

    bench::LedgerFixture ledger_{kChain, domain()};
    std::vector<crypto::SecretKey> senders_;
    std::vector<std::uint64_t> nonces_;
    std::uint64_t fee_ = 0;
    std::size_t accounts_ = 0;
    std::uint64_t version_ = 0;
    std::mt19937_64 rng_{7};
};

}  // namespace
}  // namespace gridledger

int main() {
    using namespace gridledger;
    std::printf("accounts: one block of 1,000 transfers to accounts drawn from the whole state\n");
    Bench bench;
    bench.growTo(kSmall);
    waitUntilIdle();
    const Figure small = bench.measure();
    std::printf("accounts=%zu block_commit_ms_p50=%.2f block_cpu_ms_p50=%.2f resident_mib=%.0f\n",
                kSmall, small.medianMs, small.medianCpuMs, small.residentMiB);
    const auto start = std::chrono::steady_clock::now();
    bench.growTo(kLarge);
    const double grown =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    waitUntilIdle();
    const Figure large = bench.measure();
    std::printf(
        "accounts=%zu block_commit_ms_p50=%.2f block_cpu_ms_p50=%.2f resident_mib=%.0f "
        "(state grown in %.1f s)\n",
        kLarge, large.medianMs, large.medianCpuMs, large.residentMiB, grown);
    std::printf("ratio_1m_to_10k=%.2f cpu_ratio_1m_to_10k=%.2f resident_below_1gib=%s\n",
                large.medianMs / small.medianMs, large.medianCpuMs / small.medianCpuMs,
                large.residentMiB < 1024 ? "yes" : "no");
    return 0;
}
