// The SDK against the test vectors of the GridLedger repository (tests/vectors/transactions.json,
// docs/encoding.md): every key, address, body, digest, transaction, hash and task id.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";

import {
    addressOf,
    encodeTx,
    encodeTxBody,
    fromHex,
    publicKeyOf,
    replicaIdOf,
    signTx,
    signingDigest,
    signingDomain,
    taskIdOf,
    toHex,
    TX_SIGNING_TAG,
    verifyTxSignature,
    type GovernanceAction,
    type Hex,
    type Payload,
    type TxBody,
} from "../../src/index.js";

type Json = Record<string, any>;

const file: Json = JSON.parse(
    readFileSync(process.env.GRIDLEDGER_VECTORS ?? resolve("../../tests/vectors/transactions.json"), "utf8"),
);

const big = (value: string): bigint => BigInt(value);
const num = (value: string): number => Number(value);

function action(a: Json): GovernanceAction {
    switch (a.kind) {
        case "add_validator":
            return { kind: a.kind, name: a.name, consensusKey: a.consensus_key, nodeId: a.node_id, account: a.account };
        case "remove_validator":
            return { kind: a.kind, consensusKey: a.consensus_key };
        case "admit_provider":
        case "suspend_provider":
        case "reinstate_provider":
            return { kind: a.kind, provider: a.provider };
        case "grant_verifier":
        case "revoke_verifier":
            return { kind: a.kind, account: a.account };
        case "set_parameter":
            return { kind: a.kind, name: a.name, value: a.value };
    }
    throw new Error(`unknown action ${a.kind}`);
}

/** A vector's JSON payload (proto field names, decimal strings) as the SDK's Payload. */
function payload(p: Json): Payload {
    switch (p.kind) {
        case "transfer":
            return { kind: p.kind, to: p.to, amount: big(p.amount) };
        case "propose":
            return { kind: p.kind, action: action(p.action) };
        case "vote":
            return { kind: p.kind, proposalId: big(p.proposal_id), approve: p.approve };
        case "register_provider":
            return {
                kind: p.kind,
                devices: p.devices.map((d: Json) => ({
                    model: d.model,
                    count: big(d.count),
                    peakGflops: big(d.peak_gflops),
                    memoryBandwidthGbps: big(d.memory_bandwidth_gbps),
                    memoryCapacityGb: big(d.memory_capacity_gb),
                    features: d.features,
                    powerWatts: big(d.power_watts),
                    factors: d.factors.map((f: Json) => ({ name: f.name, value: big(f.value) })),
                })),
                labels: p.labels,
                categories: p.categories,
            };
        case "attest":
            return {
                kind: p.kind,
                epoch: big(p.epoch),
                slot: big(p.slot),
                category: p.category,
                devices: p.devices.map((d: Json) => ({ model: d.model, count: big(d.count) })),
                powerWatts: big(p.power_watts),
                renewableShareBps: num(p.renewable_share_bps),
                evidence: p.evidence,
            };
        case "challenge":
            return { kind: p.kind, provider: p.provider, epoch: big(p.epoch), slot: big(p.slot), reason: p.reason, evidence: p.evidence };
        case "task_create":
            return {
                kind: p.kind,
                category: p.category,
                minGflops: big(p.min_gflops),
                constraints: p.constraints,
                maxMinutes: big(p.max_minutes),
                specHash: p.spec_hash,
                replicas: num(p.replicas),
            };
        case "task_start":
        case "task_refuse":
        case "task_cancel":
            return { kind: p.kind, taskId: p.task_id };
        case "task_top_up":
            return { kind: p.kind, taskId: p.task_id, extraMinutes: big(p.extra_minutes) };
        case "task_submit_result":
            return {
                kind: p.kind,
                taskId: p.task_id,
                resultHash: p.result_hash,
                outputUri: p.output_uri,
                exitCode: num(p.exit_code),
                durationMs: big(p.duration_ms),
            };
        case "task_verify":
            return { kind: p.kind, taskId: p.task_id, accept: p.accept, reason: p.reason, resultHash: p.result_hash };
        case "task_report_failure":
            return { kind: p.kind, taskId: p.task_id, exitCode: num(p.exit_code), error: p.error, durationMs: big(p.duration_ms) };
        case "provider_unbond":
            return { kind: p.kind };
        case "task_spot_check":
            return { kind: p.kind, taskId: p.task_id, reason: p.reason, evidence: p.evidence };
        case "task_spot_check_verdict":
            return { kind: p.kind, taskId: p.task_id, upheld: p.upheld, reason: p.reason };
    }
    throw new Error(`unknown payload kind ${p.kind}`);
}

function body(b: Json): TxBody {
    return {
        chainId: b.chain_id,
        sender: b.sender_pubkey,
        nonce: big(b.nonce),
        validUntilHeight: big(b.valid_until_height),
        fee: big(b.fee),
        payload: payload(b.payload),
    };
}

const domain = signingDomain(file.chain_id, file.genesis_hash);

test("the signing domain is the chain id's bytes and the genesis hash", () => {
    assert.equal(toHex(domain), file.signing_domain);
    assert.equal(TX_SIGNING_TAG, file.tx_signing_tag);
});

test("the vectors cover every payload kind", () => {
    const kinds = new Set(file.vectors.map((v: Json) => v.body.payload.kind));
    assert.equal(kinds.size, 17);
});

for (const v of file.vectors as Json[]) {
    test(`vector ${v.name}`, () => {
        assert.equal(publicKeyOf(v.secret_key), v.public_key);
        assert.equal(addressOf(v.public_key), v.address);
        const tx = body(v.body);
        const bytes = encodeTxBody(tx);
        assert.equal(toHex(bytes), v.body_hex);
        assert.equal(toHex(signingDigest(TX_SIGNING_TAG, domain, bytes)), v.signing_digest);
        assert.ok(verifyTxSignature(bytes, v.signature, v.public_key, domain));
        const signed = encodeTx(bytes, fromHex(v.signature));
        assert.equal(signed.hex, v.tx_hex);
        assert.equal(signed.hash, v.tx_hash);
        if (v.task_id !== undefined) {
            assert.equal(taskIdOf(v.address as Hex, tx.nonce), v.task_id);
            // A redundant task's replicas: replica i of the group the task id names.
            const replicas: Hex[] = v.replica_ids ?? [];
            assert.equal(replicas.length, num(v.body.payload.replicas) > 1 ? num(v.body.payload.replicas) : 0);
            replicas.forEach((id, i) => assert.equal(replicaIdOf(v.task_id, i), id));
        }
        // Signing anew gives another signature (fresh auxiliary randomness) that verifies too.
        const again = signTx(tx, v.secret_key, domain);
        assert.ok(verifyTxSignature(bytes, again.signature, v.public_key, domain));
        assert.notEqual(again.signature, v.signature);
        // A signature of another chain does not.
        const other = signingDomain("another-chain", file.genesis_hash);
        assert.ok(!verifyTxSignature(bytes, v.signature, v.public_key, other));
    });
}
