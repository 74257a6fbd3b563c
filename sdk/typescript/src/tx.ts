// Transactions: the body, the signing domain and digest, the signed envelope, its hash, and the
// id of the task a transaction creates (docs/encoding.md §2-§8).

import { schnorr } from "@noble/curves/secp256k1";
import { sha256 } from "@noble/hashes/sha2";

import { concat, fromHex, toHex, u32be, u64be, utf8, type Hex } from "./bytes.js";
import { encodePayload, type Payload } from "./payloads.js";
import { bytesField, integerField, messageField, stringField } from "./proto.js";

/** The tag of a transaction's signing digest. */
export const TX_SIGNING_TAG = "gridledger/tx/v1";

export interface TxBody {
    chainId: string;
    /** The sender's 32-byte x-only public key. */
    sender: Hex;
    /** The sender's next nonce (`account_get`'s `nonce`). */
    nonce: bigint;
    /** The last height whose block may include the transaction. */
    validUntilHeight: bigint;
    /** DPS base units paid to the reward pool; at least the kind's fee (`tokenomics_get`). */
    fee: bigint;
    payload: Payload;
}

export function encodeTxBody(body: TxBody): Uint8Array {
    const [field, payload] = encodePayload(body.payload);
    return concat(
        stringField(1, body.chainId),
        bytesField(2, fromHex(body.sender, 32)),
        integerField(3, body.nonce),
        integerField(4, body.validUntilHeight),
        integerField(5, body.fee),
        messageField(field, payload),
    );
}

/** A chain's signing domain: its id's UTF-8 bytes and its 32-byte genesis hash (`node_getStatus`). */
export function signingDomain(chainId: string, genesisHash: Hex): Uint8Array {
    return concat(utf8(chainId), fromHex(genesisHash, 32));
}

/** SHA-256(u32be(|tag|) ‖ tag ‖ u32be(|domain|) ‖ domain ‖ body). */
export function signingDigest(tag: string, domain: Uint8Array, body: Uint8Array): Uint8Array {
    const tagBytes = utf8(tag);
    return sha256(concat(u32be(tagBytes.length), tagBytes, u32be(domain.length), domain, body));
}

/** A signed transaction: the bytes `tx_submit` takes (as hex) and `POST /txs` frames. */
export interface SignedTx {
    bytes: Uint8Array;
    hex: Hex;
    /** SHA-256 of the bytes: the id `tx_submit` returns and `tx_get` looks up. */
    hash: Hex;
    signature: Hex;
}

/** The envelope `Tx{body = 1, signature = 2}` of body bytes and their signature. */
export function encodeTx(body: Uint8Array, signature: Uint8Array): SignedTx {
    const bytes = concat(bytesField(1, body), bytesField(2, signature));
    return { bytes, hex: toHex(bytes), hash: toHex(sha256(bytes)), signature: toHex(signature) };
}

/** Signs a body with the sender's secret key for the chain of signing domain `domain`. */
export function signTx(body: TxBody, secretKey: Hex, domain: Uint8Array): SignedTx {
    const bytes = encodeTxBody(body);
    const signature = schnorr.sign(signingDigest(TX_SIGNING_TAG, domain, bytes), fromHex(secretKey, 32));
    return encodeTx(bytes, signature);
}

/** True iff `signature` is the sender's signature of the body bytes in `domain`. */
export function verifyTxSignature(body: Uint8Array, signature: Hex, sender: Hex, domain: Uint8Array): boolean {
    return schnorr.verify(fromHex(signature, 64), signingDigest(TX_SIGNING_TAG, domain, body), fromHex(sender, 32));
}

/** The id of the task that the consumer's transaction with `nonce` creates. */
export function taskIdOf(consumer: Hex, nonce: bigint): Hex {
    return toHex(sha256(concat(utf8("gridledger/task-id"), fromHex(consumer, 20), u64be(nonce))));
}

/**
 * The id of replica `index` (0 ≤ index < replicas) of the redundant task whose transaction has the
 * group id `group` (the taskIdOf a single task would have).
 */
export function replicaIdOf(group: Hex, index: number): Hex {
    return toHex(sha256(concat(utf8("gridledger/task-replica"), fromHex(group, 32), u32be(index))));
}
