// One transaction: pending, or committed with its receipt and events.

import { fields, h, section } from "../dom.js";
import { num } from "../format.js";
import { blockLink, hex } from "../links.js";
import { call } from "../node.js";
import { title, type Page } from "../page.js";
import { eventsTable } from "./events.js";

export const txPage: Page = async (main, [hash = ""]) => {
    const tx = await call("tx_get", { hash: hash as `0x${string}` });
    main.append(title("Transaction ", hex(tx.hash)));
    if (tx.status !== "committed") {
        main.append(fields("tx", [["status", h("span", { "data-field": "status" }, tx.status)]]));
        return;
    }
    const receipt = tx.receipt;
    main.append(
        h("p", { class: "pinned" }, "A committed transaction: its receipt never changes."),
        fields("tx", [
            ["status", h("span", { "data-field": "status" }, tx.status)],
            ["block", blockLink(tx.height)],
            ["index", num(tx.index, "count", "index")],
            ["outcome", h("span", { "data-field": "outcome" }, receipt.success ? "ok" : `failed: ${receipt.reason}`)],
            ["fee", num(receipt.fee, "dps", "fee")],
        ]),
        section("Events", eventsTable("events", receipt.events)),
    );
};
