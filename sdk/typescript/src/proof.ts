// Trusting no node: a block's header checked against the quorum certificate that certifies it
// and the committee the caller trusts, and a state proof checked against the state root that header
// certifies (docs/state_tree.md "Verifying a proof offline", docs/protocol.md §2).

import { schnorr } from "@noble/curves/secp256k1";
import { sha256 } from "@noble/hashes/sha2";

import { concat, fromHex, toHex, u64be, utf8, type Hex } from "./bytes.js";
import { signingDigest } from "./tx.js";

// ---- Reading the canonical encoding ------------------------------------------------------------

/** The fields of one encoded message: varints as bigint, length-delimited fields as bytes. */
function fieldsOf(bytes: Uint8Array): Map<number, (bigint | Uint8Array)[]> {
    const out = new Map<number, (bigint | Uint8Array)[]>();
    let at = 0;
    const varint = (): bigint => {
        let value = 0n;
        for (let shift = 0n; ; shift += 7n) {
            if (at >= bytes.length || shift > 63n) {
                throw new Error("truncated or overlong varint");
            }
            const byte = bytes[at++]!;
            value |= BigInt(byte & 0x7f) << shift;
            if ((byte & 0x80) === 0) {
                return value;
            }
        }
    };
    while (at < bytes.length) {
        const key = varint();
        const field = Number(key >> 3n);
        let value: bigint | Uint8Array;
        if ((key & 7n) === 0n) {
            value = varint();
        } else if ((key & 7n) === 2n) {
            const length = Number(varint());
            if (at + length > bytes.length) {
                throw new Error("truncated field");
            }
            value = bytes.slice(at, at + length);
            at += length;
        } else {
            throw new Error(`unexpected wire type in field ${field}`);
        }
        out.set(field, [...(out.get(field) ?? []), value]);
    }
    return out;
}

function int(fields: Map<number, (bigint | Uint8Array)[]>, field: number): bigint {
    const value = fields.get(field)?.[0] ?? 0n;
    if (typeof value !== "bigint") {
        throw new Error(`field ${field} is not an integer`);
    }
    return value;
}

function bytesOf(fields: Map<number, (bigint | Uint8Array)[]>, field: number): Uint8Array {
    const value = fields.get(field)?.[0] ?? new Uint8Array(0);
    if (typeof value === "bigint") {
        throw new Error(`field ${field} is not bytes`);
    }
    return value;
}

// ---- Certified headers -------------------------------------------------------------------------

/** The fields of a block header an auditor relies on, and the block's id. */
export interface BlockHeader {
    id: Hex;
    epoch: bigint;
    round: bigint;
    height: bigint;
    /** The state after executing every block up to `execHeight`, which this header certifies. */
    execHeight: bigint;
    execStateRoot: Hex;
    execResultsRoot: Hex;
}

/** The header of an encoded block (`block_getRaw`' `block`); its id is SHA-256 of the
 * header's bytes. */
export function decodeBlockHeader(rawBlock: Hex): BlockHeader {
    const headerBytes = bytesOf(fieldsOf(fromHex(rawBlock)), 1);
    const h = fieldsOf(headerBytes);
    return {
        id: toHex(sha256(headerBytes)),
        epoch: int(h, 1),
        round: int(h, 2),
        height: int(h, 3),
        execHeight: int(h, 11),
        execStateRoot: toHex(bytesOf(h, 12)),
        execResultsRoot: toHex(bytesOf(h, 13)),
    };
}

export interface QuorumCert {
    epoch: bigint;
    round: bigint;
    blockId: Hex;
    /** Bit i (least significant first in byte i / 8) set: member i signed. */
    signers: Uint8Array;
    signatures: Uint8Array[];
}

/** An encoded quorum certificate (`block_getRaw`' `certificate`). */
export function decodeQuorumCert(raw: Hex): QuorumCert {
    const f = fieldsOf(fromHex(raw));
    return {
        epoch: int(f, 1),
        round: int(f, 2),
        blockId: toHex(bytesOf(f, 3)),
        signers: bytesOf(f, 4),
        signatures: (f.get(5) ?? []).map((s) => {
            if (typeof s === "bigint" || s.length !== 64) {
                throw new Error("a signature is not 64 bytes");
            }
            return s;
        }),
    };
}

/** The digest a vote signs: signingDigest("gridledger/vote/v1", domain, u64be(epoch) ‖
 * u64be(round) ‖ block id). */
