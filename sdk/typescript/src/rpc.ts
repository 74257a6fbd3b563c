// A JSON-RPC client of a GridLedger node over HTTP (docs/rpc.md): the calls a client needs to
// sign, submit and follow its transactions.

import type { Hex } from "./bytes.js";
import type { MethodName, Methods } from "./methods.js";
import { signingDomain, type SignedTx } from "./tx.js";

/** A JSON-RPC error answer; `reason` is the node's stable token (`nonce_gap`, `expired`, …). */
export class RpcError extends Error {
    constructor(
        readonly code: number,
        message: string,
        readonly reason: string | undefined,
    ) {
        super(reason === undefined ? message : `${message} (${reason})`);
        this.name = "RpcError";
    }
}

export interface NodeStatus {
    chain_id: string;
    genesis_hash: Hex;
    executed_height: string;
    [field: string]: unknown;
}

export interface Account {
    address: Hex;
    height: string;
    /** The next nonce to use. */
    nonce: string;
    balance: string;
}

export interface Receipt {
    tx_hash: Hex;
    height: string;
    index: number;
    success: boolean;
    code: number;
    reason: string;
    fee: string;
    events: { kind: string; attributes: Record<string, string> }[];
}

export interface TxStatus {
    hash: Hex;
    status: "pending" | "committed";
    height?: string;
    receipt?: Receipt;
}

export class HttpClient {
    private nextId = 1;

    /** `url` is the node's JSON-RPC endpoint, e.g. `http://127.0.0.1:8545/`. */
    constructor(readonly url: string) {}

    async call<T>(method: string, params: unknown = []): Promise<T> {
        const response = await fetch(this.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ jsonrpc: "2.0", id: this.nextId++, method, params }),
        });
        const answer = (await response.json()) as {
            result?: T;
            error?: { code: number; message: string; data?: { reason?: string } };
        };
        if (answer.error !== undefined) {
            throw new RpcError(answer.error.code, answer.error.message, answer.error.data?.reason);
        }
        return answer.result as T;
    }

    /** A method of the node's OpenRPC document, with its params by name and its result typed
     * (src/methods.ts). */
    request<M extends MethodName>(method: M, params: Methods[M]["params"]): Promise<Methods[M]["result"]> {
        return this.call(method, params);
    }

    nodeStatus(): Promise<NodeStatus> {
        return this.call("node_getStatus");
    }

    /** The signing domain of the node's chain: its id and genesis hash. */
    async signingDomain(): Promise<Uint8Array> {
        const status = await this.nodeStatus();
        return signingDomain(status.chain_id, status.genesis_hash);
    }

    account(address: Hex): Promise<Account> {
        return this.call("account_get", [address]);
    }

    /** The fee of each payload kind in force, in DPS base units. */
    async fees(): Promise<Record<string, bigint>> {
        const tokenomics = await this.call<{ fees: Record<string, string> }>("tokenomics_get");
        return Object.fromEntries(Object.entries(tokenomics.fees).map(([kind, fee]) => [kind, BigInt(fee)]));
    }

    /** Submits a signed transaction; resolves to its hash once the node admitted it. */
    async submit(tx: SignedTx): Promise<Hex> {
        const answer = await this.call<{ hash: Hex; status: string }>("tx_submit", [tx.hex]);
        return answer.hash;
    }

    tx(hash: Hex): Promise<TxStatus> {
        return this.call("tx_get", [hash]);
    }

    /** Polls tx_get until the transaction committed; resolves to its receipt. */
    async waitForReceipt(hash: Hex, timeoutMs = 30_000, pollMs = 100): Promise<Receipt> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const status = await this.tx(hash);
            if (status.status === "committed" && status.receipt !== undefined) {
                return status.receipt;
            }
            if (Date.now() > deadline) {
                throw new Error(`transaction ${hash} did not commit within ${timeoutMs} ms`);
            }
            await new Promise((resolve) => setTimeout(resolve, pollMs));
        }
    }
}

/** The head's height, as a bigint, from node_getStatus. */
export async function headHeight(client: HttpClient): Promise<bigint> {
    return BigInt((await client.nodeStatus()).executed_height);
}


