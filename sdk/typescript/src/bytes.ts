// Bytes as GridLedger writes them, and the big-endian integers its digests use.

/** Bytes as the JSON-RPC writes them: lower-case hex with a `0x` prefix. */
export type Hex = `0x${string}`;

export function toHex(bytes: Uint8Array): Hex {
    let out = "0x";
    for (const byte of bytes) {
        out += byte.toString(16).padStart(2, "0");
    }
    return out as Hex;
}

/** The bytes of `0x` hex (either case); throws on anything else, or on another length than
 * `length` when it is given. */
export function fromHex(hex: string, length?: number): Uint8Array {
    if (!/^0x([0-9a-fA-F]{2})*$/.test(hex)) {
        throw new Error(`not 0x hex of whole bytes: ${hex}`);
    }
    const out = new Uint8Array((hex.length - 2) / 2);
    for (let i = 0; i < out.length; ++i) {
        out[i] = parseInt(hex.slice(2 + 2 * i, 4 + 2 * i), 16);
    }
    if (length !== undefined && out.length !== length) {
        throw new Error(`expected ${length} bytes, got ${out.length}`);
    }
    return out;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
    const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
    let at = 0;
    for (const part of parts) {
        out.set(part, at);
        at += part.length;
    }
    return out;
}

export function utf8(text: string): Uint8Array {
    return new TextEncoder().encode(text);
}

/** `value` as `bytes` bytes, big-endian; throws when it does not fit. */
export function bigEndian(value: bigint, bytes: number): Uint8Array {
    if (value < 0n || value >= 1n << BigInt(8 * bytes)) {
        throw new Error(`${value} does not fit in ${bytes} bytes`);
    }
    const out = new Uint8Array(bytes);
    for (let i = bytes - 1; i >= 0; --i) {
        out[i] = Number(value & 0xffn);
        value >>= 8n;
    }
    return out;
}

export const u32be = (value: number): Uint8Array => bigEndian(BigInt(value), 4);
export const u64be = (value: bigint): Uint8Array => bigEndian(value, 8);
