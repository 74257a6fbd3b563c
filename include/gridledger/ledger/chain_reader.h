#pragma once

#include <cstdint>
#include <optional>

#include <gridledger/base/result.h>
#include <gridledger/codec/block.h>

namespace gridledger::ledger {

/**
 * What serving block sync and epoch proofs reads from a ledger: its executed height, its
 * committed blocks and their commit proofs. BlockStore reads them from RocksDB; the simulator
 * implements it over its in-memory ledgers, so both serve peers with the same code.
 */
class ChainReader {
  public:
    ChainReader() = default;
    ChainReader(const ChainReader&) = delete;
    ChainReader& operator=(const ChainReader&) = delete;
    ChainReader(ChainReader&&) = delete;
    ChainReader& operator=(ChainReader&&) = delete;
    virtual ~ChainReader() = default;

    /** The highest executed height; std::nullopt before genesis was written. */
    [[nodiscard]] virtual Result<std::optional<std::uint64_t>> executedHeight() const = 0;
    /** The committed block at `height`; std::nullopt when the ledger holds none. */
    [[nodiscard]] virtual Result<std::optional<codec::Block>> blockAt(
        std::uint64_t height) const = 0;
    /** The commit proof stored for the committed block at `height`, if any. */
    [[nodiscard]] virtual Result<std::optional<codec::CommitProof>> commitProofAt(
        std::uint64_t height) const = 0;
};

}  // namespace gridledger::ledger
