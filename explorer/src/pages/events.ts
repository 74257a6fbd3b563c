// A receipt's events as a table: kind and attributes, addresses, tasks and heights as links.

import type { Schemas } from "@gridledger/client";

import { h, table } from "../dom.js";
import { accountLink, blockLink, taskLink } from "../links.js";

function attributeValue(key: string, value: string): Node | string {
    if (/^0x[0-9a-f]{40}$/.test(value)) {
        return accountLink(value);
    }
    if (key === "task" && /^0x[0-9a-f]{64}$/.test(value)) {
        return taskLink(value);
    }
    if (key === "height" && /^\d+$/.test(value)) {
        return blockLink(value);
    }
    return value;
}

export function eventsTable(name: string, events: Schemas.Event[]): HTMLTableElement {
    return table(
        name,
        ["kind", "attributes"],
        events.map((event) => [
            h("code", {}, event.kind),
            h(
                "dl",
                { class: "attributes" },
                Object.entries(event.attributes).flatMap(([key, value]) => [
                    h("dt", {}, key),
                    h("dd", { "data-attribute": key }, attributeValue(key, String(value))),
                ]),
            ),
        ]),
    );
}
