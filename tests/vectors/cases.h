#pragma once

// The transactions of the test vectors (tests/vectors/transactions.json, docs/encoding.md): who
// signs them, their bodies, and the JSON that describes a body field by field, so that a client
// in any language can build the same bytes. Shared by the generator and the C++ test.

#include <string>
#include <vector>

#include <boost/json.hpp>

#include <gridledger/base/amount.h>
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
    codec::Transfer transfer;
    transfer.to = crypto::addressOf(keyNamed("bob").publicKey());
    transfer.amount = u128{1'000'000'000'000'000'000};  // 1 DPS
    codec::ProposalVote vote;
    vote.proposalId = 1;
    vote.approve = true;
    codec::Attest attest;
    attest.epoch = 2;
    attest.slot = 17;
    attest.category = "ml-training";
    attest.devices = {{"A100-80GB", 8}, {"H100-SXM", 4}};
    attest.powerWatts = 6400;
    attest.renewableShareBps = 4500;
    attest.evidence = {crypto::sha256(asBytes("benchmark run 17"))};
    codec::TaskCreate task;
    task.category = "ml-training";
    task.minGflops = 250'000;
    task.constraints = {"region == eu", "gpu_memory_gb >= 80"};
    task.maxMinutes = 90;
    task.specHash = crypto::sha256(asBytes("job spec: fine-tune, 2 epochs"));
    return {
        // Nonce 0 is left out of the encoding, as every zero value is.
        {"transfer", "alice", body("alice", 0, 1'000, 100'000'000'000'000, transfer)},
        {"vote", "alice", body("alice", 1, 1'000, 100'000'000'000'000, vote)},
        {"attest", "carol", body("carol", 41, 250'000, 100'000'000'000'000, attest)},
        {"task_create", "bob", body("bob", 7, 5'000, 1'000'000'000'000'000, task)},
    };
}

/** The payload of a case as JSON: its kind and its fields, integers as decimal strings, bytes as
 * 0x hex, as the JSON-RPC writes them. */
inline boost::json::object payloadJson(const codec::Payload& payload) {
    boost::json::object out;
    if (const auto* t = std::get_if<codec::Transfer>(&payload)) {
        out = {{"kind", "transfer"}, {"to", t->to.hex()}, {"amount", toDecimal(t->amount)}};
    } else if (const auto* v = std::get_if<codec::ProposalVote>(&payload)) {
        out = {{"kind", "vote"},
               {"proposal_id", std::to_string(v->proposalId)},
               {"approve", v->approve}};
    } else if (const auto* a = std::get_if<codec::Attest>(&payload)) {
        boost::json::array devices;
        for (const auto& d : a->devices) {
            devices.push_back({{"model", d.model}, {"count", std::to_string(d.count)}});
        }
        boost::json::array evidence;
        for (const auto& e : a->evidence) {
            evidence.push_back(boost::json::string(e.hex()));
        }
        out = {{"kind", "attest"},
               {"epoch", std::to_string(a->epoch)},
               {"slot", std::to_string(a->slot)},
               {"category", a->category},
               {"devices", std::move(devices)},
               {"power_watts", std::to_string(a->powerWatts)},
               {"renewable_share_bps", std::to_string(a->renewableShareBps)},
               {"evidence", std::move(evidence)}};
    } else if (const auto* c = std::get_if<codec::TaskCreate>(&payload)) {
        boost::json::array constraints;
        for (const auto& text : c->constraints) {
            constraints.push_back(boost::json::string(text));
        }
        out = {{"kind", "task_create"},
               {"category", c->category},
               {"min_gflops", std::to_string(c->minGflops)},
               {"constraints", std::move(constraints)},
               {"max_minutes", std::to_string(c->maxMinutes)},
               {"spec_hash", c->specHash.hex()}};
    }
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
    if (std::holds_alternative<codec::TaskCreate>(c.body.payload)) {
        out["task_id"] =
            contracts::taskIdOf(crypto::addressOf(key.publicKey()), c.body.nonce).hex();
    }
    return out;
}

}  // namespace gridledger::vectors
