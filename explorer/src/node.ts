// The node the explorer reads: the one that serves it, over JSON-RPC on `/` and WebSocket on
// `/ws` of the same origin, through the SDK.

import { HttpClient, WsClient, type MethodName, type Methods } from "@gridledger/client";

export const client = new HttpClient(new URL("/", window.location.href).href);

export function connectWs(): Promise<WsClient> {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    return WsClient.connect(`${scheme}//${window.location.host}/ws`);
}

export function call<M extends MethodName>(method: M, params: Methods[M]["params"]): Promise<Methods[M]["result"]> {
    return client.request(method, params);
}

/** The executed head's height: the height every read of a page is pinned to. */
export async function headHeight(): Promise<string> {
    return (await call("chain_getHead", {})).height;
}

type ListMethod = "block_list" | "task_list" | "provider_list" | "proposal_list" | "epoch_list" | "attestation_list";
type Item<M extends ListMethod> = Methods[M]["result"]["items"][number];

/** Pages read before a list is cut (each holds up to 1000 items); the page says so. */
const MAX_PAGES = 20;

/** Every item of a list at one height, page after page; `truncated` when MAX_PAGES did not reach
 * its end. */
export async function listAll<M extends ListMethod>(
    method: M,
    params: Omit<Methods[M]["params"], "cursor" | "limit">,
): Promise<{ items: Item<M>[]; truncated: boolean }> {
    const items: Item<M>[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < MAX_PAGES; ++page) {
        const request = { ...params, limit: 1000, ...(cursor === null ? {} : { cursor }) } as Methods[M]["params"];
        const answer = (await client.request(method, request)) as Methods[M]["result"];
        items.push(...(answer.items as Item<M>[]));
        if (answer.next_cursor === null) {
            return { items, truncated: false };
        }
        cursor = answer.next_cursor;
    }
    return { items, truncated: true };
}
