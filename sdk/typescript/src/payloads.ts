// Every transaction payload and governance action of GridLedger (docs/encoding.md §4), and their
// canonical encoding. Integers are bigint (u64, and u128 amounts), byte strings 0x hex.

import { bigEndian, concat, fromHex, type Hex } from "./bytes.js";
import { bytesField, integerField, messageField, repeated, stringField } from "./proto.js";

export type GovernanceAction =
    | { kind: "add_validator"; name: string; consensusKey: Hex; nodeId: Hex; account: Hex }
    | { kind: "remove_validator"; consensusKey: Hex }
    | { kind: "admit_provider" | "suspend_provider" | "reinstate_provider"; provider: Hex }
    | { kind: "grant_verifier" | "revoke_verifier"; account: Hex }
    | { kind: "set_parameter"; name: string; value: string };

export interface Device {
    model: string;
    count: bigint;
    peakGflops: bigint;
    memoryBandwidthGbps: bigint;
    memoryCapacityGb: bigint;
    features: string[];
    powerWatts: bigint;
    factors: { name: string; value: bigint }[];
}

export type Payload =
    | { kind: "transfer"; to: Hex; amount: bigint }
    | { kind: "propose"; action: GovernanceAction }
    | { kind: "vote"; proposalId: bigint; approve: boolean }
    | {
          kind: "register_provider";
          devices: Device[];
          labels: { key: string; value: string }[];
          categories: string[];
      }
    | {
          kind: "attest";
          epoch: bigint;
          slot: bigint;
          category: string;
          devices: { model: string; count: bigint }[];
          powerWatts: bigint;
          renewableShareBps: number;
          evidence: Hex[];
      }
    | { kind: "challenge"; provider: Hex; epoch: bigint; slot: bigint; reason: string; evidence: Hex }
    | {
          kind: "task_create";
          category: string;
          minGflops: bigint;
          constraints: string[];
          maxMinutes: bigint;
          specHash: Hex;
          /** How many providers run it and have their results compared; 0, 1 or absent: one. */
          replicas?: number;
      }
    | { kind: "task_start" | "task_refuse" | "task_cancel"; taskId: Hex }
    | { kind: "task_top_up"; taskId: Hex; extraMinutes: bigint }
    | {
          kind: "task_submit_result";
          taskId: Hex;
          resultHash: Hex;
          outputUri: string;
          exitCode: number;
          durationMs: bigint;
      }
    | {
          kind: "task_verify";
          taskId: Hex;
          accept: boolean;
          reason: string;
          /** A verifier's verdict on a tied redundant task (taskId its group id): the upheld result. */
          resultHash?: Hex;
      }
    | { kind: "task_report_failure"; taskId: Hex; exitCode: number; error: string; durationMs: bigint }
    | { kind: "provider_unbond" }
    /** A verifier doubts a settled result; `evidence` is a 32-byte hash or "0x" (none). */
    | { kind: "task_spot_check"; taskId: Hex; reason: string; evidence: Hex }
    /** Another verifier decides an open spot check. */
    | { kind: "task_spot_check_verdict"; taskId: Hex; upheld: boolean; reason: string };

/** A fixed-length byte string: `length` bytes, or empty (a field left out). */
function fixed(field: number, hex: Hex, length: number): Uint8Array {
    const bytes = fromHex(hex);
    if (bytes.length !== 0 && bytes.length !== length) {
        throw new Error(`field ${field}: expected ${length} bytes, got ${bytes.length}`);
    }
    return bytesField(field, bytes);
}

function encodeAction(action: GovernanceAction): Uint8Array {
    switch (action.kind) {
        case "add_validator":
            return messageField(
                1,
                concat(
                    stringField(1, action.name),
                    fixed(2, action.consensusKey, 32),
                    fixed(3, action.nodeId, 20),
                    fixed(4, action.account, 20),
                ),
            );
        case "remove_validator":
            return messageField(2, fixed(1, action.consensusKey, 32));
        case "admit_provider":
            return messageField(3, fixed(1, action.provider, 20));
        case "suspend_provider":
            return messageField(4, fixed(1, action.provider, 20));
        case "reinstate_provider":
            return messageField(5, fixed(1, action.provider, 20));
        case "grant_verifier":
            return messageField(6, fixed(1, action.account, 20));
        case "revoke_verifier":
            return messageField(7, fixed(1, action.account, 20));
        case "set_parameter":
            return messageField(8, concat(stringField(1, action.name), stringField(2, action.value)));
    }
}

