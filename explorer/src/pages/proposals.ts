// Governance proposals, each with its action, status and votes.

import { h, section, table } from "../dom.js";
import { num } from "../format.js";
import { accountLink, blockLink } from "../links.js";
import { headHeight, listAll } from "../node.js";
import { pinned, title, type Page } from "../page.js";

export const proposalsPage: Page = async (main) => {
    const height = await headHeight();
    const { items } = await listAll("proposal_list", { height });
    main.append(
        title("Governance proposals"),
        pinned(height),
        section(
            `${items.length} proposals`,
            table(
                "proposals",
                ["id", "action", "status", "proposer", "created", "expires", "closed", "yes", "no", "outcome"],
                items.map((p) => [
                    num(p.id, "count", "id"),
                    h("code", { "data-field": "action" }, p.action),
                    h("span", { "data-field": "status" }, p.status + (p.expired ? " (expired)" : "")),
                    accountLink(p.proposer),
                    blockLink(p.created_height),
                    num(p.expires_ms, "time", "expires_ms"),
                    p.closed_height === "0" ? "open" : blockLink(p.closed_height),
                    h("span", { title: p.yes.join("\n") }, num(p.yes.length, "count", "yes")),
                    h("span", { title: p.no.join("\n") }, num(p.no.length, "count", "no")),
                    p.outcome || "—",
                ]),
            ),
        ),
    );
};
