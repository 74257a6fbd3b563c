#pragma once

// Certified batches (docs/protocol.md §14): a member's batch of admitted transactions, the
// acknowledgements of the members that verified every signature in it and store it, and the
// certificate that f + 1 of them make.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>
#include <gridledger/consensus/committee.h>

namespace gridledger::consensus {

/** Transactions one member packed, the serial-th batch of its epoch. */
struct Batch {
    PubKey author;
    std::uint64_t epoch = 0;
    std::uint64_t serial = 0;
    std::vector<Bytes> txs;

    bool operator==(const Batch&) const = default;
};

/**
 * A batch's name: SHA-256("gridledger/batch-digest" ‖ author ‖ u64be(epoch) ‖ u64be(serial) ‖
 * u32be(count) ‖ for each transaction u32be(length) ‖ bytes).
 */
[[nodiscard]] Hash256 batchDigest(const Batch& batch);

/**
 * What a member signs once it has verified every transaction signature of batch `digest` of
 * `epoch` and stored the batch: signingDigest("gridledger/batch/v1", domain, u64be(epoch) ‖
 * digest).
 */
[[nodiscard]] Hash256 batchAckDigest(std::string_view domain, std::uint64_t epoch,
                                     const Hash256& digest);

/** f + 1 members' acknowledgements of one batch: at least one of them is honest. */
using BatchCert = codec::BatchCert;

/** The acknowledgements that certify a batch: f + 1. */
[[nodiscard]] std::size_t batchCertThreshold(const Committee& committee);

/**
 * The members an author asks to verify and sign its batch: the author (member `author`) first,
 * then the next f members in member order from position (first 8 bytes of `digest`, big-endian)
 * mod n, skipping the author and the members in `silent` (those the author found not answering).
 * So the work of verifying spreads over the committee by digest. When fewer than f members are
 * neither the author nor silent, the silent ones fill the rest, in the same order.
 */
[[nodiscard]] std::vector<std::size_t> batchSigners(const Committee& committee,
                                                    const Hash256& digest, std::size_t author,
                                                    const std::set<std::size_t>& silent = {});

/** The certificate of batch `digest` from acknowledgements by member index; fails with
 * kInvalidArgument below the threshold or on an index beyond n. */
[[nodiscard]] Result<BatchCert> buildBatchCert(const Committee& committee, const Hash256& digest,
                                               const std::map<std::size_t, Signature>& acks);

/**
 * The checks of verifyBatchCert but the threshold: same epoch, a signer bitmap of ⌈n/8⌉ bytes
 * with no bit beyond n, one signature per signer, each a valid signature of batchAckDigest.
 * Returns the signers, ascending. Fails with kInvalidCertificate.
 */
[[nodiscard]] Result<std::vector<std::size_t>> batchCertSigners(
    const BatchCert& cert, const Committee& committee, std::string_view domain,
    const SignatureCheck& check = bip340Check());

/** batchCertSigners, and at least batchCertThreshold signers. Fails with kInvalidCertificate. */
[[nodiscard]] Status verifyBatchCert(const BatchCert& cert, const Committee& committee,
                                     std::string_view domain,
                                     const SignatureCheck& check = bip340Check());

}  // namespace gridledger::consensus
