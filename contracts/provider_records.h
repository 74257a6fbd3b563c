#pragma once

// Private to contracts/: the state keys and record encodings of providers and attestations
// (docs/tokenomics.md "State layout").

#include <gridledger/contracts/providers.h>

#include "record.h"
#include "state_index.h"

namespace gridledger::contracts::detail {

[[nodiscard]] Hash256 providerKey(const Address& address);
/** The index of every registered provider: one key per address. */
[[nodiscard]] StateIndex providerIndex();
[[nodiscard]] Hash256 settledIndexKey();
[[nodiscard]] Hash256 verifiersKey();
[[nodiscard]] Hash256 slotsKey(const Address& provider, std::uint64_t epoch);
[[nodiscard]] Hash256 attestationKey(const Address& provider, std::uint64_t epoch,
                                     std::uint64_t slot);

[[nodiscard]] Bytes encodeProvider(const Provider& provider);
[[nodiscard]] Result<Provider> decodeProvider(ByteView bytes);
[[nodiscard]] Bytes encodeAttestation(const Attestation& attestation);
[[nodiscard]] Result<Attestation> decodeAttestation(ByteView bytes);
[[nodiscard]] Bytes encodeSlotSamples(const std::vector<SlotSample>& samples);
[[nodiscard]] Result<std::vector<SlotSample>> decodeSlotSamples(ByteView bytes);

/** Reads a sorted address list stored under `key` (empty when absent). */
[[nodiscard]] Result<std::vector<Address>> loadAddresses(const StateLayer& state,
                                                         const Hash256& key, std::string_view what);
[[nodiscard]] Result<std::vector<Address>> readAddresses(const ledger::StateTree& tree,
                                                         std::uint64_t version, const Hash256& key,
                                                         std::string_view what);

}  // namespace gridledger::contracts::detail
