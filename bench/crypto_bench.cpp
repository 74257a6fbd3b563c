// Signature and hashing ceilings of one core: the yardsticks the node's throughput is reported
// against (docs/benchmarks.md).
#include <cstdint>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <gridledger/codec/tx.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger {
namespace {

constexpr std::size_t kSamples = 256;

/** BIP-340 verification of a 32-byte digest on the calling thread only. */
void schnorrVerifyOneCore(benchmark::State& state) {
    const auto key = crypto::SecretKey::generate();
    std::vector<Hash256> digests;
    std::vector<Signature> signatures;
    for (std::size_t i = 0; i < kSamples; ++i) {
        Bytes message;
        appendU64(message, i);
        digests.push_back(crypto::sha256(message));
        signatures.push_back(key.sign(digests.back()));
    }
    std::size_t i = 0;
    for ([[maybe_unused]] auto _ : state) {
        const bool valid = crypto::verify(key.publicKey(), digests[i], signatures[i]);
        benchmark::DoNotOptimize(valid);
        i = (i + 1) % kSamples;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(schnorrVerifyOneCore);

/** kSamples transfers signed by one key. */
std::vector<codec::SignedTx> signedTransfers(const std::string& domain) {
    const auto key = crypto::SecretKey::generate();
    std::vector<codec::SignedTx> txs;
    for (std::uint64_t n = 0; n < kSamples; ++n) {
        codec::TxBody body;
        body.chainId = "gridledger-bench";
        body.sender = key.publicKey();
        body.nonce = n;
        body.validUntilHeight = 1000;
        Address to;
        to[0] = 0x42;
        body.payload = codec::Transfer{to, u128{1}};
        txs.push_back(codec::signTx(body, key, domain));
    }
    return txs;
}

/**
 * A whole transaction signature check from bytes (signing digest, the sender key lifted onto the
 * curve, verification), one core: V, the rate every figure is reported against.
 */
void txSignatureVerifyOneCore(benchmark::State& state) {
    const std::string domain = crypto::chainDomain("gridledger-bench", Hash256{});
    const std::vector<codec::SignedTx> txs = signedTransfers(domain);
    std::size_t i = 0;
    for ([[maybe_unused]] auto _ : state) {
        const codec::SignedTx& tx = txs[i];
        const bool valid =
            crypto::verify(tx.body.sender, codec::txSigningDigest(tx, domain), tx.signature);
        benchmark::DoNotOptimize(valid);
        i = (i + 1) % kSamples;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(txSignatureVerifyOneCore);

/**
 * The node's check (codec::verifyTxSignature) of a sender whose key point is kept from its
 * previous transaction, one core.
 */
void txSignatureVerifyRecurringSigner(benchmark::State& state) {
    const std::string domain = crypto::chainDomain("gridledger-bench", Hash256{});
    const std::vector<codec::SignedTx> txs = signedTransfers(domain);
    std::size_t i = 0;
    for ([[maybe_unused]] auto _ : state) {
        const bool valid = codec::verifyTxSignature(txs[i], domain);
        benchmark::DoNotOptimize(valid);
        i = (i + 1) % kSamples;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(txSignatureVerifyRecurringSigner);

/**
 * A transfer decoded from its bytes (codec::decodeTx: the wrapper split, the body read, the hash
 * and the sender's address computed), as admission and replay decode every transaction.
 */
void txDecodeTransfer(benchmark::State& state) {
    const std::string domain = crypto::chainDomain("gridledger-bench", Hash256{});
    const std::vector<codec::SignedTx> txs = signedTransfers(domain);
    std::size_t i = 0;
    for ([[maybe_unused]] auto _ : state) {
        auto decoded = codec::decodeTx(txs[i].raw);
        benchmark::DoNotOptimize(decoded);
        i = (i + 1) % kSamples;
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(txDecodeTransfer);

/** SHA-256 throughput over messages of state.range(0) bytes. */
void sha256Throughput(benchmark::State& state) {
    const Bytes data(static_cast<std::size_t>(state.range(0)), 0x5a);
    for ([[maybe_unused]] auto _ : state) {
        const Hash256 digest = crypto::sha256(data);
        benchmark::DoNotOptimize(digest);
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(sha256Throughput)->Arg(64)->Arg(1024)->Arg(64L * 1024)->Arg(1024L * 1024);

}  // namespace
}  // namespace gridledger

BENCHMARK_MAIN();
