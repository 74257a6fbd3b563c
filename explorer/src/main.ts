// The explorer: a page per route (the part of the URL after '#'), each read from the node that
// serves it.

import "./style.css";

import { h } from "./dom.js";
import { route } from "./links.js";
import { call } from "./node.js";
import type { Page } from "./page.js";
import { accountPage } from "./pages/account.js";
import { blockPage } from "./pages/block.js";
import { blocksPage } from "./pages/blocks.js";
import { proposalsPage } from "./pages/proposals.js";
import { providerPage, providersPage } from "./pages/providers.js";
import { taskPage, tasksPage } from "./pages/tasks.js";
import { tokenomicsPage } from "./pages/tokenomics.js";
import { txPage } from "./pages/tx.js";
import { validatorsPage } from "./pages/validators.js";

const PAGES: Record<string, Page> = {
    "": blocksPage,
    block: blockPage,
    tx: txPage,
    account: accountPage,
    validators: validatorsPage,
    proposals: proposalsPage,
    providers: providersPage,
    provider: providerPage,
    tasks: tasksPage,
    task: taskPage,
    tokenomics: tokenomicsPage,
};

const main = document.getElementById("page") as HTMLElement;
let stop: (() => void) | undefined;
let shown = 0;

async function render(): Promise<void> {
    stop?.();
    stop = undefined;
    const visit = ++shown;
    const [path = "", search = ""] = window.location.hash.replace(/^#\/?/, "").split("?");
    const [name = "", ...args] = path.split("/");
    const page = PAGES[name];
    main.replaceChildren();
    delete main.dataset.ready;
    document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("current", a.getAttribute("href") === `#/${name}`));
    if (page === undefined) {
        main.append(h("h1", {}, "No such page"), h("p", {}, h("a", { href: route.blocks() }, "Blocks")));
        return;
    }
    try {
        const cleanup = await page(main, args.map(decodeURIComponent), new URLSearchParams(search));
        if (visit !== shown) {
            cleanup?.();  // The reader moved on while the page loaded.
            return;
        }
        stop = cleanup ?? undefined;
        main.dataset.ready = name || "blocks";
    } catch (error) {
        if (visit !== shown) {
            return;
        }
        // An RpcError's message carries the node's reason token.
        const message = error instanceof Error ? error.message : String(error);
        main.append(h("p", { class: "error", role: "alert" }, message));
        main.dataset.ready = "error";
    }
}

/** Where a search goes: a height, a transaction or task (both 32-byte hashes), or an address. */
async function search(text: string): Promise<string> {
    const query = text.trim().toLowerCase();
    if (/^\d+$/.test(query)) {
        return route.block(query);
    }
    if (/^0x[0-9a-f]{40}$/.test(query)) {
        return route.account(query);
    }
    if (/^0x[0-9a-f]{64}$/.test(query)) {
        const found = await call("tx_get", { hash: query as `0x${string}` }).then(
            () => true,
            () => false,
        );
        return found ? route.tx(query) : route.task(query);
    }
    return "#/not-found";
}

async function showChain(): Promise<void> {
    const status = await call("node_getStatus", {});
    document.getElementById("chain")!.textContent = `${status.chain_id} · node ${status.version}`;
}

document.getElementById("search")!.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = (event.target as HTMLFormElement).elements.namedItem("q") as HTMLInputElement;
    void search(input.value).then((target) => {
        window.location.hash = target;
    });
});
window.addEventListener("hashchange", () => void render());
void showChain().catch(() => undefined);
void render();
