// Account keys: BIP-340 (secp256k1 Schnorr) keys, x-only public keys and addresses
// (docs/encoding.md §1).

import { schnorr } from "@noble/curves/secp256k1";
import { sha256 } from "@noble/hashes/sha2";

import { fromHex, toHex, type Hex } from "./bytes.js";

/** A fresh secret key from the platform's secure random source. */
export function generateSecretKey(): Hex {
    return toHex(schnorr.utils.randomPrivateKey());
}

/** The 32-byte x-only public key of a 32-byte secret key. */
export function publicKeyOf(secretKey: Hex): Hex {
    return toHex(schnorr.getPublicKey(fromHex(secretKey, 32)));
}

/** The address of a public key: the first 20 bytes of SHA-256(public key). */
export function addressOf(publicKey: Hex): Hex {
    return toHex(sha256(fromHex(publicKey, 32)).slice(0, 20));
}
