#include "provider_records.h"

namespace gridledger::contracts::detail {
namespace {

constexpr std::uint8_t kFormat = 1;
/**
 * Format 2 of the provider record added the task job counts (ProviderJobs), format 3 the bond
 * (docs/tokenomics.md "Provider stake"), format 4 the reputation counters ("Provider reputation").
 */
constexpr std::uint8_t kProviderFormat = 4;

Bytes addressEpochId(const Address& provider, std::uint64_t epoch) {
    Bytes id = provider.toBytes();
    appendU64(id, epoch);
    return id;
}

void writeDevice(RecordWriter& w, const codec::DeviceModel& d) {
    w.text(d.model).u64(d.count).u64(d.peakGflops).u64(d.memoryBandwidthGbps);
    w.u64(d.memoryCapacityGb);
    w.list(d.features, [](RecordWriter& out, const std::string& f) { out.text(f); });
    w.u64(d.powerWatts);
    w.list(d.factors,
           [](RecordWriter& out, const codec::FactorValue& f) { out.text(f.name).u64(f.value); });
}

codec::DeviceModel readDevice(RecordReader& r) {
    codec::DeviceModel d;
    d.model = r.text();
    d.count = r.u64();
    d.peakGflops = r.u64();
    d.memoryBandwidthGbps = r.u64();
    d.memoryCapacityGb = r.u64();
    d.features = r.list<std::string>([](RecordReader& in) { return in.text(); });
    d.powerWatts = r.u64();
    d.factors = r.list<codec::FactorValue>([](RecordReader& in) {
        codec::FactorValue f;
        f.name = in.text();
        f.value = in.u64();
        return f;
    });
    return d;
}

}  // namespace

Hash256 providerKey(const Address& address) {
    return stateKey("gridledger/state/provider", address.view());
}

StateIndex providerIndex() {
    return StateIndex("gridledger/state/provider_index");
}

Hash256 settledIndexKey() {
    return stateKey("gridledger/state/settled_providers");
}

Hash256 verifiersKey() {
    return stateKey("gridledger/state/verifiers");
}

Hash256 slotsKey(const Address& provider, std::uint64_t epoch) {
    return stateKey("gridledger/state/slots", addressEpochId(provider, epoch));
}

Hash256 attestationKey(const Address& provider, std::uint64_t epoch, std::uint64_t slot) {
    Bytes id = addressEpochId(provider, epoch);
    appendU64(id, slot);
    return stateKey("gridledger/state/attestation", id);
}

Bytes encodeProvider(const Provider& p) {
    RecordWriter w(kProviderFormat);
    w.fixed(p.address).u8(static_cast<std::uint8_t>(p.status));
    w.u64(p.registeredHeight).u64(p.statusHeight);
    w.list(p.inventory.devices, writeDevice);
    w.list(p.inventory.labels,
           [](RecordWriter& out, const codec::Label& l) { out.text(l.key).text(l.value); });
    w.list(p.inventory.categories, [](RecordWriter& out, const std::string& c) { out.text(c); });
    const auto& j = p.jobs;
    w.u64(j.assigned).u64(j.started).u64(j.refused).u64(j.claimTimeouts).u64(j.settled);
    w.u64(j.rejected).u64(j.failed).u64(j.outOfCredits).u64(j.panicked).u64(j.cancelled);
    w.u128v(p.bond).u8(static_cast<std::uint8_t>(p.bondState)).u64(p.unbondReleaseMs);
    w.u128v(p.slashed);
    w.u64(p.reputation.good).u64(p.reputation.faults).u64(p.reputation.epoch);
    return w.take();
}

Result<Provider> decodeProvider(ByteView bytes) {
    RecordReader r(bytes, "provider");
    r.format(kProviderFormat);
    Provider p;
    p.address = r.fixed<Address>();
    const std::uint8_t status = r.u8();
    if (status > static_cast<std::uint8_t>(ProviderStatus::kSuspended)) {
        return fail(ErrorCode::kCorrupt, "stored provider has an unknown status");
    }
    p.status = static_cast<ProviderStatus>(status);
    p.registeredHeight = r.u64();
    p.statusHeight = r.u64();
    p.inventory.devices = r.list<codec::DeviceModel>(readDevice);
    p.inventory.labels = r.list<codec::Label>([](RecordReader& in) {
        codec::Label l;
        l.key = in.text();
        l.value = in.text();
        return l;
    });
    p.inventory.categories = r.list<std::string>([](RecordReader& in) { return in.text(); });
    auto& j = p.jobs;
    j.assigned = r.u64();
    j.started = r.u64();
    j.refused = r.u64();
    j.claimTimeouts = r.u64();
    j.settled = r.u64();
    j.rejected = r.u64();
    j.failed = r.u64();
    j.outOfCredits = r.u64();
    j.panicked = r.u64();
    j.cancelled = r.u64();
    p.bond = r.u128v();
    const std::uint8_t bondState = r.u8();
    if (bondState > static_cast<std::uint8_t>(BondState::kReleased)) {
        return fail(ErrorCode::kCorrupt, "stored provider has an unknown bond state");
    }
    p.bondState = static_cast<BondState>(bondState);
    p.unbondReleaseMs = r.u64();
    p.slashed = r.u128v();
    p.reputation.good = r.u64();
    p.reputation.faults = r.u64();
    p.reputation.epoch = r.u64();
    GL_TRY(r.finish());
    return p;
}

Bytes encodeAttestation(const Attestation& a) {
    RecordWriter w(kFormat);
    w.fixed(a.provider).u64(a.epoch).u64(a.slot).u64(a.height).u64(a.timestampMs);
    w.text(a.claim.category);
    w.list(a.claim.devices,
           [](RecordWriter& out, const codec::DeviceCount& d) { out.text(d.model).u64(d.count); });
    w.u64(a.claim.powerWatts).u32(a.claim.renewableShareBps);
    w.list(a.claim.evidence, [](RecordWriter& out, const Hash256& h) { out.fixed(h); });
    w.u64(a.gflops).boolean(a.challenged);
    w.fixed(a.challenger).text(a.challengeReason).fixed(a.challengeEvidence);
    w.u64(a.challengeHeight);
    return w.take();
}

Result<Attestation> decodeAttestation(ByteView bytes) {
    RecordReader r(bytes, "attestation");
    r.format(kFormat);
    Attestation a;
    a.provider = r.fixed<Address>();
    a.epoch = r.u64();
    a.slot = r.u64();
    a.height = r.u64();
    a.timestampMs = r.u64();
    a.claim.epoch = a.epoch;
    a.claim.slot = a.slot;
    a.claim.category = r.text();
    a.claim.devices = r.list<codec::DeviceCount>([](RecordReader& in) {
        codec::DeviceCount d;
        d.model = in.text();
        d.count = in.u64();
        return d;
    });
    a.claim.powerWatts = r.u64();
    a.claim.renewableShareBps = r.u32();
    a.claim.evidence = r.list<Hash256>([](RecordReader& in) { return in.fixed<Hash256>(); });
    a.gflops = r.u64();
    a.challenged = r.boolean();
    a.challenger = r.fixed<Address>();
    a.challengeReason = r.text();
    a.challengeEvidence = r.fixed<Hash256>();
    a.challengeHeight = r.u64();
    GL_TRY(r.finish());
    return a;
}

Bytes encodeSlotSamples(const std::vector<SlotSample>& samples) {
    RecordWriter w(kFormat);
    w.list(samples, [](RecordWriter& out, const SlotSample& s) {
        out.u64(s.slot).u64(s.gflops).boolean(s.challenged);
    });
    return w.take();
}

Result<std::vector<SlotSample>> decodeSlotSamples(ByteView bytes) {
    RecordReader r(bytes, "slot samples");
    r.format(kFormat);
    auto samples = r.list<SlotSample>([](RecordReader& in) {
        SlotSample s;
        s.slot = in.u64();
        s.gflops = in.u64();
        s.challenged = in.boolean();
        return s;
    });
    GL_TRY(r.finish());
    return samples;
}

Result<std::vector<Address>> loadAddresses(const StateLayer& state, const Hash256& key,
                                           std::string_view what) {
    GL_ASSIGN_OR_RETURN(value, state.get(key));
    if (!value) {
        return std::vector<Address>{};
    }
    return decodeAddresses(*value, what);
}

Result<std::vector<Address>> readAddresses(const ledger::StateTree& tree, std::uint64_t version,
                                           const Hash256& key, std::string_view what) {
    GL_ASSIGN_OR_RETURN(value, tree.get(key, version));
    if (!value) {
        return std::vector<Address>{};
    }
    return decodeAddresses(*value, what);
}

}  // namespace gridledger::contracts::detail
