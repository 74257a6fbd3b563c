#include <gridledger/base/overloaded.h>

#include "payloads_pb.h"
#include "pb_util.h"

namespace gridledger::codec {
namespace detail {
namespace {

// ---- To protobuf ----

void actionToProto(const ProposalAction& action, proto::Propose& pb) {
    std::visit(Overloaded{
                   [&pb](const AddValidator& a) {
                       auto* out = pb.mutable_add_validator();
                       out->set_name(a.name);
                       out->set_consensus_key(str(a.consensusKey.view()));
                       out->set_node_id(str(a.nodeId.view()));
                   },
                   [&pb](const RemoveValidator& a) {
                       pb.mutable_remove_validator()->set_consensus_key(str(a.consensusKey.view()));
                   },
                   [&pb](const AdmitProvider& a) {
                       pb.mutable_admit_provider()->set_provider(str(a.provider.view()));
                   },
                   [&pb](const SuspendProvider& a) {
                       pb.mutable_suspend_provider()->set_provider(str(a.provider.view()));
                   },
                   [&pb](const ReinstateProvider& a) {
                       pb.mutable_reinstate_provider()->set_provider(str(a.provider.view()));
                   },
                   [&pb](const GrantVerifier& a) {
                       pb.mutable_grant_verifier()->set_account(str(a.account.view()));
                   },
                   [&pb](const RevokeVerifier& a) {
                       pb.mutable_revoke_verifier()->set_account(str(a.account.view()));
                   },
                   [&pb](const SetParameter& a) {
                       auto* out = pb.mutable_set_parameter();
                       out->set_name(a.name);
                       out->set_value(a.value);
                   },
               },
               action);
}

void deviceToProto(const DeviceModel& d, proto::Device& pb) {
    pb.set_model(d.model);
    pb.set_count(d.count);
    pb.set_peak_gflops(d.peakGflops);
    pb.set_memory_bandwidth_gbps(d.memoryBandwidthGbps);
    pb.set_memory_capacity_gb(d.memoryCapacityGb);
    for (const auto& feature : d.features) {
        pb.add_features(feature);
    }
    pb.set_power_watts(d.powerWatts);
    for (const auto& factor : d.factors) {
        auto* f = pb.add_factors();
        f->set_name(factor.name);
        f->set_value(factor.value);
    }
}

void registerToProto(const RegisterProvider& r, proto::RegisterProvider& pb) {
    for (const auto& device : r.devices) {
        deviceToProto(device, *pb.add_devices());
    }
    for (const auto& label : r.labels) {
        auto* l = pb.add_labels();
        l->set_key(label.key);
        l->set_value(label.value);
    }
    for (const auto& category : r.categories) {
        pb.add_categories(category);
    }
}

void attestToProto(const Attest& a, proto::Attest& pb) {
    pb.set_epoch(a.epoch);
    pb.set_slot(a.slot);
    pb.set_category(a.category);
    for (const auto& device : a.devices) {
        auto* d = pb.add_devices();
        d->set_model(device.model);
        d->set_count(device.count);
    }
    pb.set_power_watts(a.powerWatts);
    pb.set_renewable_share_bps(a.renewableShareBps);
    for (const auto& hash : a.evidence) {
        pb.add_evidence(str(hash.view()));
    }
}

// ---- From protobuf ----

Result<ProposalAction> actionFromProto(const proto::Propose& pb) {
    switch (pb.action_case()) {
        case proto::Propose::kAddValidator: {
            const auto& a = pb.add_validator();
            GL_ASSIGN_OR_RETURN(key,
                                fixed<PubKey>(a.consensus_key(), "add_validator.consensus_key"));
            GL_ASSIGN_OR_RETURN(node, fixed<NodeId>(a.node_id(), "add_validator.node_id"));
            return AddValidator{a.name(), key, node};
        }
        case proto::Propose::kRemoveValidator: {
            GL_ASSIGN_OR_RETURN(key, fixed<PubKey>(pb.remove_validator().consensus_key(),
                                                   "remove_validator.consensus_key"));
            return RemoveValidator{key};
        }
        case proto::Propose::kAdmitProvider: {
            GL_ASSIGN_OR_RETURN(
                who, fixed<Address>(pb.admit_provider().provider(), "admit_provider.provider"));
            return AdmitProvider{who};
        }
        case proto::Propose::kSuspendProvider: {
            GL_ASSIGN_OR_RETURN(
                who, fixed<Address>(pb.suspend_provider().provider(), "suspend_provider.provider"));
            return SuspendProvider{who};
        }
        case proto::Propose::kReinstateProvider: {
            GL_ASSIGN_OR_RETURN(who, fixed<Address>(pb.reinstate_provider().provider(),
                                                    "reinstate_provider.provider"));
            return ReinstateProvider{who};
        }
        case proto::Propose::kGrantVerifier: {
            GL_ASSIGN_OR_RETURN(
                who, fixed<Address>(pb.grant_verifier().account(), "grant_verifier.account"));
            return GrantVerifier{who};
        }
        case proto::Propose::kRevokeVerifier: {
            GL_ASSIGN_OR_RETURN(
                who, fixed<Address>(pb.revoke_verifier().account(), "revoke_verifier.account"));
            return RevokeVerifier{who};
        }
        case proto::Propose::kSetParameter:
            return SetParameter{pb.set_parameter().name(), pb.set_parameter().value()};
        case proto::Propose::ACTION_NOT_SET:
            break;
    }
    return fail(ErrorCode::kMalformed, "proposal has no action");
}

DeviceModel deviceFromProto(const proto::Device& pb) {
    DeviceModel d;
    d.model = pb.model();
    d.count = pb.count();
    d.peakGflops = pb.peak_gflops();
    d.memoryBandwidthGbps = pb.memory_bandwidth_gbps();
    d.memoryCapacityGb = pb.memory_capacity_gb();
    d.features.assign(pb.features().begin(), pb.features().end());
    d.powerWatts = pb.power_watts();
    for (const auto& f : pb.factors()) {
        d.factors.push_back(FactorValue{f.name(), f.value()});
    }
    return d;
}

RegisterProvider registerFromProto(const proto::RegisterProvider& pb) {
    RegisterProvider r;
    for (const auto& device : pb.devices()) {
        r.devices.push_back(deviceFromProto(device));
    }
    for (const auto& label : pb.labels()) {
        r.labels.push_back(Label{label.key(), label.value()});
    }
    r.categories.assign(pb.categories().begin(), pb.categories().end());
    return r;
}

Result<Attest> attestFromProto(const proto::Attest& pb) {
    Attest a;
    a.epoch = pb.epoch();
    a.slot = pb.slot();
    a.category = pb.category();
    for (const auto& device : pb.devices()) {
        a.devices.push_back(DeviceCount{device.model(), device.count()});
    }
    a.powerWatts = pb.power_watts();
    a.renewableShareBps = pb.renewable_share_bps();
    for (const auto& hash : pb.evidence()) {
        GL_ASSIGN_OR_RETURN(h, fixed<Hash256>(hash, "attest.evidence"));
        a.evidence.push_back(h);
    }
    return a;
}

Result<Challenge> challengeFromProto(const proto::Challenge& pb) {
    Challenge c;
    GL_ASSIGN_OR_RETURN(provider, fixed<Address>(pb.provider(), "challenge.provider"));
    c.provider = provider;
    c.epoch = pb.epoch();
    c.slot = pb.slot();
    c.reason = pb.reason();
    if (!pb.evidence().empty()) {
        GL_ASSIGN_OR_RETURN(evidence, fixed<Hash256>(pb.evidence(), "challenge.evidence"));
        c.evidence = evidence;
    }
    return c;
}

}  // namespace

void payloadToProto(const Payload& payload, proto::TxBody& pb) {
    std::visit(Overloaded{
                   [&pb](const Transfer& t) {
                       auto* transfer = pb.mutable_transfer();
                       transfer->set_to(str(t.to.view()));
                       Bytes amount;
                       appendU128(amount, t.amount);
                       transfer->set_amount(str(amount));
                   },
                   [&pb](const Propose& p) { actionToProto(p.action, *pb.mutable_propose()); },
                   [&pb](const ProposalVote& v) {
                       auto* vote = pb.mutable_vote();
                       vote->set_proposal_id(v.proposalId);
                       vote->set_approve(v.approve);
                   },
                   [&pb](const RegisterProvider& r) {
                       registerToProto(r, *pb.mutable_register_provider());
                   },
                   [&pb](const Attest& a) { attestToProto(a, *pb.mutable_attest()); },
                   [&pb](const Challenge& c) {
                       auto* challenge = pb.mutable_challenge();
                       challenge->set_provider(str(c.provider.view()));
                       challenge->set_epoch(c.epoch);
                       challenge->set_slot(c.slot);
                       challenge->set_reason(c.reason);
                       // A zero evidence hash is "none" and travels as an empty field.
                       if (!c.evidence.isZero()) {
                           challenge->set_evidence(str(c.evidence.view()));
                       }
                   },
               },
               payload);
}

Result<Payload> payloadFromProto(const proto::TxBody& pb) {
    switch (pb.payload_case()) {
        case proto::TxBody::kTransfer: {
            GL_ASSIGN_OR_RETURN(to, fixed<Address>(pb.transfer().to(), "transfer.to"));
            auto amount = readU128(asBytes(pb.transfer().amount()));
            if (!amount) {
                return fail(ErrorCode::kBadLength, "transfer.amount must be 16 bytes");
            }
            return Transfer{to, *amount};
        }
        case proto::TxBody::kPropose: {
            GL_ASSIGN_OR_RETURN(action, actionFromProto(pb.propose()));
            return Propose{action};
        }
        case proto::TxBody::kVote:
            return ProposalVote{pb.vote().proposal_id(), pb.vote().approve()};
        case proto::TxBody::kRegisterProvider:
            return registerFromProto(pb.register_provider());
        case proto::TxBody::kAttest: {
            GL_ASSIGN_OR_RETURN(attest, attestFromProto(pb.attest()));
            return attest;
        }
        case proto::TxBody::kChallenge: {
            GL_ASSIGN_OR_RETURN(challenge, challengeFromProto(pb.challenge()));
            return challenge;
        }
        case proto::TxBody::PAYLOAD_NOT_SET:
            break;
    }
    return fail(ErrorCode::kUnknownPayload, "transaction has no known payload");
}

}  // namespace detail

std::string_view payloadKind(const Payload& payload) {
    return std::visit(
        Overloaded{
            [](const Transfer&) { return std::string_view("transfer"); },
            [](const Propose&) { return std::string_view("propose"); },
            [](const ProposalVote&) { return std::string_view("vote"); },
            [](const RegisterProvider&) { return std::string_view("register_provider"); },
            [](const Attest&) { return std::string_view("attest"); },
            [](const Challenge&) { return std::string_view("challenge"); },
        },
        payload);
}

std::string_view actionKind(const ProposalAction& action) {
    return std::visit(
        Overloaded{
            [](const AddValidator&) { return std::string_view("add_validator"); },
            [](const RemoveValidator&) { return std::string_view("remove_validator"); },
            [](const AdmitProvider&) { return std::string_view("admit_provider"); },
            [](const SuspendProvider&) { return std::string_view("suspend_provider"); },
            [](const ReinstateProvider&) { return std::string_view("reinstate_provider"); },
            [](const GrantVerifier&) { return std::string_view("grant_verifier"); },
            [](const RevokeVerifier&) { return std::string_view("revoke_verifier"); },
            [](const SetParameter&) { return std::string_view("set_parameter"); },
        },
        action);
}

}  // namespace gridledger::codec
