// The explorer's routes (the part of the URL after '#') and links to them.

import { h } from "./dom.js";
import { shortHex } from "./format.js";

export const route = {
    blocks: () => "#/",
    block: (height: string) => `#/block/${height}`,
    tx: (hash: string) => `#/tx/${hash}`,
    account: (address: string) => `#/account/${address}`,
    validators: () => "#/validators",
    proposals: () => "#/proposals",
    providers: () => "#/providers",
    provider: (address: string, epoch?: string) => `#/provider/${address}${epoch === undefined ? "" : `?epoch=${epoch}`}`,
    tasks: () => "#/tasks",
    task: (id: string) => `#/task/${id}`,
    tokenomics: () => "#/tokenomics",
};

export function link(href: string, text: string, title?: string): HTMLAnchorElement {
    return h("a", { href, title }, text);
}

export const blockLink = (height: string): HTMLAnchorElement => link(route.block(height), height);
export const txLink = (hash: string): HTMLAnchorElement => link(route.tx(hash), shortHex(hash), hash);
export const taskLink = (id: string): HTMLAnchorElement => link(route.task(id), shortHex(id), id);

/** An address links to its account page; `system` (the chain's own work) and "" stay text. */
export function accountLink(address: string): HTMLElement | string {
    if (!/^0x[0-9a-f]{40}$/.test(address)) {
        return address === "" ? "—" : address;
    }
    return link(route.account(address), shortHex(address), address);
}

export const providerLink = (address: string): HTMLAnchorElement => link(route.provider(address), shortHex(address), address);

export function hex(value: string): HTMLElement {
    return h("code", { title: value }, shortHex(value));
}
