// @gridledger/client: what a client computes to take part in a GridLedger chain
// (docs/encoding.md of the GridLedger repository).

export * from "./bytes.js";
export * from "./keys.js";
export * from "./payloads.js";
export * from "./tx.js";
export * from "./rpc.js";
export * from "./ws.js";
export * from "./proof.js";
export type { MethodName, Methods } from "./methods.js";
export type * as Schemas from "./methods.js";
