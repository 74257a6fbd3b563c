// The canonical Protocol Buffers encoding GridLedger accepts (docs/encoding.md §3): fields in
// ascending number, zero values left out, shortest varints, set messages written even when empty.

import { concat, utf8 } from "./bytes.js";

const EMPTY = new Uint8Array(0);

export function varint(value: bigint): Uint8Array {
    if (value < 0n || value >= 1n << 64n) {
        throw new Error(`${value} is not a u64`);
    }
    const out: number[] = [];
    while (value >= 0x80n) {
        out.push(Number(value & 0x7fn) | 0x80);
        value >>= 7n;
    }
    out.push(Number(value));
    return Uint8Array.from(out);
}

function key(field: number, wireType: number): Uint8Array {
    return varint(BigInt(field * 8 + wireType));
}

/** A uint32, uint64 or bool field; left out when zero or false. */
export function integerField(field: number, value: bigint | number | boolean): Uint8Array {
    const n = typeof value === "bigint" ? value : BigInt(typeof value === "boolean" ? Number(value) : value);
    return n === 0n ? EMPTY : concat(key(field, 0), varint(n));
}

/** A bytes field; left out when empty. */
export function bytesField(field: number, value: Uint8Array): Uint8Array {
    return value.length === 0 ? EMPTY : concat(key(field, 2), varint(BigInt(value.length)), value);
}

/** A string field; left out when empty. */
export function stringField(field: number, value: string): Uint8Array {
    return bytesField(field, utf8(value));
}

/** A message field that is set: written even when its encoding is empty. */
export function messageField(field: number, encoded: Uint8Array): Uint8Array {
    return concat(key(field, 2), varint(BigInt(encoded.length)), encoded);
}

/** A repeated field: each element as its own field, in order. */
export function repeated<T>(values: readonly T[], encode: (value: T) => Uint8Array): Uint8Array {
    return concat(...values.map(encode));
}