export function voteDigest(domain: Uint8Array, epoch: bigint, round: bigint, blockId: Hex): Uint8Array {
    return signingDigest("gridledger/vote/v1", domain, concat(u64be(epoch), u64be(round), fromHex(blockId, 32)));
}

/**
 * True iff `qc` certifies `blockId` for the committee `members` (consensus keys, in committee
 * order) of the chain of signing domain `domain`: a well-formed signer bitmap, at least
 * ⌊2n/3⌋ + 1 signers, and each signer's valid vote signature.
 */
export function verifyQuorumCert(qc: QuorumCert, blockId: Hex, members: Hex[], domain: Uint8Array): boolean {
    const n = members.length;
    if (qc.blockId !== blockId || qc.signers.length !== Math.ceil(n / 8)) {
        return false;
    }
    const signers: number[] = [];
    for (let i = 0; i < qc.signers.length * 8; ++i) {
        if ((qc.signers[i >> 3]! >> (i & 7)) & 1) {
            if (i >= n) {
                return false;
            }
            signers.push(i);
        }
    }
    if (signers.length < Math.floor((2 * n) / 3) + 1 || signers.length !== qc.signatures.length) {
        return false;
    }
    const digest = voteDigest(domain, qc.epoch, qc.round, blockId);
    return signers.every((member, k) => schnorr.verify(qc.signatures[k]!, digest, fromHex(members[member]!, 32)));
}

/** The header of `rawBlock`, once `rawCertificate` proves the committee certified it; throws
 * otherwise. */
export function certifiedHeader(rawBlock: Hex, rawCertificate: Hex, members: Hex[], domain: Uint8Array): BlockHeader {
    const header = decodeBlockHeader(rawBlock);
    const qc = decodeQuorumCert(rawCertificate);
    if (qc.epoch !== header.epoch || !verifyQuorumCert(qc, header.id, members, domain)) {
        throw new Error(`block ${header.id} is not certified by this committee`);
    }
    return header;
}

// ---- State proofs ------------------------------------------------------------------------------

/** The state key of an account: SHA-256("gridledger/state/account" ‖ address). */
export function accountKey(address: Hex): Hex {
    return toHex(sha256(concat(utf8("gridledger/state/account"), fromHex(address, 20))));
}

/** An account's state value: nonce (8 bytes) and balance (16 bytes), big-endian. */
export function decodeAccount(value: Hex): { nonce: bigint; balance: bigint } {
    const bytes = fromHex(value, 24);
    const read = (from: number, to: number) => bytes.slice(from, to).reduce((v, b) => (v << 8n) | BigInt(b), 0n);
    return { nonce: read(0, 8), balance: read(8, 24) };
}

/**
 * True iff `proof` (state_getProof's) shows that `key` holds `value` in the state of root `root`
 * (inclusion), or, with `value` null, that it holds none (non-inclusion).
 */
export function verifyStateProof(root: Hex, key: Hex, value: Hex | null, proof: Hex): boolean {
    const p = fromHex(proof);
    const k = fromHex(key, 32);
    if (p.length < 4 || p[0] !== 1 || p[1]! > 1) {
        return false;
    }
    let at = 2;
    let leaf: { key: Uint8Array; valueHash: Uint8Array } | undefined;
    if (p[1] === 1) {
        if (p.length < 68) {
            return false;
        }
        leaf = { key: p.slice(2, 34), valueHash: p.slice(34, 66) };
        at = 66;
    }
    const count = (p[at]! << 8) | p[at + 1]!;
    const siblings = p.slice(at + 2);
    if (count > 256 || siblings.length !== 32 * count) {
        return false;
    }
    const bit = (bytes: Uint8Array, i: number) => (bytes[i >> 3]! >> (7 - (i & 7))) & 1;
    const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (value !== null) {
        if (leaf === undefined || !same(leaf.key, k) || !same(leaf.valueHash, sha256(fromHex(value)))) {
            return false;
        }
    } else if (leaf !== undefined) {
        for (let i = 0; i < count; ++i) {
            if (bit(leaf.key, i) !== bit(k, i)) {
                return false;
            }
        }
        if (same(leaf.key, k)) {
            return false;
        }
    }
    let h = leaf === undefined ? new Uint8Array(32) : sha256(concat(utf8("gridledger/state/leaf"), leaf.key, leaf.valueHash));
    for (let i = count - 1; i >= 0; --i) {
        const sibling = siblings.slice(32 * i, 32 * i + 32);
        h = sha256(concat(utf8("gridledger/state/node"), bit(k, i) ? concat(sibling, h) : concat(h, sibling)));
    }
    return toHex(h) === root;
}
