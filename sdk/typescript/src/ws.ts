// A JSON-RPC client of a GridLedger node over WebSocket (`/ws`, docs/rpc.md §7): calls, and
// subscriptions to new heads, task transitions, attestations and epoch settlements.

import { RpcError } from "./rpc.js";

/** What the client needs of a WebSocket: the browser's, Node's (22 and later), or the `ws`
 * package's. */
export interface WebSocketLike {
    send(data: string): void;
    close(): void;
    onopen: ((event: unknown) => void) | null;
    onmessage: ((event: { data: unknown }) => void) | null;
    onclose: ((event: unknown) => void) | null;
    onerror: ((event: unknown) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export type Topic = "newHeads" | "taskTransitions" | "attestations" | "epochSettlements";

/** A receipt event as `taskTransitions`, `attestations` and `epochSettlements` send it. */
export interface ChainEvent {
    height: string;
    tx_hash: string;
    index: number;
    kind: string;
    attributes: Record<string, string>;
}

export interface Subscription {
    id: string;
    /** Ends the subscription; resolves to the node's answer (false: it had none by that id). */
    unsubscribe(): Promise<boolean>;
}

interface Pending {
    resolve(value: unknown): void;
    reject(error: Error): void;
}

export class WsClient {
    private nextId = 1;
    private readonly pending = new Map<number, Pending>();
    private readonly handlers = new Map<string, (result: unknown) => void>();
    private closed: Error | undefined;

    private constructor(private readonly socket: WebSocketLike) {
        socket.onmessage = (event) => this.receive(String(event.data));
        socket.onclose = () => this.fail(new Error("the WebSocket closed"));
        socket.onerror = () => this.fail(new Error("the WebSocket failed"));
    }

    /** Connects to `url` (e.g. `ws://127.0.0.1:8545/ws`) with the given WebSocket implementation
     * (the global one when there is one). */
    static connect(url: string, WebSocketImpl?: WebSocketConstructor): Promise<WsClient> {
        const Impl = WebSocketImpl ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
        if (Impl === undefined) {
            return Promise.reject(new Error("no WebSocket implementation: pass one (e.g. the ws package's)"));
        }
        const socket = new Impl(url);
        return new Promise((resolve, reject) => {
            socket.onopen = () => resolve(new WsClient(socket));
            socket.onerror = () => reject(new Error(`cannot connect to ${url}`));
        });
    }

    call<T>(method: string, params: unknown = []): Promise<T> {
        if (this.closed !== undefined) {
            return Promise.reject(this.closed);
        }
        const id = this.nextId++;
        return new Promise<T>((resolve, reject) => {
            this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
            this.socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
        });
    }

    /** Subscribes to `topic`; `onItem` gets each notification's result, in the node's order. */
    async subscribe(topic: "newHeads", onItem: (head: Record<string, unknown>) => void): Promise<Subscription>;
    async subscribe(topic: Exclude<Topic, "newHeads">, onItem: (event: ChainEvent) => void): Promise<Subscription>;
    async subscribe(topic: Topic, onItem: (item: never) => void): Promise<Subscription> {
        const id = await this.call<string>("chain_subscribe", [topic]);
        this.handlers.set(id, onItem as (result: unknown) => void);
        return {
            id,
            unsubscribe: async () => {
                this.handlers.delete(id);
                return this.call<boolean>("chain_unsubscribe", [id]);
            },
        };
    }

    close(): void {
        this.fail(new Error("the client closed"));
        this.socket.close();
    }

    private receive(text: string): void {
        const message = JSON.parse(text) as {
            id?: number;
            method?: string;
            params?: { subscription: string; result: unknown };
            result?: unknown;
            error?: { code: number; message: string; data?: { reason?: string } };
        };
        if (message.method === "chain_subscription" && message.params !== undefined) {
            this.handlers.get(message.params.subscription)?.(message.params.result);
            return;
        }
        const pending = message.id === undefined ? undefined : this.pending.get(message.id);
        if (pending === undefined) {
            return;
        }
        this.pending.delete(message.id!);
        if (message.error !== undefined) {
            pending.reject(new RpcError(message.error.code, message.error.message, message.error.data?.reason));
        } else {
            pending.resolve(message.result);
        }
    }

    private fail(error: Error): void {
        if (this.closed !== undefined) {
            return;
        }
        this.closed = error;
        for (const pending of this.pending.values()) {
            pending.reject(error);
        }
        this.pending.clear();
    }
}
