#pragma once

// The transactions of the test vectors (tests/vectors/transactions.json, docs/encoding.md): who
// signs them, their bodies, and the JSON that describes a body field by field, so that a client
// in any language can build the same bytes. Shared by the generator and the C++ test.

#include <string>
#include <vector>

#include <boost/json.hpp>

#include <gridledger/base/amount.h>
#include <gridledger/base/overloaded.h>
#include <gridledger/codec/tx.h>
#include <gridledger/contracts/tasks.h>
#include <gridledger/crypto/schnorr.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::vectors {

inline constexpr std::string_view kChainId = "gridledger-vectors";

/** The genesis hash of the vectors' chain: any 32 bytes do; these are SHA-256 of a label. */
inline Hash256 genesisHash() {
    return crypto::sha256(asBytes("gridledger/vectors/genesis"));
}

/** A key of the vectors: its secret is SHA-256("gridledger/vectors/key/" ‖ name). */
inline crypto::SecretKey keyNamed(std::string_view name) {
    const Hash256 secret = crypto::sha256(asBytes("gridledger/vectors/key/" + std::string(name)));
    return crypto::SecretKey::fromBytes(secret.view()).value();
}

struct Case {
    std::string name;
    std::string signer;  // keyNamed(signer) signs
    codec::TxBody body;
};

/** The address of keyNamed(name). */
inline Address addressNamed(std::string_view name) {
    return crypto::addressOf(keyNamed(name).publicKey());
}

/** One case per payload kind, one per governance action, and one per optional field of the
 * checked results (replicas, a verdict's result hash, a spot check's evidence). Alice proposes and
 * votes, Bob consumes, Carol provides, Dave verifies and spot-checks, Erin decides the spot
 * check. */
