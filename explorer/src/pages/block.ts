// One committed block: its header, its certificate, its transactions and its system receipt.

import { append, fields, h, section, table } from "../dom.js";
import { num } from "../format.js";
import { blockLink, hex, txLink } from "../links.js";
import { call } from "../node.js";
import { title, type Page } from "../page.js";
import { eventsTable } from "./events.js";

export const blockPage: Page = async (main, [height = ""]) => {
    const block = await call("block_get", { height });
    const header = block.header;
    const txs = [];
    for (const hash of block.txs) {
        const tx = await call("tx_get", { hash });
        txs.push([
            txLink(hash),
            tx.status === "committed" ? (tx.receipt.success ? "ok" : tx.receipt.reason) : tx.status,
            tx.status === "committed" ? tx.receipt.events.map((e) => e.kind).join(", ") : "",
        ]);
    }
    append(
        main,
        title(`Block ${header.height}`),
        h("p", { class: "pinned" }, "A committed block: it never changes."),
        fields("header", [
            ["height", num(header.height, "count", "height")],
            ["id", hex(header.id)],
            ["parent", BigInt(header.height) > 0n ? blockLink((BigInt(header.height) - 1n).toString()) : "—"],
            ["time", num(header.timestamp_ms, "time", "timestamp_ms")],
            ["consensus epoch", num(header.epoch, "count", "epoch")],
            ["round", num(header.round, "count", "round")],
            ["author", hex(header.author)],
            ["transactions", num(header.tx_count, "count", "tx_count")],
            ["executed height named", num(header.exec_height, "count", "exec_height")],
            ["state root after it", block.state_root === undefined ? "—" : hex(block.state_root)],
            ["results root after it", block.results_root === undefined ? "—" : hex(block.results_root)],
            ["certified by", block.certified_by === undefined ? "not yet" : `${block.certified_by.signatures.length} signatures, round ${block.certified_by.round}`],
        ]),
        section("Transactions", table("transactions", ["hash", "outcome", "events"], txs)),
        block.system_receipt === undefined
            ? null
            : section("System receipt (the chain's own work before the transactions)", eventsTable("system-events", block.system_receipt.events)),
    );
};
