#include <iterator>

#include <gridledger/contracts/accounts.h>
#include <gridledger/contracts/params.h>
#include <gridledger/contracts/settlement.h>

#include "record.h"

namespace gridledger::contracts {
namespace {

constexpr std::uint8_t kSettlementFormat = 1;

Hash256 tokenomicsKey() {
    return detail::stateKey("gridledger/state/tokenomics");
}

Hash256 gflKey(const Address& provider) {
    return detail::stateKey("gridledger/state/gfl", provider.view());
}

Hash256 epochRecordKey(std::uint64_t epoch) {
    Bytes id;
    appendU64(id, epoch);
    return detail::stateKey("gridledger/state/epoch", id);
}

Bytes encodeTokenomics(const TokenomicsState& t) {
    detail::RecordWriter w(kSettlementFormat);
    w.u32(t.emission.halvings).u64(t.emission.lastHalvingMs).u64(t.emission.convertedGfl);
    w.u128v(t.emission.rewardPool).u64(t.nextEpoch).u64(t.gflSupply);
    return w.take();
}

Result<TokenomicsState> decodeTokenomics(ByteView bytes) {
    detail::RecordReader r(bytes, "tokenomics state");
    r.format(kSettlementFormat);
    TokenomicsState t;
    t.emission.halvings = r.u32();
    t.emission.lastHalvingMs = r.u64();
    t.emission.convertedGfl = r.u64();
    t.emission.rewardPool = r.u128v();
    t.nextEpoch = r.u64();
    t.gflSupply = r.u64();
    GL_TRY(r.finish());
    return t;
}

Bytes encodeEpochRecord(const EpochRecord& e) {
    detail::RecordWriter w(kSettlementFormat);
    w.u64(e.epoch).u64(e.boundaryMs).u64(e.height).u64(e.providers).u64(e.supplyAfter);
    w.u64(e.payoutBurned).u64(e.minted).u64(e.rebalanceBurned);
    w.u128v(e.owed).u128v(e.paid).u128v(e.shortfall);
    w.u32(e.halvings).boolean(e.halvedByPeriod).boolean(e.halvedByThreshold);
    w.u128v(e.rewardPoolAfter).u64(e.convertedAfter);
    return w.take();
}

Result<EpochRecord> decodeEpochRecord(ByteView bytes) {
    detail::RecordReader r(bytes, "epoch record");
    r.format(kSettlementFormat);
    EpochRecord e;
    e.epoch = r.u64();
    e.boundaryMs = r.u64();
    e.height = r.u64();
    e.providers = r.u64();
    e.supplyAfter = r.u64();
    e.payoutBurned = r.u64();
    e.minted = r.u64();
    e.rebalanceBurned = r.u64();
    e.owed = r.u128v();
    e.paid = r.u128v();
    e.shortfall = r.u128v();
    e.halvings = r.u32();
    e.halvedByPeriod = r.boolean();
    e.halvedByThreshold = r.boolean();
    e.rewardPoolAfter = r.u128v();
    e.convertedAfter = r.u64();
    GL_TRY(r.finish());
    return e;
}

Result<std::uint64_t> decodeGfl(const std::optional<Bytes>& value) {
    if (!value) {
        return std::uint64_t{0};
    }
    if (value->size() != 8) {
        return fail(ErrorCode::kCorrupt, "stored GFL balance is corrupt");
    }
    return readU64(*value);
}

void storeGfl(StateLayer& state, const Address& provider, std::uint64_t balance) {
    if (balance == 0) {
        state.erase(gflKey(provider));
        return;
    }
    Bytes bytes;
    appendU64(bytes, balance);
    state.put(gflKey(provider), std::move(bytes));
}

Error broken(const std::string& what) {
    return Error{ErrorCode::kInternal, "settlement invariant broken: " + what};
}

/** The events of one provider's settlement, in the order the steps ran. */
void providerEvents(const std::string& epoch, const ProviderSettlement& p,
                    std::vector<codec::Event>& out) {
    const std::string who = p.provider.hex();
    if (p.payoutBurned > 0) {
        out.push_back(codec::Event{"gfl_burned",
                                   {{"epoch", epoch},
                                    {"provider", who},
                                    {"amount", std::to_string(p.payoutBurned)},
                                    {"reason", "payout"}}});
    }
    if (p.owed > 0) {
        out.push_back(codec::Event{"dps_paid",
                                   {{"epoch", epoch},
                                    {"provider", who},
                                    {"owed", toDecimal(p.owed)},
                                    {"paid", toDecimal(p.paid)},
                                    {"shortfall", toDecimal(p.shortfall)}}});
    }
    if (p.minted > 0) {
        out.push_back(codec::Event{"gfl_minted",
                                   {{"epoch", epoch},
                                    {"provider", who},
                                    {"amount", std::to_string(p.minted)},
                                    {"reason", "rebalance"}}});
    }
    if (p.rebalanceBurned > 0) {
        out.push_back(codec::Event{"gfl_burned",
                                   {{"epoch", epoch},
                                    {"provider", who},
                                    {"amount", std::to_string(p.rebalanceBurned)},
                                    {"reason", "rebalance"}}});
    }
    out.push_back(codec::Event{"provider_settled",
                               {{"epoch", epoch},
                                {"provider", who},
                                {"median", std::to_string(p.balanceAfter)},
                                {"balance_before", std::to_string(p.balanceBefore)},
                                {"balance_after", std::to_string(p.balanceAfter)}}});
}

/** The providers entering the settlement of `epoch`: those holding GFL or with a median. */
Result<std::vector<ProviderEpoch>> gatherProviders(const StateLayer& state,
                                                   const TokenomicsParams& params,
                                                   std::uint64_t epoch) {
    GL_ASSIGN_OR_RETURN(settled, loadSettledIndex(state));
    std::vector<ProviderEpoch> out;
    for (const auto& provider : settled) {
        GL_ASSIGN_OR_RETURN(balance, loadGfl(state, provider));
        GL_ASSIGN_OR_RETURN(samples, loadSlotSamples(state, provider, epoch));
        GL_ASSIGN_OR_RETURN(power, allocatedPower(params.slotsPerEpoch(), samples));
        if (balance > 0 || power > 0) {
            out.push_back(ProviderEpoch{provider, balance, power});
        }
    }
    return out;
}

/** Writes the balances after settlement and credits the DPS paid to the providers' accounts. */
Status applyProviders(StateLayer& state, const std::string& epoch, const EpochSettlement& s,
                      std::vector<codec::Event>& events) {
    for (const auto& p : s.providers) {
        storeGfl(state, p.provider, p.balanceAfter);
        if (p.paid > 0) {
            GL_ASSIGN_OR_RETURN(account, loadAccount(state, p.provider));
            const auto credited = checkedAdd(account.balance, p.paid);
            if (!credited) {
                return fail(ErrorCode::kOverflow, "a DPS payout overflows an account");
            }
            account.balance = *credited;
            storeAccount(state, p.provider, account);
        }
        providerEvents(epoch, p, events);
    }
    return {};
}

/**
 * Conservation: the pool pays exactly what providers receive; the supply moves by exactly the
 * burns and mints and ends at Σ medians.
 */
Status checkConservation(const TokenomicsState& before, const EpochSettlement& s) {
    const auto poolLeft = checkedSub(before.emission.rewardPool, s.totalPaid);
    if (!poolLeft || *poolLeft != s.after.rewardPool) {
        return std::unexpected(broken("pool debit differs from the DPS paid"));
    }
    const auto supply =
        checkedSub(before.gflSupply, s.totalPayoutBurned)
            .and_then([&](std::uint64_t v) { return checkedSub(v, s.totalRebalanceBurned); })
            .and_then([&](std::uint64_t v) { return checkedAdd(v, s.totalMinted); });
    if (!supply || *supply != s.supplyAfter) {
        return std::unexpected(broken("GFL supply differs from the burns and mints"));
    }
    return {};
}

EpochRecord recordOf(std::uint64_t epoch, std::uint64_t boundary, std::uint64_t height,
                     const EpochSettlement& s) {
    return EpochRecord{epoch,
                       boundary,
                       height,
                       s.providers.size(),
                       s.supplyAfter,
                       s.totalPayoutBurned,
                       s.totalMinted,
                       s.totalRebalanceBurned,
                       s.totalOwed,
                       s.totalPaid,
                       s.totalShortfall,
                       s.after.halvings,
                       s.halvedByPeriod,
                       s.halvedByThreshold,
                       s.after.rewardPool,
                       s.after.convertedGfl};
}

/** The epoch's closing events: the halving (if any), then the summary. */
void epochEvents(const EpochRecord& r, std::vector<codec::Event>& events) {
    const std::string epoch = std::to_string(r.epoch);
    if (r.halvedByPeriod || r.halvedByThreshold) {
        events.push_back(codec::Event{"halving",
                                      {{"epoch", epoch},
                                       {"at_ms", std::to_string(r.boundaryMs)},
                                       {"halvings", std::to_string(r.halvings)},
                                       {"by_period", r.halvedByPeriod ? "true" : "false"},
                                       {"by_threshold", r.halvedByThreshold ? "true" : "false"}}});
    }
    events.push_back(codec::Event{"epoch_settled",
                                  {{"epoch", epoch},
                                   {"boundary_ms", std::to_string(r.boundaryMs)},
                                   {"providers", std::to_string(r.providers)},
                                   {"gfl_supply", std::to_string(r.supplyAfter)},
                                   {"gfl_payout_burned", std::to_string(r.payoutBurned)},
                                   {"gfl_minted", std::to_string(r.minted)},
                                   {"gfl_rebalance_burned", std::to_string(r.rebalanceBurned)},
                                   {"dps_owed", toDecimal(r.owed)},
                                   {"dps_paid", toDecimal(r.paid)},
                                   {"dps_shortfall", toDecimal(r.shortfall)},
                                   {"reward_pool", toDecimal(r.rewardPoolAfter)},
                                   {"halvings", std::to_string(r.halvings)},
                                   {"converted_gfl", std::to_string(r.convertedAfter)}}});
}

/** Settles epoch tokenomics.nextEpoch into `state` and `tokenomics`, appending its events. */
Status settleOne(StateLayer& state, const ChainParams& params, std::uint64_t height,
                 TokenomicsState& tokenomics, std::vector<codec::Event>& events) {
    const std::uint64_t epoch = tokenomics.nextEpoch;
    GL_ASSIGN_OR_RETURN(boundary, epochEndMs(params.tokenomics, params.genesisTimeMs, epoch));
    GL_ASSIGN_OR_RETURN(entries, gatherProviders(state, params.tokenomics, epoch));
    GL_ASSIGN_OR_RETURN(settlement, settleEpoch(params.tokenomics, tokenomics.emission, boundary,
                                                std::move(entries)));
    GL_TRY(applyProviders(state, std::to_string(epoch), settlement, events));
    GL_TRY(checkConservation(tokenomics, settlement));
    tokenomics.emission = settlement.after;
    tokenomics.gflSupply = settlement.supplyAfter;
    const EpochRecord record = recordOf(epoch, boundary, height, settlement);
    state.put(epochRecordKey(epoch), encodeEpochRecord(record));
    epochEvents(record, events);
    return {};
}

}  // namespace

Result<TokenomicsState> loadTokenomics(const StateLayer& state) {
    GL_ASSIGN_OR_RETURN(value, state.get(tokenomicsKey()));
    if (!value) {
        return fail(ErrorCode::kCorrupt, "the state holds no tokenomics state");
    }
    return decodeTokenomics(*value);
}

void storeTokenomics(StateLayer& state, const TokenomicsState& tokenomics) {
    state.put(tokenomicsKey(), encodeTokenomics(tokenomics));
}

Result<TokenomicsState> readTokenomics(const ledger::StateTree& tree, std::uint64_t version) {
    GL_ASSIGN_OR_RETURN(value, tree.get(tokenomicsKey(), version));
    if (!value) {
        return fail(ErrorCode::kNotFound, "no tokenomics state at this height");
    }
    return decodeTokenomics(*value);
}

Result<std::uint64_t> loadGfl(const StateLayer& state, const Address& provider) {
    GL_ASSIGN_OR_RETURN(value, state.get(gflKey(provider)));
    return decodeGfl(value);
}

Result<std::uint64_t> readGfl(const ledger::StateTree& tree, std::uint64_t version,
                              const Address& provider) {
    GL_ASSIGN_OR_RETURN(value, tree.get(gflKey(provider), version));
    return decodeGfl(value);
}

Result<std::optional<EpochRecord>> readEpochRecord(const ledger::StateTree& tree,
                                                   std::uint64_t version, std::uint64_t epoch) {
    GL_ASSIGN_OR_RETURN(value, tree.get(epochRecordKey(epoch), version));
    if (!value) {
        return std::optional<EpochRecord>();
    }
    GL_ASSIGN_OR_RETURN(record, decodeEpochRecord(*value));
    return std::optional<EpochRecord>(record);
}

Result<std::vector<codec::Event>> settleEndedEpochs(StateLayer& state, const BlockContext& block) {
    GL_ASSIGN_OR_RETURN(params, loadParams(state));
    std::vector<codec::Event> events;
    if (block.timestampMs < params.genesisTimeMs) {
        return events;
    }
    GL_ASSIGN_OR_RETURN(current,
                        epochOf(params.tokenomics, params.genesisTimeMs, block.timestampMs));
    GL_ASSIGN_OR_RETURN(tokenomics, loadTokenomics(state));
    if (tokenomics.nextEpoch >= current) {
        return events;
    }
    while (tokenomics.nextEpoch < current) {
        // Each epoch settles in a layer of its own: a settlement that cannot complete (a sum
        // beyond its integers, a broken invariant) leaves no trace but an event, and the chain
        // goes on. Halting instead would halt every node alike, at every restart, for good.
        StateLayer layer(state);
        TokenomicsState settled = tokenomics;
        std::vector<codec::Event> settledEvents;
        auto done = settleOne(layer, params, block.height, settled, settledEvents);
        if (done) {
            layer.mergeIntoParent();
            tokenomics = settled;
            events.insert(events.end(), std::make_move_iterator(settledEvents.begin()),
                          std::make_move_iterator(settledEvents.end()));
        } else if (detail::isStorageError(done.error())) {
            return std::unexpected(done.error());
        } else {
            events.push_back(codec::Event{"epoch_settlement_failed",
                                          {{"epoch", std::to_string(tokenomics.nextEpoch)},
                                           {"reason", std::string(done.error().reason())},
                                           {"message", done.error().message}}});
        }
        tokenomics.nextEpoch += 1;
    }
    storeTokenomics(state, tokenomics);
    return events;
}

}  // namespace gridledger::contracts