inline std::vector<Case> cases() {
    const auto body = [](std::string_view signer, std::uint64_t nonce, std::uint64_t validUntil,
                         std::uint64_t fee, codec::Payload payload) {
        codec::TxBody out;
        out.chainId = std::string(kChainId);
        out.sender = keyNamed(signer).publicKey();
        out.nonce = nonce;
        out.validUntilHeight = validUntil;
        out.fee = fee;
        out.payload = std::move(payload);
        return out;
    };
    constexpr std::uint64_t kFee = 100'000'000'000'000;  // 0.0001 DPS
    const auto propose = [&](std::uint64_t nonce, codec::ProposalAction action) {
        return body("alice", nonce, 1'000, 10'000'000'000'000'000,
                    codec::Propose{std::move(action)});
    };
    const Hash256 task = contracts::taskIdOf(addressNamed("bob"), 7);
    const Hash256 group = contracts::taskIdOf(addressNamed("bob"), 11);

    codec::TaskCreate create;
    create.category = "ml-training";
    create.minGflops = 250'000;
    create.constraints = {"region == eu", "gpu_memory_gb >= 80"};
    create.maxMinutes = 90;
    create.specHash = crypto::sha256(asBytes("job spec: fine-tune, 2 epochs"));
    codec::TaskCreate replicated = create;
    replicated.replicas = 3;
    codec::DeviceModel a100;
    a100.model = "A100-80GB";
    a100.count = 8;
    a100.peakGflops = 312'000;
    a100.memoryBandwidthGbps = 2'039;
    a100.memoryCapacityGb = 80;
    a100.features = {"tensor_cores", "nvlink"};
    a100.powerWatts = 400;
    a100.factors = {{"fp64_gflops", 19'500}};
    codec::Attest attest;
    attest.epoch = 2;
    attest.slot = 17;
    attest.category = "ml-training";
    attest.devices = {{"A100-80GB", 8}};
    attest.powerWatts = 3'200;
    attest.renewableShareBps = 4'500;
    attest.evidence = {crypto::sha256(asBytes("benchmark run 17")),
                       crypto::sha256(asBytes("task 0x5e1f done"))};
    codec::AddValidator add;
    add.name = "validator-5";
    add.consensusKey = keyNamed("erin").publicKey();
    add.nodeId = NodeId::fromBytes(crypto::sha256(asBytes("erin node")).view().first(20)).value();
    add.account = addressNamed("erin-governance");

    return {
        // Nonce 0 is left out of the encoding, as every zero value is.
        {"transfer", "alice",
         body("alice", 0, 1'000, kFee,
              codec::Transfer{addressNamed("bob"), u128{1'000'000'000'000'000'000}})},
        {"vote", "alice", body("alice", 1, 1'000, kFee, codec::ProposalVote{1, true})},
        {"propose_add_validator", "alice", propose(2, add)},
        {"propose_remove_validator", "alice",
         propose(3, codec::RemoveValidator{keyNamed("frank").publicKey()})},
        {"propose_admit_provider", "alice",
         propose(4, codec::AdmitProvider{addressNamed("carol")})},
        {"propose_suspend_provider", "alice",
         propose(5, codec::SuspendProvider{addressNamed("carol")})},
        {"propose_reinstate_provider", "alice",
         propose(6, codec::ReinstateProvider{addressNamed("carol")})},
        {"propose_grant_verifier", "alice", propose(7, codec::GrantVerifier{addressNamed("dave")})},
        {"propose_revoke_verifier", "alice",
         propose(8, codec::RevokeVerifier{addressNamed("dave")})},
        {"propose_set_parameter", "alice",
         propose(9, codec::SetParameter{"fees.transfer", "200000000000000"})},
        {"register_provider", "carol",
         body("carol", 40, 250'000, 100'000'000'000'000'000,
              codec::RegisterProvider{
                  {a100}, {{"region", "eu"}, {"tier", "gold"}}, {"ml-training", "inference"}})},
        {"attest", "carol", body("carol", 41, 250'000, kFee, attest)},
        {"challenge", "dave",
         body("dave", 0, 250'000, 1'000'000'000'000'000,
              codec::Challenge{addressNamed("carol"), 2, 17, "benchmark hash does not match",
                               crypto::sha256(asBytes("rerun of slot 17"))})},
        {"task_create", "bob", body("bob", 7, 5'000, 1'000'000'000'000'000, create)},
        {"task_start", "carol", body("carol", 42, 5'000, kFee, codec::TaskStart{task})},
        {"task_refuse", "carol", body("carol", 43, 5'000, kFee, codec::TaskRefuse{task})},
        {"task_top_up", "bob", body("bob", 8, 5'000, kFee, codec::TaskTopUp{task, 30})},
        // Exit code 0 is left out.
        {"task_submit_result", "carol",
         body("carol", 44, 5'000, kFee,
              codec::TaskSubmitResult{task, crypto::sha256(asBytes("fine-tuned weights")),
                                      "s3://results/fine-tune-2", 0, 5'400'000})},
        // An empty reason is left out.
        {"task_verify", "bob", body("bob", 9, 5'000, kFee, codec::TaskVerify{task, true, "", {}})},
        {"task_report_failure", "carol",
         body("carol", 45, 5'000, kFee,
              codec::TaskReportFailure{task, 137, "out of memory", 1'200'000})},
        {"task_cancel", "bob", body("bob", 10, 5'000, kFee, codec::TaskCancel{task})},
        // No fields: the payload is an empty message.
        {"provider_unbond", "carol", body("carol", 46, 5'000, kFee, codec::ProviderUnbond{})},
        // Three providers run it: the replicas' ids are derived from the group id (replica_ids).
        {"task_create_replicas", "bob", body("bob", 11, 5'000, 1'000'000'000'000'000, replicated)},
        // A verifier decides a tied group by naming the result it upholds.
        {"task_verify_result_hash", "dave",
         body("dave", 1, 5'000, kFee,
              codec::TaskVerify{group, true, "two of three results agree on rerun",
                                crypto::sha256(asBytes("fine-tuned weights"))})},
        {"task_spot_check", "dave",
         body("dave", 2, 250'000, kFee,
              codec::TaskSpotCheck{task, "output does not reproduce",
                                   crypto::sha256(asBytes("rerun of task 7"))})},
        // Without evidence the field is left out.
        {"task_spot_check_no_evidence", "dave",
         body("dave", 3, 250'000, kFee, codec::TaskSpotCheck{task, "loss curve implausible", {}})},
        {"task_spot_check_verdict", "erin",
         body("erin", 0, 250'000, kFee,
              codec::TaskSpotCheckVerdict{task, true, "rerun gives another hash"})},
    };
}

namespace detail {

inline boost::json::string dec(std::uint64_t value) {
    return boost::json::string(std::to_string(value));
}

inline boost::json::array strings(const std::vector<std::string>& values) {
    boost::json::array out;
    for (const auto& value : values) {
        out.push_back(boost::json::string(value));
    }
    return out;
}

inline boost::json::object actionJson(const codec::ProposalAction& action) {
    return std::visit(
        Overloaded{
            [](const codec::AddValidator& a) -> boost::json::object {
                return {{"kind", "add_validator"},
                        {"name", a.name},
                        {"consensus_key", a.consensusKey.hex()},
                        {"node_id", a.nodeId.hex()},
                        {"account", a.account.hex()}};
            },
            [](const codec::RemoveValidator& a) -> boost::json::object {
                return {{"kind", "remove_validator"}, {"consensus_key", a.consensusKey.hex()}};
            },
            [](const codec::AdmitProvider& a) -> boost::json::object {
                return {{"kind", "admit_provider"}, {"provider", a.provider.hex()}};
            },
            [](const codec::SuspendProvider& a) -> boost::json::object {
                return {{"kind", "suspend_provider"}, {"provider", a.provider.hex()}};
            },
            [](const codec::ReinstateProvider& a) -> boost::json::object {
                return {{"kind", "reinstate_provider"}, {"provider", a.provider.hex()}};
            },
            [](const codec::GrantVerifier& a) -> boost::json::object {
                return {{"kind", "grant_verifier"}, {"account", a.account.hex()}};
            },
            [](const codec::RevokeVerifier& a) -> boost::json::object {
                return {{"kind", "revoke_verifier"}, {"account", a.account.hex()}};
            },
            [](const codec::SetParameter& a) -> boost::json::object {
                return {{"kind", "set_parameter"}, {"name", a.name}, {"value", a.value}};
            },
        },
        action);
}

inline boost::json::object fieldsJson(const codec::Transfer& t) {
    return {{"to", t.to.hex()}, {"amount", toDecimal(t.amount)}};
}
inline boost::json::object fieldsJson(const codec::Propose& p) {
    return {{"action", actionJson(p.action)}};
}
inline boost::json::object fieldsJson(const codec::ProposalVote& v) {
    return {{"proposal_id", dec(v.proposalId)}, {"approve", v.approve}};
}
inline boost::json::object fieldsJson(const codec::RegisterProvider& r) {
    boost::json::array devices;
    for (const auto& d : r.devices) {
        boost::json::array factors;
        for (const auto& f : d.factors) {
            factors.push_back({{"name", f.name}, {"value", dec(f.value)}});
        }
        devices.push_back({{"model", d.model},
                           {"count", dec(d.count)},
                           {"peak_gflops", dec(d.peakGflops)},
                           {"memory_bandwidth_gbps", dec(d.memoryBandwidthGbps)},
                           {"memory_capacity_gb", dec(d.memoryCapacityGb)},
                           {"features", strings(d.features)},
                           {"power_watts", dec(d.powerWatts)},
                           {"factors", std::move(factors)}});
    }
    boost::json::array labels;
    for (const auto& l : r.labels) {
        labels.push_back({{"key", l.key}, {"value", l.value}});
    }
    return {{"devices", std::move(devices)},
            {"labels", std::move(labels)},
            {"categories", strings(r.categories)}};
}
inline boost::json::object fieldsJson(const codec::Attest& a) {
    boost::json::array devices;
    for (const auto& d : a.devices) {
        devices.push_back({{"model", d.model}, {"count", dec(d.count)}});
    }
    boost::json::array evidence;
    for (const auto& e : a.evidence) {
        evidence.push_back(boost::json::string(e.hex()));
    }
    return {{"epoch", dec(a.epoch)},
            {"slot", dec(a.slot)},
            {"category", a.category},
            {"devices", std::move(devices)},
            {"power_watts", dec(a.powerWatts)},
            {"renewable_share_bps", dec(a.renewableShareBps)},
            {"evidence", std::move(evidence)}};
}
inline boost::json::object fieldsJson(const codec::Challenge& c) {
    return {{"provider", c.provider.hex()},
            {"epoch", dec(c.epoch)},
            {"slot", dec(c.slot)},
            {"reason", c.reason},
            {"evidence", c.evidence.hex()}};
}
/** An optional hash: "0x" (empty, left out of the encoding) when zero. */
inline boost::json::string optionalHex(const Hash256& hash) {
    return boost::json::string(hash.isZero() ? std::string("0x") : hash.hex());
}

inline boost::json::object fieldsJson(const codec::TaskCreate& c) {
    return {{"category", c.category},
            {"min_gflops", dec(c.minGflops)},
            {"constraints", strings(c.constraints)},
            {"max_minutes", dec(c.maxMinutes)},
            {"spec_hash", c.specHash.hex()},
            {"replicas", dec(c.replicas)}};
}
inline boost::json::object fieldsJson(const codec::TaskStart& t) {
    return {{"task_id", t.taskId.hex()}};
}
inline boost::json::object fieldsJson(const codec::TaskRefuse& t) {
    return {{"task_id", t.taskId.hex()}};
}
inline boost::json::object fieldsJson(const codec::TaskCancel& t) {
    return {{"task_id", t.taskId.hex()}};
}
inline boost::json::object fieldsJson(const codec::ProviderUnbond& /*unbond*/) {
    return {};
}
inline boost::json::object fieldsJson(const codec::TaskTopUp& t) {
    return {{"task_id", t.taskId.hex()}, {"extra_minutes", dec(t.extraMinutes)}};
}
inline boost::json::object fieldsJson(const codec::TaskSubmitResult& t) {
    return {{"task_id", t.taskId.hex()},
            {"result_hash", t.resultHash.hex()},
            {"output_uri", t.outputUri},
            {"exit_code", dec(t.exitCode)},
            {"duration_ms", dec(t.durationMs)}};
}
inline boost::json::object fieldsJson(const codec::TaskVerify& t) {
    return {{"task_id", t.taskId.hex()},
            {"accept", t.accept},
            {"reason", t.reason},
            {"result_hash", optionalHex(t.resultHash)}};
}
inline boost::json::object fieldsJson(const codec::TaskSpotCheck& t) {
    return {
        {"task_id", t.taskId.hex()}, {"reason", t.reason}, {"evidence", optionalHex(t.evidence)}};
}
inline boost::json::object fieldsJson(const codec::TaskSpotCheckVerdict& t) {
    return {{"task_id", t.taskId.hex()}, {"upheld", t.upheld}, {"reason", t.reason}};
}
inline boost::json::object fieldsJson(const codec::TaskReportFailure& t) {
    return {{"task_id", t.taskId.hex()},
            {"exit_code", dec(t.exitCode)},
            {"error", t.error},
            {"duration_ms", dec(t.durationMs)}};
}

}  // namespace detail

/** The payload of a case as JSON: its kind (codec::kPayloadKinds) and its fields by their proto
 * names, 64-bit integers and amounts as decimal strings, bytes as 0x hex, as the JSON-RPC writes
 * them. */
inline boost::json::object payloadJson(const codec::Payload& payload) {
    boost::json::object out{{"kind", codec::kPayloadKinds[payload.index()]}};
    std::visit(
        [&out](const auto& p) {
            for (auto& [key, value] : detail::fieldsJson(p)) {
                out[key] = value;
            }
        },
        payload);
    return out;
}

inline boost::json::object bodyJson(const codec::TxBody& body) {
    return {{"chain_id", body.chainId},
            {"sender_pubkey", body.sender.hex()},
            {"nonce", std::to_string(body.nonce)},
            {"valid_until_height", std::to_string(body.validUntilHeight)},
            {"fee", std::to_string(body.fee)},
            {"payload", payloadJson(body.payload)}};
}

/** Everything of a case that does not depend on its signature (BIP-340 signing draws fresh
 * auxiliary randomness, so each signing gives another valid signature). */
inline boost::json::object unsignedVector(const Case& c) {
    const crypto::SecretKey key = keyNamed(c.signer);
    const std::string domain = crypto::chainDomain(kChainId, genesisHash());
    const Bytes bodyBytes = codec::encodeTxBody(c.body);
    boost::json::object out{
        {"name", c.name},
        {"secret_key", key.secret().hex()},
        {"public_key", key.publicKey().hex()},
        {"address", crypto::addressOf(key.publicKey()).hex()},
        {"body", bodyJson(c.body)},
        {"body_hex", toHex(bodyBytes)},
        {"signing_digest", crypto::signingDigest(crypto::kTxTag, domain, bodyBytes).hex()}};
    if (const auto* create = std::get_if<codec::TaskCreate>(&c.body.payload)) {
        const Hash256 id = contracts::taskIdOf(crypto::addressOf(key.publicKey()), c.body.nonce);
        out["task_id"] = id.hex();
        // A redundant task: task_id names the group, replica i is replicaIdOf(group, i).
        if (create->replicas > 1) {
            boost::json::array replicas;
            for (std::uint32_t i = 0; i < create->replicas; ++i) {
                replicas.push_back(boost::json::string(contracts::replicaIdOf(id, i).hex()));
            }
            out["replica_ids"] = std::move(replicas);
        }
    }
    return out;
}

}  // namespace gridledger::vectors