function encodeDevice(d: Device): Uint8Array {
    return concat(
        stringField(1, d.model),
        integerField(2, d.count),
        integerField(3, d.peakGflops),
        integerField(4, d.memoryBandwidthGbps),
        integerField(5, d.memoryCapacityGb),
        repeated(d.features, (f) => stringField(6, f)),
        integerField(7, d.powerWatts),
        repeated(d.factors, (f) => messageField(8, concat(stringField(1, f.name), integerField(2, f.value)))),
    );
}

/** The payload's field number in TxBody (16-32) and its encoded message. */
export function encodePayload(p: Payload): [number, Uint8Array] {
    switch (p.kind) {
        case "transfer":
            return [16, concat(fixed(1, p.to, 20), bytesField(2, bigEndian(p.amount, 16)))];
        case "propose":
            return [17, encodeAction(p.action)];
        case "vote":
            return [18, concat(integerField(1, p.proposalId), integerField(2, p.approve))];
        case "register_provider":
            return [
                19,
                concat(
                    repeated(p.devices, (d) => messageField(1, encodeDevice(d))),
                    repeated(p.labels, (l) => messageField(2, concat(stringField(1, l.key), stringField(2, l.value)))),
                    repeated(p.categories, (c) => stringField(3, c)),
                ),
            ];
        case "attest":
            return [
                20,
                concat(
                    integerField(1, p.epoch),
                    integerField(2, p.slot),
                    stringField(3, p.category),
                    repeated(p.devices, (d) => messageField(4, concat(stringField(1, d.model), integerField(2, d.count)))),
                    integerField(5, p.powerWatts),
                    integerField(6, p.renewableShareBps),
                    repeated(p.evidence, (e) => fixed(7, e, 32)),
                ),
            ];
        case "challenge":
            return [
                21,
                concat(
                    fixed(1, p.provider, 20),
                    integerField(2, p.epoch),
                    integerField(3, p.slot),
                    stringField(4, p.reason),
                    fixed(5, p.evidence, 32),
                ),
            ];
        case "task_create":
            return [
                22,
                concat(
                    stringField(1, p.category),
                    integerField(2, p.minGflops),
                    repeated(p.constraints, (c) => stringField(3, c)),
                    integerField(4, p.maxMinutes),
                    fixed(5, p.specHash, 32),
                    integerField(6, p.replicas ?? 0),
                ),
            ];
        case "task_start":
            return [23, fixed(1, p.taskId, 32)];
        case "task_refuse":
            return [24, fixed(1, p.taskId, 32)];
        case "task_top_up":
            return [25, concat(fixed(1, p.taskId, 32), integerField(2, p.extraMinutes))];
        case "task_submit_result":
            return [
                26,
                concat(
                    fixed(1, p.taskId, 32),
                    fixed(2, p.resultHash, 32),
                    stringField(3, p.outputUri),
                    integerField(4, p.exitCode),
                    integerField(5, p.durationMs),
                ),
            ];
        case "task_verify":
            return [
                27,
                concat(
                    fixed(1, p.taskId, 32),
                    integerField(2, p.accept),
                    stringField(3, p.reason),
                    fixed(4, p.resultHash ?? "0x", 32),
                ),
            ];
        case "task_report_failure":
            return [
                28,
                concat(fixed(1, p.taskId, 32), integerField(2, p.exitCode), stringField(3, p.error), integerField(4, p.durationMs)),
            ];
        case "task_cancel":
            return [29, fixed(1, p.taskId, 32)];
        case "provider_unbond":
            return [30, new Uint8Array(0)];
        case "task_spot_check":
            return [31, concat(fixed(1, p.taskId, 32), stringField(2, p.reason), fixed(3, p.evidence, 32))];
        case "task_spot_check_verdict":
            return [32, concat(fixed(1, p.taskId, 32), integerField(2, p.upheld), stringField(3, p.reason))];
    }
}
