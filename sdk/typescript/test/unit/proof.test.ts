// Offline checks: the state proof of docs/state_tree.md's test vector, and quorum certificates.

import assert from "node:assert/strict";
import { test } from "node:test";

import { schnorr } from "@noble/curves/secp256k1";
import { sha256 } from "@noble/hashes/sha2";

import {
    concat,
    fromHex,
    publicKeyOf,
    toHex,
    utf8,
    verifyQuorumCert,
    verifyStateProof,
    voteDigest,
    type Hex,
} from "../../src/index.js";

const key = (first: number): Uint8Array => Uint8Array.from([first, ...new Array(31).fill(0)]);
const leafHash = (k: Uint8Array, value: string) => sha256(concat(utf8("gridledger/state/leaf"), k, sha256(utf8(value))));
const nodeHash = (l: Uint8Array, r: Uint8Array) => sha256(concat(utf8("gridledger/state/node"), l, r));
const proofOf = (leaf: [Uint8Array, Uint8Array] | undefined, siblings: Uint8Array[]): Hex =>
    toHex(
        concat(
            Uint8Array.from([1, leaf ? 1 : 0]),
            ...(leaf ? leaf : []),
            Uint8Array.from([0, siblings.length]),
            ...siblings,
        ),
    );

// docs/state_tree.md "Test vector": 0x00…00 = "a", 0x80…00 = "b", 0x40…00 = "c".
const root: Hex = "0xc1872558cbc19b16f86c4a3cd2385b9a685cd368ac425d8a69735ad91aa11859";
const [a, b, c] = [key(0x00), key(0x80), key(0x40)];

test("the documented root is that of the three leaves", () => {
    assert.equal(toHex(nodeHash(nodeHash(leafHash(a, "a"), leafHash(c, "c")), leafHash(b, "b"))), root);
});

test("an inclusion proof verifies, and not for another value or root", () => {
    const proof = proofOf([c, sha256(utf8("c"))], [leafHash(b, "b"), leafHash(a, "a")]);
    assert.ok(verifyStateProof(root, toHex(c), toHex(utf8("c")), proof));
    assert.ok(!verifyStateProof(root, toHex(c), toHex(utf8("d")), proof));
    assert.ok(!verifyStateProof(toHex(new Uint8Array(32)), toHex(c), toHex(utf8("c")), proof));
    assert.ok(!verifyStateProof(root, toHex(c), null, proof), "an inclusion proof is no absence");
});

test("a non-inclusion proof ends at another key's leaf that shares the path", () => {
    const absent = key(0xc0);
    const proof = proofOf([b, sha256(utf8("b"))], [nodeHash(leafHash(a, "a"), leafHash(c, "c"))]);
    assert.ok(verifyStateProof(root, toHex(absent), null, proof));
    assert.ok(!verifyStateProof(root, toHex(b), null, proof), "b itself is present");
    assert.ok(!verifyStateProof(root, toHex(key(0x20)), null, proof), "0x20 does not share the path");
});

test("a quorum certificate needs ⌊2n/3⌋ + 1 valid signatures of the committee", () => {
    const secrets: Hex[] = [1, 2, 3, 4].map((i) => toHex(sha256(utf8(`member ${i}`))));
    const members = secrets.map(publicKeyOf);
    const domain = concat(utf8("chain"), new Uint8Array(32));
    const blockId = toHex(sha256(utf8("block")));
    const digest = voteDigest(domain, 0n, 7n, blockId);
    const sign = (i: number) => schnorr.sign(digest, fromHex(secrets[i]!));
    const qc = (signers: number[]) => ({
        epoch: 0n,
        round: 7n,
        blockId,
        signers: Uint8Array.from([signers.reduce((bits, i) => bits | (1 << i), 0)]),
        signatures: signers.map(sign),
    });
    assert.ok(verifyQuorumCert(qc([0, 1, 3]), blockId, members, domain));
    assert.ok(!verifyQuorumCert(qc([0, 1]), blockId, members, domain), "two of four are no quorum");
    assert.ok(!verifyQuorumCert(qc([0, 1, 3]), blockId, members, concat(utf8("other"), new Uint8Array(32))));
    assert.ok(!verifyQuorumCert(qc([0, 1, 3]), toHex(sha256(utf8("another block"))), members, domain));
    const swapped = qc([0, 1, 3]);
    swapped.signatures.reverse();
    assert.ok(!verifyQuorumCert(swapped, blockId, members, domain), "each signature is its signer's");
});
