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
                       out->set_account(str(a.account.view()));
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

/** A zero hash is "none" and travels as an empty field. */
std::string optionalHash(const Hash256& hash) {
    return hash.isZero() ? std::string() : str(hash.view());
}

void taskCreateToProto(const TaskCreate& t, proto::TaskCreate& pb) {
    pb.set_category(t.category);
    pb.set_min_gflops(t.minGflops);
    for (const auto& constraint : t.constraints) {
        pb.add_constraints(constraint);
    }
    pb.set_max_minutes(t.maxMinutes);
    pb.set_spec_hash(optionalHash(t.specHash));
    pb.set_replicas(t.replicas);
}

// ---- From protobuf ----

Result<Hash256> optionalHashFromProto(const std::string& field, std::string_view name) {
    if (field.empty()) {
        return Hash256{};
    }
    return fixed<Hash256>(field, name);
}

Result<TaskCreate> taskCreateFromProto(const proto::TaskCreate& pb) {
    TaskCreate t;
    t.category = pb.category();
    t.minGflops = pb.min_gflops();
    t.constraints.assign(pb.constraints().begin(), pb.constraints().end());
    t.maxMinutes = pb.max_minutes();
    GL_ASSIGN_OR_RETURN(spec, optionalHashFromProto(pb.spec_hash(), "task_create.spec_hash"));
    t.specHash = spec;
    t.replicas = pb.replicas();
    return t;
}

Result<Hash256> taskIdFromProto(const std::string& field) {
    return fixed<Hash256>(field, "task_id");
}

Result<Payload> taskPayloadFromProto(const proto::TxBody& pb) {
    switch (pb.payload_case()) {
        case proto::TxBody::kTaskCreate: {
            GL_ASSIGN_OR_RETURN(create, taskCreateFromProto(pb.task_create()));
            return create;
        }
        case proto::TxBody::kTaskStart: {
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(pb.task_start().task_id()));
            return TaskStart{id};
        }
        case proto::TxBody::kTaskRefuse: {
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(pb.task_refuse().task_id()));
            return TaskRefuse{id};
        }
        case proto::TxBody::kTaskTopUp: {
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(pb.task_top_up().task_id()));
            return TaskTopUp{id, pb.task_top_up().extra_minutes()};
        }
        case proto::TxBody::kTaskSubmitResult: {
            const auto& r = pb.task_submit_result();
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(r.task_id()));
            GL_ASSIGN_OR_RETURN(hash, fixed<Hash256>(r.result_hash(), "result_hash"));
            return TaskSubmitResult{id, hash, r.output_uri(), r.exit_code(), r.duration_ms()};
        }
        case proto::TxBody::kTaskVerify: {
            const auto& v = pb.task_verify();
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(v.task_id()));
            GL_ASSIGN_OR_RETURN(hash,
                                optionalHashFromProto(v.result_hash(), "task_verify.result_hash"));
            return TaskVerify{id, v.accept(), v.reason(), hash};
        }
        case proto::TxBody::kTaskReportFailure: {
            const auto& f = pb.task_report_failure();
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(f.task_id()));
            return TaskReportFailure{id, f.exit_code(), f.error(), f.duration_ms()};
        }
        case proto::TxBody::kTaskCancel: {
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(pb.task_cancel().task_id()));
            return TaskCancel{id};
        }
        case proto::TxBody::kProviderUnbond:
            return ProviderUnbond{};
        case proto::TxBody::kTaskSpotCheck: {
            const auto& c = pb.task_spot_check();
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(c.task_id()));
            GL_ASSIGN_OR_RETURN(evidence,
                                optionalHashFromProto(c.evidence(), "task_spot_check.evidence"));
            return TaskSpotCheck{id, c.reason(), evidence};
        }
        case proto::TxBody::kTaskSpotCheckVerdict: {
            const auto& v = pb.task_spot_check_verdict();
            GL_ASSIGN_OR_RETURN(id, taskIdFromProto(v.task_id()));
            return TaskSpotCheckVerdict{id, v.upheld(), v.reason()};
        }
        default:
            break;
    }
    return fail(ErrorCode::kUnknownPayload, "transaction has no known payload");
}

Result<ProposalAction> actionFromProto(const proto::Propose& pb) {
    switch (pb.action_case()) {
        case proto::Propose::kAddValidator: {
            const auto& a = pb.add_validator();
            GL_ASSIGN_OR_RETURN(key,
                                fixed<PubKey>(a.consensus_key(), "add_validator.consensus_key"));
            GL_ASSIGN_OR_RETURN(node, fixed<NodeId>(a.node_id(), "add_validator.node_id"));
            GL_ASSIGN_OR_RETURN(account, fixed<Address>(a.account(), "add_validator.account"));
            return AddValidator{a.name(), key, node, account};
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
                   [&pb](const TaskCreate& t) { taskCreateToProto(t, *pb.mutable_task_create()); },
                   [&pb](const TaskStart& t) {
                       pb.mutable_task_start()->set_task_id(str(t.taskId.view()));
                   },
                   [&pb](const TaskRefuse& t) {
                       pb.mutable_task_refuse()->set_task_id(str(t.taskId.view()));
                   },
                   [&pb](const TaskTopUp& t) {
                       auto* out = pb.mutable_task_top_up();
                       out->set_task_id(str(t.taskId.view()));
                       out->set_extra_minutes(t.extraMinutes);
                   },
                   [&pb](const TaskSubmitResult& t) {
                       auto* out = pb.mutable_task_submit_result();
                       out->set_task_id(str(t.taskId.view()));
                       out->set_result_hash(str(t.resultHash.view()));
                       out->set_output_uri(t.outputUri);
                       out->set_exit_code(t.exitCode);
                       out->set_duration_ms(t.durationMs);
                   },
                   [&pb](const TaskVerify& t) {
                       auto* out = pb.mutable_task_verify();
                       out->set_task_id(str(t.taskId.view()));
                       out->set_accept(t.accept);
                       out->set_reason(t.reason);
                       out->set_result_hash(optionalHash(t.resultHash));
                   },
                   [&pb](const TaskReportFailure& t) {
                       auto* out = pb.mutable_task_report_failure();
                       out->set_task_id(str(t.taskId.view()));
                       out->set_exit_code(t.exitCode);
                       out->set_error(t.error);
                       out->set_duration_ms(t.durationMs);
                   },
                   [&pb](const TaskCancel& t) {
                       pb.mutable_task_cancel()->set_task_id(str(t.taskId.view()));
                   },
                   [&pb](const ProviderUnbond& /*unbond*/) { pb.mutable_provider_unbond(); },
                   [&pb](const TaskSpotCheck& t) {
                       auto* out = pb.mutable_task_spot_check();
                       out->set_task_id(str(t.taskId.view()));
                       out->set_reason(t.reason);
                       out->set_evidence(optionalHash(t.evidence));
                   },
                   [&pb](const TaskSpotCheckVerdict& t) {
                       auto* out = pb.mutable_task_spot_check_verdict();
                       out->set_task_id(str(t.taskId.view()));
                       out->set_upheld(t.upheld);
                       out->set_reason(t.reason);
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
        default:
            return taskPayloadFromProto(pb);
    }
    return fail(ErrorCode::kUnknownPayload, "transaction has no known payload");
}

}  // namespace detail

std::string_view payloadKind(const Payload& payload) {
    return kPayloadKinds[payload.index()];
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
