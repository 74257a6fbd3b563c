// Live blocks and transactions: the latest blocks and their transactions, and each new head as
// the node executes it (WebSocket `newHeads`).

import type { Schemas } from "@gridledger/client";

import { h, section, table } from "../dom.js";
import { num } from "../format.js";
import { blockLink, hex, txLink } from "../links.js";
import { call, connectWs, headHeight, listAll } from "../node.js";
import type { Page } from "../page.js";

/** Blocks shown, newest first. */
const SHOWN = 20;

function blockRow(header: Schemas.BlockHeader): HTMLTableRowElement {
    return h(
        "tr",
        { "data-height": header.height },
        h("td", {}, blockLink(header.height)),
        h("td", {}, num(header.timestamp_ms, "time")),
        h("td", {}, num(header.tx_count, "count", "tx_count")),
        h("td", {}, hex(header.author)),
        h("td", {}, hex(header.id)),
    );
}

/** The rows of a block's transactions: hash, height, what it did (its events), outcome, fee. */
async function txRows(height: string): Promise<HTMLTableRowElement[]> {
    const block = await call("block_get", { height });
    const rows: HTMLTableRowElement[] = [];
    for (const hash of block.txs) {
        const tx = await call("tx_get", { hash });
        if (tx.status !== "committed") {
            continue;
        }
        const receipt = tx.receipt;
        rows.push(
            h(
                "tr",
                { "data-tx": hash, "data-height": tx.height },
                h("td", {}, txLink(hash)),
                h("td", {}, blockLink(tx.height)),
                h("td", {}, receipt.events.map((e) => e.kind).join(", ") || "—"),
                h("td", { class: receipt.success ? "ok" : "failed" }, receipt.success ? "ok" : receipt.reason),
                h("td", {}, num(receipt.fee, "dps")),
            ),
        );
    }
    return rows;
}

export const blocksPage: Page = async (main) => {
    // Subscribed before the first read, so that no head falls between the two; the heads that
    // arrive meanwhile wait for the page, and those it already shows are skipped.
    const ws = await connectWs();
    let onHead: (head: Schemas.Head) => Promise<void> = async () => undefined;
    let queue = Promise.resolve();
    let loaded: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (loaded = resolve));
    const subscription = await ws.subscribe("newHeads", (notified) => {
        queue = queue
            .then(() => ready)
            .then(() => onHead(notified as unknown as Schemas.Head))
            .catch((error: unknown) => console.error("newHeads", error));
    });
    const height = await headHeight();
    const from = BigInt(height) > BigInt(SHOWN) ? (BigInt(height) - BigInt(SHOWN) + 1n).toString() : "1";
    const { items } = await listAll("block_list", { from, to: height, height });
    const blocks = items.reverse();
    const head = num(height, "count", "head-height");
    const blockTable = table("blocks", ["height", "time", "transactions", "author", "id"], []);
    const blockBody = blockTable.tBodies[0]!;
    blockBody.append(...blocks.map((item) => blockRow(item.header)));
    const txTable = table("transactions", ["hash", "block", "events", "outcome", "fee"], []);
    const txBody = txTable.tBodies[0]!;
    for (const item of blocks.filter((b) => b.header.tx_count > 0)) {
        txBody.append(...(await txRows(item.height)));
    }
    main.append(
        h("h1", {}, "Blocks"),
        h(
            "p",
            { class: "pinned" },
            "Live: head at executed height ",
            head,
            ". New blocks appear as the node executes them.",
        ),
        section(`Latest blocks`, blockTable),
        section("Latest transactions", txTable),
    );

    let shown = BigInt(height);
    onHead = async (next) => {
        if (BigInt(next.height) <= shown) {
            return;
        }
        shown = BigInt(next.height);
        head.value = next.height;
        head.textContent = num(next.height).textContent;
        blockBody.prepend(blockRow(next.header));
        while (blockBody.rows.length > SHOWN) {
            blockBody.deleteRow(-1);
        }
        // Transactions of blocks no longer shown go too.
        const oldest = BigInt(blockBody.rows[blockBody.rows.length - 1]!.dataset.height!);
        for (const row of [...txBody.rows].filter((r) => BigInt(r.dataset.height!) < oldest)) {
            row.remove();
        }
        if (next.header.tx_count > 0) {
            txBody.prepend(...(await txRows(next.height)));
        }
    };
    loaded();
    return () => {
        void subscription.unsubscribe().catch(() => undefined);
        ws.close();
    };
};
