// Validators and the committee: the validator set of record, and the consensus epoch and round
// the node is in, with the signatures on the head's certificate.

import { fields, h, section, table } from "../dom.js";
import { num } from "../format.js";
import { accountLink, blockLink, hex } from "../links.js";
import { call } from "../node.js";
import { pinned, title, type Page } from "../page.js";

export const validatorsPage: Page = async (main) => {
    const head = await call("chain_getHead", {});
    const height = head.height;
    const set = await call("validator_getSet", { height });
    const status = await call("node_getStatus", {});
    main.append(
        title("Validators"),
        pinned(height),
        section(
            "Validator set of record",
            fields("set", [
                ["version", num(set.version, "count", "version")],
                ["changed at height", set.changed_at_height === "0" ? "genesis" : blockLink(set.changed_at_height)],
                ["validators", num(set.validators.length, "count", "validator-count")],
            ]),
            table(
                "validators",
                ["#", "name", "consensus key", "account", "node id"],
                set.validators.map((v, i) => [String(i), h("span", { "data-field": "name" }, v.name), hex(v.consensus_key), accountLink(v.address), hex(v.node_id)]),
            ),
        ),
        section(
            "Committee",
            h("p", {}, "Consensus adopts a changed set at its next epoch. The node that serves this page reports:"),
            fields("committee", [
                ["consensus epoch", num(status.consensus_epoch, "count", "consensus_epoch")],
                ["consensus round", num(status.consensus_round, "count", "consensus_round")],
                ["the head's certificate", h("span", {}, num(head.header.qc.signatures.length, "count", "qc-signatures"), " signatures, round ", num(head.header.qc.round, "count", "qc-round"))],
                ["this node's validator key", hex(status.validator)],
            ]),
        ),
    );
};
